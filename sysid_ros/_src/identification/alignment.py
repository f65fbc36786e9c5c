"""Stream alignment: calibrated per-joint lags of the torque and velocity streams behind the
positions' stamps.

A driver's torque reading often lags the joint states it is published with: a current or torque
sensor's filter, a bus that carries the two in different frames. Real Gen3 logs need the torque
read 60-120 ms after the state's stamp (docs/guide/calibrate.md, "Timing"). Over a momentum window
[a, b] such a lag L_j is not a small quadrature error: it moves the whole ∫τ dt by about
L_j·(τ(b) − τ(a)), and it biases every row that way.

The calibration measures L_j (``torque_lag_s``) and how far it can be off (``torque_lag_radius_s``).
This stage compensates the lag before the windows are formed: sample k keeps its stamp t_k, q
and q̇, and gets τ̃_j(t_k) = τ̂_j(t_k + L_j), interpolated linearly between the two samples that
bracket t_k + L_j. The uncompensated rest |L_true − L_j| ≤ radius_j is carried by the rows'
torque-timing bound (``MomentumRows.delay``), as any other offset of the torque stream.

A sample is held until the stream has reached t_k + max_j L_j (online: the rows wait that long);
a sample whose t_k + L_j falls into a step longer than the sampling plan's ``max_sample_gap``
cannot be aligned: it is dropped and splits the run there, as a gap does. With a stated
torque-rate bound (``torque_rate_abs``, :mod:`.config`) a torque read inside a bridged step
(at most ``max_bridged_gap`` long) is kept: linear interpolation over a step h is then off by
at most L_j·(2·d₁·d₂/h + Δ) (d₁, d₂ the distances to the step's two samples, Δ the median
step), returned per sample as ``tau_err`` for the windows to integrate into the radius. The last samples of a
recording, whose aligned torque lies beyond its end, are never emitted.

A driver's velocity filter lags the same way (``velocity_lag_s``): q̇_j(t_k) is read at
t_k + Lv_j, by the same interpolation. What is left of the filter after that (its smoothing) is
velocity error the calibration's noise bound absorbs, as it absorbs a driver's velocity noise.

With a velocity estimate (:mod:`.velocity_estimate`) the stage also replaces the published
velocities by the slope of the held positions: a sample waits until the stream has passed its
half-width, and one whose error bound exceeds the stated ``velocity_noise_abs`` (the window not
yet covered after a start, a gap near it) is not aligned — it splits the run. The first sample
whose two estimates contradict the premises is kept in :attr:`StreamAlignment.velocity_check`.

With all lags zero and no velocity estimate the stage passes every sample through unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.identification.velocity_estimate import VelocityCheck, VelocityEstimate

__all__ = ["AlignedSamples", "Bridging", "StreamAlignment"]


@dataclass(frozen=True)
class AlignedSamples:
    """Samples ready for the windows: ``valid`` False where the torque could not be aligned
    (such a sample splits the run). ``extra`` rides along unchanged (e.g. the base motion);
    ``tau_err`` (N, nj) bounds the interpolation error of torques read inside a bridged step
    (zero elsewhere)."""

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    extra: np.ndarray | None
    valid: np.ndarray
    tau_err: np.ndarray


@dataclass(frozen=True)
class Bridging:
    """What a torque read inside a gap may rest on: steps up to ``max_gap`` s are bridged with
    the torque-rate bound ``rate_abs`` (nj,) N·m/s over a stream of median step ``step`` s."""

    max_gap: float
    rate_abs: np.ndarray
    step: float


class StreamAlignment:
    """Per-joint torque and velocity lag compensation over a stream of samples (module
    docstring).

    Args:
        lag: (nj,) L_j in seconds (positive: the torque stream lags the positions).
        velocity_lag: (nj,) Lv_j in seconds (positive: the velocities lag); default none.
        velocity_estimate: replaces the published velocities (module docstring), with
        ``velocity_bound`` (nj,) rad/s the stated bound a used sample must be within.
        joint_names: for the premise check's report.
    """

    def __init__(self, lag: np.ndarray, velocity_lag: np.ndarray | None = None,
                 velocity_estimate: VelocityEstimate | None = None,
                 velocity_bound: np.ndarray | None = None,
                 joint_names: tuple[str, ...] = ()) -> None:
        self.lag = np.asarray(lag, float).reshape(-1)
        self.velocity_lag = (np.zeros_like(self.lag) if velocity_lag is None
                             else np.asarray(velocity_lag, float).reshape(-1))
        self.estimate = velocity_estimate
        self.velocity_bound = (np.zeros_like(self.lag) if velocity_bound is None
                               else np.asarray(velocity_bound, float).reshape(-1))
        self.joint_names = joint_names
        both = np.concatenate([self.lag, self.velocity_lag])
        self.active = bool(np.any(both != 0.0)) or velocity_estimate is not None
        # an estimate needs the positions up to a step beyond its half-width on either side
        half = 0.0 if velocity_estimate is None else velocity_estimate.half_width_s
        self._lead = max(0.0, float(both.max(initial=0.0)), 1.000001 * half)
        self._back = max(0.0, -float(both.min(initial=0.0)), 2.0 * half)
        #: the first contradiction of the velocity estimate's premises (None: none seen)
        self.velocity_check: VelocityCheck | None = None
        #: samples whose velocity bound exceeded the stated one (not used)
        self.n_velocity_unbounded = 0
        self.reset()

    def reset(self) -> None:
        """Forget the held samples (a new run, a reset of the windows)."""
        self._t = np.zeros(0)
        self._q: np.ndarray | None = None
        self._dq: np.ndarray | None = None
        self._tau: np.ndarray | None = None
        self._extra: np.ndarray | None = None
        self._next = 0            # index (in the held arrays) of the first sample not yet emitted

    @property
    def held(self) -> int:
        """Samples received but not yet emitted."""
        return int(self._t.size - self._next)

    @property
    def last_time(self) -> float | None:
        return float(self._t[-1]) if self._t.size else None

    def push(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
             extra: np.ndarray | None, max_gap: float, bridging: Bridging | None = None
             ) -> AlignedSamples:
        """Add samples (validated, strictly increasing) and return those now aligned. A torque
        read inside a step longer than ``max_gap`` is kept only within ``bridging``."""
        if not self.active:
            return AlignedSamples(t, q, dq, tau, extra, np.ones(t.size, bool),
                                  np.zeros_like(tau))
        self._append(t, q, dq, tau, extra)
        assert self._q is not None and self._dq is not None and self._tau is not None
        ready = np.flatnonzero(self._t[self._next:] + self._lead <= self._t[-1]) + self._next
        if ready.size == 0:
            return self._empty()
        idx = np.arange(self._next, int(ready[-1]) + 1)
        tau_a, valid, tau_err = self._aligned(idx, self._tau, self.lag, max_gap, bridging)
        if self.estimate is None:
            dq_a, valid_dq, _ = self._aligned(idx, self._dq, self.velocity_lag, max_gap)
        else:
            dq_a, valid_dq = self._estimated(idx, max_gap)
        out = AlignedSamples(self._t[idx], self._q[idx], dq_a, tau_a,
                             None if self._extra is None else self._extra[idx], valid & valid_dq,
                             tau_err)
        self._next = int(idx[-1]) + 1
        self._trim()
        return out

    def _append(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
                extra: np.ndarray | None) -> None:
        if self._q is None:
            self._t, self._q, self._dq, self._tau, self._extra = t, q, dq, tau, extra
            return
        assert self._dq is not None and self._tau is not None
        self._t = np.concatenate([self._t, t])
        self._q = np.concatenate([self._q, q])
        self._dq = np.concatenate([self._dq, dq])
        self._tau = np.concatenate([self._tau, tau])
        if self._extra is not None and extra is not None:
            self._extra = np.concatenate([self._extra, extra])

    def _aligned(self, idx: np.ndarray, x: np.ndarray, lags: np.ndarray, max_gap: float,
                 bridging: Bridging | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x_j(t_k + lag_j) for the samples ``idx``, whether every joint's reading was
        bracketed by two samples at most ``max_gap`` apart (or within ``bridging``; a zero lag
        reads the sample), and the bound on the error of readings inside a bridged step."""
        t = self._t
        out = x[idx].copy()
        err = np.zeros_like(out)
        valid = np.ones(idx.size, bool)
        reach = max_gap if bridging is None else max(max_gap, bridging.max_gap)
        for j in np.flatnonzero(lags != 0.0):
            want = t[idx] + lags[j]
            at = np.searchsorted(t, want, side="left")
            exact = t[np.minimum(at, t.size - 1)] == want          # a sample's own reading
            hi = np.clip(at, 1, t.size - 1)
            lo = hi - 1
            h = t[hi] - t[lo]
            valid &= exact | ((want >= t[0]) & (want <= t[-1]) & (h <= reach))
            out[:, j] = np.interp(want, t, x[:, j])
            if bridging is not None:
                inside = ~exact & (h > max_gap)
                d1, d2 = want - t[lo], t[hi] - want
                err[:, j] = np.where(inside, bridging.rate_abs[j] * (
                    2.0 * d1 * d2 / np.maximum(h, 1e-12) + bridging.step), 0.0)
        return out, valid, err

    def _estimated(self, idx: np.ndarray, max_gap: float) -> tuple[np.ndarray, np.ndarray]:
        """The velocity estimate at the samples ``idx``, and where it is within the stated
        bound; records the first premise contradiction."""
        assert self.estimate is not None and self._q is not None
        est = self.estimate.estimate(self._t, self._q, max_gap, idx)
        valid = np.all(est.bound <= self.velocity_bound, axis=1)
        self.n_velocity_unbounded += int(np.sum(~valid))
        broken = np.nan_to_num(est.check, nan=0.0) > 0
        if broken.any():
            k, j = np.argwhere(broken)[0]
            count = int(broken.any(axis=1).sum())
            if self.velocity_check is None:
                name = self.joint_names[j] if j < len(self.joint_names) else f"joint {j}"
                self.velocity_check = VelocityCheck(name, float(self._t[idx[k]]),
                                                    float(est.check[k, j]), count)
            else:
                c = self.velocity_check
                self.velocity_check = VelocityCheck(c.joint, c.t, c.excess, c.count + count)
        return est.dq, valid

    def _trim(self) -> None:
        """Keep what later samples still interpolate from: back to t_next − max(0, −L_min)."""
        size = self._t.size
        ref = self._t[self._next] if self._next < size else self._t[-1]
        keep_from = int(np.searchsorted(self._t, ref - self._back, side="right")) - 1
        keep_from = max(0, min(keep_from, self._next, size - 1))
        if keep_from == 0:
            return
        assert self._q is not None and self._dq is not None and self._tau is not None
        self._t, self._q = self._t[keep_from:], self._q[keep_from:]
        self._dq, self._tau = self._dq[keep_from:], self._tau[keep_from:]
        if self._extra is not None:
            self._extra = self._extra[keep_from:]
        self._next -= keep_from

    def _empty(self) -> AlignedSamples:
        assert self._q is not None and self._dq is not None and self._tau is not None
        z = np.zeros(0)
        return AlignedSamples(z, self._q[:0], self._dq[:0], self._tau[:0],
                              None if self._extra is None else self._extra[:0],
                              np.zeros(0, bool), self._tau[:0])
