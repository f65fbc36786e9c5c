"""Torque-stream lag: estimated per joint from the calibration rows, with an uncertainty.

A window row's torque integral is the one quantity a lag L_j between the torque and the state
streams changes: reading τ̂_j at t + L turns c = ∫τ̂_j over [a, b] into ∫τ̂_j over [a + L, b + L],
while the regressor side (states only) stays. So for every candidate L on a grid the rows are
re-integrated from the recordings (no regressor is recomputed), the box-bounded least-squares
fit of all rows is solved, and each joint's window-averaged residual RMS is read off:

- L_j = the grid point (refined by a parabola through its neighbours) where joint j's RMS is
  smallest, fitted on all recordings together (MAP least squares under the prior);
- radius_j = the largest distance from L_j of every lag whose RMS is within
  ``NEAR_OPTIMAL`` of the best and of the minimiser found on each recording alone, but at least
  a grid step and the stream's median step (a sample's torque may stand for any instant of
  its period): how far the data let the lag move. The
  rows carry it as a torque-timing bound (``torque_lag_radius_s``).

A joint whose RMS at zero lag is already within ``NEAR_OPTIMAL`` of the best gets no lag and no
radius: no lag is detected, and the noise bound covers its timing error as it covers any other
unmodelled effect of the calibration data.

The radius is an empirical statement, as the noise bound is: a lag outside it is what the
"loudly inconsistent" test checks (an uncompensated lag makes the identifier refuse).

The lag is a property of the driver, so the identifier applies the calibrated value to payload
data of the same driver (:mod:`sysid_ros._src.identification.alignment`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.energy import prefix_trapezoid
from sysid_ros._src.calibration.prior import Prior
from sysid_ros._src.identification.calibration_constraints import CalibrationRows
from sysid_ros._src.identification import velocity_lag
from sysid_ros._src.identification.velocity_lag import NEAR_OPTIMAL, LagCurve, \
    VelocityLagEstimate, refined_argmin

__all__ = ["LagEstimate", "estimate_torque_lag", "estimate_velocity_lag", "LAG_GRID"]

#: Candidate lags (s): the torque stream up to 50 ms ahead of or 250 ms behind the states.
LAG_GRID = np.round(np.arange(-0.05, 0.25001, 0.0025), 5)


@dataclass(frozen=True)
class LagEstimate:
    """Per joint: ``lag`` L_j (s, torque behind the states when > 0), ``radius`` (s), the
    window-averaged residual RMS at L = 0 and at L_j (N·m), and the grid with each joint's RMS
    on it (for the report)."""

    lag: np.ndarray
    radius: np.ndarray
    rms_zero: np.ndarray
    rms_lag: np.ndarray
    grid: np.ndarray
    rms_grid: np.ndarray          # (len(grid), nj)

    def describe(self, names: Sequence[str]) -> str:
        return "torque lag " + ", ".join(
            f"{n} {1e3 * l:.0f}±{1e3 * r:.0f} ms ({a:.2f}->{b:.2f} N*m)"
            for n, l, r, a, b in zip(names, self.lag, self.radius, self.rms_zero, self.rms_lag))


def _shifted_integrals(rows: CalibrationRows, recordings: Sequence[Recording],
                       lag: float) -> np.ndarray:
    """c of every row with its joint's torque read ``lag`` seconds later (trapezoid)."""
    c = np.empty(len(rows))
    for k, rec in enumerate(recordings):
        sel = np.flatnonzero(rows.source == k)
        if sel.size == 0:
            continue
        t = rec.t
        tau = np.stack([np.interp(t + lag, t, rec.tau[:, j]) for j in range(rec.tau.shape[1])],
                       axis=1)
        prefix = prefix_trapezoid(t, tau)
        j = rows.joint[sel]
        c[sel] = prefix[rows.end[sel], j] - prefix[rows.start[sel], j] - rows.known[sel]
    return c


class _Fit:
    """The MAP least-squares fit of all rows under the prior (Gaussian, centred on the prior's
    nominal with σ = its half-width; fixed parameters held): linear in the torque integrals, so
    it is factorised once and every candidate lag costs one solve."""

    def __init__(self, rows: CalibrationRows, prior: Prior) -> None:
        T = rows.t_end - rows.t_start
        self.inv_T = 1.0 / T
        A = rows.A.multiply(self.inv_T[:, None]).tocsc()
        self.free = prior.upper > prior.lower
        self.x0 = prior.nominal
        self.A_fixed = A[:, ~self.free] @ prior.lower[~self.free]
        self.A = A[:, self.free].toarray()
        sigma = 0.5 * (prior.upper - prior.lower)[self.free]
        normal = self.A.T @ self.A + np.diag(1.0 / sigma ** 2)
        self.chol = cho_factor(normal)
        self.prior_term = self.x0[self.free] / sigma ** 2

    def residuals(self, c: np.ndarray) -> np.ndarray:
        """Window-averaged residuals (N·m) of the fit to torque integrals ``c``."""
        b = c * self.inv_T - self.A_fixed
        x = cho_solve(self.chol, self.A.T @ b + self.prior_term)
        return self.A @ x - b


def _rms_by(resid: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, np.nan)
    for g in range(n):
        sel = groups == g
        if sel.any():
            out[g] = float(np.sqrt(np.mean(resid[sel] ** 2)))
    return out


def estimate_torque_lag(rows: CalibrationRows, recordings: Sequence[Recording], prior: Prior,
                        nj: int, grid: np.ndarray = LAG_GRID) -> LagEstimate:
    """Per-joint torque lag and its radius from rows built without lag (module docstring)."""
    n_rec = len(recordings)
    rms = np.empty((grid.size, nj))
    rms_rec = np.empty((grid.size, n_rec, nj))
    key = rows.source * nj + rows.joint
    fit = _Fit(rows, prior)
    for g, lag in enumerate(grid):
        resid = fit.residuals(_shifted_integrals(rows, recordings, float(lag)))
        rms[g] = _rms_by(resid, rows.joint, nj)
        rms_rec[g] = _rms_by(resid, key, n_rec * nj).reshape(n_rec, nj)
    lag = np.array([refined_argmin(grid, rms[:, j]) for j in range(nj)])
    step = float(np.min(np.diff(grid)))
    dt = float(np.median(np.concatenate([np.diff(r.t) for r in recordings])))
    radius = np.full(nj, max(step, dt))
    for j in range(nj):
        near = grid[rms[:, j] <= (1.0 + NEAR_OPTIMAL) * np.nanmin(rms[:, j])]
        ends = [near.min() - 0.5 * step, near.max() + 0.5 * step]
        ends += [refined_argmin(grid, rms_rec[:, k, j]) for k in range(n_rec)
                 if np.all(np.isfinite(rms_rec[:, k, j]))]
        radius[j] = max(radius[j], float(np.max(np.abs(np.array(ends) - lag[j]))))
    zero = int(np.argmin(np.abs(grid)))
    # no lag detected (zero is as good as the best): the streams are taken as aligned, and the
    # noise bound absorbs what timing error there is, as it does without a lag estimate
    aligned = rms[zero] <= (1.0 + NEAR_OPTIMAL) * np.nanmin(rms, axis=0)
    lag[aligned], radius[aligned] = 0.0, 0.0
    at_lag = [float(np.interp(lag[j], grid, rms[:, j])) for j in range(nj)]
    return LagEstimate(lag, radius, rms[zero].copy(), np.array(at_lag), grid.copy(), rms)


def estimate_velocity_lag(recordings: Sequence[Recording], nj: int) -> VelocityLagEstimate:
    """Per joint, the lag (s) of the measured velocity behind the positions and its radius
    (:mod:`sysid_ros._src.identification.velocity_lag`, the curve the identifier checks payload
    data with). A driver that differentiates and filters causally shows one; a zero-phase or
    derived velocity none."""
    curves = []
    for rec in recordings:
        curve = LagCurve(nj)
        if rec.dq is not None and len(rec) >= 3:
            curve.push(rec.t, rec.q, rec.dq)
        curves.append(curve)
    return velocity_lag.estimate(curves)
