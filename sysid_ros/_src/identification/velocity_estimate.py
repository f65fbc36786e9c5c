"""Joint velocities from quantised positions over jittered stamps, each with a sound error bound.

A driver that differentiates its encoder (the Unitree Z1's: a backward difference of 0.01°
counts at 500 Hz, ±0.1 rad/s of quantisation alone) publishes velocities with no useful bound.
This estimator replaces them: at sample k, the least-squares slope of the positions whose stamps
lie within ``half_width_s`` of s_k,

    v̂_k = Σ_i w_i q̂_i,   w_i = (s_i − s̄) / Σ_j (s_j − s̄)²   (Σ w_i = 0, Σ w_i s_i = 1).

Premises (the identification config's ``velocity_estimate``: the robot file's
``identification.velocity_estimate``, or ``differenced_velocity`` for hardware-like data; per
joint where it says so):

- the published position q̂_i is within ``encoder_resolution_deg``/2 of q(t_i) (rounding);
- a stamp lags its sample's true instant t_i by δ_i ∈ [0, ``stamp_delay_s``];
- |q̈| ≤ ``accel_abs`` everywhere, and q̈ changes by at most ``jerk_abs``·(|u − v| + ``accel_hold_s``)
  between instants u and v (a jerk bound; the hold covers an acceleration that steps with a
  torque held over a control or physics step).

Then, with σ_i = s_i − s_k, Σ|w| = Σ_i |w_i| and κ = D·Σ|w|/2 (D the stamp delay bound), the error
e_k = v̂_k − q̇(t_k) obeys (Taylor about t_k; Σ w_i δ_i = Σ w_i (δ_i − D/2))

    |e_k|·(1 − κ) ≤ κ·|v̂_k| + ½·A·(|Σ w_i σ_i²| + 2D·Σ|w_i σ_i| + D²·Σ|w|)
                    + Σ|w_i|·min(A·ρ_i², J·(ρ_i³/6 + h₀·ρ_i²/2)) + (res/2)·Σ|w|,
    ρ_i = |σ_i| + D,

which :meth:`VelocityEstimate.estimate` returns per sample. The identifier states one bound per
joint, ``velocity_noise_abs``: a sample whose own bound exceeds it (drops, a stall near it) is not
used — it splits the run as a gap does — so every sample used is within the stated bound.

The premises are checked against the data where the data can contradict them: the slope over
half the width is a second estimate of the same q̇(t_k) with its own bound under the same
premises, so the two must overlap. Where they do not, a premise is broken (a jerk or acceleration
beyond the stated bound, a coarser encoder, later stamps) and the identifier reports
``inconsistent`` with the joint, the time and the excess (:attr:`VelocityCheck.describe`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.identification.errors import IdentificationConfigError

__all__ = ["VelocityEstimate", "VelocityCheck", "EstimatedVelocity", "slope_source"]

def slope_source(half_width_s: float) -> str:
    """The velocity source a calibration records for recordings whose velocities are this
    estimate's (``sysid-calibrate --state-estimate slope``)."""
    return f"state estimate (slope +-{half_width_s:g} s, positions only)"


_KEYS = ("half_width_s", "encoder_resolution_deg", "stamp_delay_s", "accel_abs", "jerk_abs",
         "accel_hold_s")


@dataclass(frozen=True)
class EstimatedVelocity:
    """``dq`` (N, nj) the estimates, ``bound`` (N, nj) their error bounds (inf where no estimate:
    the window is not covered or has a gap), ``check`` (N, nj) how far the half-width estimate
    disagrees beyond both bounds (> 0: a premise is broken; nan where not checked)."""

    dq: np.ndarray
    bound: np.ndarray
    check: np.ndarray


@dataclass(frozen=True)
class VelocityCheck:
    """The first contradiction of the premises seen: ``joint`` name, stamp ``t`` (s), the two
    estimates' disagreement ``excess`` (rad/s) beyond their bounds' sum, and ``count`` samples."""

    joint: str
    t: float
    excess: float
    count: int

    def describe(self) -> str:
        return (f"velocity estimate premises broken: at t = {self.t:.3f} s {self.joint}'s "
                f"estimates over the full and the half width differ by {self.excess:.4f} rad/s "
                f"more than their bounds allow ({self.count} samples): the stated jerk, "
                "acceleration, encoder or stamp-delay bound of the velocity estimate does not "
                "hold for these data")


@dataclass(frozen=True)
class VelocityEstimate:
    """The estimator and its premises (module docstring); arrays are per joint."""

    half_width_s: float
    resolution: np.ndarray      # rad
    stamp_delay_s: float
    accel_abs: np.ndarray       # rad/s²
    jerk_abs: np.ndarray        # rad/s³
    accel_hold_s: float = 0.0

    @classmethod
    def from_mapping(cls, sec: dict[str, Any], nj: int, where: str) -> VelocityEstimate:
        unknown = sorted(set(sec) - set(_KEYS))
        missing = [k for k in _KEYS[:5] if k not in sec]
        if unknown or missing:
            raise IdentificationConfigError(
                f"{where}: " + (f"unknown keys {unknown}; " if unknown else "")
                + (f"missing {missing}; " if missing else "") + f"expected {list(_KEYS)}")

        def vec(key: str) -> np.ndarray:
            v = np.broadcast_to(np.asarray(sec[key], float), (nj,)).copy() \
                if np.ndim(sec[key]) == 0 or len(sec[key]) == nj else None
            if v is None or not np.all(np.isfinite(v)) or np.any(v < 0):
                raise IdentificationConfigError(
                    f"{where}.{key}: expected one finite value >= 0 or one per joint ({nj})")
            return v

        def num(key: str, default: float | None = None) -> float:
            x = float(sec.get(key, default))   # type: ignore[arg-type]
            if not np.isfinite(x) or x < 0:
                raise IdentificationConfigError(f"{where}.{key}: expected a finite value >= 0")
            return x

        h = num("half_width_s")
        if h <= 0:
            raise IdentificationConfigError(f"{where}.half_width_s: expected > 0 s")
        return cls(h, np.deg2rad(vec("encoder_resolution_deg")), num("stamp_delay_s"),
                   vec("accel_abs"), vec("jerk_abs"), num("accel_hold_s", 0.0))

    def assumptions(self) -> dict[str, Any]:
        return {"half_width_s": self.half_width_s,
                "encoder_resolution_rad": self.resolution.tolist(),
                "stamp_delay_s": self.stamp_delay_s, "accel_abs": self.accel_abs.tolist(),
                "jerk_abs": self.jerk_abs.tolist(), "accel_hold_s": self.accel_hold_s}

    def estimate(self, t: np.ndarray, q: np.ndarray, max_step: float,
                 ready: np.ndarray | None = None) -> EstimatedVelocity:
        """Estimates, bounds and the half-width check at the samples ``ready`` (indices into
        ``t``; default all) of positions ``q`` (N, nj) at stamps ``t`` (N,). A sample needs
        samples on both sides reaching ``half_width_s`` and no step longer than ``max_step``
        in between; otherwise its bound is inf."""
        idx = np.arange(t.size) if ready is None else np.asarray(ready, int)
        dq, bound = self._slope(t, q, idx, self.half_width_s, max_step)
        dq2, bound2 = self._slope(t, q, idx, 0.5 * self.half_width_s, max_step)
        both = np.isfinite(bound) & np.isfinite(bound2)
        check = np.where(both, np.abs(dq - dq2) - bound - bound2, np.nan)
        return EstimatedVelocity(dq, bound, check)

    def _slope(self, t: np.ndarray, q: np.ndarray, idx: np.ndarray, h: float,
               max_step: float) -> tuple[np.ndarray, np.ndarray]:
        nj = q.shape[1]
        lo = np.searchsorted(t, t[idx] - h, side="left")
        hi = np.searchsorted(t, t[idx] + h, side="right")      # window [lo, hi)
        dq = np.zeros((idx.size, nj))
        bound = np.full((idx.size, nj), np.inf)
        # the window must reach h on both sides: a sample at or beyond it on each side exists
        # (strictly inside the stream), and no step in it is a gap
        steps_ok = np.concatenate([[True], np.diff(t) <= max_step])
        bad = np.concatenate([[0], np.cumsum(~steps_ok)])
        D, res, A, J, h0 = (self.stamp_delay_s, self.resolution, self.accel_abs, self.jerk_abs,
                            self.accel_hold_s)
        for n, (k, a, b) in enumerate(zip(idx, lo, hi)):
            if a == 0 or b == t.size or b - a < 3 or bad[b] - bad[a + 1] > 0 \
                    or t[a - 1] < t[k] - h - max_step or t[b] > t[k] + h + max_step:
                continue
            s = t[a:b]
            c = s - s.mean()
            w = c / np.dot(c, c)
            sig = s - t[k]
            sw = np.abs(w).sum()
            kappa = 0.5 * D * sw
            if kappa >= 1.0:
                continue
            v = w @ q[a:b]
            reach = np.abs(sig) + D
            accel = 0.5 * A * (abs(float(w @ sig ** 2)) + 2.0 * D * float(np.abs(w * sig).sum())
                               + D * D * sw)
            # |q̈(u) − q̈(t_k)| ≤ min(2A, J·(|u − t_k| + h₀)), integrated twice
            jerk = np.abs(w) @ np.minimum(A[None, :] * reach[:, None] ** 2, J[None, :] * (
                reach[:, None] ** 3 / 6.0 + 0.5 * h0 * reach[:, None] ** 2))
            dq[n] = v
            bound[n] = (kappa * np.abs(v) + accel + jerk + 0.5 * res * sw) / (1.0 - kappa)
        return dq, bound
