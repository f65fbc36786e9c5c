"""What the identifier must assume about data from the simulator's hardware-like mode.

The robot file's ``identification:`` section describes data from the catalogue robot (the
built-in simulator without ``hardware_like``). Hardware-like data (``simulation.hardware_like``)
come from a robot drawn off the catalogue and a driver with its own noise, so an identifier fed
them under the catalogue's assumptions rests on premises the data break: its box may miss the
truth without saying so. :func:`identifier_assumptions` states them from the same profile the
simulator publishes with (the identifier node's ``hardware_like`` parameter, the launch passes the
sim's):

- torque noise: the profile's sensor bound (abs and rel) times ``1 + sampling_margin(rate)``:
  the trapezoid over samples 1–10 ms apart misses the 1 kHz controller's torque transients
  between them, which the Simpson check cannot see. Measured on hardware-like Gen3 recordings
  against 4 kHz sampling of the same motion: up to 1.6× the sensor bound on average at 100 Hz,
  a few rows just above it at 500 Hz (test/identification/test_real_data.py);
- velocity: ``exact`` → 0, ``noisy`` → the profile's bound (on a floating base the arm joints'
  errors enter the base motion's radius rows). ``finite_difference`` (fixed base): the identifier
  estimates q̇ from the positions with the bound the robot file's
  ``identification.differenced_velocity`` states (its ``velocity_noise_abs`` and the estimate's
  premises: encoder resolution, stamp delay, acceleration and jerk bounds,
  :mod:`sysid_ros._src.identification.velocity_estimate`); with a calibration the payload's share only
  (scope ``payload``), which needs one made from the same estimate (``sysid-calibrate
  --state-estimate slope``; refused otherwise); without that section it is refused, as
  ``filtered`` and ``missing`` are: a difference of quantised positions over jittered stamps has
  no bound without one on the acceleration, and the identifier needs q̇; the user may state
  ``velocity_noise_abs`` instead;
- friction: ``wide`` (the drawn truth is up to ``friction_rel`` off the catalogue values that
  the ``config`` box holds);
- trunk IMU (floating base): the datasheet model's bias bounds and truncated-noise bound
  (:meth:`~sysid_ros._src.simulation.imu.ImuProfile.identifier_bounds`, the robot
  file's ``simulation.hardware_like.imu``), with or without a calibration (none covers the IMU);
- torque gain: the truth section's ``torque_gain_rel`` (the drawn reading's gain, 1 ± it per
  joint) as the identifier's ``torque_gain_rel``. With a calibration it is the calibration's to
  state or measure (docs/guide/calibrate.md#torque-reading-gain): one that ignored it has
  absorbed the gain.

With a calibration (``calibrated``) its friction box and its torque-error bound stand: they
were measured on data of this kind (window-averaged over its own windows), the error of its
friction law and stamp jitter included. The velocity bound is still stated, for the payload
only (``velocity_noise_scope: payload``): the calibration's bound absorbed the velocity noise
through the *unloaded* arm (its momentum, armature and viscous terms), and a payload adds
inertia through which the same noise enters the momentum rows (20 random Gen3 robots, 3.63 kg:
median mass width 0.99 kg with the payload's share stated, 1.23 kg stating it all again, every
box holding the truth; on the Z1 a stated 0.05 rad/s leaves the prior's 2.45 kg,
docs/guide/hardware-like-data.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.hardware_like import HardwareProfile
from sysid_ros._src.simulation.imu import imu_settings
from sysid_ros._src.simulation.truth import hardware_truth_settings

__all__ = ["identifier_assumptions", "sampling_margin", "differenced_velocity"]


def sampling_margin(rate_hz: float) -> float:
    """Fraction of the sensor's noise bound added for what the samples miss between them at
    ``rate_hz`` (module doc): 1.0 below 500 Hz, 0.5 from 500 Hz on."""
    if not (np.isfinite(rate_hz) and rate_hz > 0):
        raise SimConfigError(f"rate_hz must be a positive number, got {rate_hz!r}")
    return 1.0 if rate_hz < 500.0 else 0.5


def differenced_velocity(robot: Robot, section: Any) -> dict[str, Any]:
    """``velocity_estimate`` (the estimate's premises, a mapping the identification config
    checks) and ``velocity_noise_abs`` overrides from the robot file's
    ``identification.differenced_velocity`` (module doc)."""
    where = f"{robot.config_path}: identification.differenced_velocity"
    if not isinstance(section, dict) or "velocity_noise_abs" not in section:
        raise SimConfigError(f"{where}: expected a mapping with velocity_noise_abs and the "
                             "estimate's premises (sysid_ros._src.identification.velocity_estimate)")
    eps = np.broadcast_to(np.asarray(section["velocity_noise_abs"], float), (robot.nj,)).copy()
    return {"velocity_estimate": {k: v for k, v in section.items() if k != "velocity_noise_abs"},
            "velocity_noise_abs": eps}


def identifier_assumptions(robot: Robot, profile: HardwareProfile | None = None,
                           calibrated: bool = False,
                           velocity_stated: bool = False) -> dict[str, Any]:
    """Keyword overrides of ``load_identification_config`` for data published with ``profile``
    (default: the robot file's ``simulation.hardware_like.profile``): ``torque_noise_abs``
    (per joint), ``torque_noise_rel``, ``velocity_noise_abs`` (per joint),
    ``friction="wide"``, ``imu`` (floating base: the hardware-like IMU's bounds), the
    driver's torque lag (``torque_lag_s`` ± one period), velocity lag (``velocity_lag_s``), its
    speed-proportional friction error (``torque_noise_speed``) and the drawn
    reading's gain bound (``torque_gain_rel``, when the truth section draws one); only the
    velocity bound when ``calibrated`` (the calibration measured the lag; module doc). Raises
    SimConfigError for velocities the identifier cannot be given a bound for (module doc),
    naming what to do instead, unless the user states the velocity bound (``velocity_stated``:
    then the velocity is left to that statement)."""
    profile = HardwareProfile.from_robot(robot) if profile is None else profile
    scale = 1.0 + sampling_margin(profile.rate_hz)
    out: dict[str, Any] = {} if calibrated else {
        "torque_noise_abs": scale * np.broadcast_to(np.asarray(profile.torque_noise, float),
                                                    (robot.nj,)).copy(),
        "torque_noise_rel": scale * float(profile.torque_noise_rel), "friction": "wide"}
    if robot.floating_base:
        # the trunk IMU's datasheet errors, as the hardware-like IMU draws them (the robot
        # file's rate bounds and gap: the IMU shares the joint states' message)
        out["imu"] = imu_settings(robot)
    gain_rel = float(hardware_truth_settings(robot).get("torque_gain_rel", 0.0))
    if not calibrated and gain_rel > 0:
        out["torque_gain_rel"] = gain_rel
    lag = np.broadcast_to(np.asarray(profile.torque_lag, float), (robot.nj,))
    if not calibrated and np.any(lag != 0):
        # the driver's torque lag is known here (a calibration measures it on a real one);
        # the published torque is interpolated between sample instants: one period of slack
        out["torque_lag_s"] = lag.copy()
        out["torque_lag_radius_s"] = np.full(robot.nj, profile.period)
    vlag = np.broadcast_to(np.asarray(profile.velocity_lag, float), (robot.nj,))
    if not calibrated and np.any(vlag != 0):
        out["velocity_lag_s"] = vlag.copy()     # the driver's velocity filter, known here too
    speed_error = np.broadcast_to(np.asarray(profile.friction_speed_error, float), (robot.nj,))
    if not calibrated and np.any(speed_error != 0):
        # |e_j| <= speed_error_j*|dq_j| at every instant, so its window average is within
        # speed_error_j x the window's mean |speed|, the identifier's speed-dependent bound
        out["torque_noise_speed"] = speed_error.copy()
    where = f"{robot.config_path}: simulation.hardware_like.profile.velocity"
    if profile.velocity == "missing":
        raise SimConfigError(f"{where} is 'missing': the identifier needs joint velocities")
    if velocity_stated:
        return out
    differenced = (robot.config.get("identification") or {}).get("differenced_velocity")
    if profile.velocity == "finite_difference" and differenced is not None \
            and not robot.floating_base:
        # calibrated: the payload's share only, which rests on a calibration made from this
        # estimate's velocities (the identification config refuses it otherwise)
        out.update(differenced_velocity(robot, differenced))
        if calibrated:
            out["velocity_noise_scope"] = "payload"
        return out
    if profile.velocity in ("finite_difference", "filtered"):
        raise SimConfigError(
            f"{where} is {profile.velocity!r}: the identifier needs joint velocities with a "
            "stated error bound, and a (smoothed) difference of quantised positions over "
            "jittered stamps has none without an acceleration bound. State it (identifier "
            "parameter velocity_noise_abs) or simulate 'noisy' velocities")
    if profile.velocity == "noisy":
        out["velocity_noise_abs"] = np.broadcast_to(np.asarray(profile.velocity_noise, float),
                                                    (robot.nj,)).copy()
        if calibrated:
            out["velocity_noise_scope"] = "payload"
    return out
