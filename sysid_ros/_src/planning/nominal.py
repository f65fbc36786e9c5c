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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from sysid_ros._src.control.offset import controller_friction
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.enclosures.chain import (SerialChain, body_regressor, forward_pass,
                                      passivity_torque, sphere_centres, world_poses)
from sysid_ros._src.planning.obstacles import BoxObstacle, signed_distance
from sysid_ros._src.planning.trajectory import QuinticTrajectory

__all__ = ["NominalEvaluation", "NominalModel", "BOX_PARAMETERS", "FIRST_MOMENTS", "OBJECTIVES",
           "ObjectiveValue", "ConstraintValues", "RegressorObjective", "cond_number",
           "log_cond_with_history"]

_H = 1e-30


def _columns(x: np.ndarray, nj: int) -> list[np.ndarray]:
    """The joint columns x[..., j], j < nj."""
    return [x[..., j] for j in range(nj)]


def _soft_max(x: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(1/β)·log Σ_n exp(β x_n) over axis 0 (≥ max_n x_n, a smooth upper bound) and its weights
    ∂/∂x_n (the softmax), shifted by the maximum for range. Plain numpy: scipy's logsumexp
    spent more in its dispatch than in these small sums, once per obstacle and once for the
    torques in every NLP evaluation."""
    z = beta * x
    top = z.max(axis=0)
    e = np.exp(z - top)
    total = e.sum(axis=0)
    return (top + np.log(total)) / beta, e / total


def _take(tree: Any, sl: slice, n: int) -> Any:
    """The samples ``sl`` of nested tuples/lists of per-sample arrays (last axis: the n sample
    times); constants (Python numbers, arrays of another length) pass through unchanged."""
    if isinstance(tree, np.ndarray):               # the leaves: most calls, tested first
        return tree[..., sl] if tree.ndim and tree.shape[-1] == n else tree
    if isinstance(tree, (tuple, list)):
        return type(tree)(_take(x, sl, n) for x in tree)
    return tree


class _Motion(NamedTuple):
    """The desired motion at sample times (complex-step batch: leading axis = the perturbed
    joint) with the chain pieces the regressor, the torques and the sphere centres share."""

    dq: np.ndarray                     # (nj, N, nj)
    ddq: np.ndarray                    # (nj, N, nj)
    cs: list                           # per joint (cos q, sin q), each (nj, N)
    dq_cols: list                      # per joint q̇ (nj, N)
    ddq_cols: list
    forward: tuple                     # chain.forward_pass(cs, q̇, q̇, q̈)
    poses: tuple                       # chain.world_poses(cs)

    def take(self, sl: slice) -> _Motion:
        """The same pieces at the samples ``sl`` only (views: no chain code runs again)."""
        n = self.dq.shape[-2]
        return _Motion(self.dq[..., sl, :], self.ddq[..., sl, :],
                       *(_take(x, sl, n) for x in self[2:]))


#: an objective's (value, gradient (nj,), cond Y_e)
ObjectiveValue = tuple[float, np.ndarray, float]
#: ``NominalModel.constraints``' (g (m,), jac (m, nj), clearance (N, ns, no), tau (N, nj))
ConstraintValues = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: an NLP objective of the end-effector regressor samples y (nj, N·nj, 10) (complex step:
#: y[0].real the values, y.imag / h the derivatives along each k_j)
RegressorObjective = Callable[[np.ndarray], ObjectiveValue]

#: θ_e entries the ``box`` objective targets: mass and first moments (Pinocchio order)
BOX_PARAMETERS = (0, 1, 2, 3)
#: θ_e entries m·c_x, m·c_y, m·c_z: what the ``staged`` objective's first stage pins
FIRST_MOMENTS = (1, 2, 3)
#: planner objectives: ``cond`` = log cond(Y_e) (S3-30), ``box`` = ``NominalModel.box_objective``,
#: ``staged`` = the first-moment variances while the CoM is uncertain, then ``cond``
#: (``planner.ExcitingPlanner.stage``), ``radius`` = the mass variance of the rows weighted by
#: their torque radius (``NominalModel.row_weights``, ``weighted_mass_of``), ``width`` = the mass
#: width of the box those rows leave, by LP (``planning.width``)
OBJECTIVES = ("cond", "box", "staged", "radius", "width")


def cond_number(y0: np.ndarray) -> float:
    """cond(Y_e) of the real samples y0 (rows, 10): the figure every objective reports."""
    sv = np.linalg.svd(y0, compute_uv=False)
    return float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")


def log_cond_with_history(y0: np.ndarray, dy: np.ndarray, gram: np.ndarray
                          ) -> tuple[float, np.ndarray]:
    """(log cond, its gradient (nj,)) of the rows [history; y0] (y0 (rows, 10), dy (nj, rows,
    10) its derivative along each k_j), the history given by its Gram matrix: cond =
    (λ_max/λ_min)^½ of G = gram + y0ᵀy0, dλ = vᵀ dG v = 2 (y0 v)ᵀ(dy v)."""
    lam, vec = np.linalg.eigh(gram + y0.T @ y0)
    if lam[0] <= 0.0:
        return float("inf"), np.zeros(dy.shape[0])
    lo, hi = vec[:, 0], vec[:, -1]
    d_hi = 2.0 * np.einsum("i,kij,j->k", y0 @ hi, dy, hi)
    d_lo = 2.0 * np.einsum("i,kij,j->k", y0 @ lo, dy, lo)
    return 0.5 * float(np.log(lam[-1] / lam[0])), 0.5 * (d_hi / lam[-1] - d_lo / lam[0])


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
        self.fric = controller_friction(robot).nominal    # the controller's (control/offset.py)
        self.tau_max = robot.limits.tau_max
        self._regressors: Regressors | None = None          # for row_weights, built on first use

    @property
    def n_constraints(self) -> int:
        return self.chain.sphere_radius.size * len(self.obstacles) + self.nj

    # -- building blocks -------------------------------------------------------------------------
    def _perturbed(self, traj: QuinticTrajectory, k: np.ndarray, times: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        kc = np.asarray(k, float) + 1j * _H * np.eye(self.nj)            # (nj, nj)
        q, dq, ddq = traj.sample(times, kc)                               # (nj, N, nj)
        return q, dq, ddq

    def _motion(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> _Motion:
        """The shared chain pieces of the motion (q, q̇, q̈) (..., N, nj), complex allowed."""
        cs = [(np.cos(q[..., j]), np.sin(q[..., j])) for j in range(self.nj)]
        dq_cols, ddq_cols = _columns(dq, self.nj), _columns(ddq, self.nj)
        return _Motion(dq, ddq, cs, dq_cols, ddq_cols,
                       forward_pass(self.chain, cs, dq_cols, dq_cols, ddq_cols, True),
                       world_poses(self.chain, cs))

    def _regressor(self, m: _Motion) -> np.ndarray:
        return body_regressor(self.chain, m.cs, m.dq_cols, m.ddq_cols, self.ee,
                              forward=m.forward, poses=m.poses)

    def _torque(self, m: _Motion, theta_e: np.ndarray) -> np.ndarray:
        theta = list(self.theta_r)
        theta[self.ee] = tuple(theta_e)
        # the same list for q̇ and q̇_a: ordinary inverse dynamics (chain.passivity_torque)
        tau = np.stack(np.broadcast_arrays(*passivity_torque(
            self.chain, m.cs, m.dq_cols, m.dq_cols, m.ddq_cols, theta, forward=m.forward)), -1)
        f = self.fric
        return (tau + f[:, 0] * np.sign(m.dq.real) + f[:, 1] * m.dq + f[:, 2] * m.ddq + f[:, 3])

    def regressor_ee(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """Y_e (..., N, nj, 10): end-effector columns of Y(q, q̇, q̈) (complex inputs allowed)."""
        return self._regressor(self._motion(q, dq, ddq))

    def motor_torque(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                     theta_e: np.ndarray) -> np.ndarray:
        """Nominal motor torque (..., N, nj) with θ_e given, nominal θ_r and friction."""
        return self._torque(self._motion(q, dq, ddq), theta_e)

    def _objective_times(self, traj: QuinticTrajectory) -> np.ndarray:
        return np.linspace(0.0, traj.t_f, self.n_samples)

    def _samples(self, traj: QuinticTrajectory, k: np.ndarray) -> np.ndarray:
        """Complex-step Y_e samples of the objectives at k (``RegressorObjective``'s y)."""
        y = self.regressor_ee(*self._perturbed(traj, k, self._objective_times(traj)))
        return y.reshape(self.nj, -1, 10)

    # -- the NLP pieces --------------------------------------------------------------------------
    def objective(self, traj: QuinticTrajectory, k: np.ndarray) -> ObjectiveValue:
        """(log cond Y_e, gradient (nj,), cond) at k."""
        return self.objective_at(traj, k, self.cond_of)

    def objective_at(self, traj: QuinticTrajectory, k: np.ndarray,
                     objective: RegressorObjective) -> ObjectiveValue:
        """Any regressor objective (``cond_of``, ``cond_with_history``, …) at k."""
        return objective(self._samples(traj, k))

    def cond_of(self, y: np.ndarray) -> ObjectiveValue:
        """``objective`` from the regressor samples y (``RegressorObjective``)."""
        y0 = y[0].real
        dy = y.imag / _H
        u, s, vt = np.linalg.svd(y0, full_matrices=False)
        if s[-1] <= 0:
            return float("inf"), np.zeros(self.nj), float("inf")
        d_hi = np.einsum("i,kij,j->k", u[:, 0], dy, vt[0])
        d_lo = np.einsum("i,kij,j->k", u[:, -1], dy, vt[-1])
        return float(np.log(s[0] / s[-1])), d_hi / s[0] - d_lo / s[-1], float(s[0] / s[-1])

    def cond_with_history(self, y: np.ndarray, gram: np.ndarray) -> ObjectiveValue:
        """(log cond, gradient (nj,), cond of the planned rows alone) of the rows [executed;
        planned] from the samples y, the executed ones given by their Gram matrix ``gram``
        (``information``): what the receding horizon's data end up with, rather than S3-30's
        cond of one plan alone (``PlannerConfig.cond_history``)."""
        value, grad = log_cond_with_history(y[0].real, y.imag / _H, gram)
        return value, grad, cond_number(y[0].real)

    def information(self, traj: QuinticTrajectory, k: np.ndarray,
                    t_end: float | None = None) -> np.ndarray:
        """Y_eᵀY_e (10, 10) of the objective's samples on [0, t_end] (default t_f), at the same
        sample density as the objectives: what executing that part of the plan adds."""
        _, y = self._executed_rows(traj, k, t_end)
        return y.T @ y

    def _executed_rows(self, traj: QuinticTrajectory, k: np.ndarray,
                       t_end: float | None) -> tuple[np.ndarray, np.ndarray]:
        """(times, Y_e rows (n·nj, 10)) of the objective's sample density on [0, t_end]."""
        t_end = traj.t_f if t_end is None else min(float(t_end), traj.t_f)
        n = max(2, int(round(self.n_samples * t_end / traj.t_f)))
        times = np.linspace(0.0, t_end, n)
        q, dq, ddq = traj.sample(times, np.asarray(k, float))
        return times, self.regressor_ee(q, dq, ddq).reshape(-1, 10)

    def box_objective(self, traj: QuinticTrajectory, k: np.ndarray, info: np.ndarray,
                      width: np.ndarray, parameters: tuple[int, ...] = BOX_PARAMETERS,
                      relative: bool = True) -> ObjectiveValue:
        """(log Σ_i [(A₀ + Y_eᵀY_e)⁻¹]_ii / w_i² over ``parameters`` (default mass and first
        moments), gradient (nj,), cond Y_e) at k — the predicted least-squares variances of the
        parameters that the sound box is slowest to shrink, each relative to its current box
        width w.

        A₀ = ``info`` (the rows already executed, ``information``) + diag(1/w²) (one N·m of
        per-sample noise per box width: a weak prior that keeps A invertible before any data).
        Unlike cond(Y_e) of the new segment alone, this rewards the rows the data so far lack.
        d[A⁻¹]_ii = −(A⁻¹ dA A⁻¹)_ii with dA = Y₀ᵀdY + dYᵀY₀.

        ``relative=False`` drops the 1/w_i² weights: Σ_i [A⁻¹]_ii in the parameters' own units.
        The first-moment stage uses it: relative weights favour the entries whose box is
        already narrow, while what blocks large certified motion is the absolute width of the
        wide ones (the robust input grows with it).
        """
        return self.box_of(self._samples(traj, k), info, width, parameters, relative)

    def box_of(self, y: np.ndarray, info: np.ndarray, width: np.ndarray,
               parameters: tuple[int, ...] = BOX_PARAMETERS,
               relative: bool = True) -> ObjectiveValue:
        """``box_objective`` from the regressor samples y (``RegressorObjective``)."""
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
        return float(np.log(c)), grad, cond_number(y0)

    def row_weights(self, traj: QuinticTrajectory, k: np.ndarray,
                    times: np.ndarray | None = None) -> np.ndarray:
        """1/r per objective row (n_samples·nj, sample-major as ``_samples``' rows) at k: r the
        torque radius the identifier gives such a sample before any payload data — the robot
        file's per-sample noise bound (``identification.torque_noise_abs``), the links' box
        |Y_r|·rad(θ_r) (θ_r ± ``links_rel``, or the calibrated box) and the friction box's
        half-widths (Fv·|q̇| + Fc + β). Rows the identifier trusts less count less: on the Gen3
        the random excitation's rows carried 1.2–1.9× more mass per unit radius than cond's
        plans (docs/results.md). Pinocchio's regressor (``model.regressors``, built on
        first use); real k (the weights are held fixed during a solve)."""
        robot = self.robot
        if self._regressors is None:
            self._regressors = Regressors(robot)
        reg = self._regressors
        times = self._objective_times(traj) if times is None else np.asarray(times, float)
        q, dq, ddq = traj.sample(times, np.asarray(k, float))
        if robot.theta_r_box is not None:
            rad = 0.5 * (robot.theta_r_box[1] - robot.theta_r_box[0])
        else:
            rad = robot.links_rel_uncertainty * np.abs(reg.theta_r_bodies())
        fr = 0.5 * (robot.friction.upper - robot.friction.lower)
        noise = np.broadcast_to(np.asarray((robot.config.get("identification") or {}).get(
            "torque_noise_abs", 0.0), float), (self.nj,))
        y_r = reg.split(reg.Y(q, dq, ddq))[1]                           # (N, nj, 10·(nb − 1))
        r = noise + np.abs(y_r) @ rad + fr[:, 1] * np.abs(dq) + fr[:, 0] + fr[:, 3]
        return 1.0 / np.maximum(r, 1e-9).reshape(-1)

    def weighted_rows(self, traj: QuinticTrajectory, k: np.ndarray,
                      t_end: float | None = None) -> np.ndarray:
        """Y_e rows (n·nj, 10) of the objective's sample density on [0, t_end], each divided by
        its torque radius (``row_weights``): the history of the ``width`` objective."""
        times, y = self._executed_rows(traj, k, t_end)
        return y * self.row_weights(traj, k, times)[:, None]

    def weighted_information(self, traj: QuinticTrajectory, k: np.ndarray,
                             t_end: float | None = None) -> np.ndarray:
        """``information`` of the rows scaled by their ``row_weights``: the history of the
        ``radius`` objective."""
        y = self.weighted_rows(traj, k, t_end)
        return y.T @ y

    def weighted_mass_of(self, y: np.ndarray, weights: np.ndarray, width: np.ndarray,
                         info: np.ndarray | None = None) -> ObjectiveValue:
        """The ``radius`` objective from the regressor samples y: ``box_of`` of the rows scaled
        by ``weights`` (``row_weights``) after the executed rows ``info``
        (``weighted_information``), mass only, in kg²."""
        return self.box_of(y * weights[None, :, None],
                           np.zeros((10, 10)) if info is None else info, width,
                           parameters=(0,), relative=False)

    def constraints(self, traj: QuinticTrajectory, k: np.ndarray, theta_e: np.ndarray,
                    margin_distance: np.ndarray, margin_torque: np.ndarray,
                    n_times: int | None = None) -> ConstraintValues:
        """(g (m,), jac (m, nj), clearance (N, ns, no), tau (N, nj)); feasible iff g ≥ 0.

        Sampled at ``n_times`` (default ``n_constraint_samples``) equally spaced times.
        """
        times = np.linspace(0.0, traj.t_f, n_times or self.n_constraint_samples)
        m = self._motion(*self._perturbed(traj, k, times))
        return self._constraints(m, theta_e, margin_distance, margin_torque)

    def sampled(self, traj: QuinticTrajectory, k: np.ndarray, theta_e: np.ndarray,
                n_times: int) -> tuple[np.ndarray, np.ndarray]:
        """(clearance (N, ns, no), tau (N, nj)) of ``constraints`` at ``n_times`` equally spaced
        times, without the derivatives: real arithmetic, 1/nj of the complex-step batch. The
        planner's margin measurement needs only these values."""
        times = np.linspace(0.0, traj.t_f, n_times)
        m = self._motion(*traj.sample(times, np.asarray(k, float)))
        clearance = np.zeros((n_times, self.chain.sphere_radius.size, 0))
        if self.obstacles:
            pts = np.stack([np.stack(np.broadcast_arrays(*c), -1)
                            for c in sphere_centres(self.chain, m.cs, m.poses)], -2)  # (N, ns, 3)
            clearance = np.stack([signed_distance(pts, ob)[0] - self.chain.sphere_radius
                                  for ob in self.obstacles], -1)
        return clearance, self._torque(m, theta_e)

    def evaluate(self, traj: QuinticTrajectory, k: np.ndarray, theta_e: np.ndarray,
                 margin_distance: np.ndarray, margin_torque: np.ndarray,
                 objective: RegressorObjective) -> tuple[ObjectiveValue, ConstraintValues]:
        """(``objective`` of the regressor samples, ``constraints``) at k in one pass.

        Ipopt asks for both at every trial point; the chain code is Python-level work per
        component (its cost barely grows with the number of samples), so the objective's and the
        constraints' sample times go through one forward pass and one set of poses together.
        """
        n_obj = self.n_samples
        times = np.concatenate([self._objective_times(traj),
                                np.linspace(0.0, traj.t_f, self.n_constraint_samples)])
        m = self._motion(*self._perturbed(traj, k, times))
        y = self._regressor(m.take(slice(0, n_obj))).reshape(self.nj, -1, 10)
        return objective(y), self._constraints(m.take(slice(n_obj, None)), theta_e,
                                                margin_distance, margin_torque)

    def _constraints(self, m: _Motion, theta_e: np.ndarray, margin_distance: np.ndarray,
                     margin_torque: np.ndarray) -> ConstraintValues:
        """``constraints`` at the samples of the motion m."""
        gs, jacs = [], []
        clearance = np.zeros((m.dq.shape[-2], self.chain.sphere_radius.size, 0))
        if self.obstacles:
            cen = np.stack([np.stack(np.broadcast_arrays(*c), -1)
                            for c in sphere_centres(self.chain, m.cs, m.poses)], -2)  # (nj, N, ns, 3)
            pts, dpts = cen[0].real, cen.imag / _H
            rad = self.chain.sphere_radius
            clear = []
            for ob in self.obstacles:
                d, grad = signed_distance(pts, ob)                          # (N, ns), (N, ns, 3)
                c = d - rad
                clear.append(c)
                dd = np.einsum("nsx,knsx->kns", grad, dpts)                 # (nj, N, ns)
                neg_min, w = _soft_max(-c, self.beta_d)                     # soft min = −that
                gs.append(-neg_min)
                jacs.append(np.einsum("ns,kns->sk", w, dd))
            clearance = np.stack(clear, -1)
            # order: obstacle-major (o, s) → flatten consistently
            gs = [np.concatenate(gs) - np.tile(margin_distance, len(self.obstacles))]
            jacs = [np.concatenate(jacs, 0)]
        tau_c = self._torque(m, theta_e)                                    # (nj, N, nj)
        tau, dtau = tau_c[0].real, tau_c.imag / _H
        both = np.concatenate([tau, -tau], 0)                                # (2N, nj)
        dboth = np.concatenate([dtau, -dtau], 1)                             # (nk, 2N, nj)
        top, w = _soft_max(both, self.beta_t)
        gs.append(self.tau_max - margin_torque - top)
        jacs.append(-np.einsum("nj,knj->jk", w, dboth))
        return np.concatenate(gs), np.concatenate(jacs, 0), clearance, tau
