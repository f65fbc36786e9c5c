"""Whether the robust controller may run on the velocities a hardware-like driver publishes.

The law keeps V ≤ V_max for the state it is fed; it has no velocity-error term. The robot file
states the velocity error the closed loop was shown to tolerate at its V_max
(``controller.velocity_error_max``, rad/s; absent: not checked). A hardware-like profile whose
published velocities can be off by more is refused before starting, with the error and its
source: ``noisy`` by its bound, ``finite_difference`` by at least one encoder count over the
shortest stamp step, resolution / (period·(1 − jitter)) (every count the position crosses shows
as that much velocity for one sample), ``filtered`` and ``missing`` by an unbounded error.

The identifier's estimate (:mod:`sysid_ros._src.identification.velocity_estimate`) is not a remedy
here: it is centred (it needs the samples after the instant) and its bound is tens of mrad/s.
Nor is any causal one (:func:`causal_velocity_floor`): under the identifier's own motion
premises (``identification.differenced_velocity``: |q̈| ≤ A, q̈ changing at J at most) a joint
at rest and one that started a jerk ramp τ = min((6·res/J)^⅓, A/J) ago stay within one
encoder count res of each other at every past instant (J·τ³/6 ≤ res), so identical counts fit
both, yet their velocities now differ by J·τ²/2: any estimate from the counts is off by at
least half that for one of them, whatever the rate.

Against the level (:func:`level_half_widths`): on V = V_max joint j's velocity error alone
spans ±ρ_j, ρ_j = √(2·V_max/M_jj). Where the floor exceeds ρ_j, the states the counts leave
possible always include one outside the level (V > V_max), so no estimate from them can tell
whether V ≤ V_max holds, and a law that must bound V from them (V_sup) cannot certify that
level. On the Z1 (res 0.01°, A 30 rad/s², J 300 rad/s³) the floor is 0.0173 rad/s and joint
2's ρ at the start pose 0.0164 rad/s (V_max 1e-4 J).
"""
from __future__ import annotations

import math

import numpy as np

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import home_posture
from sysid_ros._src.simulation._util import encoder_resolution
from sysid_ros._src.simulation.hardware_like import HardwareProfile

__all__ = ["published_velocity_error", "controller_velocity_refusal", "causal_velocity_floor",
           "level_half_widths"]


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


def causal_velocity_floor(robot: Robot) -> float | None:
    """A lower bound (rad/s) on the worst-case error of any estimate from the encoder counts
    under the robot file's ``identification.differenced_velocity`` motion premises (module
    doc); None without them."""
    sec = (robot.config.get("identification") or {}).get("differenced_velocity") or {}
    if sec.get("accel_abs") is None or sec.get("jerk_abs") is None:
        return None
    res = float(np.max(encoder_resolution(robot)))
    accel, jerk = float(sec["accel_abs"]), float(sec["jerk_abs"])
    if not (res > 0 and accel > 0 and jerk > 0):
        return None
    tau = min((6.0 * res / jerk) ** (1.0 / 3.0), accel / jerk)
    return 0.25 * jerk * tau * tau


def level_half_widths(robot: Robot) -> np.ndarray:
    """ρ_j = √(2·V_max/M_jj) per joint (rad/s) at the demo's start pose, M_jj at its smallest
    over the prior's θ_e box, the controller's θ_r box (``links_rel``) and I_a ≥ its lower
    bound: the largest velocity error of joint j alone on the level V = V_max."""
    q = np.asarray((robot.config.get("demo") or {}).get("start") or home_posture(robot),
                   float)
    theta = robot.theta()
    rad = robot.links_rel_uncertainty * np.abs(theta)
    box = prior_box(robot)
    theta[robot.ee_columns], rad[robot.ee_columns] = box.centre, box.radius
    w_m, _ = Regressors(robot).momentum_pair(np.tile(q, (robot.nj, 1)), np.eye(robot.nj))
    w = w_m[np.arange(robot.nj), np.arange(robot.nj)]          # row j of M e_j: M_jj
    m_jj = w @ theta - np.abs(w) @ rad + np.maximum(robot.friction.lower[:, 2], 0.0)
    v_max = float(robot.config["controller"]["V_max"])
    return np.sqrt(2.0 * v_max / np.maximum(m_jj, 1e-12))


def controller_velocity_refusal(robot: Robot) -> str:
    """Why the robust controller must not run on this robot's hardware-like velocities, or ''."""
    tolerated = (robot.config.get("controller") or {}).get("velocity_error_max")
    if tolerated is None:
        return ""
    profile = HardwareProfile.from_robot(robot)
    err = published_velocity_error(robot, profile)
    if err <= float(tolerated):
        return ""
    floor = causal_velocity_floor(robot) if profile.quantize else None
    if floor is not None:
        rho = level_half_widths(robot)
        j = int(np.argmin(rho))
        if floor > rho[j]:
            return (f"no estimate from these encoder counts can tell whether V <= V_max = "
                    f"{robot.config['controller']['V_max']:g} J holds: under the stated motion "
                    f"premises (identification.differenced_velocity: accel_abs, jerk_abs) two "
                    f"motions with the same counts differ by {2 * floor:.3g} rad/s in "
                    f"{robot.joint_names[j]}'s velocity, more than the level's width 2 x "
                    f"{rho[j]:.3g} rad/s there (demo.start, the prior's lightest mass "
                    f"matrix; demo/velocity_premise.py). The driver's '{profile.velocity}' "
                    f"velocities are off by up to {err:.3g} rad/s; the law tolerates "
                    f"{float(tolerated):g} (controller.velocity_error_max)")
    return (f"the robust controller's V <= V_max holds for the velocities it is fed, and this "
            f"robot file states the closed loop tolerates {float(tolerated):g} rad/s of velocity "
            f"error (controller.velocity_error_max); the hardware-like driver publishes "
            f"'{profile.velocity}' velocities off by up to {err:.3g} rad/s "
            f"(simulation.hardware_like.profile). The identifier bounds its own estimate, but "
            f"the law needs a causal one within that tolerance" + _floor_text(robot))


def _floor_text(robot: Robot) -> str:
    floor = causal_velocity_floor(robot)
    if floor is None:
        return ""
    return (f"; no causal estimate from these encoder counts can promise less than "
            f"{floor:.3g} rad/s under the stated motion premises "
            f"(identification.differenced_velocity: accel_abs, jerk_abs)")
