"""The ``identifier`` node's parameter table (docs/reference/parameters.md): kept beside the node so the
shell stays a shell. The optional parameters (default absent) override the robot file's
``identification:`` section (:func:`~sysid_ros._src.identification.load_identification_config`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from sysid_ros._src.identification.options import FRICTION_MODES, ONLINE_METHODS
from sysid_ros._src.identification.settings import OVERRIDE_SETTINGS
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.nodes.params import Param

__all__ = ["PARAMETERS", "OVERRIDES", "identification_overrides"]

_S = (1e-4, 3600.0)       # a duration in seconds
#: the identification overrides, defined once (shared with sysid-identify's options)
_SHARED = {p.name: p for p in OVERRIDE_SETTINGS}
PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1, b1_z1) or robot-facts file path; b1_z1 "
          "also subscribes the trunk IMU on `imu`", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("calibration", "string", "sysid-calibrate result (calib.yaml) the bounds rest on"),
    _SHARED["prior"],
    Param("friction", "string", "friction box: wide (uncalibrated), config (robot file or "
          "calibration), none; auto: wide with hardware_like (unless calibrated), else config",
          choices=FRICTION_MODES + ("auto",)),
    Param("hardware_like", "bool", "the joint states come from the simulator's hardware_like "
          "mode: state its profile's bounds (sysid_ros._src.simulation.assumptions; with a "
          "calibration, velocity_noise_scope payload); explicit parameters override", False),
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
    *(_SHARED[n] for n in ("torque_noise_abs", "torque_noise_rel", "robot_uncertainty_rel",
                           "window_s", "stride_s", "max_sample_gap", "window", "stride")),
    Param("online_max_rows", "int", "most recent rows the point estimate uses", None, (1, 10**8)),
    Param("torque_delay_samples", "double", "|offset| of the torque samples from the joint "
          "states, in median sample steps (one constant per joint, either sign; 0.5: a command "
          "held over its period)", None, (0.0, 100.0)),
    _SHARED["velocity_noise_abs"], _SHARED["velocity_noise_scope"],
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
        from sysid_ros._src.simulation.assumptions import identifier_assumptions
        file_eps = (robot.config.get("identification") or {}).get("velocity_noise_abs", 0.0)
        stated = (p.get("velocity_noise_abs") is not None
                  or bool(np.any(np.asarray(file_eps, float) > 0)))
        kw.update(identifier_assumptions(robot, calibrated=calibrated, velocity_stated=stated))
    kw.update({k: p[k] for k in OVERRIDES if p.get(k) is not None})
    if kw.get("friction") == "auto":
        kw["friction"] = "wide" if p.get("hardware_like") and not calibrated else "config"
    return kw
