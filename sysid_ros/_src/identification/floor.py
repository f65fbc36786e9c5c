"""The identifiability floor: how narrow a sound θ_e box can get, whatever the motion.

Joint torques are linear in the parameters, τ = Y(q, q̇, q̈)·x with x = [θ of every body |
friction φ], and Y has a null space that no motion excites: a revolute chain's torques depend on
x only through its *base parameters* (Khalil & Dombre's grouping). The end-effector body's mass,
its first moment along the last joint's axis and XX + YY are grouped with the parent link's
parameters, and each joint's rotor armature Ia with its own body's inertia about the axis. So θ_e
is determined by the data only up to what the *other* boxes — the link box θ_r (±``links_rel`` or
calibrated) and the friction box — leave free. That is a property of the boxes, not of the
excitation or the noise.

The floor is the interval of each θ_e coordinate over

    F = {x : Y(s)·(x − x*) = 0 for every state s,  x in the identifier's boxes,  J(θ_b) ⪰ 0 for
         every body b}

with x* the truth. Every x in F is a physically valid robot inside the stated boxes whose joint
torques equal the truth's for every motion, so *any* sound identifier fed with any amount of
noise-free data must keep all of F's θ_e in its box: the floor is an inner bound of every sound
box. A box wider than the floor is the excitation's and the noise's part; a box at the floor can
only be narrowed by narrower link or friction boxes (weighed links, a CAD model with stated
tolerances, a calibration).

How it is computed: Y at ``states`` random states (positions in the joint box, velocities within
the limits, accelerations up to 10 rad/s²) stacked with the friction columns [sign q̇, q̇, q̈, 1];
the null space N of the column-scaled stack (SVD); x = x* + N·z; 20 convex problems (min and max
of each θ_e coordinate over z, the boxes as linear constraints and every body's pseudo-inertia
J ⪰ 0 as an LMI; cvxpy + Clarabel). Random states make the sampled null space the structural one
with probability one; :attr:`Floor.residual` checks each extreme *witness* at fresh states, so a
sampled null space that was too large would show. ``calibration_ee`` adds the rows of a
noise-free calibration without payload (the same links and friction, the end-effector body
during calibration its own 10 unknowns in that box, as :mod:`.calibration_constraints` does): the
floor a perfect calibration leaves.

Restricted motions (``moved``, ``pose``): states in which only the ``moved`` joints move (over
their joint limits) and every other joint rests at its ``pose`` angle, a floating base's trunk
upright and at rest — the floor of the data a task holding those joints can give (the standing
B1 + Z1 moves joint 2 alone). The resting joints' rows are kept, their friction at rest taken
the same in both robots: F is then a subset of the robots such data cannot tell apart, so the
floor stays an inner bound. Columns no row sees (bodies outside the rows' subtrees, the friction
of joints without rows) are held at the truth, which only shrinks F.

Floating base (B1 + Z1): the rows are the arm joints' (:func:`.windows.row_joints_and_bodies`),
at states with a random trunk orientation, twist and acceleration (every joint moving) — a
witness produces the truth's arm torques whatever the trunk does, so the trunk's motion (the
IMU's, the rows' gravity direction) cannot tell it apart either; with ``moved`` the trunk rests
upright, as the standing controller holds it.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from sysid_ros._src.identification.config import IdentificationConfig
from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.identification.windows import row_joints_and_bodies
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.parameters import is_physically_consistent, pseudo_inertia
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot

__all__ = ["Floor", "identifiability_floor"]

#: |q̈| of the sampled states (rad/s²); only genericity matters for the null space
_ACCEL = 10.0
#: singular values below this fraction of the largest span the null space (scaled columns)
_RANK_TOL = 1e-9
#: trunk twist (m/s, rad/s) and acceleration of a floating base's sampled states; genericity only
_BASE_RATE = 1.0


@dataclass(frozen=True)
class _Motion:
    """The sampled states: ``moved`` (nj,) bool, the joints that move; ``pose`` (nj,) the
    resting joints' angles; ``rows`` the velocity indices whose torques are stacked; ``trunk``
    whether a floating base's trunk moves (it rests upright with the resting joints otherwise)."""

    moved: np.ndarray
    pose: np.ndarray
    rows: np.ndarray
    trunk: bool


def _motion(robot: Robot, moved: Sequence[int] | None, pose: ArrayLike | None) -> _Motion:
    mask = np.ones(robot.nj, bool)
    if moved is not None:
        idx = np.asarray(list(moved), int)
        if idx.size == 0 or np.any(idx < 0) or np.any(idx >= robot.nj):
            raise IdentificationConfigError(f"moved: joint indices in [0, {robot.nj}), at least "
                                            f"one; got {list(moved)}")
        mask[:] = False
        mask[idx] = True
    rest = robot.neutral()[robot.q_index] if pose is None else np.asarray(pose, float)
    if rest.shape != (robot.nj,) or not np.all(np.isfinite(rest)):
        raise IdentificationConfigError(f"pose: {robot.nj} finite joint angles expected")
    return _Motion(mask, rest, robot.v_index[row_joints_and_bodies(robot)[0]], moved is None)


@dataclass(frozen=True)
class Floor:
    """The identifiability floor of θ_e (module docstring).

    Attributes:
        box: per θ_e coordinate, the interval spanned by indistinguishable robots (nominal: the
            truth). Any sound box contains it.
        truth: x* = [θ of every body (Pinocchio order) | φ (nj × [Fc, Fv, Ia, β]) | ψ (the
            calibrated extra friction terms' box centres, if any) | θ_e during calibration,
            with ``calibration_ee``].
        witnesses: (2, 10, n_x): the x attaining the lower (0) and upper (1) end of each θ_e
            coordinate.
        null_dim: dimension of the null space the data leave.
        residual: max over the witnesses and ``check_states`` fresh states of
            |Y(s)(x − x*)|_∞ / |Y(s) x*|_∞: ~1e-9 when the sampled null space is the structural one.
        consistent: every witness lies in the boxes (to 1e-7 of their widths) and every body of
            it has J ⪰ 0 (to 1e-9 of its mass scale): the solver's tolerance, checked.
        states: number of sampled states.
    """

    box: ParameterBox
    truth: np.ndarray
    witnesses: np.ndarray
    null_dim: int
    residual: float
    consistent: bool
    states: int

    @property
    def width(self) -> np.ndarray:
        return self.box.width


def _rows(robot: Robot, rng: np.random.Generator, n: int, cal: bool, motion: _Motion,
          terms: bool = False) -> np.ndarray:
    """Rows at ``n`` random states (the moved joints' positions in their joint box, velocities
    within the limits, |q̈| ≤ _ACCEL; the others at rest at ``motion.pose``; a floating base's
    trunk in a random orientation, twist and acceleration) in x's layout [θ of every body | φ |
    ψ (the robot's calibrated extra friction terms, with ``terms``)]: the project's batched
    inverse-dynamics and friction regressors, stacked. With ``cal`` the calibration's rows
    follow (θ_e's columns moved to the calibration-time EE body's, θ_e's own columns zero)."""
    reg = Regressors(robot)
    q = robot.random_configuration(rng, n)
    q[:, robot.q_index[~motion.moved]] = motion.pose[~motion.moved]
    dq, ddq = np.zeros((n, robot.nv)), np.zeros((n, robot.nv))
    v = robot.v_index[motion.moved]
    k = int(motion.moved.sum())
    dq[:, v] = rng.uniform(-robot.limits.dq_max[motion.moved], robot.limits.dq_max[motion.moved],
                           (n, k))
    ddq[:, v] = rng.uniform(-_ACCEL, _ACCEL, (n, k))
    if robot.floating_base and motion.trunk:
        dq[:, :6] = rng.uniform(-_BASE_RATE, _BASE_RATE, (n, 6))
        ddq[:, :6] = rng.uniform(-_BASE_RATE, _BASE_RATE, (n, 6))
    elif robot.floating_base:
        q[:, :7] = robot.neutral()[:7]            # the trunk at rest, upright
    rows = motion.rows
    y = np.concatenate([reg.Y(q, dq, ddq)[:, rows],
                        reg.friction(dq, ddq, q if terms else None)[:, rows]], axis=2)
    y = y.reshape(-1, y.shape[2])
    if not cal:
        return y
    ee = robot.ee_columns
    loaded = np.hstack([y, np.zeros((y.shape[0], 10))])
    unloaded = np.hstack([y, y[:, ee]])
    unloaded[:, ee] = 0.0
    return np.vstack([loaded, unloaded])


def _null_space(y: np.ndarray, scale: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Basis N (n_x, k) of {x : y x = 0, x_fixed = 0}, computed on scaled columns."""
    pin_rows = np.eye(y.shape[1])[fixed] / scale[fixed][:, None]
    a = np.vstack([y, pin_rows * np.abs(y).max()]) * scale
    _, s, vt = np.linalg.svd(a, full_matrices=True)
    rank = int(np.sum(s > _RANK_TOL * s[0]))
    return scale[:, None] * vt[rank:].T


def identifiability_floor(robot: Robot, config: IdentificationConfig,
                          theta_e: np.ndarray | None = None, *, states: int = 300,
                          calibration_ee: ParameterBox | None = None, seed: int = 0,
                          check_states: int = 50, moved: Sequence[int] | None = None,
                          pose: ArrayLike | None = None) -> Floor:
    """The floor of θ_e under ``config``'s boxes (prior B₀ of θ_e, θ_r box, friction box).

    Args:
        theta_e: the true θ_e (default: the robot's nominal EE body); must lie in the prior and be
            physically consistent.
        states: random states whose rows are stacked (≥ the number of unknowns / nj).
        calibration_ee: box of the EE body during a no-payload calibration: adds that
            calibration's noise-free rows (module docstring). The true EE body then is the
            nominal one.
        seed: random states' seed; ``check_states`` fresh states check the witnesses.
        moved, pose: only the joints of index ``moved`` move, the others rest at ``pose``
            (nj angles; default the neutral configuration) — module docstring; default: every
            joint moves.
    """
    motion = _motion(robot, moved, pose)
    theta_e = robot.theta_e() if theta_e is None else np.asarray(theta_e, float)
    stack = _stack(robot, config, theta_e, calibration_ee)
    truth, lo, hi = stack.truth, stack.lower, stack.upper
    rng = np.random.default_rng(seed)
    y = _rows(robot, rng, states, stack.cal, motion, stack.terms)
    width = hi - lo
    scale = np.where(width > 0, width, np.maximum(np.abs(truth), 1.0))
    fixed = (width <= 1e-12 * np.maximum(np.abs(truth), 1.0)) | ~np.any(y != 0.0, axis=0)
    fixed[robot.ee_columns] = False
    n = _null_space(y, scale, fixed)
    nb = robot.n_bodies
    seen = row_joints_and_bodies(robot)[1]
    bodies = [slice(10 * b, 10 * b + 10) for b in range(nb) if b in seen]
    if stack.cal:
        bodies.append(slice(10 * nb + stack.n_phi, 10 * nb + stack.n_phi + 10))
    lower, upper, wit = _extremes(stack, n, fixed, bodies, robot.ee_columns.start, theta_e)
    residual = _residual(robot, wit, truth, rng, check_states, stack.cal, motion, stack.terms)
    flat = wit.reshape(-1, truth.size)
    slack = 1e-7 * np.maximum(width, np.maximum(np.abs(truth), 1e-3))
    consistent = bool(np.all(flat >= lo - slack) and np.all(flat <= hi + slack)) and all(
        bool(is_physically_consistent(w[sl], -1e-9 * max(1.0, abs(w[sl][0]))))
        for w in flat for sl in bodies)
    box = theta_e_box(np.minimum(lower, theta_e), np.maximum(upper, theta_e), theta_e,
                      frame=robot.ee_joint)
    return Floor(box, truth, wit, n.shape[1], residual, consistent, states)


@dataclass(frozen=True)
class _Stack:
    """The unknowns x = [θ of every body | friction (| extra terms) (| calibration EE body)]:
    the truth the floor is taken about and the box of each entry."""

    truth: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n_phi: int          # friction and extra-term entries
    cal: bool           # the calibration's EE body is stacked last
    terms: bool         # extra friction terms are stacked after the friction coefficients


def _stack(robot: Robot, config: IdentificationConfig, theta_e: np.ndarray,
           calibration_ee: ParameterBox | None) -> _Stack:
    """Check ``theta_e`` and the boxes, and stack the truth and the boxes of every unknown."""
    nb, ee = robot.n_bodies, robot.ee_columns
    if theta_e.shape != (10,):
        raise IdentificationConfigError(f"theta_e must have 10 entries, got {theta_e.shape}")
    if not config.prior.contains(theta_e, tol=1e-12) or not is_physically_consistent(theta_e, -1e-12):
        raise IdentificationConfigError("theta_e must lie in the prior box and be physically "
                                        "consistent (it is the truth the floor is taken about)")
    lo_r, hi_r = config.theta_r_box
    mask = np.ones(10 * nb, bool)
    mask[ee] = False
    truth = robot.theta()
    truth[ee] = theta_e
    lo, hi = truth.copy(), truth.copy()
    lo[ee], hi[ee] = config.prior.lower, config.prior.upper
    lo[mask], hi[mask] = lo_r, hi_r
    phi = config.friction_nominal.ravel()
    lo = np.r_[lo, config.friction_lower.ravel()]
    hi = np.r_[hi, config.friction_upper.ravel()]
    truth = np.r_[truth, phi]
    terms = config.friction_terms
    if terms is not None and terms is not robot.friction.terms:
        raise IdentificationConfigError("the floor takes the extra friction terms from the "
                                        "robot's calibration; the configuration has others")
    if terms is not None:
        lo, hi = np.r_[lo, terms.lower.ravel()], np.r_[hi, terms.upper.ravel()]
        truth = np.r_[truth, terms.centre.ravel()]
    n_phi = truth.size - 10 * nb
    if calibration_ee is not None:
        if not calibration_ee.contains(robot.theta_e(), tol=1e-12):
            raise IdentificationConfigError("calibration_ee must contain the nominal EE body")
        truth = np.r_[truth, robot.theta_e()]
        lo, hi = np.r_[lo, calibration_ee.lower], np.r_[hi, calibration_ee.upper]
    if np.any(truth < lo - 1e-12) or np.any(truth > hi + 1e-12):
        raise IdentificationConfigError("the nominal links/friction lie outside their boxes")
    return _Stack(truth, lo, hi, n_phi, calibration_ee is not None, terms is not None)


def _extremes(stack: _Stack, n: np.ndarray, fixed: np.ndarray, bodies: list[slice],
              ee_start: int, theta_e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Min and max of each θ_e entry over x = truth + n·z inside the boxes with every body's
    pseudo-inertia ⪰ 0 (20 small SDPs): (lower, upper, witnesses[side, entry])."""
    import cvxpy as cp

    truth, lo, hi = stack.truth, stack.lower, stack.upper
    k = n.shape[1]
    basis = pseudo_inertia(np.eye(10))
    z = cp.Variable(k)
    c = cp.Parameter(k)
    x = truth + n @ z if k else cp.Constant(truth)
    free = ~fixed
    cons = [x[free] >= lo[free], x[free] <= hi[free]]
    for sl in bodies:
        theta_b = x[sl]
        cons.append(sum(theta_b[j] * basis[j] for j in range(10)) >> 0)
    prob = cp.Problem(cp.Minimize(c @ z), cons) if k else None
    wit = np.tile(truth, (2, 10, 1))
    lower, upper = theta_e.copy(), theta_e.copy()
    for i in range(10):
        col = ee_start + i
        if k == 0 or not np.any(np.abs(n[col]) > 0):
            continue
        for side, sgn in ((0, 1.0), (1, -1.0)):
            c.value = sgn * n[col]
            assert prob is not None
            with warnings.catch_warnings():
                # an inaccurate optimum is still a witness; the caller checks it like any other
                warnings.simplefilter("ignore", UserWarning)
                prob.solve(solver=cp.CLARABEL, max_threads=1)    # one thread: as in bounds
            if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
                raise IdentificationConfigError(
                    f"the floor's problem for θ_e[{i}] ended {prob.status}")
            xv = truth + n @ z.value
            wit[side, i] = xv
            (lower if side == 0 else upper)[i] = xv[col]
    return lower, upper, wit


def _residual(robot: Robot, wit: np.ndarray, truth: np.ndarray, rng: np.random.Generator,
              n: int, cal: bool, motion: _Motion, terms: bool = False) -> float:
    y = _rows(robot, rng, n, cal, motion, terms)
    ref = np.abs(y @ truth).max()
    return float(np.abs((wit.reshape(-1, truth.size) - truth) @ y.T).max() / ref)
