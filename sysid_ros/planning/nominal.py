"""Smooth objective and sampled constraints of the planning NLP, with exact gradients.

All quantities are evaluated along the nominal desired trajectory q_d(t; k) at sample times, with
the chain code of ``chain.py`` run on complex numbers: evaluating at k + i·h·e_j (h = 1e-30) gives
f(k) as the real part and ∂f/∂k_j as Im/h to machine precision (complex-step differentiation:
no subtractive cancellation, so no step-size trade-off as with finite differences). Non-analytic
outer functions (SVD, distance to a box, log-sum-exp) are differentiated by hand.

- objective: log cond(Y_e), Y_e the end-effector columns of the inverse-dynamics regressor stacked
  over N_s samples (S3-30). d log cond = u₁ᵀdY v₁/σ₁ − u_nᵀdY v_n/σ_n (simple singular values).
  The log keeps the scale sane; minimising it is minimising cond, so no surrogate is involved.
  Or (planner ``objective: box``) ``box_objective``: the predicted variances of mass and first
  moments relative to their current box widths, given the rows already executed. Or (planner
  ``objective: staged``, the first-moment stage) the same function in absolute form over the
  first moments m·c only: their predicted variances in (kg·m)², which a change of the gravity
  direction in the end-effector frame lowers even at low speed.
- collision: per (sphere, obstacle), a soft minimum over the sample times of the signed distance
  minus radius, −(1/β)·log Σ exp(−β·dₙ) ≤ min dₙ: a smooth LOWER bound (never optimistic).
- torque: per joint, a soft maximum of ±τ over the samples, (1/β)·log Σ exp(±β τₙ) ≥ max |τₙ|:
  a smooth UPPER bound. τ is the nominal motor torque (θ_e at the box centre, nominal θ_r and
  friction) at q = q_d, q̇_a = q̇_d, q̈_a = q̈_d.
These are NOT safety certificates (samples, nominal values); ``Reachability.verify`` is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from sysid_ros.model.robots import Robot
from sysid_ros.planning.chain import (SerialChain, body_regressor, passivity_torque,
                                      sphere_centres)
from sysid_ros.planning.obstacles import BoxObstacle, signed_distance
from sysid_ros.planning.trajectory import QuinticTrajectory

__all__ = ["NominalEvaluation", "NominalModel", "BOX_PARAMETERS", "FIRST_MOMENTS", "OBJECTIVES"]

_H = 1e-30


def _columns(x: np.ndarray, nj: int) -> list[np.ndarray]:
    """The joint columns x[..., j], j < nj."""
    return [x[..., j] for j in range(nj)]

#: θ_e entries the ``box`` objective targets: mass and first moments (Pinocchio order)
BOX_PARAMETERS = (0, 1, 2, 3)
#: θ_e entries m·c_x, m·c_y, m·c_z: what the ``staged`` objective's first stage pins
FIRST_MOMENTS = (1, 2, 3)
#: planner objectives: ``cond`` = log cond(Y_e) (S3-30), ``box`` = ``NominalModel.box_objective``,
#: ``staged`` = the first-moment variances while the CoM is uncertain, then ``cond``
#: (``planner.ExcitingPlanner.stage``)
OBJECTIVES = ("cond", "box", "staged")


@dataclass(frozen=True)
class NominalEvaluation:
    """Values and Jacobians at one k: objective (scalar) and its gradient (nj,); g (m,) and
    jac (m, nj) for the constraints g ≥ 0 (collision pairs first, then joints' torque);
    ``clearance`` (N_c, ns, no) and ``tau`` (N_c, nj) at the constraint sample times."""

    objective: float
    gradient: np.ndarray
    cond: float
    g: np.ndarray
    jac: np.ndarray
    clearance: np.ndarray
    tau: np.ndarray


class NominalModel:
    """Evaluates the NLP pieces for one robot and obstacle set (see module doc)."""

    def __init__(self, robot: Robot, obstacles: tuple[BoxObstacle, ...], n_samples: int = 128,
                 n_constraint_samples: int = 129, beta_distance: float = 300.0,
                 beta_torque: float = 10.0) -> None:
        self.robot = robot
        self.chain = SerialChain.from_robot(robot)
        self.obstacles = obstacles
        self.n_samples = int(n_samples)
        self.n_constraint_samples = int(n_constraint_samples)
        self.beta_d = float(beta_distance)
        self.beta_t = float(beta_torque)
        self.nj = robot.nj
        self.ee = robot.ee_joint_id - 1
        theta = robot.theta()
        self.theta_r = [tuple(theta[10 * i:10 * i + 10]) for i in range(self.chain.nb)]
        self.fric = robot.friction.nominal
        self.tau_max = robot.limits.tau_max

    @property
    def n_constraints(self) -> int:
        return self.chain.sphere_radius.size * len(self.obstacles) + self.nj

    # -- building blocks -------------------------------------------------------------------------
    def _perturbed(self, traj: QuinticTrajectory, k: np.ndarray, times: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        kc = np.asarray(k, float) + 1j * _H * np.eye(self.nj)            # (nj, nj)
        q, dq, ddq = traj.sample(times, kc)                               # (nj, N, nj)
        return q, dq, ddq

    def regressor_ee(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """Y_e (..., N, nj, 10): end-effector columns of Y(q, q̇, q̈) (complex inputs allowed)."""
        cs = [(np.cos(q[..., j]), np.sin(q[..., j])) for j in range(self.nj)]
        return body_regressor(self.chain, cs, _columns(dq, self.nj), _columns(ddq, self.nj), self.ee)

    def motor_torque(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                     theta_e: np.ndarray) -> np.ndarray:
        """Nominal motor torque (..., N, nj) with θ_e given, nominal θ_r and friction."""
        cs = [(np.cos(q[..., j]), np.sin(q[..., j])) for j in range(self.nj)]
        theta = list(self.theta_r)
        theta[self.ee] = tuple(theta_e)
        dq_cols = _columns(dq, self.nj)
        tau = np.stack(np.broadcast_arrays(
            *passivity_torque(self.chain, cs, dq_cols, dq_cols, _columns(ddq, self.nj), theta)), -1)
        f = self.fric
        return (tau + f[:, 0] * np.sign(dq.real) + f[:, 1] * dq + f[:, 2] * ddq + f[:, 3])

    # -- the NLP pieces --------------------------------------------------------------------------
    def objective(self, traj: QuinticTrajectory, k: np.ndarray) -> tuple[float, np.ndarray, float]:
        """(log cond Y_e, gradient (nj,), cond) at k."""
        times = np.linspace(0.0, traj.t_f, self.n_samples)
        y = self.regressor_ee(*self._perturbed(traj, k, times))           # (nj, N, nj, 10)
        y = y.reshape(self.nj, -1, 10)
        y0 = y[0].real
        dy = y.imag / _H
        u, s, vt = np.linalg.svd(y0, full_matrices=False)
        if s[-1] <= 0:
            return float("inf"), np.zeros(self.nj), float("inf")
        d_hi = np.einsum("i,kij,j->k", u[:, 0], dy, vt[0])
        d_lo = np.einsum("i,kij,j->k", u[:, -1], dy, vt[-1])
        return float(np.log(s[0] / s[-1])), d_hi / s[0] - d_lo / s[-1], float(s[0] / s[-1])

    def information(self, traj: QuinticTrajectory, k: np.ndarray,
                    t_end: float | None = None) -> np.ndarray:
        """Y_eᵀY_e (10, 10) of the objective's samples on [0, t_end] (default t_f), at the same
        sample density as the objectives: what executing that part of the plan adds."""
        t_end = traj.t_f if t_end is None else min(float(t_end), traj.t_f)
        n = max(2, int(round(self.n_samples * t_end / traj.t_f)))
        q, dq, ddq = traj.sample(np.linspace(0.0, t_end, n), np.asarray(k, float))
        y = self.regressor_ee(q, dq, ddq).reshape(-1, 10)
        return y.T @ y

    def box_objective(self, traj: QuinticTrajectory, k: np.ndarray, info: np.ndarray,
                      width: np.ndarray, parameters: tuple[int, ...] = BOX_PARAMETERS,
                      relative: bool = True) -> tuple[float, np.ndarray, float]:
        """(log Σ_i [(A₀ + Y_eᵀY_e)⁻¹]_ii / w_i² over ``parameters`` (default mass and first
        moments), gradient (nj,), cond Y_e) at k — the predicted least-squares variances of the
        parameters that the sound box is slowest to shrink, each relative to its current box
        width w (issue 15).

        A₀ = ``info`` (the rows already executed, ``information``) + diag(1/w²) (one N·m of
        per-sample noise per box width: a weak prior that keeps A invertible before any data).
        Unlike cond(Y_e) of the new segment alone, this rewards the rows the data so far lack.
        d[A⁻¹]_ii = −(A⁻¹ dA A⁻¹)_ii with dA = Y₀ᵀdY + dYᵀY₀.

        ``relative=False`` drops the 1/w_i² weights: Σ_i [A⁻¹]_ii in the parameters' own units.
        The first-moment stage uses it: relative weights favour the entries whose box is
        already narrow, while what blocks large certified motion is the absolute width of the
        wide ones (the robust input grows with it).
        """
        times = np.linspace(0.0, traj.t_f, self.n_samples)
        y = self.regressor_ee(*self._perturbed(traj, k, times)).reshape(self.nj, -1, 10)
        y0, dy = y[0].real, y.imag / _H
        w = np.maximum(np.asarray(width, float), 1e-12)
        a = info + np.diag(1.0 / w ** 2) + y0.T @ y0
        try:
            b = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            return float("inf"), np.zeros(self.nj), float("inf")
        sel = np.zeros(10)
        idx = list(parameters)
        sel[idx] = 1.0 / w[idx] ** 2 if relative else 1.0
        c = float(np.sum(np.diag(b) * sel))
        g = b @ np.diag(sel) @ b                                           # ∂c/∂A = −G
        grad = -2.0 * np.einsum("nc,knc->k", y0 @ g, dy) / c
        sv = np.linalg.svd(y0, compute_uv=False)
        return float(np.log(c)), grad, float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")

    def constraints(self, traj: QuinticTrajectory, k: np.ndarray, theta_e: np.ndarray,
                    margin_distance: np.ndarray, margin_torque: np.ndarray,
                    n_times: int | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(g (m,), jac (m, nj), clearance (N, ns, no), tau (N, nj)); feasible iff g ≥ 0.

        Sampled at ``n_times`` (default ``n_constraint_samples``) equally spaced times.
        """
        times = np.linspace(0.0, traj.t_f, n_times or self.n_constraint_samples)
        q, dq, ddq = self._perturbed(traj, k, times)
        gs, jacs = [], []
        clearance = np.zeros((times.size, self.chain.sphere_radius.size, 0))
        if self.obstacles:
            cs = [(np.cos(q[..., j]), np.sin(q[..., j])) for j in range(self.nj)]
            cen = np.stack([np.stack(np.broadcast_arrays(*c), -1)
                            for c in sphere_centres(self.chain, cs)], -2)    # (nj, N, ns, 3)
            pts, dpts = cen[0].real, cen.imag / _H
            rad = self.chain.sphere_radius
            clear = []
            for ob in self.obstacles:
                d, grad = signed_distance(pts, ob)                          # (N, ns), (N, ns, 3)
                c = d - rad
                clear.append(c)
                dd = np.einsum("nsx,knsx->kns", grad, dpts)                 # (nj, N, ns)
                w = np.exp(-self.beta_d * c - logsumexp(-self.beta_d * c, axis=0))
                gs.append(-logsumexp(-self.beta_d * c, axis=0) / self.beta_d)
                jacs.append(np.einsum("ns,kns->sk", w, dd))
            clearance = np.stack(clear, -1)
            # order: obstacle-major (o, s) → flatten consistently
            gs = [np.concatenate(gs) - np.tile(margin_distance, len(self.obstacles))]
            jacs = [np.concatenate(jacs, 0)]
        tau_c = self.motor_torque(q, dq, ddq, theta_e)                      # (nj, N, nj)
        tau, dtau = tau_c[0].real, tau_c.imag / _H
        both = np.concatenate([tau, -tau], 0)                                # (2N, nj)
        dboth = np.concatenate([dtau, -dtau], 1)                             # (nk, 2N, nj)
        lse = logsumexp(self.beta_t * both, axis=0)
        w = np.exp(self.beta_t * both - lse)
        gs.append(self.tau_max - margin_torque - lse / self.beta_t)
        jacs.append(-np.einsum("nj,knj->jk", w, dboth))
        return np.concatenate(gs), np.concatenate(jacs, 0), clearance, tau
