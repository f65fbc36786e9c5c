"""Degree-5 desired trajectories linear in the plan parameter k, and their exact time enclosures.

Per joint, on t ∈ [0, t_f] with s = t/t_f (docs/theory/planner.md#trajectory-family, S3 §V-A):

    q_d(t; k) = q₀ + q̇₀·t_f·H₁(s) + q̈₀·t_f²·H₂(s) + k·H₅(s)

with the quintic Hermite basis H₁ = s − 6s³ + 8s⁴ − 3s⁵, H₂ = ½s² − 3/2s³ + 3/2s⁴ − ½s⁵,
H₅ = 10s³ − 15s⁴ + 6s⁵. It starts at the current (q₀, q̇₀, q̈₀) and ends at rest at q₀ + k, so a
robot that keeps following it brakes to a stop: the built-in fail-safe. ``k`` lives in a box 𝒦.

``enclose`` gives, for a fixed k, the EXACT range of q_d, q̇_d, q̈_d over each time sub-interval:
a polynomial's extrema on [a, b] lie at a or b or at a real root of its derivative inside, so
evaluating at the sub-interval ends and at all real critical points is exact. The roots come from
``np.roots`` (companion eigenvalues); near-real complex pairs are kept as candidates (an extra
candidate is an attained value, never unsound) and every range is padded by 1e-12 of the
polynomial's coefficient magnitude to cover root and rounding error (the value error at an
approximate extremum is quadratic or higher in the root error).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.planning.errors import PlanRequestError
from sysid_ros._src.enclosures.interval import Interval

__all__ = ["QuinticTrajectory", "TrajectoryEnclosure", "H5"]

# quintic Hermite basis, ascending powers of s
H1 = np.array([0.0, 1.0, 0.0, -6.0, 8.0, -3.0])
H2 = np.array([0.0, 0.0, 0.5, -1.5, 1.5, -0.5])
H5 = np.array([0.0, 0.0, 0.0, 10.0, -15.0, 6.0])
_PAD = 1e-12


def _polyder(c: np.ndarray) -> np.ndarray:
    """Derivative of ascending-power coefficients along the last axis."""
    n = c.shape[-1]
    return c[..., 1:] * np.arange(1, n)


def _polyval(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """c (..., m) ascending coefficients evaluated at s (N,) → (..., N) (Horner)."""
    out = np.zeros(c.shape[:-1] + s.shape, dtype=np.result_type(c, s))
    for i in range(c.shape[-1] - 1, -1, -1):
        out = out * s + c[..., i, None]
    return out


@dataclass(frozen=True)
class TrajectoryEnclosure:
    """Exact ranges over sub-intervals [t_m, t_{m+1}]: q, dq, ddq are Interval (n, nj)."""

    edges: np.ndarray
    q: Interval
    dq: Interval
    ddq: Interval


@dataclass(frozen=True)
class QuinticTrajectory:
    """Family of desired trajectories from (q0, dq0, ddq0) over [0, t_f], parameterised by k."""

    q0: np.ndarray
    dq0: np.ndarray
    ddq0: np.ndarray
    t_f: float

    def __post_init__(self) -> None:
        arrays = [np.asarray(a, float) for a in (self.q0, self.dq0, self.ddq0)]
        if any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
            raise PlanRequestError("q0, dq0, ddq0 must be 1-D arrays of the same length")
        if any(not np.all(np.isfinite(a)) for a in arrays):
            raise PlanRequestError("initial state contains NaN or inf")
        if not (np.isfinite(self.t_f) and self.t_f > 0):
            raise PlanRequestError(f"t_f must be positive, got {self.t_f}")
        for name, a in zip(("q0", "dq0", "ddq0"), arrays):
            object.__setattr__(self, name, a)

    @property
    def nj(self) -> int:
        return self.q0.size

    def coefficients(self, k: np.ndarray) -> np.ndarray:
        """Ascending coefficients in s of q_d per joint: (..., nj, 6) for k (..., nj)."""
        k = np.asarray(k)
        base = (self.q0[:, None] * np.eye(6)[0] + self.dq0[:, None] * self.t_f * H1
                + self.ddq0[:, None] * self.t_f ** 2 * H2)
        return base + k[..., None] * H5

    def sample(self, t: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q_d, q̇_d, q̈_d at times t (N,) for k (..., nj) → each (..., N, nj). Complex k works."""
        s = np.asarray(t, float) / self.t_f
        c = self.coefficients(k)
        d1 = _polyder(c)
        d2 = _polyder(d1)
        q = _polyval(c, s)
        dq = _polyval(d1, s) / self.t_f
        ddq = _polyval(d2, s) / self.t_f ** 2
        return (np.swapaxes(q, -1, -2), np.swapaxes(dq, -1, -2), np.swapaxes(ddq, -1, -2))

    def state_at(self, t: float, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at time t (held at rest after t_f)."""
        tt = np.array([min(max(float(t), 0.0), self.t_f)])
        q, dq, ddq = self.sample(tt, np.asarray(k, float))
        return q[0], dq[0], ddq[0]

    def basis(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """∂q_d/∂k_j, ∂q̇_d/∂k_j, ∂q̈_d/∂k_j at times t (N,) (the same for every joint)."""
        s = np.asarray(t, float) / self.t_f
        d1 = _polyder(H5)
        return (_polyval(H5, s), _polyval(d1, s) / self.t_f,
                _polyval(_polyder(d1), s) / self.t_f ** 2)

    def enclose(self, k: np.ndarray, n_intervals: int) -> TrajectoryEnclosure:
        """Exact ranges of q_d, q̇_d, q̈_d over ``n_intervals`` equal sub-intervals of [0, t_f]."""
        if n_intervals < 1:
            raise PlanRequestError(f"n_intervals must be >= 1, got {n_intervals}")
        k = np.asarray(k, float)
        if k.shape != (self.nj,) or not np.all(np.isfinite(k)):
            raise PlanRequestError(f"k must be finite with shape ({self.nj},), got {k.shape}")
        edges_s = np.linspace(0.0, 1.0, n_intervals + 1)
        c = self.coefficients(k)
        out = []
        scale = 1.0
        for _ in range(3):
            out.append(self._ranges(c, edges_s, scale))
            c = _polyder(c)
            scale /= self.t_f
        return TrajectoryEnclosure(edges_s * self.t_f, *out)

    @staticmethod
    def _ranges(c: np.ndarray, edges: np.ndarray, scale: float) -> Interval:
        vals = _polyval(c, edges).T                                   # (n+1, nj)
        lo = np.minimum(vals[:-1], vals[1:])
        hi = np.maximum(vals[:-1], vals[1:])
        dc = _polyder(c)
        n = edges.size - 1
        for j in range(c.shape[0]):
            if not np.any(dc[j]):
                continue
            roots = np.roots(dc[j][::-1])
            roots = roots[np.abs(roots.imag) < 1e-6].real
            roots = roots[(roots > 0.0) & (roots < 1.0)]
            if roots.size == 0:
                continue
            m = np.clip(np.searchsorted(edges, roots) - 1, 0, n - 1)
            v = _polyval(c[j], roots)
            np.minimum.at(lo[:, j], m, v)
            np.maximum.at(hi[:, j], m, v)
        pad = _PAD * np.sum(np.abs(c), axis=-1)
        return Interval.from_bounds((lo - pad) * scale, (hi + pad) * scale)
