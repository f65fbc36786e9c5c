"""Exciting joint references for simulated data (no ROS import): random sums of sines.

``q_d(t) = q_start + e(t) · Σ_h a_h (sin(ω_h t + φ_h) − sin φ_h)`` per joint, with a smooth
ramp-in envelope e (C² smootherstep 10x³ − 15x⁴ + 6x⁵, x = t/ramp, from 0 to 1 over ``ramp``
seconds) so the reference starts at ``q_start`` at rest, as a real identification run starts
from a standing robot, and its acceleration stays continuous. Amplitudes are
scaled per joint so that the peak speed stays below ``speed``·dq_max (a bound that counts the
ramp's contribution) and the motion stays inside the joint limits with a margin.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.errors import SimConfigError

__all__ = ["SumOfSines", "exciting_reference"]


@dataclass(frozen=True, eq=False)
class SumOfSines:
    """Joint reference ``t → (q_d, q̇_d)`` (rad, rad/s); module docstring for the formula.

    ``start`` (nj,); ``amp``, ``omega`` (rad/s), ``phase`` (rad): (n_harmonics, nj); ``ramp``
    (s, > 0). Called with a scalar t it returns two (nj,) arrays, with t of shape (N,) two
    (N, nj) arrays.
    """

    start: np.ndarray
    amp: np.ndarray
    omega: np.ndarray
    phase: np.ndarray
    ramp: float = 1.0

    def __call__(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = np.asarray(t, dtype=float)
        tt = t[..., None, None]                       # (..., 1, 1) against (H, nj)
        arg = self.omega * tt + self.phase
        s = np.sum(self.amp * (np.sin(arg) - np.sin(self.phase)), axis=-2)
        ds = np.sum(self.amp * self.omega * np.cos(arg), axis=-2)
        x = np.clip(t / self.ramp, 0.0, 1.0)[..., None]
        env = x**3 * (10.0 - 15.0 * x + 6.0 * x * x)
        denv = 30.0 * (x * (1.0 - x)) ** 2 / self.ramp
        return self.start + env * s, denv * s + env * ds


def exciting_reference(robot: Robot, rng: np.random.Generator, start: np.ndarray | None = None,
                       n_harmonics: int = 3, speed: float = 0.6, ramp: float = 1.0,
                       omega_range: tuple[float, float] = (0.8, 3.0)) -> SumOfSines:
    """A random :class:`SumOfSines` for the robot's actuated joints (config order).

    ``start``: initial joint angles (default: near the middle of each joint's range, ±20 % of
    the half-range; continuous joints count as ±π). Per joint the excursion from ``start``
    stays within 30 % of the range and 90 % of the distance to the nearer limit; peak speed ≤
    ``speed``·dq_max. Frequencies uniform in ``omega_range`` (rad/s), phases uniform.
    """
    nj = robot.nj
    if n_harmonics < 1 or not 0.0 < speed <= 1.0 or not ramp > 0.0:
        raise SimConfigError("exciting_reference needs n_harmonics >= 1, 0 < speed <= 1 and "
                             f"ramp > 0 (got {n_harmonics}, {speed}, {ramp})")
    lo_lim, hi_lim = robot.limits.q_lower, robot.limits.q_upper
    if start is None:
        lo = np.where(np.isfinite(lo_lim), lo_lim, -np.pi)
        hi = np.where(np.isfinite(hi_lim), hi_lim, np.pi)
        start = 0.5 * (lo + hi) + rng.uniform(-0.2, 0.2, nj) * 0.5 * (hi - lo)
    start = np.asarray(start, dtype=float)
    if start.shape != (nj,) or not np.all(np.isfinite(start)):
        raise SimConfigError(f"start must be {nj} finite joint angles, got {start!r}")
    if np.any(start < lo_lim) or np.any(start > hi_lim):
        raise SimConfigError(f"start {start} is outside the joint limits")
    # continuous joints: a ±π window around the start
    lo = np.where(np.isfinite(lo_lim), lo_lim, start - np.pi)
    hi = np.where(np.isfinite(hi_lim), hi_lim, start + np.pi)
    omega = rng.uniform(*omega_range, (n_harmonics, nj))
    phase = rng.uniform(0.0, 2.0 * np.pi, (n_harmonics, nj))
    amp = rng.uniform(0.5, 1.0, (n_harmonics, nj))
    # |s| ≤ 2Σa and |ṡ| ≤ Σaω, so |q̇_d| ≤ max(e')·2Σa + Σaω with max(e') = 1.875/ramp
    v_bound = 3.75 * np.sum(amp, axis=0) / ramp + np.sum(amp * omega, axis=0)
    room = np.minimum(0.3 * (hi - lo), 0.9 * np.minimum(start - lo, hi - start))
    scale = np.minimum(speed * robot.limits.dq_max / v_bound, room / (2.0 * np.sum(amp, axis=0)))
    return SumOfSines(start, amp * scale, omega, phase, float(ramp))
