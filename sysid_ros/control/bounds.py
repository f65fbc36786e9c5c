"""Tracking-error bound the robust controller guarantees, for the planner (docs/design.md §5.3,
§6.4).

Vocabulary (ARMOUR / S3): with e = q_d − q, ė = q̇_d − q̇ and a diagonal gain K_r, the
*composite error* is r = ė + K_r·e. The controller keeps the Lyapunov function
V = ½ rᵀ M(q) r below V_max, where M(q) = H(q) + diag(I_a) is the joint-space mass matrix of the
real robot (rigid-body H plus the motor armature I_a, see ``Robot.friction``). Then

    ½ λ_min ‖r‖² ≤ V ≤ V_max   ⇒   ‖r‖ ≤ ρ = √(2·V_max / λ_min),

and because each joint's error obeys ė_i = −K_r,i e_i + r_i with |r_i| ≤ ρ, an error that starts
inside |e_i| ≤ ρ/K_r,i stays there, so |e_i| ≤ e_max,i = ρ/K_r,i and |ė_i| ≤ |r_i| + K_r,i|e_i| ≤ 2ρ.

Eigenvalue bounds of M(q) over the workspace (what ``mass_matrix_eigen_bounds`` computes):

- λ_min: the Lyapunov argument uses the *true* mass matrix. The true end-effector body (gripper +
  payload) is a physical body, so its contribution Jᵀ I_e J is positive semi-definite whatever its
  parameters: dropping it gives a lower bound valid for every physically consistent θ_e, no box
  needed (assumption: the payload is a real rigid body; it holds for every dumbbell). The other
  links' parameters θ_r lie in their relative box (``Robot.links_rel_uncertainty``) and I_a in its
  friction box; H is linear in θ, so with H_c at the box centre and D_k = ∂H/∂θ_k,
  λ_min(H(θ)) ≥ λ_min(H_c) − ‖Σ_k |D_k|·rad_k‖₂ (Weyl; ‖A‖₂ ≤ ‖B‖₂ when |A| ≤ B entrywise) —
  sound at each q for every θ_r in the box, and I_a enters at its lower end.
- λ_max: the same Weyl bound from above, with θ_e in ``theta_e_box`` (default: the nominal θ_e
  without payload, i.e. only meaningful for the unloaded robot; pass the payload box otherwise).
- Over q: H does not depend on the first joint of a fixed-base arm (rotating the whole chain about
  the base axis), nor on a floating base's pose for the actuated block, so the remaining joints
  are sampled inside their limits (continuous joints in ±π) and the best samples refined with a
  bounded local optimiser. This part is an ESTIMATE of the workspace extremum, not an enclosure;
  ``margin`` (default 2 %) widens the result (λ_min·(1−margin), λ_max·(1+margin)) to cover the
  optimiser's miss, and the tests check no denser random sample beats it.

Compared with ARMOUR's numbers for the nominal Gen3 model (8.29938 / 15.79635774,
``robust_controller_defaults`` in urdf/kinova_gen3_facts.yaml): the nominal-model extremes computed
here are in the test/report; the defaults returned here are lower/higher because of the 5 % I_a
box, the θ_r box and the margin.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.optimize import minimize

from sysid_ros.control.errors import BoundsError, ControllerConfigError
from sysid_ros.model.robots import Robot

__all__ = ["MassMatrixBounds", "TrackingErrorBound", "mass_matrix_eigen_bounds",
           "tracking_error_bound", "mass_matrix_extremes"]


@dataclass(frozen=True)
class MassMatrixBounds:
    """λ_min / λ_max bounds of H(q) + diag(I_a) over the workspace and the parameter boxes."""

    lambda_min: float
    lambda_max: float
    q_at_min: np.ndarray
    q_at_max: np.ndarray
    margin: float


@dataclass(frozen=True)
class TrackingErrorBound:
    """ρ bounds ‖r‖; per joint |e| ≤ e_max = ρ/K_r and |ė| ≤ de_max = 2ρ (see module doc)."""

    rho: float
    e_max: np.ndarray
    de_max: np.ndarray
    lambda_min: float
    lambda_max: float


class _MassMatrixModel:
    """Per-q lower/upper eigenvalue bounds of H(q) + diag(I_a) over the parameter boxes."""

    def __init__(self, robot: Robot, theta_e_box: tuple[np.ndarray, np.ndarray] | None,
                 with_uncertainty: bool) -> None:
        self.robot = robot
        self.model = robot.model.copy()
        self.model.gravity.setZero()
        self.data = self.model.createData()
        theta = robot.theta()
        ee = robot.ee_columns
        rel = robot.links_rel_uncertainty if with_uncertainty else 0.0
        rad = rel * np.abs(theta)
        rad[ee] = 0.0
        theta_lo = theta.copy()
        theta_lo[ee] = 0.0                       # true payload body ⪰ 0: drop it for λ_min
        theta_hi = theta.copy()
        if theta_e_box is not None:
            lo, hi = (np.asarray(b, float) for b in theta_e_box)
            if lo.shape != (10,) or hi.shape != (10,) or np.any(~np.isfinite(lo)) \
                    or np.any(~np.isfinite(hi)) or np.any(lo > hi):
                raise BoundsError("theta_e_box: expected finite (lower, upper) of shape (10,) "
                                  "with lower <= upper")
            theta_hi[ee] = 0.5 * (lo + hi)
            rad_hi = rad.copy()
            rad_hi[ee] = 0.5 * (hi - lo)
        else:
            rad_hi = rad
        self.theta_lo, self.theta_hi, self.rad_lo, self.rad_hi = theta_lo, theta_hi, rad, rad_hi
        ia, ia_rad = robot.friction.nominal[:, 2], robot.friction.radius[:, 2]
        if not with_uncertainty:
            ia_rad = np.zeros_like(ia_rad)
        self.v_idx = robot.v_index
        self.ia_lo = np.zeros(robot.nv)
        self.ia_hi = np.zeros(robot.nv)
        self.ia_lo[self.v_idx] = ia - ia_rad
        self.ia_hi[self.v_idx] = ia + ia_rad
        self.eye = np.eye(robot.nv)
        self.zero = np.zeros(robot.nv)

    def _columns(self, q: np.ndarray) -> np.ndarray:
        """D (nv, nv, nθ): H[:, j] = D[:, j, :] @ θ (regressor of H e_j)."""
        return np.stack([pin.computeJointTorqueRegressor(self.model, self.data, q, self.zero,
                                                         self.eye[j])
                         for j in range(self.robot.nv)], axis=1)

    def bounds_at(self, q: np.ndarray) -> tuple[float, float]:
        d = self._columns(q)
        sub = np.ix_(self.v_idx, self.v_idx)
        h_lo = (d @ self.theta_lo)[sub] + np.diag(self.ia_lo[self.v_idx])
        h_hi = (d @ self.theta_hi)[sub] + np.diag(self.ia_hi[self.v_idx])
        abs_d = np.abs(d)
        w_lo = np.linalg.norm((abs_d @ self.rad_lo)[sub], 2)
        w_hi = np.linalg.norm((abs_d @ self.rad_hi)[sub], 2)
        lo = np.linalg.eigvalsh(h_lo)[0] - w_lo
        hi = np.linalg.eigvalsh(h_hi)[-1] + w_hi
        return float(lo), float(hi)


def _workspace(robot: Robot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sampling box of the actuated coordinates that H depends on, and their q indices."""
    lo = np.where(np.isfinite(robot.limits.q_lower), robot.limits.q_lower, -np.pi)
    hi = np.where(np.isfinite(robot.limits.q_upper), robot.limits.q_upper, np.pi)
    idx = robot.q_index
    if not robot.floating_base:      # H is invariant under the first joint's rotation
        lo, hi, idx = lo[1:], hi[1:], idx[1:]
    return lo, hi, idx


def mass_matrix_eigen_bounds(robot: Robot,
                             theta_e_box: tuple[np.ndarray, np.ndarray] | None = None, *,
                             n_samples: int = 400, n_local: int = 4, margin: float = 0.02,
                             seed: int = 0, with_uncertainty: bool = True) -> MassMatrixBounds:
    """λ_min / λ_max of H(q) + diag(I_a) over the workspace (module doc: what is sound, what is
    estimated). ``with_uncertainty=False`` gives the nominal model's extremes (no boxes, no
    payload for λ_min) — the quantity ARMOUR's configuration file lists."""
    if not 0.0 <= margin < 1.0:
        raise ControllerConfigError(f"margin must be in [0, 1), got {margin}")
    mm = _MassMatrixModel(robot, theta_e_box, with_uncertainty)
    lo_box, hi_box, idx = _workspace(robot)
    rng = np.random.default_rng(seed)
    base = robot.neutral()

    def full(x: np.ndarray) -> np.ndarray:
        q = base.copy()
        q[idx] = x
        return q

    xs = rng.uniform(lo_box, hi_box, size=(n_samples, lo_box.size))
    vals = np.array([mm.bounds_at(full(x)) for x in xs])
    results = []
    for col, sign in ((0, 1.0), (1, -1.0)):
        order = np.argsort(sign * vals[:, col])[:n_local]
        best_val, best_x = sign * vals[order[0], col], xs[order[0]]
        for k in order:
            res = minimize(lambda x: sign * mm.bounds_at(full(x))[col], xs[k], method="L-BFGS-B",
                           bounds=list(zip(lo_box, hi_box)), options={"maxiter": 60})
            if res.fun < best_val:
                best_val, best_x = float(res.fun), res.x
        results.append((sign * best_val, full(best_x)))
    (lam_min, q_min), (lam_max, q_max) = results
    lam_min_m = lam_min * (1.0 - margin)
    if lam_min_m <= 0.0:
        raise BoundsError(f"mass matrix lower eigenvalue bound {lam_min_m:.3g} is not positive: "
                          "the parameter boxes are too wide for a Lyapunov bound")
    return MassMatrixBounds(lam_min_m, lam_max * (1.0 + margin), q_min, q_max, margin)


def mass_matrix_extremes(robot: Robot, q: np.ndarray) -> tuple[float, float]:
    """Exact nominal-model eigenvalue extremes of H(q) + diag(I_a) at the given samples q (N, nq)
    with Pinocchio's CRBA — an independent reference for tests and reports."""
    data = robot.model.createData()
    ia = np.zeros(robot.nv)
    ia[robot.v_index] = robot.friction.nominal[:, 2]
    lo, hi = np.inf, -np.inf
    for qk in np.atleast_2d(q):
        h = pin.crba(robot.model, data, qk)
        h = np.triu(h) + np.triu(h, 1).T
        ev = np.linalg.eigvalsh(h + np.diag(ia))
        lo, hi = min(lo, ev[0]), max(hi, ev[-1])
    return float(lo), float(hi)


# (id(robot), box, margin) -> (robot, bounds); the robot is kept so its id cannot be reused.
_CACHE: dict[tuple, tuple[Robot, MassMatrixBounds]] = {}


def tracking_error_bound(robot: Robot, Kr: float | np.ndarray, V_max: float, *,
                         theta_e_box: tuple[np.ndarray, np.ndarray] | None = None,
                         margin: float = 0.02,
                         eigen_bounds: MassMatrixBounds | None = None) -> TrackingErrorBound:
    """ρ = √(2·V_max/λ_min), e_max = ρ/K_r, de_max = 2ρ per joint (module doc for assumptions).

    The eigenvalue bounds are computed once per (robot, box, margin) and cached; pass
    ``eigen_bounds`` to reuse a result you already have.
    """
    kr = np.broadcast_to(np.asarray(Kr, float), (robot.nj,)).copy()
    if np.any(~np.isfinite(kr)) or np.any(kr <= 0):
        raise ControllerConfigError(f"Kr must be positive and finite, got {Kr}")
    if not np.isfinite(V_max) or V_max <= 0:
        raise ControllerConfigError(f"V_max must be positive and finite, got {V_max}")
    if eigen_bounds is None:
        box_key = None if theta_e_box is None else \
            (tuple(map(float, theta_e_box[0])), tuple(map(float, theta_e_box[1])))
        key = (id(robot), box_key, float(margin))
        hit = _CACHE.get(key)
        if hit is None or hit[0] is not robot:
            hit = (robot, mass_matrix_eigen_bounds(robot, theta_e_box, margin=margin))
            _CACHE[key] = hit
        eigen_bounds = hit[1]
    rho = float(np.sqrt(2.0 * V_max / eigen_bounds.lambda_min))
    return TrackingErrorBound(rho, rho / kr, np.full(robot.nj, 2.0 * rho),
                              eigen_bounds.lambda_min, eigen_bounds.lambda_max)
