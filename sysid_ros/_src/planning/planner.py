"""Receding-horizon safe exciting-trajectory planner (docs/theory/planner.md): configuration, NLP,
verify.

Each cycle: from the initial state (q₀, q̇₀, q̈₀) pick k ∈ 𝒦 minimising cond(Y_e) (``nominal``;
or another objective, ``PlannerConfig.objective`` and ``ExcitingPlanner.stage``),
subject to smooth sampled constraints with margins, solved by Ipopt (cyipopt) under a wall-time
limit, warm-started from the last k; then the returned k is checked with the SOUND reachable sets
(``reachability.Reachability.verify``). Only a verified k is ever returned as publishable; if
none verifies in time the caller keeps the current trajectory, which brakes to rest.

Why this split (and not ARMOUR's polynomial zonotopes inside the NLP): the sound enclosures cost
~0.1–0.2 s per evaluation in numpy, so they are used once per candidate, while the NLP works on
cheap sampled values with exact complex-step gradients. The margins that make the sampled
constraints conservative are measured, not guessed: the gap between each verified enclosure and
the sampled nominal values at the same k (per joint for torque, per sphere for distance), grown
by ``margin_growth``; on a failed verification the margins are re-measured at the failed k and
the NLP re-solved while time remains; after a certified plan they are re-measured at its k with
its box (``refresh_margins``), so that the gap of the wide first box does not bind every later
NLP once the identifier has narrowed the box. Joint position and velocity limits are linear in k per
joint, so they become a per-joint box on k (sampled densely; the verification is exact).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import cyipopt
import numpy as np

from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.planning.errors import (PlannerConfigError, PlanRequestError,
                                       UnplannableRobotError)
from sysid_ros._src.planning.nominal import (FIRST_MOMENTS, OBJECTIVES, ConstraintValues,
                                       NominalModel, ObjectiveValue, RegressorObjective)
from sysid_ros._src.planning.obstacles import BoxObstacle, obstacles_from_config
from sysid_ros._src.planning.reachability import ControllerModel, Reachability, Verification
from sysid_ros._src.planning.trajectory import QuinticTrajectory
from sysid_ros._src.planning.width import keep_history, predicted_half_width

__all__ = ["PlannerConfig", "PlanResult", "ExcitingPlanner", "controller_model"]



def _per_joint(value: Any, nj: int, key: str) -> np.ndarray:
    """One value for every joint or ``nj`` of them; PlannerConfigError naming ``key``."""
    arr = np.asarray(value, float)
    if arr.ndim > 1 or arr.size not in (1, nj):
        raise PlannerConfigError(f"planner.{key}: expected one value or {nj} (one per joint), "
                                 f"got {arr.size}")
    return np.broadcast_to(arr.reshape(-1) if arr.size == nj else arr.reshape(()), (nj,)).copy()

@dataclass(frozen=True)
class PlannerConfig:
    """Planner settings (section ``planner:`` of config/<robot>.yaml; keys = field names).

    k_range: half-width of the box 𝒦 per joint (rad); t_f: trajectory duration; t_p: replanning
    period; n_samples: N_s samples of the objective; n_intervals: time sub-intervals of the sound
    check; max_solve_time: wall-time limit of one ``plan`` call (< t_p); max_iter: Ipopt
    iterations per solve; constraint_stride: the NLP's constraints are sampled at every
    stride-th sub-interval edge; margin_growth: factor on measured margins (1.1: the Gen3
    closed loop's cond(Y_e) was lowest at 1.05–1.1 of 1.0/1.05/1.1/1.25, docs/results.md;
    the check decides anyway, a lower factor only costs more failed checks); obstacles: boxes;
    objective: ``cond`` (log cond(Y_e), S3-30; default), ``box`` (predicted variances of mass
    and first moments relative to the current box widths, given the rows already executed:
    ``NominalModel.box_objective``) or ``staged`` (``ExcitingPlanner.stage``: the predicted
    variances of the first moments in (kg·m)² while the box's CoM width exceeds
    ``stage_com_width`` (m), ``cond`` after) or ``radius`` (the mass variance of the samples'
    rows weighted by the identifier's torque radius at the warm start,
    ``NominalModel.row_weights``; docs/results.md: level with random excitation where
    ``cond`` is not) or ``width`` (``planning.width``: the mass width of the box those weighted
    rows and the executed ones leave, by the LP the identifier solves; plus ``cond_weight`` ×
    log cond(Y_e) of the executed and planned rows, default 0 — the two pull apart; 0.3 kept
    the closed loop's narrower box and half of cond's lead there but not in the in-process
    bench, docs/results.md — and ``radius_weight`` × the ``radius`` objective, default
    0.1, a smooth term for where the LP gives no gradient); cond(Y_e) is reported either way.
    cond_history: the ``cond`` objective (and ``staged``'s second stage) is cond(Y_e) of the
    rows already executed (each certified plan's first t_p) and the planned ones together
    (``NominalModel.cond_with_history``) instead of S3-30's cond of the planned trajectory alone:
    what the identification data end up with, so a plan fills in what the earlier ones left
    weak rather than repeating their best motion.
    restarts: after a certified plan, up to this many more NLP solves from other starting
    points (the warm start mirrored, then random points in the k box) while the budget lasts;
    one replaces the plan only with a lower objective and a passed sound check; they end
    within ``restart_budget`` s of the cycle's start (target: p95 cycle <= 0.5 s).
    ``cond`` stages only: ``width`` and ``radius`` freeze their row weights at the warm start,
    so a far start is judged with the wrong radii (in-process, ``width``, seed 0: 0.286 →
    0.326 kg with restarts).
    refresh_margins: after a certified plan, the NLP's margins are re-measured at its k with
    that cycle's box instead of only ever growing: margins measured with the wide first box
    would otherwise hold every later NLP to it (boxes only shrink, so the gap of the last
    certified plan is an over-estimate for the next box; a failed check still grows them).
    """

    k_range: np.ndarray
    t_f: float = 3.0
    t_p: float = 1.5
    n_samples: int = 128
    n_intervals: int = 128
    max_solve_time: float = 1.0
    max_iter: int = 8
    constraint_stride: int = 2
    margin_growth: float = 1.1
    beta_distance: float = 300.0
    beta_torque: float = 10.0
    mass_blocks: int = 8
    obstacles: tuple[BoxObstacle, ...] = ()
    fallback_scales: tuple[float, ...] = (0.5, 0.25)
    k_init: np.ndarray | None = None
    objective: str = "cond"
    cond_weight: float = 0.0
    radius_weight: float = 0.1
    stage_com_width: float = 0.1
    refresh_margins: bool = True
    cond_history: bool = False
    restarts: int = 0
    restart_budget: float = 0.45

    @classmethod
    def from_robot(cls, robot: Robot, overrides: dict[str, Any] | None = None) -> PlannerConfig:
        raw = dict(robot.config.get("planner") or {})
        raw.update(overrides or {})
        known = set(cls.__dataclass_fields__)
        unknown = set(raw) - known
        if unknown:
            raise PlannerConfigError(f"planner: unknown keys {sorted(unknown)}")
        if robot.floating_base:
            raise PlannerConfigError(f"{robot.name}: a floating base is planned for as its arm "
                                     "view, the trunk taken as the base (control.arm_view)")
        if "k_range" not in raw:
            raise PlannerConfigError(f"{robot.config_path}: planner.k_range is required")
        k_range = _per_joint(raw.pop("k_range"), robot.nj, "k_range")
        if np.any(~np.isfinite(k_range)) or np.any(k_range <= 0):
            raise PlannerConfigError("planner.k_range: expected positive radians per joint")
        obstacles = raw.pop("obstacles", None)
        obstacles = obstacles if isinstance(obstacles, tuple) else obstacles_from_config(obstacles)
        if "fallback_scales" in raw:
            raw["fallback_scales"] = tuple(float(x) for x in raw["fallback_scales"])
        k_init = raw.pop("k_init", None)
        if k_init is not None:
            k_init = _per_joint(k_init, robot.nj, "k_init")
        cfg = cls(k_range=k_range, obstacles=obstacles, k_init=k_init, **raw)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        checks = [(self.t_f > 0, "t_f must be positive"),
                  (0 < self.t_p <= self.t_f, "t_p must be in (0, t_f]"),
                  (self.n_samples >= 2, "n_samples must be >= 2"),
                  (self.n_intervals >= 1, "n_intervals must be >= 1"),
                  (0 < self.max_solve_time < self.t_p, "max_solve_time must be in (0, t_p)"),
                  (self.max_iter >= 1, "max_iter must be >= 1"),
                  (self.constraint_stride >= 1 and self.n_intervals % self.constraint_stride == 0,
                   "constraint_stride must divide n_intervals"),
                  (self.margin_growth >= 1.0, "margin_growth must be >= 1"),
                  (self.objective in OBJECTIVES,
                   f"objective must be one of {OBJECTIVES}, got {self.objective!r}"),
                  (self.stage_com_width > 0, "stage_com_width must be positive (m)"),
                  (np.isfinite(self.cond_weight) and self.cond_weight >= 0,
                   "cond_weight must be finite and >= 0"),
                  (np.isfinite(self.radius_weight) and self.radius_weight >= 0,
                   "radius_weight must be finite and >= 0"),
                  (self.restarts >= 0, "restarts must be >= 0"),
                  (np.isfinite(self.restart_budget) and self.restart_budget > 0,
                   "restart_budget must be positive (s)")]
        for ok, why in checks:
            if not ok:
                raise PlannerConfigError(f"planner: {why}")


def controller_model(robot: Robot, overrides: dict[str, Any] | None = None) -> ControllerModel:
    """What the planner assumes about the robust controller: the gains of the robot file's
    ``controller:`` section (``control.controller.gains_from_config``) and its tracking-error
    bound — the workspace one (``control.tracking_bounds.tracking_error_bound``), or, when the section
    has ``tracking_box: {e_max: [...], de_max: [...]}`` (rad, rad/s per joint), that box as an
    assumption the reachability check certifies on every sub-interval (docs/theory/planner.md#sound-reachability)."""
    from sysid_ros._src.control.tracking_bounds import tracking_error_bound
    from sysid_ros._src.control.controller import NOMINALS, gains_from_config
    from sysid_ros._src.control.errors import ControlError

    sec = dict(robot.config.get("controller") or {})
    sec.update(overrides or {})
    try:
        gains = gains_from_config(robot, overrides)
    except ControlError as exc:
        raise PlannerConfigError(str(exc)) from None
    nominal = str(sec.get("nominal", NOMINALS[0]))
    if nominal not in NOMINALS:
        raise PlannerConfigError(f"controller.nominal must be centre or estimate, got {nominal!r}")
    box = sec.get("tracking_box")
    try:
        bound = tracking_error_bound(robot, gains.Kr, gains.V_max)
    except Exception as exc:        # control's errors: no sound tracking bound → no safe plan
        if box is None:
            raise PlannerConfigError(f"{robot.name}: the controller's tracking-error bound is "
                                     f"not available, so no plan can be certified: {exc}") from exc
        bound = None
    if box is not None:
        try:
            e_max, de_max = (np.broadcast_to(np.asarray(box[k], float), (robot.nj,)).copy()
                             for k in ("e_max", "de_max"))
        except (KeyError, TypeError, ValueError) as exc:
            raise PlannerConfigError(f"controller.tracking_box needs e_max and de_max per joint "
                                     f"({exc})") from None
        if np.any(~(e_max > 0)) or np.any(~(de_max > 0)):
            raise PlannerConfigError("controller.tracking_box: e_max and de_max must be positive")
        rho = bound.rho if bound is not None else float("inf")
    else:
        assert bound is not None        # without a tracking_box a missing bound raised above
        rho, e_max, de_max = bound.rho, bound.e_max, bound.de_max
    return ControllerModel(gains.Kr, gains.alpha, gains.V_max, rho, e_max, de_max,
                           nominal_at_centre=(nominal == "centre"), metric=gains.metric,
                           metric_armature=gains.metric_armature,
                           coulomb_band=gains.coulomb_band, local=box is not None)


@dataclass
class PlanResult:
    """Outcome of one planning cycle. ``k`` is publishable only when ``verified``."""

    verified: bool
    k: np.ndarray | None
    trajectory: QuinticTrajectory
    cond: float = float("nan")
    objective: str = ""          # what this cycle's NLP minimised (``ExcitingPlanner.stage``)
    iterations: int = 0
    solves: int = 0
    solve_time: float = 0.0
    status: str = ""
    reasons: list[str] = field(default_factory=list)
    verification: Verification | None = None


#: k → ((value, gradient (nj,), cond Y_e), (g, jac, clearance, tau)): ``NominalModel.evaluate``
#: with this cycle's trajectory, box centre, margins and objective bound
Evaluation = Callable[[np.ndarray], tuple[ObjectiveValue, ConstraintValues]]


class _Problem:
    """cyipopt problem over k with cached evaluations and a wall-clock stop.

    Objective and constraints come from one ``NominalModel.evaluate`` per point (they share the
    chain code), cached on the bytes of k: Ipopt asks for both, and for their derivatives, at
    the same points."""

    def __init__(self, evaluate: Evaluation, deadline: float) -> None:
        self.evaluate, self.deadline = evaluate, deadline
        self._key: bytes | None = None
        self._val: tuple[ObjectiveValue, ConstraintValues]
        self.iterations = 0
        # objective value and cond(Y_e) at every point evaluated: a plan's are then known
        # without another pass
        self.values: dict[bytes, float] = {}
        self.conds: dict[bytes, float] = {}

    def _at(self, x: np.ndarray) -> tuple[ObjectiveValue, ConstraintValues]:
        key = x.tobytes()
        if key != self._key:
            self._val = self.evaluate(x)
            self._key = key
            self.values[key], self.conds[key] = self._val[0][0], self._val[0][2]
        return self._val

    def objective(self, x: np.ndarray) -> float:
        return self._at(x)[0][0]

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self._at(x)[0][1]

    def constraints(self, x: np.ndarray) -> np.ndarray:
        return self._at(x)[1][0]

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        return self._at(x)[1][1].ravel()

    def intermediate(self, alg_mod: int, iter_count: int, *args: float) -> bool:
        self.iterations = iter_count
        return time.monotonic() < self.deadline


class ExcitingPlanner:
    """Plans certified exciting trajectories for one robot (module doc)."""

    def __init__(self, robot: Robot, config: PlannerConfig | None = None,
                 controller: ControllerModel | None = None) -> None:
        self.robot = robot
        if robot.floating_base:
            raise UnplannableRobotError(
                f"{robot.name}: the planner handles fixed-base arms only (floating base found)")
        self.config = config or PlannerConfig.from_robot(robot)
        self.controller = controller or controller_model(robot)
        cfg = self.config
        self.reach = Reachability(robot, self.controller, cfg.obstacles, cfg.n_intervals,
                                  cfg.mass_blocks)
        self.model = NominalModel(robot, cfg.obstacles, cfg.n_samples,
                                  cfg.n_intervals // cfg.constraint_stride + 1,
                                  cfg.beta_distance, cfg.beta_torque)
        nj = robot.nj
        self.k_last = (cfg.k_init.copy() if cfg.k_init is not None
                       else 0.5 * cfg.k_range * np.where(np.arange(nj) % 2 == 0, 1.0, -1.0))
        self.margin_d: np.ndarray | None = None
        self.margin_t: np.ndarray | None = None
        # wall time of the last sound checks: the NLP stops early enough for one to finish
        # within max_solve_time (a plan certified after its budget is discarded as late)
        self.check_seconds = 0.0
        # cond(Y_e) at the points the last NLP evaluated (by k's bytes): a plan's cond comes
        # from there rather than from one more evaluation
        self.nlp_conds: dict[bytes, float] = {}
        self.nlp_values: dict[bytes, float] = {}          # the same for the objective's value
        # Y_eᵀY_e of the executed parts of the published plans (each up to t_p): the history
        # the ``box`` objective adds the new rows to
        self.information = np.zeros((10, 10))
        self._restart_rng = np.random.default_rng(0)      # restarts' starting points (repeatable)
        self.weighted_information = np.zeros((10, 10))     # the same, rows over their radius
        # the ``width`` objective's history: executed rows over their radius (``keep_history``)
        self.weighted_history = np.zeros((0, 10))

    # -- pieces ----------------------------------------------------------------------------------
    def k_box(self, traj: QuinticTrajectory) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """𝒦 intersected with the per-joint k interval that keeps position and velocity limits
        (with the tracking-error bound) at 8·n_intervals sample times; reasons if empty."""
        cfg, ctrl, lim = self.config, self.controller, self.robot.limits
        t = np.linspace(0.0, traj.t_f, 8 * cfg.n_intervals + 1)
        q0, dq0, _ = traj.sample(t, np.zeros(traj.nj))
        b, db, _ = traj.basis(t)
        lo, hi = -cfg.k_range.copy(), cfg.k_range.copy()
        reasons = []
        for vals, basis, low, high in (
                (q0, b, lim.q_lower + ctrl.e_max, lim.q_upper - ctrl.e_max),
                (dq0, db, -lim.dq_max + ctrl.de_max, lim.dq_max - ctrl.de_max)):
            for j in range(traj.nj):
                with np.errstate(divide="ignore", invalid="ignore"):
                    a = (low[j] - vals[:, j]) / basis
                    c = (high[j] - vals[:, j]) / basis
                pos, neg, zero = basis > 1e-12, basis < -1e-12, np.abs(basis) <= 1e-12
                if np.any(zero & ((vals[:, j] < low[j]) | (vals[:, j] > high[j]))):
                    reasons.append(f"joint {self.robot.joint_names[j]} violates its limits "
                                   "whatever k (current state)")
                lo[j] = max(lo[j], np.max(a[pos], initial=-np.inf), np.max(c[neg], initial=-np.inf))
                hi[j] = min(hi[j], np.min(c[pos], initial=np.inf), np.min(a[neg], initial=np.inf))
        span = hi - lo
        shrink = 1e-3 * np.maximum(span, 0.0)
        lo, hi = lo + shrink, hi - shrink
        for jb in np.flatnonzero(lo > hi):
            reasons.append(f"no k keeps joint {self.robot.joint_names[jb]} within its position/"
                           "velocity limits")
        return lo, hi, reasons

    def _measure_margins(self, traj: QuinticTrajectory, k: np.ndarray, theta_e: np.ndarray,
                         ver: Verification) -> None:
        """Margins = gap between the sound enclosure of each sub-interval and the nominal values
        at the NLP's nearest sampled edges (every ``constraint_stride``-th), at this k. A k the
        check could not evaluate (non-finite: no reachable set) leaves the margins as they are."""
        reach = ver.reach
        if reach is None:
            return
        n = self.config.n_intervals
        stride = self.config.constraint_stride
        clearance, tau = self.model.sampled(traj, k, theta_e, n + 1)
        left = (np.arange(n) // stride) * stride
        right = np.minimum(left + stride, n)
        tau_abs = np.abs(tau)
        nom_t = np.maximum(tau_abs[left], tau_abs[right])
        growth = self.config.margin_growth
        m_t = np.maximum(np.max(reach.torque_bound - nom_t, axis=0), 0.0) * growth
        self.margin_t = m_t if self.margin_t is None else np.maximum(self.margin_t, m_t)
        if clearance.shape[-1]:
            nom_c = np.minimum(clearance[left], clearance[right])
            m_d = np.maximum(np.max(nom_c - reach.clearance, axis=(0, 2)), 0.0) * growth
        else:
            m_d = np.zeros(self.reach.chain.sphere_radius.size)
        self.margin_d = m_d if self.margin_d is None else np.maximum(self.margin_d, m_d)

    def stage(self, theta_e: ParameterBox) -> str:
        """The objective this cycle minimises: the configured one, except that ``staged`` means
        ``moments`` while the box's CoM width max_i w(m·c_i) / m_lower exceeds
        ``stage_com_width`` and ``cond`` after.

        Why: after holding still, the first moments along the gravity direction in the
        end-effector frame are unobservable and stay at their prior width; the robust input and
        the torque enclosure grow with that width, so the certificate admits only gentle motion,
        and a gentle motion excites little cond(Y_e). A gentle motion that turns the gravity
        direction in the end-effector frame does pin m·c (gravity rows are large at any
        speed), after which the plans certified against the narrower box can be large.
        Measured: on the Gen3 it does not beat ``cond`` in the closed loop, which pins m·c as
        well once plans grow (docs/results.md), hence not the default.
        """
        if self.config.objective != "staged":
            return self.config.objective
        w = theta_e.width[list(FIRST_MOMENTS)]
        m_lo = max(float(theta_e.lower[0]), 1e-9)
        return "moments" if float(np.max(w)) / m_lo > self.config.stage_com_width else "cond"

    def _objective(self, stage: str, theta_e: ParameterBox, traj: QuinticTrajectory,
                   k0: np.ndarray) -> RegressorObjective:
        """The NLP's objective for ``stage`` (a ``stage()`` value), bound to the history (or,
        for ``radius``, to the row weights at the warm start ``k0``)."""
        if stage == "cond":
            if self.config.cond_history:
                return partial(self.model.cond_with_history, gram=self.information)
            return self.model.cond_of
        if stage == "radius":
            return partial(self.model.weighted_mass_of, weights=self.model.row_weights(traj, k0),
                           width=theta_e.width, info=self.weighted_information)
        if stage == "width":
            weights = self.model.row_weights(traj, k0)
            return partial(self._width_objective, weights=weights, width=theta_e.width)
        if stage == "box":
            return partial(self.model.box_of, info=self.information, width=theta_e.width)
        return partial(self.model.box_of, info=self.information, width=theta_e.width,
                       parameters=FIRST_MOMENTS, relative=False)

    def _width_objective(self, y: np.ndarray, weights: np.ndarray,
                         width: np.ndarray) -> ObjectiveValue:
        """``width``: log of the predicted mass half-width (``planning.width``) + ``cond_weight``
        × log cond(Y_e) of executed and planned rows + ``radius_weight`` × the ``radius``
        objective. The last is smooth where the LP is flat — when every row that binds the
        predicted mass is an executed one or the box edge, the planned rows get no gradient
        and Ipopt stopped at the warm start (3.18 kg in the closed loop: plans of |k| 0.06–0.5)."""
        value, grad, cond = predicted_half_width(
            y, weights, width, self.weighted_history, cond_weight=self.config.cond_weight,
            gram=self.information)
        if self.config.radius_weight > 0.0 and np.isfinite(value):
            r_value, r_grad, _ = self.model.weighted_mass_of(y, weights, width,
                                                             self.weighted_information)
            value += self.config.radius_weight * r_value
            grad = grad + self.config.radius_weight * r_grad
        return value, grad, cond

    def _solve(self, traj: QuinticTrajectory, x0: np.ndarray, lo: np.ndarray, hi: np.ndarray,
               theta_e: np.ndarray, deadline: float,
               objective: RegressorObjective) -> tuple[np.ndarray, int, str]:
        """(k, Ipopt iterations, status); ``nlp_conds`` then holds cond(Y_e) at every point
        Ipopt evaluated."""
        # plan() measures the margins before its first solve
        margin_d, margin_t = self.margin_d, self.margin_t
        assert margin_d is not None and margin_t is not None
        prob = _Problem(lambda x: self.model.evaluate(traj, x, theta_e, margin_d, margin_t,
                                                      objective), deadline)
        m = self.model.n_constraints
        nlp = cyipopt.Problem(n=traj.nj, m=m, problem_obj=prob, lb=lo, ub=hi,
                              cl=np.zeros(m), cu=np.full(m, 2e19))
        for key, val in (("hessian_approximation", "limited-memory"), ("print_level", 0),
                         ("sb", "yes"), ("max_iter", int(self.config.max_iter)), ("tol", 1e-3),
                         ("acceptable_tol", 1e-2), ("acceptable_iter", 3),
                         ("mu_strategy", "adaptive"),
                         ("max_cpu_time", max(1e-3, deadline - time.monotonic()))):
            nlp.add_option(key, val)
        x, info = nlp.solve(np.clip(x0, lo, hi))
        msg = info["status_msg"]
        self.nlp_conds, self.nlp_values = prob.conds, prob.values
        return np.asarray(x, float), prob.iterations, msg.decode() if isinstance(msg, bytes) else msg

    def _restart(self, result: PlanResult, traj: QuinticTrajectory, x0: np.ndarray,
                 lo: np.ndarray, hi: np.ndarray, theta_e: ParameterBox, deadline: float,
                 per_check: float, objective: RegressorObjective,
                 last_ver: Verification | None, first: float) -> Verification | None:
        """``restarts`` more NLP solves from other starting points while the budget lasts (the
        mirror of the warm start, then points drawn in the k box): a local method's answer
        depends on where it starts, and a cycle usually leaves most of its budget unused. A
        restart's answer replaces the plan only if its objective is lower AND it passes the
        sound check; the plan stays certified either way. A restart starts only if one
        more solve as long as the cycle's first (``first`` s) and a check fit before
        ``deadline``."""
        assert result.k is not None

        def value(k: np.ndarray) -> float:
            """The objective at k: the last NLP's evaluation if it made one (Ipopt's answer
            is one of its iterates), else one pass (a fallback k)."""
            known = self.nlp_values.get(k.tobytes())
            return self.model.objective_at(traj, k, objective)[0] if known is None else known

        best = value(result.k)
        starts = [np.clip(-x0, lo, hi)] + [self._restart_rng.uniform(lo, hi) for _ in
                                           range(self.config.restarts - 1)]
        for start in starts:
            if time.monotonic() + first + 1.2 * per_check > deadline:
                break
            k, iters, _ = self._solve(traj, start, lo, hi, theta_e.centre,
                                      deadline - 1.2 * per_check, objective)
            result.iterations += iters
            result.solves += 1
            v = value(k)
            if not v < best - 1e-9 or time.monotonic() + per_check > deadline:
                continue
            ver = self.reach.verify(traj, k, theta_e.lower, theta_e.upper, lo, hi)
            if ver.ok:
                best, result.k, last_ver = v, k, ver
                result.cond = self.nlp_conds.get(k.tobytes(), float("nan"))
                result.status += " (restart)"
        return last_ver

    # -- one cycle -------------------------------------------------------------------------------
    def plan(self, q0: np.ndarray, dq0: np.ndarray, ddq0: np.ndarray,
             theta_e: ParameterBox) -> PlanResult:
        """Plan one trajectory from (q0, dq0, ddq0) for every θ_e in the box ``theta_e`` (names
        ``PARAM_NAMES``, else PlanRequestError)."""
        if theta_e.names != PARAM_NAMES:
            raise PlanRequestError(f"theta_e box: parameters {list(theta_e.names)} != "
                                   f"{list(PARAM_NAMES)}")
        start = time.monotonic()
        deadline = start + self.config.max_solve_time
        try:
            traj = QuinticTrajectory(q0, dq0, ddq0, self.config.t_f)
        except PlanRequestError as exc:
            raise PlanRequestError(f"initial state: {exc}") from None
        # the reachability check works on the two arrays (it turns them into Intervals)
        theta_e_lo, theta_e_hi, theta_c = theta_e.lower, theta_e.upper, theta_e.centre
        result = PlanResult(False, None, traj)
        lo, hi, reasons = self.k_box(traj)
        if reasons:
            result.reasons, result.status = reasons, "infeasible k box"
            result.solve_time = time.monotonic() - start
            return result
        x0 = np.clip(self.k_last, lo, hi)
        self.nlp_conds, self.nlp_values = {}, {}   # never another cycle's (trajectory's) values
        if self.margin_t is None:
            t_check = time.monotonic()
            ver0 = self.reach.verify(traj, x0, theta_e_lo, theta_e_hi)
            self.check_seconds = time.monotonic() - t_check
            self._measure_margins(traj, x0, theta_c, ver0)
        result.objective = self.stage(theta_e)
        objective = self._objective(result.objective, theta_e, traj, x0)
        last_ver, per_check = self._solve_until_verified(result, traj, x0, lo, hi, theta_e,
                                                         start, deadline, objective)
        if result.verified and self.config.restarts > 0 and result.objective == "cond":
            # restarts end within restart_budget of the cycle's start (target: a
            # cycle's p95 <= 0.5 s), whatever max_solve_time leaves
            last_ver = self._restart(result, traj, x0, lo, hi, theta_e,
                                     min(deadline, start + self.config.restart_budget),
                                     per_check, objective, last_ver, time.monotonic() - start)
        if result.verified and np.isnan(result.cond):   # a fallback k (or one Ipopt never
            assert result.k is not None                 # evaluated): one more pass
            result.cond = self.model.objective(traj, result.k)[2]
        result.verification = last_ver
        if not result.verified:
            result.reasons = list(last_ver.reasons) if last_ver else ["no candidate"]
        elif result.k is not None:
            self._adopt(result.k, traj, theta_e, last_ver)
        result.solve_time = time.monotonic() - start
        return result

    def _solve_until_verified(self, result: PlanResult, traj: QuinticTrajectory, x0: np.ndarray,
                              lo: np.ndarray, hi: np.ndarray, theta_e: ParameterBox,
                              start: float, deadline: float,
                              objective: RegressorObjective
                              ) -> tuple[Verification | None, float]:
        """NLP solves from ``x0``, each checked by reachability (with shorter moves along the
        same direction as fallbacks), until one verifies or the budget is spent. Fills
        ``result``; returns the last verification and the time one check takes."""
        theta_e_lo, theta_e_hi, theta_c = theta_e.lower, theta_e.upper, theta_e.centre
        candidate = x0
        last_ver: Verification | None = None
        per_check = self.check_seconds
        while True:
            # the NLP keeps at least a quarter of the budget (a loaded machine's slow checks
            # would otherwise leave it nothing and every plan would be the warm start)
            k, iters, status = self._solve(
                traj, candidate, lo, hi, theta_c,
                max(deadline - 1.2 * per_check, start + 0.25 * self.config.max_solve_time,
                    time.monotonic()), objective)
            result.iterations += iters
            result.solves += 1
            result.status = status
            t_check = time.monotonic()
            ver = self.reach.verify(traj, k, theta_e_lo, theta_e_hi, lo, hi)
            per_check = time.monotonic() - t_check
            self.check_seconds = 0.5 * (self.check_seconds + per_check) if self.check_seconds \
                else per_check
            last_ver = ver
            if ver.ok:
                result.verified, result.k = True, k
                result.cond = self.nlp_conds.get(k.tobytes(), float("nan"))
                break
            self._measure_margins(traj, k, theta_c, ver)
            # fall back to shorter moves along the same direction (slower, smaller excursions)
            for scale in self.config.fallback_scales:
                if time.monotonic() + per_check > deadline:
                    break
                ver_s = self.reach.verify(traj, scale * k, theta_e_lo, theta_e_hi, lo, hi)
                if ver_s.ok:
                    result.verified, result.k, last_ver = True, scale * k, ver_s
                    result.status += f" (fallback: {scale} k)"
                    break
            if result.verified or time.monotonic() + 2.0 * per_check > deadline:
                break
            candidate = k
        return last_ver, per_check

    def _adopt(self, k: np.ndarray, traj: QuinticTrajectory, theta_e: ParameterBox,
               last_ver: Verification | None) -> None:
        """Carry a verified plan's coefficients, margins and information into the next cycle."""
        self.k_last = k.copy()
        if self.config.refresh_margins and last_ver is not None:
            # the next cycle starts from this plan's gap with this (the widest yet to come)
            # box rather than the maximum over every earlier, wider box (config doc)
            self.margin_d = self.margin_t = None
            self._measure_margins(traj, k, theta_e.centre, last_ver)
        # the part that runs before the next cycle takes over (all of it if none does)
        self.information = self.information + self.model.information(traj, k, self.config.t_p)
        if self.config.objective in ("radius", "width"):
            self.weighted_information = self.weighted_information + \
                self.model.weighted_information(traj, k, self.config.t_p)
        if self.config.objective == "width":
            self.weighted_history = keep_history(np.vstack([
                self.weighted_history,
                self.model.weighted_rows(traj, k, self.config.t_p)]), theta_e.width)
