"""The ``identifier`` node's parameter table (docs/reference/parameters.md): kept beside the node so the
shell stays a shell. The optional parameters (default absent) override the robot file's
``identification:`` section (:func:`~sysid_ros.identification.load_identification_config`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from sysid_ros.identification.config import FRICTION_MODES, VELOCITY_NOISE_SCOPES
from sysid_ros.identification.options import ONLINE_METHODS
from sysid_ros.model.robots import Robot
from sysid_ros.nodes.params import Param

__all__ = ["PARAMETERS", "OVERRIDES", "identification_overrides"]

_S = (1e-4, 3600.0)       # a duration in seconds
PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1, b1_z1) or robot-facts file path; b1_z1 "
          "also subscribes the trunk IMU on `imu`", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("calibration", "string", "sysid-calibrate result (calib.yaml) the bounds rest on"),
    Param("prior", "string", "prior box B0: a name of the robot file's identification.priors "
          "(gen3: 2f85, none) or a YAML file"),
    Param("friction", "string", "friction box: wide (uncalibrated), config (robot file or "
          "calibration), none; auto: wide with hardware_like (unless calibrated), else config",
          choices=FRICTION_MODES + ("auto",)),
    Param("hardware_like", "bool", "the joint states come from the simulator's hardware_like "
          "mode: state its profile's bounds (sysid_ros.simulation.assumptions); explicit "
          "parameters override", False),
    Param("method", "string", "bound method: lp-cuts adds the pseudo-inertia constraint as "
          "sound LP cutting planes", "lp-cuts", choices=ONLINE_METHODS),
    Param("tighten_period", "double", "period of the cut-generating rounds on a second thread "
          "(lp-cuts); 0: inline in every update", 2.0, (0.0, 3600.0), unit="s"),
    Param("update_period", "double", "period of the box updates (worker thread)", 0.5, _S,
          unit="s"),
    Param("point_estimate", "bool", "log-Cholesky least-squares nominal (else the box centre)",
          True),
    Param("worker_nice", "int", "niceness added to the update and cut threads (Linux, per "
          "thread): on a busy machine the bounds wait, not the 1 kHz intake or the rest of "
          "the graph; 0 keeps the node's priority", 10, (0, 19)),
    Param("torque_noise_abs", "double|double[]", "torque-noise bound: one value for every joint "
          "or one per joint", None, (0.0, 1e4), unit="N·m"),
    Param("torque_noise_rel", "double", "torque-noise bound, fraction of |τ|", None, (0.0, 0.99)),
    Param("robot_uncertainty_rel", "double", "θ_r box radius, fraction of |nominal| per "
          "parameter", None, (0.0, 10.0)),
    Param("window_s", "double", "momentum window length", None, _S, unit="s"),
    Param("stride_s", "double", "time between window starts", None, _S, unit="s"),
    Param("max_sample_gap", "double", "samples further apart split the windows; 0: 2.5 × the "
          "stream's median step", None, (0.0, 3600.0), unit="s"),
    Param("window", "int", "window length in samples (overrides window_s)", None, (2, 10**7)),
    Param("stride", "int", "stride in samples (overrides stride_s)", None, (1, 10**7)),
    Param("online_max_rows", "int", "most recent rows the point estimate uses", None, (1, 10**8)),
    Param("torque_delay_samples", "double", "|offset| of the torque samples from the joint "
          "states, in median sample steps (one constant per joint, either sign; 0.5: a command "
          "held over its period)", None, (0.0, 100.0)),
    Param("velocity_noise_abs", "double|double[]", "bound of the reported joint velocities' "
          "error: one value for every joint or one per joint (0: exact)", None,
          (0.0, 10.0), unit="rad/s"),
    Param("velocity_noise_scope", "string", "what of the velocity error the rows state: all, or "
          "payload (only the payload's momentum; needs a calibration made from the same "
          "velocities, whose bound absorbed the rest); hardware_like with a calibration: payload",
          None, choices=VELOCITY_NOISE_SCOPES),
    Param("stamp_restart_samples", "int", "consecutive stamps behind the last accepted one, "
          "increasing among themselves, that mean a restart (replay loop); also the run of "
          "far-future stamps that is a jump forward and of messages without a robot joint that "
          "is a changed joint set (docs/guide/recordings.md)", 10, (2, 10**6)),
)
#: the optional parameters that override the robot file's identification section
OVERRIDES = [p.name for p in PARAMETERS if p.default is None and p.name not in ("robot_config",
                                                                               "calibration")]


def identification_overrides(robot: Robot, p: dict[str, Any]) -> dict[str, Any]:
    """``load_identification_config`` keywords from the node's parameter values ``p``: the
    hardware-like profile's assumptions first (``hardware_like``), then every parameter given
    explicitly; ``friction: auto`` resolved (the launch's default). SimConfigError (the reason)
    when the profile's velocities cannot be stated."""
    kw: dict[str, Any] = {}
    calibrated = bool(p.get("calibration"))
    if p.get("hardware_like"):
        from sysid_ros.simulation.assumptions import identifier_assumptions
        file_eps = (robot.config.get("identification") or {}).get("velocity_noise_abs", 0.0)
        stated = (p.get("velocity_noise_abs") is not None
                  or bool(np.any(np.asarray(file_eps, float) > 0)))
        kw.update(identifier_assumptions(robot, calibrated=calibrated, velocity_stated=stated))
    kw.update({k: p[k] for k in OVERRIDES if p.get(k) is not None})
    if kw.get("friction") == "auto":
        kw["friction"] = "wide" if p.get("hardware_like") and not calibrated else "config"
    return kw
