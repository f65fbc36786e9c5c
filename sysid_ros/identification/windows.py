"""Windowed momentum equations with exact per-row uncertainty radii (DESIGN §4).

Momentum p = H(q)q̇ = W_m(q, q̇)·θ obeys ṗ = τ − τ_f + W_c(q, q̇)·θ with W_c·θ = Cᵀq̇ − g
(S3-7..9). Integrating over a window [a, b] and splitting θ into the end-effector body θ_e and
the rest θ_r gives one row block per window (S3-20..24, signs derived from S3-13):

    Y_w θ_e = U_w,   Y_w = ΔW_{m,e} − ∫W_{c,e} dt,
    U_w = ∫τ dt − Fc∘∫sign(q̇)dt − Fv∘Δq − Ia∘Δq̇ − β·T − (ΔW_{m,r} − ∫W_{c,r} dt)·θ_r,

where Δx = x(b) − x(a), T = t_b − t_a, and ∫Fv·q̇ dt = Fv·Δq and ∫Ia·q̈ dt = Ia·Δq̇ are exact.
Integrals use the trapezoid rule on the real (non-uniform) stamps.

U_w is affine in the uncertain quantities (torque samples, θ_r, friction); this module returns
its value at the nominal/measured point, U^c, and the exact radius r of its range per row:

- torque: Σ_k w_k·δτ_k, w_k the trapezoid weights and δτ_k = (a + r_rel·|τ̂_k|)/(1 − r_rel)
  (the noise model of :mod:`config` rewritten in measured quantities);
- θ_r: |ΔW_{m,r} − ∫W_{c,r}|·rad(θ_r);
- friction: |Δq|·rad(Fv) + |Δq̇|·rad(Ia) + T·rad(β) + the product of the Fc interval with the
  interval of ∫sign(q̇): between two samples whose velocity signs differ (or one is zero) the
  true integral of sign(q̇) is anywhere in [−Δt, Δt] if q̇ changes sign at most once there, so
  each such step contributes its trapezoid value as centre and Δt − |value| as radius;
- quadrature: ``quadrature_safety``·|T_fine − T_coarse|/3 (= |Simpson − trapezoid|) of ∫τ,
  ∫W_{c,r}·θ_r (with |θ_r| at the box edge) and ∫W_{c,e}·θ_e (with |θ_e| at the edge of B₀).

Cost: :class:`MomentumWindows` calls ``Regressors.momentum_pair`` once per new sample and keeps
running trapezoid sums, storing them only at window boundaries (every ``stride`` samples), so a
window is a difference of two prefix sums and memory/CPU per new sample do not grow with the
length of the recording.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from sysid_ros.identification.config import IdentificationConfig
from sysid_ros.identification.errors import SampleError, UnsupportedRobotError
from sysid_ros.model.regressors import Regressors
from sysid_ros.model.robots import Robot

__all__ = ["WindowRows", "MomentumWindows"]


@dataclass(frozen=True)
class WindowRows:
    """Row blocks of completed windows: Y (n, 10), U^c (n,), radius r (n,), and per row the
    window's first/last global sample index and joint (row of the momentum equation)."""

    Y: np.ndarray
    U: np.ndarray
    r: np.ndarray
    start: np.ndarray
    end: np.ndarray
    joint: np.ndarray

    @staticmethod
    def empty() -> "WindowRows":
        z = np.zeros(0)
        zi = np.zeros(0, int)
        return WindowRows(np.zeros((0, 10)), z, z, zi, zi, zi)

    def __len__(self) -> int:
        return int(self.U.shape[0])

    @staticmethod
    def concat(parts: list["WindowRows"]) -> "WindowRows":
        parts = [p for p in parts if len(p)]
        if not parts:
            return WindowRows.empty()
        return WindowRows(*(np.concatenate([getattr(p, f) for p in parts])
                            for f in ("Y", "U", "r", "start", "end", "joint")))


@dataclass
class _Checkpoint:
    t: float
    q: np.ndarray          # (nj,) unwrapped positions
    dq: np.ndarray         # (nj,)
    w_m: np.ndarray        # (nj, n_theta)
    fine: np.ndarray       # (D,) running trapezoid integral of the integrand vector
    coarse: np.ndarray     # (D,) running every-other-sample trapezoid
    sign_rad: np.ndarray   # (nj,) running radius of ∫sign(q̇)
    used: bool = False     # already closed a window as its end point


def _trapezoid_at(t: np.ndarray, f: np.ndarray, base: np.ndarray,
                  positions: np.ndarray) -> np.ndarray:
    """base + ∫ f dt (trapezoid on the samples t) from t[0] to t[p], for sorted ``positions``.

    Equal to ``base + cumsum(½·Δt·(f[:-1] + f[1:]))`` read at ``positions``, but summed one
    segment at a time with two matrix-vector products, so no (N, D) array is written.
    """
    out = np.empty((len(positions), f.shape[1]))
    acc, prev = base.astype(float).copy(), 0
    for o, p in enumerate(positions):
        p = int(p)
        if p > prev:
            dt = np.diff(t[prev:p + 1])
            acc = acc + 0.5 * (dt @ f[prev:p] + dt @ f[prev + 1:p + 1])
        out[o] = acc
        prev = p
    return out


class MomentumWindows:
    """Streams samples in, yields the rows of each window as soon as it is complete.

    Args:
        robot: a fixed-base robot (a floating base would need base wrenches/contacts).
        config: noise and uncertainty model.
        regressors: optional shared :class:`Regressors` (not thread-safe: one per thread).
    """

    def __init__(self, robot: Robot, config: IdentificationConfig,
                 regressors: Regressors | None = None) -> None:
        if robot.floating_base:
            raise UnsupportedRobotError(
                f"{robot.name}: floating-base identification needs contact/base wrenches, which "
                "the momentum identifier does not model; identify the arm on a fixed base")
        self.robot, self.config = robot, config
        self.reg = regressors or Regressors(robot)
        self.nj = robot.nj
        self.vi = robot.v_index
        ee = robot.ee_columns
        mask = np.ones(self.reg.n_theta, bool)
        mask[ee] = False
        self._ee, self._other = np.flatnonzero(~mask), np.flatnonzero(mask)
        theta_r = self.reg.theta_r_bodies()
        rel = np.repeat(config.robot_uncertainty_rel, 10)
        self.theta_r = theta_r
        self.theta_r_rad = rel * np.abs(theta_r)
        self.theta_r_abs_max = np.abs(theta_r) + self.theta_r_rad
        self.theta_e_abs_max = np.maximum(np.abs(config.prior_lower), np.abs(config.prior_upper))
        self.fric_c, self.fric_r = config.friction_nominal, config.friction_radius
        self._continuous = ~np.isfinite(robot.limits.q_lower) & ~np.isfinite(robot.limits.q_upper)
        self.reset()

    # Integrand columns: [W_c (nj·n_theta) | τ̂ (nj) | |τ̂| (nj) | sign q̇ (nj)].
    def _integrand(self, w_c: np.ndarray, tau: np.ndarray, dq: np.ndarray) -> np.ndarray:
        n = tau.shape[0]
        return np.concatenate([w_c[:, self.vi].reshape(n, -1), tau, np.abs(tau),
                               np.sign(dq)], axis=1)

    def reset(self) -> None:
        """Forget every sample (new payload, or time jumped backwards)."""
        self.n_samples = 0
        self.n_windows = 0
        self.n_gaps = 0
        self._break()

    def _break(self) -> None:
        """End the current run of samples: later windows start after this point."""
        self._last: tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._last_even: tuple[float, np.ndarray, np.ndarray] | None = None
        self._fine_last: np.ndarray | None = None
        self._sign_rad_last: np.ndarray | None = None
        self._checkpoints: OrderedDict[int, _Checkpoint] = OrderedDict()

    @property
    def last_time(self) -> float | None:
        return None if self._last is None else self._last[0]

    def _validate(self, t, q, dq, tau) -> tuple[np.ndarray, ...]:
        t = np.asarray(t, float).reshape(-1)
        arrays = [np.asarray(x, float) for x in (q, dq, tau)]
        for name, a in zip(("position", "velocity", "effort"), arrays):
            if a.ndim != 2 or a.shape != (t.size, self.nj):
                raise SampleError(f"{name}: expected shape ({t.size}, {self.nj}), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise SampleError(f"{name}: non-finite value")
        if not np.all(np.isfinite(t)):
            raise SampleError("time: non-finite stamp")
        prev = [] if self._last is None else [self._last[0]]
        if np.any(np.diff(np.concatenate([prev, t])) <= 0):
            raise SampleError("time: stamps not strictly increasing")
        return (t, *arrays)

    def extend(self, t, q, dq, tau) -> WindowRows:
        """Add samples (t (N,) s; q, q̇, τ̂ (N, nj) in ``robot.joint_names`` order) and return
        the rows of every window completed by them. Raises SampleError on bad input (state is
        unchanged then). A gap longer than ``max_sample_gap`` (also before the first new
        sample) ends the current run: no window integrates across it (``n_gaps`` counts them).
        """
        t, q, dq, tau = self._validate(t, q, dq, tau)
        prev = [] if self._last is None else [self._last[0]]
        steps = np.diff(np.concatenate([prev, t]))
        cuts = np.flatnonzero(steps > self.config.max_sample_gap) + 1 - len(prev)
        if cuts.size == 0:
            return self._extend_run(t, q, dq, tau)
        parts = []
        bounds = [0, *[int(c) for c in cuts if c > 0], t.size]
        for a, b in zip(bounds[:-1], bounds[1:]):
            if a > 0 or cuts[0] <= 0:
                self._break()
                self.n_gaps += 1
            if b > a:
                parts.append(self._extend_run(t[a:b], q[a:b], dq[a:b], tau[a:b]))
        return WindowRows.concat(parts)

    def _extend_run(self, t, q, dq, tau) -> WindowRows:
        n = t.size
        if n == 0:
            return WindowRows.empty()
        q = self._unwrap(q)
        q_full = np.tile(self.robot.neutral(), (n, 1))
        q_full[:, self.robot.q_index] = q
        dq_full = np.zeros((n, self.robot.nv))
        dq_full[:, self.vi] = dq
        w_m, w_c = self.reg.momentum_pair(q_full, dq_full)
        f = self._integrand(w_c, tau, dq)
        g = self.n_samples + np.arange(n)

        stride = self.config.stride
        ks = np.flatnonzero(g % stride == 0)           # checkpoints in this batch
        even = np.flatnonzero(g % 2 == 0)

        # Fine trapezoid, continuing from the last sample of the previous batch. Only its values
        # at checkpoints (and the batch's last sample) are ever used, so it is summed segment by
        # segment between those points instead of as an (N, D) cumulative sum.
        if self._last is None:
            t_ext, f_ext, base, off = t, f, np.zeros(f.shape[1]), 0
            s_ext, srad_base = np.sign(dq), np.zeros(self.nj)
        else:
            t_ext = np.concatenate([[self._last[0]], t])
            f_ext = np.concatenate([self._last[1][None], f])
            s_ext = np.concatenate([np.sign(self._last[4])[None], np.sign(dq)])
            base, srad_base, off = self._fine_last, self._sign_rad_last, 1
        fine_pos = np.unique(np.concatenate([ks, [n - 1]])) + off
        fine_at = dict(zip((fine_pos - off).tolist(), _trapezoid_at(t_ext, f_ext, base, fine_pos)))
        dt = np.diff(t_ext)
        half = 0.5 * (s_ext[:-1] + s_ext[1:])
        srad = np.concatenate([srad_base[None], srad_base + np.cumsum(
            dt[:, None] * (1.0 - np.abs(half)), axis=0)])
        if self._last is not None:
            srad = srad[1:]

        # Coarse trapezoid over even global indices (pairs of steps), same treatment.
        coarse_at: dict[int, np.ndarray] = {}
        if even.size:
            want = np.flatnonzero(g[even] % stride == 0)
            js = np.unique(np.concatenate([want, [even.size - 1]]))
            if self._last_even is None:
                te, fe, cbase, coff = t[even], f[even], np.zeros(f.shape[1]), 0
            else:
                te = np.concatenate([[self._last_even[0]], t[even]])
                fe = np.concatenate([self._last_even[1][None], f[even]])
                cbase, coff = self._last_even[2], 1
            coarse_at = dict(zip(js.tolist(), _trapezoid_at(te, fe, cbase, js + coff)))

        coarse_index = {int(gi): j for j, gi in enumerate(g[even])}
        for k in ks:
            gi = int(g[k])
            self._checkpoints[gi] = _Checkpoint(
                t[k], q[k].copy(), dq[k].copy(), w_m[k][self.vi].copy(), fine_at[int(k)].copy(),
                coarse_at[coarse_index[gi]].copy(), srad[k].copy())

        self._last = (t[-1], f[-1].copy(), None, q[-1].copy(), dq[-1].copy())
        self._fine_last, self._sign_rad_last = fine_at[n - 1].copy(), srad[-1].copy()
        if even.size:
            self._last_even = (t[even[-1]], f[even[-1]].copy(), coarse_at[even.size - 1].copy())
        self.n_samples += n
        return self._emit()

    def _unwrap(self, q: np.ndarray) -> np.ndarray:
        # Continuous joints may be reported wrapped; Δq (the viscous-friction integral) needs the
        # unwrapped angle. The regressors are 2π-periodic, so only Δq is affected.
        if not self._continuous.any():
            return q
        q = q.copy()
        prev = None if self._last is None else self._last[3]
        cols = np.flatnonzero(self._continuous)
        seq = q[:, cols] if prev is None else np.concatenate([prev[cols][None], q[:, cols]])
        un = np.unwrap(seq, axis=0)
        q[:, cols] = un if prev is None else un[1:]
        return q

    def _emit(self) -> WindowRows:
        h = self.config.window
        parts = []
        done = []
        for b, cb in self._checkpoints.items():
            a = b - h
            if a < 0 or cb.used:
                continue
            ca = self._checkpoints.get(a)
            if ca is None:
                continue
            parts.append(self._rows(a, ca, b, cb))
            cb.used = True
            done.append(b)
        # Drop checkpoints no future window can start from.
        if done:
            oldest_needed = max(done) + self.config.stride - h
            for k in [k for k in self._checkpoints if k < oldest_needed]:
                del self._checkpoints[k]
        self.n_windows += len(parts)
        return WindowRows.concat(parts)

    def _rows(self, a: int, ca: _Checkpoint, b: int, cb: _Checkpoint) -> WindowRows:
        nj, nt = self.nj, self.reg.n_theta
        cfg = self.config
        d_fine = cb.fine - ca.fine
        d_coarse = cb.coarse - ca.coarse
        iw = d_fine[:nj * nt].reshape(nj, nt)
        quad = np.abs(d_fine - d_coarse) / 3.0 * cfg.quadrature_safety
        quad_w = quad[:nj * nt].reshape(nj, nt)
        o = nj * nt
        int_tau, int_abs, int_sign = d_fine[o:o + nj], d_fine[o + nj:o + 2 * nj], \
            d_fine[o + 2 * nj:o + 3 * nj]
        sign_rad = cb.sign_rad - ca.sign_rad
        T = cb.t - ca.t
        dqpos, dvel = cb.q - ca.q, cb.dq - ca.dq

        full = (cb.w_m - ca.w_m) - iw
        Y = full[:, self._ee]
        A = full[:, self._other]
        fc, fr = self.fric_c, self.fric_r
        U = (int_tau - fc[:, 0] * int_sign - fc[:, 1] * dqpos - fc[:, 2] * dvel - fc[:, 3] * T
             - A @ self.theta_r)
        rel = cfg.torque_noise_rel
        r_tau = (cfg.torque_noise_abs * T + rel * int_abs) / (1.0 - rel)
        r_theta = np.abs(A) @ self.theta_r_rad
        r_fric = (np.abs(fc[:, 0]) * sign_rad + fr[:, 0] * (np.abs(int_sign) + sign_rad)
                  + fr[:, 1] * np.abs(dqpos) + fr[:, 2] * np.abs(dvel) + fr[:, 3] * T)
        r_quad = (quad[o:o + nj] + quad_w[:, self._other] @ self.theta_r_abs_max
                  + quad_w[:, self._ee] @ self.theta_e_abs_max)
        r = r_tau + r_theta + r_fric + r_quad
        return WindowRows(Y, U, r, np.full(nj, a), np.full(nj, b), np.arange(nj))
