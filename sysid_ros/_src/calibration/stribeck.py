"""S0's smooth friction law, fitted per joint for prediction (never for the sound bounds).

    τ_f(q̇, q̈) = −γ0·(tanh γ1 q̇ − tanh γ2 q̇) + γ3·tanh γ4 q̇ + γ5·q̇ + Ia·q̈ + β

(a stiction/Stribeck bump, smooth Coulomb, viscous; plus the armature and offset terms of the
package's law). On the momentum rows the law integrates to

    γ0·∫−(tanh γ1 v − tanh γ2 v) + γ3·∫tanh γ4 v + γ5·Δq + Ia·Δq̇ + β·T = ∫τ̂ − W·θ,

which is nonlinear in (γ1, γ2, γ4) only. With θ held at the calibrated nominal (block
coordinate: the linear calibration already explains the rigid-body part), each joint is a small
bounded nonlinear least-squares problem (``scipy.optimize.least_squares``, trust-region
reflective, exact Jacobian from prefix sums of tanh and v·sech² over the samples), started
from the linear law (γ3 = Fc, γ5 = Fv, γ0 = 0), and kept per joint only where it predicts
held-out windows better than the linear law (:func:`fit_stribeck`). The calibration file keeps the linear law — the
identifier's bounds rest on it — and stores γ under ``provenance.stribeck``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.energy import prefix_trapezoid
from sysid_ros._src.identification.calibration_constraints import CalibrationRows, friction_column

__all__ = ["StribeckFit", "fit_stribeck", "stribeck_torque"]

PARAM_NAMES = ("gamma0", "gamma1", "gamma2", "gamma3", "gamma4", "gamma5", "Ia", "beta")


def stribeck_torque(p: np.ndarray, dq: np.ndarray, ddq: np.ndarray | None = None) -> np.ndarray:
    """τ_f per sample for parameters p (nj, 8) [γ0..γ5, Ia, β]; dq, ddq (N, nj)."""
    g0, g1, g2, g3, g4, g5, ia, beta = (p[:, k] for k in range(8))
    out = -g0 * (np.tanh(g1 * dq) - np.tanh(g2 * dq)) + g3 * np.tanh(g4 * dq) + g5 * dq + beta
    if ddq is not None:
        out = out + ia * ddq
    return out


@dataclass(frozen=True)
class StribeckFit:
    """Per joint parameters (nj, 8) [γ0..γ5, Ia, β]; ``cost_linear``/``cost`` the weighted
    residual of the linear law and of the kept law per joint; ``success`` True where the smooth
    law was kept (it predicted held-out windows better), False where the linear law stays."""

    params: np.ndarray
    cost_linear: np.ndarray
    cost: np.ndarray
    success: np.ndarray

    def friction_torque(self, dq: np.ndarray, ddq: np.ndarray | None = None) -> np.ndarray:
        return stribeck_torque(self.params, dq, ddq)

    def as_dict(self, joints) -> dict:
        return {"law": "tau_f = -g0*(tanh(g1*dq) - tanh(g2*dq)) + g3*tanh(g4*dq) + g5*dq "
                       "+ Ia*ddq + beta",
                "params": {j: dict(zip(PARAM_NAMES, map(float, self.params[i])))
                           for i, j in enumerate(joints)},
                "weighted_cost_linear": [float(v) for v in self.cost_linear],
                "weighted_cost": [float(v) for v in self.cost],
                "stribeck_kept": [bool(v) for v in self.success]}


class _JointProblem:
    """Rows of one joint over all recordings: residual and Jacobian in p (8,)."""

    def __init__(self, rows: CalibrationRows, recordings: list[Recording], j: int,
                 target: np.ndarray, weight: np.ndarray, mask: np.ndarray | None = None) -> None:
        sel = np.flatnonzero((rows.joint == j) if mask is None else (rows.joint == j) & mask)
        self.src, self.a, self.b = rows.source[sel], rows.start[sel], rows.end[sel]
        F = rows.A[sel][:, friction_column(rows.n_theta, j, np.arange(4))].toarray()
        self.dq_int, self.ddq_int, self.T = F[:, 1], F[:, 2], F[:, 3]     # Δq, Δq̇, T
        self.y, self.w = target[sel], weight[sel]
        self.recs = [(k, recordings[k].t, recordings[k].dq[:, j])
                     for k in np.unique(self.src)]

    def _integrals(self, g: float) -> tuple[np.ndarray, np.ndarray]:
        """∫tanh(g v) and ∫v·sech²(g v) over every window of this joint."""
        f, df = np.empty(self.a.size), np.empty(self.a.size)
        for k, t, v in self.recs:
            th = np.tanh(g * v)
            pf, pd = prefix_trapezoid(t, th), prefix_trapezoid(t, v * (1.0 - th * th))
            m = self.src == k
            f[m] = pf[self.b[m]] - pf[self.a[m]]
            df[m] = pd[self.b[m]] - pd[self.a[m]]
        return f, df

    def residual_jacobian(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g0, g1, g2, g3, g4, g5, ia, beta = p
        t1, d1 = self._integrals(g1)
        t2, d2 = self._integrals(g2)
        t4, d4 = self._integrals(g4)
        model = -g0 * (t1 - t2) + g3 * t4 + g5 * self.dq_int + ia * self.ddq_int + beta * self.T
        r = self.w * (model - self.y)
        J = np.stack([-(t1 - t2), -g0 * d1, g0 * d2, t4, g3 * d4, self.dq_int, self.ddq_int,
                      self.T], axis=1) * self.w[:, None]
        return r, J


def _fit(prob: _JointProblem, p0: np.ndarray) -> np.ndarray:
    """Bounded nonlinear least squares of one joint's problem from ``p0``."""
    from scipy.optimize import least_squares

    lo = np.array([-np.inf, 0.1, 0.1, 0.0, 0.1, 0.0, 0.0, -np.inf])
    hi = np.array([np.inf, 1e4, 1e4, np.inf, 1e4, np.inf, np.inf, np.inf])
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def rj(p):
        key = p.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = prob.residual_jacobian(p)
        return cache[key]

    sol = least_squares(lambda p: rj(p)[0], np.clip(p0, lo, hi), jac=lambda p: rj(p)[1],
                        bounds=(lo, hi), method="trf", x_scale="jac", max_nfev=200)
    return sol.x


def fit_stribeck(rows: CalibrationRows, recordings: list[Recording], x: np.ndarray,
                 delta: np.ndarray, nj: int, band: float = 0.02,
                 holdout: float = 0.25) -> StribeckFit:
    """Fit the law per joint with θ = x[:n_theta] fixed (module docstring).

    Model selection per joint: the law is fitted on the first (1 − ``holdout``) of the joint's
    windows and kept only if it predicts the held-out last windows better than the linear law
    (and, refitted on all windows, still explains them better); otherwise the joint keeps the
    linear law written as γ = (0, ·, ·, Fc, 10⁴, Fv) — a steep tanh for the sign. Six shape
    parameters per joint over-fit easily: MuJoCo's dry friction, for one, has no Stribeck bump.
    """
    n_theta = rows.n_theta
    target = rows.c - rows.A[:, :n_theta] @ x[:n_theta]
    weight = 1.0 / (rows.r_fixed + delta[rows.joint] * rows.t_noise)
    params = np.zeros((nj, 8))
    cost0, cost1, ok = np.zeros(nj), np.zeros(nj), np.zeros(nj, bool)
    for j in range(nj):
        fc, fv, ia, beta = x[friction_column(n_theta, j, np.arange(4))]
        p_lin = np.array([0.0, 1.0, 1.0, fc, 1e4, fv, ia, beta])
        p0 = np.array([0.0, 20.0, 200.0, fc, 3.0 / band, fv, ia, beta])
        idx = np.flatnonzero(rows.joint == j)
        train = np.zeros(len(rows), bool)
        train[idx[:int(round((1.0 - holdout) * idx.size))]] = True
        test = (rows.joint == j) & ~train
        full = _JointProblem(rows, recordings, j, target, weight)
        cost0[j] = 0.5 * float(np.sum(full.residual_jacobian(p_lin)[0] ** 2))
        p_train = _fit(_JointProblem(rows, recordings, j, target, weight, train), p0)
        held = _JointProblem(rows, recordings, j, target, weight, test)
        better = (test.any() and np.sum(held.residual_jacobian(p_train)[0] ** 2)
                  < np.sum(held.residual_jacobian(p_lin)[0] ** 2))
        p = p_lin
        if better:
            p_all = _fit(full, p_train)
            if 0.5 * float(np.sum(full.residual_jacobian(p_all)[0] ** 2)) < cost0[j]:
                p = p_all
        params[j], ok[j] = p, p is not p_lin
        cost1[j] = 0.5 * float(np.sum(full.residual_jacobian(p)[0] ** 2))
    return StribeckFit(params, cost0, cost1, ok)
