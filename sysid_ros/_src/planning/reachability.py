"""Sound reachable sets of a planned trajectory over time sub-intervals, and the safety check.

For a fixed plan parameter k, over each of n time sub-intervals [t_m, t_{m+1}] of [0, t_f]:

1. desired q_d, q̇_d, q̈_d: exact ranges (``QuinticTrajectory.enclose``);
2. actual joint state, with the controller's tracking-error bound (``sysid_ros._src.control.tracking_bounds``):
   q ∈ [q_d] ± e_max, q̇ ∈ [q̇_d] ± de_max, and the controller's references
   q̇_a = q̇_d + K_r e ∈ [q̇_d] ± K_r e_max, q̈_a = q̈_d + K_r ė ∈ [q̈_d] ± K_r de_max;
3. collision spheres: interval forward kinematics (``chain.sphere_centres`` on Intervals) and a
   sound sphere–box clearance (``obstacles.interval_clearance``);
4. motor torque u = τ₀ + v of the robust controller (docs/theory/controller.md):
   - τ₀ ∈ [Y_p]·[θ] + [τ_f]: interval passivity RNEA over the state box and the parameter box
     (θ_e in the identifier's bounds, θ_r in its relative box, friction in its box; the Coulomb
     feed-forward is Fc·s(q̇) with the controller's ramp s = sign(q̇)·clip(|q̇|/band − 1, 0, 1),
     whose hull over [lo, hi] is [s(lo), s(hi)] since s is non-decreasing);
   - v = σβd + α(V_sup − V_max)₊·r/‖r‖² (``control.controller``), so per joint
       |v_i| ≤ B_i + α(V_sup − V_max)/‖r‖,
     with bound_i ≤ sup |Y_p(x)|·d_θ + |friction regressor|·d_f (interval RNEA with θ = ±d; the
     Coulomb part is the controller's ``coulomb_error_bound``: F̄ for a joint that may be inside
     the band, max(Fc_hi − Fc_nom·|s|, Fc_nom·|s| − Fc_lo) for one that may move outside it —
     convex in |s|, so its sup over the q̇ box is at the smallest or largest |s| of the box, s
     of its smallest or largest |q̇|) and B_i = ‖bound‖ for the
     identity metric (ARMOUR), ½(γ√P_ii + bound_i) for the mass metric, γ² = max over the sign
     vectors s of (bound∘s)ᵀP⁻¹(bound∘s): P is enclosed over the sub-interval's q box
     (``enclosures.mass_matrix``), P ⪰ V⁻ᵀL(ε)V⁻¹ gives P⁻¹ ⪯ V L(ε)⁻¹ Vᵀ, so γ² ≤ the max over
     the vertices of the ε-box and the s of (b̄∘s)ᵀ V L⁻¹ Vᵀ (b̄∘s) (convex in both), and
     P_ii ≤ its enclosure's upper end (the controller's boundary layer,
     docs/theory/controller.md#boundary-layer, only scales σβd
     by s ∈ [0, 1] inside the level, whatever its exponent: these bounds hold for it as they
     are);
     α(V_sup − V_max)/‖r‖ ≤ ½·α·ρ·D_M when V ≤ V_max,
     because V_sup − V ≤ ½‖r‖²‖M(θ') − M(θ)‖₂ ≤ ½‖r‖²·D_M, D_M = ‖mag [M(q; ±w)]‖₂ bounding the
     mass-matrix spread over the boxes (computed on coarser time blocks), and ‖r‖ ≤ ρ. θ' (the
     sup) and θ (the truth) are two points of the same box, so w is the FULL width of every box:
     hi − lo for θ_e, 2·rad for θ_r and I_a.
5. tracking bound, local (``ControllerModel.local``; the Z1): e_max, de_max are then an
   assumption the check verifies on every sub-interval: with the certified lower mass model
   M_true ⪰ M(q; θ_s) + diag(I_a,lo) (``control.tracking_bounds.lower_mass_model``) enclosed over the
   sub-interval's q box (q_d ± e_max) — and, when the plan's θ_e box admits one, a second
   lower model whose EE body is the box centre scaled to lie below every θ_e of the box
   (``control.tracking_bounds.box_lower_body``: the payload then counts), the better of the two per
   quantity — λ_min ≥ λ and (M⁻¹)_ii ≤ μ_i there, so V ≤ V_max gives
   |r_i| ≤ ρ_i = √(2V_max μ_i) and ‖r‖ ≤ ρ = √(2V_max/λ); the check requires ρ_i/K_r,i ≤ e_max,i
   and 2ρ_i ≤ de_max,i. By continuity the errors then never leave the assumed box (they start
   inside, and while inside they are bounded strictly within it), and ρ replaces the
   workspace value in item 4. Without ``local`` the bound is the workspace one
   (``control.tracking_bounds.tracking_error_bound``), valid everywhere.
   Here d_θ = rad for θ_e when the controller evaluates τ₀ at the centre of its box
   (``ControllerModel.nominal_at_centre``, the controller's default): its bound is then exactly
   |Y_p|·rad_ctrl, and rad_ctrl ≤ rad because the identifier's boxes only shrink (each new box
   lies inside the previous one), so the bound at plan time covers every later box; the centre
   of a later box lies in this box, so τ₀ stays inside [Y_p]·[θ]. With τ₀ at a point estimate
   anywhere in the box d_θ = hi − lo = 2·rad. θ_r and friction: d = rad (nominal = box centre).

``verify`` passes iff, for every sub-interval, position and velocity limits hold for the widened
ranges, every sphere's clearance is > 0, |τ₀| + |v_i| ≤ τ_max per joint and (local tracking
bound) the assumed e_max, de_max are certified.

Assumptions behind "safe" (all must hold; tests show violations are caught):
- the true θ_e is inside the bounds given, θ_r and friction inside their configured boxes;
- the robust controller keeps V ≤ V_max, so |e| ≤ e_max, |ė| ≤ de_max (errors start inside),
  uses a parameter box inside the one given here (nested: boxes only shrink), τ₀ at that box's
  centre (or, with ``nominal_at_centre=False``, a nominal anywhere inside it), friction
  feed-forward τ_f(q̇ or q̇_a, q̈_a), and the gains K_r, α, V_max given here;
- obstacles are static boxes known in the robot base frame; the links are inside their
  collision spheres; after t_f the robot holds q₀ + k at rest (the last sub-interval covers it);
- the floating-point assumptions of ``interval.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sysid_ros._src.control.controller import coulomb_error_bound, coulomb_multiplier
from sysid_ros._src.control.offset import controller_friction
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.enclosures.affine import Affine, affine_cos_sin
from sysid_ros._src.enclosures.chain import SerialChain, passivity_torque, sphere_centres
from sysid_ros._src.enclosures.interval import Interval
from sysid_ros._src.enclosures.mass_matrix import enclose_mass_matrix, mass_matrix_columns
from sysid_ros._src.planning.obstacles import BoxObstacle, interval_clearance
from sysid_ros._src.planning.trajectory import QuinticTrajectory, TrajectoryEnclosure

__all__ = ["ControllerModel", "ReachableSet", "Reachability", "Verification"]


@dataclass(frozen=True)
class ControllerModel:
    """What the planner assumes about the robust controller (docs/theory/controller.md).

    Kr (nj,) gains; alpha, V_max: robust-input gain and Lyapunov level; rho = bound on ‖r‖;
    e_max, de_max (nj,): tracking-error bounds |e|, |ė| (``tracking_error_bound``, or with
    ``local`` an assumption verified per sub-interval, module doc item 5);
    nominal_at_centre: the controller evaluates τ₀ with θ_e at the CENTRE of its box
    (``RobustController(nominal="centre")``), so its interval bound is exactly |Y_p|·rad; if
    False (τ₀ at a point estimate anywhere in the box) the bound can reach |Y_p|·(hi − lo).
    metric, metric_armature, coulomb_band: the controller's (``ControllerGains``).
    """

    Kr: np.ndarray
    alpha: float
    V_max: float
    rho: float
    e_max: np.ndarray
    de_max: np.ndarray
    nominal_at_centre: bool = True
    metric: str = "identity"
    metric_armature: np.ndarray | float = 0.0
    coulomb_band: float = 0.0
    local: bool = False

    @property
    def theta_e_spread(self) -> float:
        """Multiplier of the θ_e box radius in the controller's bound (module doc)."""
        return 1.0 if self.nominal_at_centre else 2.0


@dataclass(frozen=True)
class ReachableSet:
    """Enclosures per sub-interval: q, dq (actual joints, Interval (n, nj)), clearance
    (n, n_spheres, n_obstacles) lower bounds, tau (n, nj) enclosure of τ₀, robust (n, nj)
    upper bounds on |v_i|; ``centres`` per sphere (3 Intervals of shape (n,)); rho (n,) the
    ‖r‖ bound used; tracking (n,) the local tracking check's slack (≥ 0: certified; +inf when
    the bound is the workspace one); bound (n, nj) upper bounds of the controller's per-joint
    interval bound bound_i (module doc item 4), from which ``robust`` is built."""

    desired: TrajectoryEnclosure
    q: Interval
    dq: Interval
    centres: list
    clearance: np.ndarray
    tau: Interval
    robust: np.ndarray
    rho: np.ndarray
    tracking: np.ndarray
    bound: np.ndarray

    @property
    def torque_bound(self) -> np.ndarray:
        """Upper bound of the motor torque magnitude |u| per sub-interval and joint (n, nj)."""
        return self.tau.mag() + self.robust


@dataclass
class Verification:
    """Result of the sound check: ``ok`` and, if not, every failed check with its worst slack."""

    ok: bool
    reasons: list[str] = field(default_factory=list)
    slack: dict[str, float] = field(default_factory=dict)
    reach: ReachableSet | None = None


class Reachability:
    """Sound reachable sets and the safety check for one robot, controller and obstacle set."""

    def __init__(self, robot: Robot, controller: ControllerModel,
                 obstacles: tuple[BoxObstacle, ...], n_intervals: int = 128,
                 mass_blocks: int = 8) -> None:
        self.robot = robot
        self.chain = SerialChain.from_robot(robot)
        self.ctrl = controller
        self.obstacles = obstacles
        self.n_intervals = int(n_intervals)
        self.mass_blocks = int(mass_blocks)
        nj = robot.nj
        theta = robot.theta()
        self.theta_r_rad = robot.links_rel_uncertainty * np.abs(theta)
        self.theta_nominal = theta
        self.fric = controller_friction(robot)     # what acts on the arm (control/offset.py)
        lim = robot.limits
        self.q_lo, self.q_hi, self.dq_max, self.tau_max = (lim.q_lower, lim.q_upper, lim.dq_max,
                                                           lim.tau_max)
        self.ee = robot.ee_joint_id - 1
        self.nj = nj
        # the controller's metric P = M(q; nominal θ) + diag(I_a,lo + metric_armature)
        self.metric_diag = np.maximum(self.fric.lower[:, 2], 0.0) + np.broadcast_to(
            np.asarray(controller.metric_armature, float), (nj,))
        self.lower = None
        if controller.local:
            from sysid_ros._src.control.tracking_bounds import lower_mass_model   # control imports planning
            self.lower = lower_mass_model(robot)

    # -- parameter boxes -------------------------------------------------------------------------
    def _theta(self, theta_e_lo: np.ndarray, theta_e_hi: np.ndarray, first_symbol: int,
               n_symbols: int) -> list[tuple[Affine | Interval, ...]]:
        """Per body, 10 parameters batched over (box, spread) on a leading axis of size 2.

        box: θ itself (θ_e as affine in its own symbols, θ_r as mid ± rad intervals);
        spread: the radius the controller's interval bound uses, θ − θ₀ for θ₀ its nominal
        (θ_e: ±rad when the controller's θ₀ is the box centre, ±(hi − lo) when it may sit
        anywhere in the box; θ_r: ±rad around the nominal centre). See the module doc.
        """
        out: list[tuple[Affine | Interval, ...]] = []
        for i in range(self.chain.nb):
            if i == self.ee:
                mid = 0.5 * (theta_e_lo + theta_e_hi)
                rad = 0.5 * (theta_e_hi - theta_e_lo)
                rad = rad + 1e-15 * (np.abs(mid) + rad)
                body = []
                for p in range(10):
                    g = np.zeros((2, 1, n_symbols))
                    g[0, 0, first_symbol + p] = rad[p]
                    g[1, 0, first_symbol + p] = self.ctrl.theta_e_spread * rad[p]
                    body.append(Affine(np.array([[mid[p]], [0.0]]), g, np.zeros((2, 1))))
                out.append(tuple(body))
            else:
                nom = self.theta_nominal[10 * i:10 * i + 10]
                rad = self.theta_r_rad[10 * i:10 * i + 10]
                out.append(tuple(Interval(np.array([[nom[p]], [0.0]]), rad[p]) for p in range(10)))
        return out

    # -- reachable sets --------------------------------------------------------------------------
    def reach(self, traj: QuinticTrajectory, k: np.ndarray, theta_e_lo: np.ndarray,
              theta_e_hi: np.ndarray) -> ReachableSet:
        ctrl, nj = self.ctrl, self.nj
        des = traj.enclose(k, self.n_intervals)
        n = self.n_intervals
        q = des.q.widen(ctrl.e_max)
        dq = des.dq.widen(ctrl.de_max)
        dq_a = des.dq.widen(ctrl.Kr * ctrl.e_max)
        ddq_a = des.ddq.widen(ctrl.Kr * ctrl.de_max)
        # one noise symbol per joint and per quantity (q, q̇, q̇_a, q̈_a), then θ_e's 10
        n_sym = 4 * nj + 10

        def aff(x: Interval, block: int) -> list:
            return [Affine.from_interval(x[:, j], np.full(n, block * nj + j), n_sym)
                    for j in range(nj)]

        q_af, dq_af, dqa_af, ddqa_af = aff(q, 0), aff(dq, 1), aff(dq_a, 2), aff(ddq_a, 3)
        cs = [affine_cos_sin(x) for x in q_af]
        centres = [tuple(c.to_interval() for c in cen) for cen in sphere_centres(self.chain, cs)]
        clearance = interval_clearance(centres, self.chain.sphere_radius, self.obstacles)

        theta = self._theta(np.asarray(theta_e_lo, float), np.asarray(theta_e_hi, float),
                            4 * nj, n_sym)
        tau_rb = passivity_torque(self.chain, cs, dq_af, dqa_af, ddqa_af, theta)
        dq_f = dq.hull(dq_a)                 # friction may use q̇ or q̇_a
        band = ctrl.coulomb_band
        f_lo, f_hi, f_rad = self.fric.lower, self.fric.upper, self.fric.radius
        # the controller measures q̇: its Coulomb error bound over the q̇ box is the larger of
        # the stuck one (the box meets the band) and the moving one at the ends of the box's
        # range of |s| (module doc item 4)
        maybe_stuck = (dq.lo <= band) & (dq.hi >= -band)
        maybe_moving = (dq.lo < -band) | (dq.hi > band)
        mig = np.where(dq.lo > 0, dq.lo, np.where(dq.hi < 0, -dq.hi, 0.0))
        fc_nom, fc_lo, fc_hi = self.fric.nominal[:, 0], f_lo[:, 0], f_hi[:, 0]
        moving = [coulomb_error_bound(coulomb_multiplier(x, band), np.zeros(x.shape, bool),
                                      fc_nom, fc_lo, fc_hi) for x in (mig, dq.mag())]
        stuck = coulomb_error_bound(np.zeros(mig.shape), np.ones(mig.shape, bool), fc_nom, fc_lo,
                                    fc_hi)
        fc_bound = np.maximum(np.where(maybe_moving, np.maximum(*moving), 0.0),
                              np.where(maybe_stuck, stuck, 0.0))
        tau, bound_mag = [], []
        for j in range(nj):
            fc, fv, ia, beta = (Interval.from_bounds(f_lo[j, c], f_hi[j, c]) for c in range(4))
            t_box = tau_rb[j][0].to_interval()
            tau.append(t_box + fc * _ramp_interval(dq_f[:, j], band) + fv * dq_f[:, j]
                       + ia * ddq_a[:, j] + beta)
            bound_mag.append(tau_rb[j][1].mag() + fc_bound[:, j]
                             + f_rad[j, 1] * dq_f[:, j].mag()
                             + f_rad[j, 2] * ddq_a[:, j].mag() + f_rad[j, 3])
        tau_iv = Interval(np.stack([t.mid for t in tau], -1), np.stack([t.rad for t in tau], -1))
        bound = np.stack(bound_mag, -1)
        rho, tracking = self._tracking(q, theta_e_lo, theta_e_hi)
        # robust-input bound: the γ√P_ii part (θ spread) + the V_sup − V_max part (mass spread)
        d_m = self._mass_spread(q, theta_e_lo, theta_e_hi)
        robust = self._gamma_part(q, bound) + (0.5 * ctrl.alpha * rho * d_m)[:, None]
        robust = robust * (1.0 + 1e-12) + 1e-12
        return ReachableSet(des, q, dq, centres, clearance, tau_iv, robust, rho, tracking, bound)

    def _gamma_part(self, q: Interval, bound: np.ndarray) -> np.ndarray:
        """Per sub-interval and joint, an upper bound of the controller's σβd_i while
        V ≤ V_max (module doc item 4) (n, nj): ‖bound‖ (identity metric) or
        ½(γ√P_ii + bound_i) (mass metric)."""
        if self.ctrl.metric == "identity":
            return np.repeat(np.linalg.norm(bound, axis=-1)[:, None], self.nj, axis=1)
        from sysid_ros._src.control.controller import sign_vertices

        bodies = [tuple(float(x) for x in self.theta_nominal[10 * i:10 * i + 10])
                  for i in range(self.chain.nb)]
        # P ⪰ the lower fold (for P⁻¹), P_ii ≤ the upper fold's enclosure
        enc = enclose_mass_matrix(self.chain, q.lo, q.hi, bodies, self.metric_diag, fold="lower")
        vec, low = enc.relative_lower()
        lam, u = np.linalg.eigh(low)
        lam = lam - 32 * self.nj * np.finfo(float).eps \
            * np.linalg.norm(low, axis=(-2, -1))[..., None]
        w = vec[:, None] @ u                                     # P⁻¹ ⪯ W Λ⁻¹ Wᵀ
        sb = sign_vertices(self.nj)[None] * bound[:, None, :]    # (n, S, nj)
        proj = sb[:, None] @ w                                   # (n, V, S, nj)
        with np.errstate(invalid="ignore", divide="ignore"):
            quad = np.einsum("bvsk,bvk->bvs", proj ** 2, 1.0 / np.where(lam > 0, lam, np.nan))
            gamma = np.sqrt(np.nanmax(quad, axis=(1, 2))) * (1.0 + 1e-9)
        gamma = np.where(np.all(lam > 0, axis=(1, 2)), gamma, np.inf)  # no PD lower metric
        up = enclose_mass_matrix(self.chain, q.lo, q.hi, bodies, self.metric_diag, fold="upper")
        p_hi = np.diagonal(up.centre + up.radius, axis1=-2, axis2=-1)
        return 0.5 * (gamma[:, None] * np.sqrt(p_hi) + bound)

    def _tracking(self, q: Interval, theta_e_lo: np.ndarray,
                  theta_e_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ρ per sub-interval, slack of the local tracking check) (module doc item 5)."""
        ctrl, n = self.ctrl, q.shape[0]
        if self.lower is None:
            return np.full(n, ctrl.rho), np.full(n, np.inf)
        from sysid_ros._src.control.tracking_bounds import box_lower_body

        # two certified lower models: the workspace one (unloaded EE body, any payload) and,
        # when the θ_e box is tight enough, one whose EE body is a scaled box centre
        # (payload included); each bound is sound, so the better one per quantity is
        models = [self.lower.theta]
        ee = slice(10 * self.ee, 10 * self.ee + 10)
        body = box_lower_body(np.asarray(theta_e_lo, float), np.asarray(theta_e_hi, float))
        if body is not None:
            theta = self.lower.theta.copy()
            theta[ee] = body
            models.append(theta)
        lam = np.full(n, -np.inf)
        mu = np.full((n, self.nj), np.inf)
        for theta in models:
            bodies = [tuple(float(x) for x in theta[10 * i:10 * i + 10])
                      for i in range(self.chain.nb)]
            enc = enclose_mass_matrix(self.chain, q.lo, q.hi, bodies, self.lower.armature,
                                      fold="lower")
            lam = np.maximum(lam, enc.lambda_min_lower())
            mu = np.minimum(mu, enc.inverse_diagonal_upper())
        rho_j = np.sqrt(2.0 * ctrl.V_max * mu) * (1.0 + 1e-12)
        rho = np.minimum(np.where(lam > 0, np.sqrt(2.0 * ctrl.V_max / np.where(lam > 0, lam, 1.0)),
                                  np.inf), np.linalg.norm(rho_j, axis=-1))
        slack = np.minimum(np.min(ctrl.e_max - rho_j / ctrl.Kr, axis=-1),
                           np.min(ctrl.de_max - 2.0 * rho_j, axis=-1))
        return rho, np.where(np.isfinite(slack), slack, -np.inf)

    def _mass_spread(self, q: Interval, theta_e_lo: np.ndarray,
                     theta_e_hi: np.ndarray) -> np.ndarray:
        """D_M per sub-interval: ‖mag M(q; ±d)‖₂ over coarse blocks of sub-intervals (n,)."""
        n, nj = q.shape
        blocks = np.array_split(np.arange(n), min(self.mass_blocks, n))
        nb = len(blocks)
        lo = np.stack([q.lo[b].min(axis=0) for b in blocks])
        hi = np.stack([q.hi[b].max(axis=0) for b in blocks])
        qb = Interval.from_bounds(lo, hi)
        n_sym = nj + 10
        # V_sup (sup over the boxes) − V (true θ) compares two points of the same box, so every
        # parameter enters with its FULL width: hi − lo for θ_e, 2·rad for θ_r (and for I_a below)
        spread = [tuple(Interval(0.0, 2.0 * self.theta_r_rad[10 * i + p]) for p in range(10))
                  if i != self.ee else
                  tuple(Affine(np.zeros(()), np.eye(n_sym)[nj + p] * (theta_e_hi[p] - theta_e_lo[p]),
                               np.zeros(()))
                        for p in range(10))
                  for i in range(self.chain.nb)]
        cols = mass_matrix_columns(self.chain, qb, spread, n_sym, list(range(nj)))
        mag = np.stack([np.broadcast_to(np.asarray(c.mag()), (nj, nb)) for c in cols], 0)
        mag = mag + np.diag(2.0 * self.fric.radius[:, 2])[:, :, None]
        d_block = np.array([np.linalg.norm(mag[:, :, b], 2) for b in range(nb)])
        out = np.empty(n)
        for b, idx in enumerate(blocks):
            out[idx] = d_block[b]
        return out

    # -- the check -------------------------------------------------------------------------------
    def verify_move(self, q_from: np.ndarray, q_to: np.ndarray, duration: float,
                    theta_e_lo: np.ndarray, theta_e_hi: np.ndarray) -> Verification:
        """:meth:`verify` of the degree-5 rest-to-rest move q_from → q_to over ``duration`` s."""
        q_from = np.asarray(q_from, float)
        zero = np.zeros_like(q_from)
        traj = QuinticTrajectory(q_from, zero, zero, float(duration))
        return self.verify(traj, np.asarray(q_to, float) - q_from, theta_e_lo, theta_e_hi)

    def verify(self, traj: QuinticTrajectory, k: np.ndarray, theta_e_lo: np.ndarray,
               theta_e_hi: np.ndarray, k_lo: np.ndarray | None = None,
               k_hi: np.ndarray | None = None) -> Verification:
        """Sound safety check of plan k (module doc). Never raises for an unsafe k: reports it."""
        k = np.asarray(k, float)
        if k.shape != (self.nj,) or not np.all(np.isfinite(k)):
            return Verification(False, [f"k is not a finite vector of {self.nj} values"])
        reasons: list[str] = []
        slack: dict[str, float] = {}
        if k_lo is not None and k_hi is not None:
            s = float(np.min(np.minimum(k - k_lo, k_hi - k)))
            slack["k_box"] = s
            if s < 0:
                reasons.append(f"k outside its box by {-s:.3g} rad")
        reach = self.reach(traj, k, theta_e_lo, theta_e_hi)
        finite = np.isfinite(self.q_lo)
        if np.any(finite):
            s = float(min(np.min(reach.q.lo[:, finite] - self.q_lo[finite]),
                          np.min(self.q_hi[finite] - reach.q.hi[:, finite])))
            slack["position"] = s
            if s <= 0:
                reasons.append(f"joint position limit: reachable set exceeds it by {-s:.3g} rad")
        s = float(np.min(self.dq_max - reach.dq.mag()))
        slack["velocity"] = s
        if s <= 0:
            reasons.append(f"joint velocity limit: reachable set exceeds it by {-s:.3g} rad/s")
        if reach.clearance.size:
            s = float(np.min(reach.clearance))
            slack["collision"] = s
            if s <= 0:
                m, sp, ob = np.unravel_index(np.argmin(reach.clearance), reach.clearance.shape)
                reasons.append(f"collision: sphere {sp} may reach obstacle "
                               f"'{self.obstacles[ob].name}' (by {-s:.3g} m) in sub-interval {m}")
        if self.ctrl.local:
            s = float(np.min(reach.tracking))
            slack["tracking"] = s
            if s < 0:
                sub = int(np.argmin(reach.tracking))
                reasons.append("tracking bound: the assumed e_max/de_max are not certified by "
                               f"the mass matrix in sub-interval {sub} (by {-s:.3g})")
        tb = reach.torque_bound
        s_j = np.min(self.tau_max - tb, axis=0)
        slack["torque"] = float(np.min(s_j))
        if np.min(s_j) <= 0:
            j = int(np.argmin(s_j))
            reasons.append(f"torque limit: joint {self.robot.joint_names[j]} may need "
                           f"{np.max(tb[:, j]):.3g} N·m > {self.tau_max[j]:.3g}")
        return Verification(not reasons, reasons, slack, reach)


def _ramp_interval(x: Interval, band: float = 0.0) -> Interval:
    """Hull of the controller's Coulomb multiplier s(q̇) over x (``coulomb_multiplier``: 0 in
    the band, a ramp to ±1 at twice it, sign(q̇) for band = 0; non-decreasing, so [s(lo),
    s(hi)])."""
    return Interval.from_bounds(coulomb_multiplier(x.lo, band), coulomb_multiplier(x.hi, band))
