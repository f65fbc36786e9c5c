"""The velocity stream's lag behind the positions, measured from the data: estimated by the
calibration and checked against the payload data by the identifier, with one curve.

A driver that differentiates and filters causally publishes q̇_j(t) ≈ q̇_true,j(t − Lv_j).
Against the centred difference of the positions over ±m samples (m = :data:`SPAN_S` in median
steps, at least 1: a centred difference has no lag of its own, and at 1 kHz a one-step
difference of quantised positions is too noisy to show 20 ms), the RMS of q̇_j(t + s) − that
difference over shifts s on :data:`GRID` is smallest near s = Lv_j (:class:`LagCurve`). Only
samples whose difference spans 2m median steps (no gap) count, and only while every shift
reads inside the run and away from a gap.

- **Calibration** (:func:`estimate`): Lv_j is the refined minimiser of all recordings' curve,
  zero where the RMS at zero shift is within :data:`NEAR_OPTIMAL` of the best (no lag
  detected). Its radius is how far the data let it move: the farthest from Lv_j of the shifts
  within :data:`NEAR_OPTIMAL` of the best and of each recording's own minimiser, at least a
  grid step and half a median step.
- **Identifier** (:func:`contradiction`): the payload data's own curve against the stated lag
  and radius. They contradict when the stated lag's RMS exceeds the best by more than
  :data:`NEAR_OPTIMAL` and every shift that close to the best lies farther than the radius
  plus max(two grid steps, median step) from it, what it adds to the RMS is above
  :data:`MIN_EFFECT` and the stated velocity bound, and at least :data:`MIN_SECONDS` of samples
  were counted. The momentum rows would then read every velocity at the wrong instant, which
  no bound in the rows covers: the result is ``inconsistent``.
  This is what catches a driver's velocity filter that was never stated or calibrated.

The check looks only at the published velocities (not at a velocity estimate that replaces
them), and a joint that hardly moves gives a flat curve that contradicts nothing.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["GRID", "LagCurve", "LagContradiction", "VelocityLagEstimate", "contradiction",
           "estimate", "refined_argmin", "NEAR_OPTIMAL"]

#: Shifts whose RMS is within this fraction of the best are all plausible.
NEAR_OPTIMAL = 0.05
#: Candidate velocity lags (s): a causal velocity filter of up to 100 ms.
GRID = np.round(np.arange(-0.02, 0.10001, 0.001), 4)
#: Half-span (s) of the position difference the velocity is measured against.
SPAN_S = 0.01
#: A step longer than this many median steps is a gap no shifted reading interpolates across.
GAP_STEPS = 2.5
#: rad/s: a lag is flagged only if what it adds to the RMS, sqrt(rms_stated² − rms_best²), is
#: above this and above the stated ``velocity_noise_abs``: exact simulated data have curves near
#: zero whose minimiser means nothing, and a smaller velocity error is within the torque bound's
#: share of ordinary velocity noise.
MIN_EFFECT = 1e-3
#: s of counted samples before the check speaks (online, the first updates see a few windows).
MIN_SECONDS = 1.0


def refined_argmin(grid: np.ndarray, values: np.ndarray) -> float:
    """Grid minimiser refined by the parabola through it and its two neighbours."""
    i = int(np.nanargmin(values))
    if 0 < i < grid.size - 1 and np.all(np.isfinite(values[i - 1:i + 2])):
        y0, y1, y2 = values[i - 1:i + 2]
        den = y0 - 2.0 * y1 + y2
        if den > 0:
            step = grid[i + 1] - grid[i]
            return float(grid[i] + 0.5 * step * (y0 - y2) / den)
    return float(grid[i])


class LagCurve:
    """Sum of squares of q̇(t + s) − the centred position difference at t, per shift and joint,
    fed run by run (offline, a whole recording) or batch by batch (online, the same sums)."""

    def __init__(self, nj: int, grid: np.ndarray = GRID) -> None:
        self.grid = np.asarray(grid, float)
        self.sq = np.zeros((self.grid.size, nj))
        self.count = 0
        self.step = 0.0                    # the stream's median step (s), from the first batch
        self.break_run()

    def break_run(self) -> None:
        """Forget the held samples (a gap, a reset): no difference or shift spans the break."""
        self._t = np.zeros(0)
        self._q = np.zeros((0, self.sq.shape[1]))
        self._dq = np.zeros((0, self.sq.shape[1]))
        self._done = -np.inf               # stamps up to this one have been counted

    def push(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray, step: float | None = None
             ) -> None:
        """Add samples (strictly increasing stamps after the held ones) and count every sample
        whose difference and shifted readings now lie inside the held run."""
        if self.step <= 0.0:
            self.step = float(step if step is not None else np.median(np.diff(t)))
        self._t = np.concatenate([self._t, t])
        self._q = np.concatenate([self._q, q])
        self._dq = np.concatenate([self._dq, dq])
        tt = self._t
        m = max(1, round(SPAN_S / self.step))
        if tt.size < 2 * m + 1:
            return
        mid = np.arange(m, tt.size - m)
        ready = mid[(tt[mid] > self._done) & (tt[mid] + self.grid[0] >= tt[0])
                    & (tt[mid] + self.grid[-1] <= tt[-1])]
        if ready.size:
            self._count(ready, m)
            self._done = float(tt[ready[-1]])
        keep = max(0, min(int(np.searchsorted(tt, self._done + self.grid[0])) - 1,
                          int(np.searchsorted(tt, self._done, side="right")) - m - 1))
        self._t, self._q, self._dq = tt[keep:], self._q[keep:], self._dq[keep:]

    def _count(self, mid: np.ndarray, m: int) -> None:
        t = self._t
        span = t[mid + m] - t[mid - m]
        # no gap under the difference, and none (> GAP_STEPS steps) under a shifted reading
        big = np.concatenate([[0], np.cumsum(np.diff(t) > GAP_STEPS * self.step)])
        lo = np.searchsorted(t, t[mid] + self.grid[0], side="right") - 1
        hi = np.searchsorted(t, t[mid] + self.grid[-1], side="left")
        mid = mid[(np.abs(span - 2 * m * self.step) < 0.25 * self.step) & (big[hi] == big[lo])]
        if mid.size == 0:
            return
        centre = (self._q[mid + m] - self._q[mid - m]) / (t[mid + m] - t[mid - m])[:, None]
        want = t[mid][:, None] + self.grid[None, :]                       # (n, G)
        for j in range(self.sq.shape[1]):
            read = np.interp(want, t, self._dq[:, j])
            self.sq[:, j] += np.sum((read - centre[:, j:j + 1]) ** 2, axis=0)
        self.count += int(mid.size)

    def rms(self) -> np.ndarray:
        """(G, nj) RMS per shift (NaN before any sample counted)."""
        if self.count == 0:
            return np.full(self.sq.shape, np.nan)
        return np.sqrt(self.sq / self.count)



def _plausible(rms: np.ndarray) -> np.ndarray:
    """(G, nj): shifts whose RMS is within :data:`NEAR_OPTIMAL` of each joint's best."""
    return rms <= (1.0 + NEAR_OPTIMAL) * np.nanmin(rms, axis=0)


def _merged(curves: Sequence[LagCurve]) -> LagCurve:
    out = LagCurve(curves[0].sq.shape[1], curves[0].grid)
    for c in curves:
        out.sq += c.sq
        out.count += c.count
    out.step = float(np.median([c.step for c in curves if c.count] or [0.0]))
    return out


@dataclass(frozen=True)
class VelocityLagEstimate:
    """Per joint: ``lag`` Lv_j and ``radius`` (s) (module docstring)."""

    lag: np.ndarray
    radius: np.ndarray

    def describe(self, names: Sequence[str]) -> str:
        return "velocity lag " + ", ".join(
            f"{n} {1e3 * lag:.1f}±{1e3 * r:.1f} ms"
            for n, lag, r in zip(names, self.lag, self.radius))


def estimate(curves: Sequence[LagCurve]) -> VelocityLagEstimate:
    """Lv_j and its radius from one curve per recording (module docstring)."""
    counted = [c for c in curves if c.count]
    nj = curves[0].sq.shape[1] if curves else 0
    if not counted:
        return VelocityLagEstimate(np.zeros(nj), np.zeros(nj))
    whole = _merged(counted)
    rms, grid = whole.rms(), whole.grid
    near = _plausible(rms)
    lag = np.array([refined_argmin(grid, rms[:, j]) for j in range(nj)])
    lag[near[int(np.argmin(np.abs(grid)))]] = 0.0      # zero shift is as good: no lag detected
    step = float(np.min(np.diff(grid)))
    radius = np.full(nj, max(step, 0.5 * whole.step))
    each = [c.rms() for c in counted]
    for j in range(nj):
        ends = [grid[near[:, j]].min(), grid[near[:, j]].max()]
        ends += [refined_argmin(grid, r[:, j]) for r in each]
        radius[j] = max(radius[j], float(np.max(np.abs(np.array(ends) - lag[j]))))
    return VelocityLagEstimate(lag, radius)


@dataclass(frozen=True)
class LagContradiction:
    """The payload data's velocities lag by ``found`` s (plausible ``span``), not the stated
    ``stated`` ± ``radius``: RMS against the position difference ``rms_stated`` vs ``rms_best``
    (rad/s)."""

    joint: str
    found: float
    span: tuple[float, float]
    stated: float
    radius: float
    rms_stated: float
    rms_best: float

    def describe(self) -> str:
        return (f"velocity lag premise broken: {self.joint}'s velocities lag its positions by "
                f"{1e3 * self.found:.1f} ms (plausible {1e3 * self.span[0]:.0f} to "
                f"{1e3 * self.span[1]:.0f} ms), not the stated {1e3 * self.stated:.1f} ± "
                f"{1e3 * self.radius:.1f} ms (RMS against the positions' difference "
                f"{self.rms_best:.4f} rad/s there, {self.rms_stated:.4f} at the stated lag): "
                "state velocity_lag_s (a driver's velocity filter) or calibrate it")


def contradiction(curve: LagCurve, stated: np.ndarray, radius: np.ndarray,
                  names: Sequence[str], joints: np.ndarray | None = None,
                  noise: np.ndarray | None = None) -> LagContradiction | None:
    """The first of ``joints`` (default all) whose data contradict its stated lag (module
    docstring), with ``noise`` (nj,) the stated velocity bound, or None."""
    if curve.count * curve.step < MIN_SECONDS:
        return None
    floor = np.maximum(MIN_EFFECT, np.zeros(curve.sq.shape[1]) if noise is None else noise)
    rms, grid = curve.rms(), curve.grid
    near = _plausible(rms)
    # two grid steps: a minimiser's place on the grid is noisy by one either way
    tol = max(2.0 * float(np.min(np.diff(grid))), curve.step) + 1e-9
    for j in range(rms.shape[1]) if joints is None else joints:
        at = float(np.interp(stated[j], grid, rms[:, j]))
        best = float(np.min(rms[:, j]))
        span = grid[near[:, j]]
        if at <= (1.0 + NEAR_OPTIMAL) * best or at ** 2 - best ** 2 <= floor[j] ** 2 or \
                np.min(np.abs(span - stated[j])) <= radius[j] + tol:
            continue
        return LagContradiction(names[j], refined_argmin(grid, rms[:, j]),
                                (float(span.min()), float(span.max())), float(stated[j]),
                                float(radius[j]), at, best)
    return None
