"""Whether the robust controller may run on the velocities a hardware-like driver publishes.

The law keeps V ≤ V_max for the state it is fed; it has no velocity-error term. The robot file
states the velocity error the closed loop was shown to tolerate at its V_max
(``controller.velocity_error_max``, rad/s; absent: not checked). A hardware-like profile whose
published velocities can be off by more is refused before starting, with the error and its
source: ``noisy`` by its bound, ``finite_difference`` by at least one encoder count over the
shortest stamp step, resolution / (period·(1 − jitter)) (every count the position crosses shows
as that much velocity for one sample), ``filtered`` and ``missing`` by an unbounded error.

The identifier's estimate (:mod:`sysid_ros.identification.velocity_estimate`) is not a remedy
here: it is centred (it needs the samples after the instant) and its bound is tens of mrad/s.
"""
from __future__ import annotations

import math

import numpy as np

from sysid_ros.model.robots import Robot
from sysid_ros.simulation._util import encoder_resolution
from sysid_ros.simulation.hardware_like import HardwareProfile

__all__ = ["published_velocity_error", "controller_velocity_refusal"]


def published_velocity_error(robot: Robot, profile: HardwareProfile) -> float:
    """A lower bound (rad/s) on the largest error of the velocities ``profile`` publishes
    (module docstring): 0 for exact ones, inf where no bound exists."""
    if profile.velocity == "exact":
        return 0.0
    if profile.velocity == "noisy":
        return float(np.max(profile.velocity_noise))
    if profile.velocity == "finite_difference":
        res = encoder_resolution(robot) if profile.quantize else np.zeros(robot.nj)
        return float(np.max(res)) / (profile.period * (1.0 - profile.jitter))
    return math.inf


def controller_velocity_refusal(robot: Robot) -> str:
    """Why the robust controller must not run on this robot's hardware-like velocities, or ''."""
    tolerated = (robot.config.get("controller") or {}).get("velocity_error_max")
    if tolerated is None:
        return ""
    profile = HardwareProfile.from_robot(robot)
    err = published_velocity_error(robot, profile)
    if err <= float(tolerated):
        return ""
    return (f"the robust controller's V <= V_max holds for the velocities it is fed, and this "
            f"robot file states the closed loop tolerates {float(tolerated):g} rad/s of velocity "
            f"error (controller.velocity_error_max); the hardware-like driver publishes "
            f"'{profile.velocity}' velocities off by up to {err:.3g} rad/s "
            f"(simulation.hardware_like.profile). The identifier bounds its own estimate, but "
            f"the law needs a causal one within that tolerance")
