"""ARMOUR-style robust passivity controller with interval parameter bounds, and its baselines.

Vocabulary (docs/theory/controller.md, S3): e = q_d − q, ė = q̇_d − q̇, K_r a diagonal gain,
q̇_a = q̇_d + K_r e, q̈_a = q̈_d + K_r ė, and the composite error r = ė + K_r e = q̇_a − q̇.
θ stacks every body's 10 inertial parameters (θ_e: end-effector body incl. payload; θ_r: the
others) and θ_f the per-joint friction [Fc, Fv, I_a, β].

Plant assumed (the friction law of docs/theory/models.md#joint-friction-and-armature):
M(q) q̈ + C(q,q̇) q̇ + g(q) + Fv q̇ + Fc sign(q̇) + β = u, with M = H + diag(I_a). Define

    τ(θ, θ_f) = M q̈_a + C(q,q̇) q̇_a + g + Fv q̇ + Fc sign(q̇) + β
              = Y_p(q, q̇, q̇_a, q̈_a) θ + F(q̇, q̈_a) θ_f.

Friction is taken at the *measured* q̇ and the armature at q̈_a: then M ṙ + C r = τ_true − u
exactly, and with V = ½ rᵀ M r and Ṁ − 2C skew, V̇ = rᵀ(τ_true − u). Both terms are linear in
(θ, θ_f), so over the boxes the exact interval is τ_c ± |Y_p| rad θ + |F| rad θ_f.

Command ``u = τ₀ + v`` with τ₀ = τ(θ₀, θ_f0) (θ_r and θ_f nominal = their box centres; θ_e's θ₀
is the CENTRE of the θ_e box by default, ``nominal="centre"``, or the identifier's point estimate
with ``nominal="estimate"``), ``bound_i = max(τ_sup,i − τ₀,i, τ₀,i − τ_inf,i)``, V_sup = sup
over the boxes of ½ rᵀ M r, and

    v = σ·β·d + α(V_sup − V_max)₊·r/‖r‖²,   σ = max(0, 1 − α(V_max − V_sup)₊/β)

(v = 0 if ‖r‖ ≤ threshold), β ≥ sup over the boxes of rᵀ(τ_true − τ₀) and d a direction with
rᵀd = 1, by ``metric``:

- ``identity`` (default): ARMOUR's law exactly — β = ‖bound‖‖r‖ (Cauchy–Schwarz), d = r/‖r‖²,
  i.e. v = λ r/‖r‖ with λ = max(0, −α(V_max − V_sup)/‖r‖ + ‖bound‖);
- ``mass``: β = boundᵀ|r| (the exact support function of the torque box) and d = P r/(rᵀPr)
  with P = M(q; nominal θ, I_a,lo) + diag(metric_armature). The robust input then points
  along the mass metric, so the sampled loop corrects each direction in proportion to its
  inertia: on an arm with a light wrist and no armature (the Z1) ARMOUR's Euclidean direction
  puts the whole ‖bound‖ of the heavy joints on the wrist whenever r points there and, at
  1 kHz, the wrist chatters with V tens of times the level it should hold
  (docs/theory/controller.md#law). Per joint, |σβd_i| ≤ ½(γ√P_ii + bound_i) with
  γ = max over the sign vectors s of √((bound∘s)ᵀP⁻¹(bound∘s)): in each orthant of r,
  β(Pr)_i/(rᵀPr) is a product of two linear forms of y = P^{½}r over ‖y‖², whose extreme is
  ½(‖a‖‖c‖ + |aᵀc|) with a = P^{½}e_i, c = P^{-½}(bound∘s).

Both keep the guarantee: for V_sup ≥ V_max (σ = 1), rᵀ(τ_true − τ₀ − v) ≤ β − β −
α(V_sup − V_max).

Boundary layer (``boundary_layer`` η ∈ [0, 1], a fraction of V_max; 0 = none). σβd is
homogeneous of degree 0 in r: its size is set by the bound, not by r, so near r = 0 it flips
with r's direction, and a 1 kHz sampled loop turns that into a command switching at the sample
rate (the Z1: ~9 N·m per ms on joint 1, which shakes a standing B1's trunk,
docs/theory/controller.md#law). With η > 0 the robust term is multiplied by

    s = min(1, (V_sup/(η·V_max))^p),      p = ``boundary_layer_exponent`` ≥ ½ (default ½),

so below the level η·V_max it shrinks as |r|^(2p) (V_sup is a sup of quadratic forms in r:
√V_sup is a gauge) and the law is continuous at r = 0. The guarantee is UNCHANGED for η ≤ 1
and any p: whenever V_true ≥ V_max, V_sup ≥ V_true ≥ V_max ≥ η·V_max, so s = 1 and the
inequality above holds as before; inside the layer V_true ≤ V_sup < V_max. The per-joint bound
|σβd_i| ≤ v_bound_i (the planner's) only gains the factor s ≤ 1. A layer above V_max (η > 1)
would let V grow up to η·V_max, which the planner's tracking box does not assume: it is
refused (raise V_max instead, with its tracking box); so is p < ½ (v would grow without bound
as r → 0).

Why an exponent (the sampled-data gain per joint). Along a ray r = t·r̂ inside the layer the
robust term is s(t)·B(r̂) with B(r̂) = σβd at r̂'s direction, so each joint's gain ∂v_i/∂r_i
scales as (2p)·w^(p−½) times the p = ½ one, w = V_sup/(η·V_max): p = ½ keeps a gain set by
the bound alone however small r is — |B|/√(2ηV_max) in the M-norm, up to the metric's
coupling — and p > ½ takes it to 0 at r = 0 (the one-step map of the sampled loop tends to I at
rest), at the price of (2p)·w^(p−½) > 1 near the level. That matters where the mass metric's
common gain k = sσβ/(rᵀPr) is set by a joint that does not move: a wrist held by its dry
friction with a few mrad of error (bound₆ 1.4 N·m, r₆ ≈ 0.06 rad/s) makes k ≈ bound₆/(P₆₆|r₆|)
and every other joint gets k·P_ii r_i — on the standing B1's joint 1 an acceleration gain
k·P₁₁(M⁻¹)₁₁ of 1.2–1.7/Δt at 1 kHz (p = ½, V_sup ≈ 0.17 V_max), and joint 1 switched by
±4 N·m per step (docs/theory/controller.md#law). What no layer can do: keep every gain below the
sampling limit up to the level — on the ray r = r₆e₆ the inequality needs |v₆| ≥ bound₆ at
|r₆| ≈ √(2V_max/M₆₆), an average gain bound₆/√(2V_max M₆₆) ≈ 2.5/Δt on that wrist (M₆₆
8e-4 kg·m², V_max 2e-4). A per-joint
saturation bound_i·sat(r_i/φ_i) with φ_i at the sampling limit instead leaves an rᵀΔ deficit
(≈ 0.6 W on that wrist at |r₆| = 0.73 rad/s) that the α term balances only at V_sup − V_max ≈
0.6/α = 0.03 J: an ultimate bound ~150 V_max, no use to the planner.

Coulomb friction at rest is set-valued (a stuck joint's friction is anywhere in [−Fc, Fc]):
the plant's Coulomb torque is Fc·σ with σ = sign(q̇) for |q̇| > ``coulomb_band`` = b and σ
anywhere in [−1, 1] for |q̇| ≤ b (at q̇ = 0 exactly when b = 0). The feed-forward is
Fc_nom·s(q̇) with a ramp outside the band, s = sign(q̇)·clip(|q̇|/b − 1, 0, 1)
(:func:`coulomb_multiplier`; sign(q̇) when b = 0): 0 inside the band, rising linearly to ±1 at
|q̇| = 2b. Continuous in q̇, so a joint starting or stopping changes the command gradually
instead of by Fc in one control step (a 1–2 N·m step that kicks a standing B1's trunk,
docs/theory/controller.md#law). Its error, exactly (:func:`coulomb_error_bound`): over Fc ∈ [Fc_lo,
Fc_hi] and the admissible σ,

    sup |Fc·σ − Fc_nom·s| = F̄ = max(|Fc_lo|, |Fc_hi|)                     for |q̇| ≤ b (s = 0),
                          = max(Fc_hi − Fc_nom·|s|, Fc_nom·|s| − Fc_lo)   for |q̇| > b,

the second because σ = sign(q̇) = sign(s) there. It is continuous at the band's edge (F̄ =
Fc_hi when Fc_hi ≥ |Fc_lo|, as for every catalogue box) and falls to the box radius at 2b:
never above the former switch's stuck bound F̄, above its box radius only on [b, 2b]. Why the
ramp sits OUTSIDE the band: inside it any feed-forward c adds |c| to the bound (sup over
σ ∈ [−1, 1] of |Fc·σ − c| = F̄ + |c|), so a ramp through the band (Fc_nom·clip(q̇/b, −1, 1))
raises the bound there to F̄ + Fc_nom·|s| — on the standing B1 that doubled the robust input's
gain near rest and it switched at the sample rate (1.5 N·m steps on joint 1, docs/theory/controller.md#law).

Why the centre by default: τ(θ) is linear in θ, so with θ₀ at the centre the bound is exactly
|Y_p|·rad — the smallest possible over all choices of θ₀ — while a point estimate near a corner
of the box makes it up to |Y_p|·(hi − lo), twice as large. The planner (``sysid_ros._src.planning``)
certifies plans against this bound, so halving it is what lets it certify while the box is
still wide; the guarantee below holds for either choice.

Guarantee (continuous time, the assumptions): if the true θ_e lies in the box, θ_r and θ_f in
theirs, the plant is the one above (rigid payload, friction of that form), and the command is
not clipped, then V̇ = rᵀ(τ_true − τ₀ − v) ≤ −α(V_sup − V_max) whenever V_sup ≥ V_max, so
V ≤ V_max is invariant once reached (V(0) ≤ V_max). A sampled-data loop adds an O(Δt) error
the tests bound empirically; clipping voids the guarantee and is flagged.

Baselines (the paper's comparison, ``mode``):
- ``robust``: the above with the identifier's box.
- ``conservative``: the above with the prior box (what the controller knows without sysid).
- ``wrong``: the same law with the nominal model without payload taken as exact (a point box:
  bound = 0, so v only acts through the α(V_sup − V_max) term) — S3's "wrong" baseline, i.e.
  passivity-based computed torque that believes the nominal model. Its box does not contain the
  truth, so V ≤ V_max is NOT guaranteed, and the tests show it being exceeded.
- ``pid``: gravity compensation g(q; θ₀) + PID on e (integral clamped), with the box nominal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
import pinocchio as pin

from sysid_ros._src.control.errors import BoundsError, ControllerConfigError
from sysid_ros._src.control.offset import controller_friction
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import Robot

__all__ = ["MODES", "NOMINALS", "METRICS", "SECTION_DEFAULTS", "ControllerGains", "ControlOutput", "RobustController",
           "PidGains", "TorqueInterval", "coulomb_error_bound", "coulomb_multiplier",
           "gains_from_config", "sign_vertices"]

MODES = ("robust", "conservative", "wrong", "pid")
NOMINALS = ("centre", "estimate")     # where θ_e's θ₀ sits in its box (module doc); default first
METRICS = ("identity", "mass")        # direction metric P of the robust input (module doc)


def sign_vertices(n: int) -> np.ndarray:
    """The 2^n sign vectors (2^n, n): the vertices of [−1, 1]^n."""
    return np.array(np.meshgrid(*([[-1.0, 1.0]] * n), indexing="ij")).reshape(n, -1).T


def coulomb_multiplier(dq: np.ndarray, band: float) -> np.ndarray:
    """The feed-forward's Coulomb multiplier s(q̇) (module doc): sign(q̇)·clip(|q̇|/band − 1, 0,
    1) — 0 inside the band, ±1 beyond twice it — or sign(q̇) for band = 0. Non-decreasing in
    q̇, so over an interval [lo, hi] of q̇ its hull is [s(lo), s(hi)] (the planner's
    enclosure)."""
    dq = np.asarray(dq, float)
    if band > 0.0:
        return np.sign(dq) * np.clip(np.abs(dq) / band - 1.0, 0.0, 1.0)
    return np.sign(dq)


def coulomb_error_bound(s_abs: np.ndarray, stuck: np.ndarray, fc_nominal: np.ndarray,
                        fc_lower: np.ndarray, fc_upper: np.ndarray) -> np.ndarray:
    """Exact sup of |Fc·σ − Fc_nom·s| per joint over Fc ∈ [fc_lower, fc_upper] and the
    admissible σ, given |s| = ``s_abs`` (module doc): where ``stuck`` (|q̇| ≤ band: σ anywhere
    in [−1, 1]) F̄ + |Fc_nom|·|s| with F̄ = max(|Fc_lo|, |Fc_hi|) (F̄ itself for the controller's
    s = 0 there); elsewhere (σ = sign(q̇) = sign(s)) max(Fc_hi − Fc_nom·|s|, Fc_nom·|s| −
    Fc_lo). Each branch is convex in |s| (the planner takes its sup over a range of |s| at the
    range's ends)."""
    f_bar = np.maximum(np.abs(fc_lower), np.abs(fc_upper))
    moving = np.maximum(fc_upper - fc_nominal * s_abs, fc_nominal * s_abs - fc_lower)
    return np.where(stuck, f_bar + np.abs(fc_nominal) * s_abs, moving)


@dataclass(frozen=True)
class ControllerGains:
    """K_r (per joint, 1/s), α (1/s), V_max (J), the ‖r‖ threshold below which v = 0, the
    torque limit scale, the robust input's metric (``identity`` | ``mass``), the diagonal added
    to the mass metric (kg·m², per joint or one value), the Coulomb band (rad/s), the
    boundary layer η ∈ [0, 1] (fraction of V_max; 0 = none) and its exponent p ≥ ½ (module
    doc)."""

    Kr: np.ndarray
    alpha: float
    V_max: float
    r_threshold: float = 1e-10
    torque_limit_scale: float = 1.0
    metric: str = "identity"
    metric_armature: np.ndarray | float = 0.0
    coulomb_band: float = 0.0
    boundary_layer: float = 0.0
    boundary_layer_exponent: float = 0.5

#: The optional keys of a robot file's ``controller:`` section with their defaults: the
#: gains' own (``r_norm_threshold`` is ``r_threshold``) and the nominal's (``NOMINALS[0]``).
SECTION_DEFAULTS: dict[str, object] = {
    ("r_norm_threshold" if f.name == "r_threshold" else f.name): f.default
    for f in fields(ControllerGains) if f.name not in ("Kr", "alpha", "V_max")} | \
    {"nominal": NOMINALS[0]}


def gains_from_config(robot: Robot, overrides: dict | None = None) -> ControllerGains:
    """Gains from the robot file's ``controller:`` section (Kr, alpha, V_max, r_norm_threshold,
    metric, metric_armature, coulomb_band, boundary_layer, boundary_layer_exponent), each
    overridable by ``overrides``
    (same keys, plus torque_limit_scale); a missing required key raises
    ``ControllerConfigError`` naming it."""
    sec = dict(robot.config.get("controller") or {})
    sec.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        kr, alpha, v_max = sec["Kr"], float(sec["alpha"]), float(sec["V_max"])
    except KeyError as exc:
        raise ControllerConfigError(f"controller.{exc.args[0]} missing in {robot.config_path}") \
            from None
    get = {k: sec.get(k, d) for k, d in SECTION_DEFAULTS.items()}.__getitem__
    return ControllerGains(np.broadcast_to(np.asarray(kr, float), (robot.nj,)).copy(), alpha,
                           v_max, float(get("r_norm_threshold")),
                           float(get("torque_limit_scale")), str(get("metric")),
                           np.broadcast_to(np.asarray(get("metric_armature"), float),
                                           (robot.nj,)).copy(),
                           float(get("coulomb_band")), float(get("boundary_layer")),
                           float(get("boundary_layer_exponent")))


@dataclass(frozen=True)
class PidGains:
    Kp: np.ndarray
    Ki: np.ndarray
    Kd: np.ndarray
    i_clamp: np.ndarray        # |∫e| ≤ i_clamp per joint (anti-windup)


@dataclass(frozen=True)
class TorqueInterval:
    """τ(θ) over the boxes at one state: [centre − radius, centre + radius] per joint (N·m),
    and τ₀ at the nominal. A result of the law, not a parameter box (those are
    :class:`~sysid_ros._src.model.box.ParameterBox`): no names, recomputed every command."""

    tau0: np.ndarray
    centre: np.ndarray
    radius: np.ndarray

    @property
    def lower(self) -> np.ndarray:
        return self.centre - self.radius

    @property
    def upper(self) -> np.ndarray:
        return self.centre + self.radius


@dataclass(frozen=True)
class ControlOutput:
    """One command and the quantities worth plotting."""

    tau: np.ndarray            # command after clipping
    tau0: np.ndarray           # nominal torque
    v: np.ndarray              # robust input
    e: np.ndarray
    de: np.ndarray
    r: np.ndarray
    r_norm: float
    V_sup: float
    V_max: float
    lam: float                 # ‖v‖ (ARMOUR's λ for the identity metric)
    bound_norm: float          # ‖bound‖
    clipped: bool
    v_bound: np.ndarray | None = None   # per joint: |v_i| ≤ this while V_sup ≤ V_max


class RobustController:
    """Control law of one robot (fixed base). Not thread-safe (owns Pinocchio ``Data``)."""

    def __init__(self, robot: Robot, gains: ControllerGains, *, mode: str = "robust",
                 prior: ParameterBox, pid: PidGains | None = None,
                 theta_r_uncertainty: bool = True, nominal: str = NOMINALS[0]) -> None:
        if robot.floating_base:
            raise ControllerConfigError(
                f"{robot.name}: floating-base robots are not supported by the passivity "
                "controller (the base is unactuated)")
        if mode not in MODES:
            raise ControllerConfigError(f"mode {mode!r} not one of {MODES}")
        kr = np.broadcast_to(np.asarray(gains.Kr, float), (robot.nj,)).copy()
        if np.any(~np.isfinite(kr)) or np.any(kr <= 0):
            raise ControllerConfigError(f"Kr must be positive, got {gains.Kr}")
        if not (gains.alpha > 0 and gains.V_max > 0 and gains.r_threshold >= 0
                and 0 < gains.torque_limit_scale <= 1.0 and gains.coulomb_band >= 0):
            raise ControllerConfigError("need alpha > 0, V_max > 0, r_threshold >= 0, "
                                        "coulomb_band >= 0 and 0 < torque_limit_scale <= 1, got "
                                        f"{gains}")
        if not 0.0 <= gains.boundary_layer <= 1.0:
            raise ControllerConfigError(
                f"boundary_layer must be in [0, 1] (a fraction of V_max), got "
                f"{gains.boundary_layer}: a layer above V_max would void V <= V_max; raise "
                "V_max instead (docs/theory/controller.md#law)")
        if not 0.5 <= gains.boundary_layer_exponent < np.inf:
            raise ControllerConfigError(
                f"boundary_layer_exponent must be >= 0.5, got {gains.boundary_layer_exponent}: "
                "below 1/2 the layered robust input grows without bound as r -> 0 "
                "(docs/theory/controller.md#law)")
        if gains.metric not in METRICS:
            raise ControllerConfigError(f"metric {gains.metric!r} not one of {METRICS}")
        metric_ia = np.broadcast_to(np.asarray(gains.metric_armature, float), (robot.nj,)).copy()
        if np.any(~np.isfinite(metric_ia)) or np.any(metric_ia < 0):
            raise ControllerConfigError(f"metric_armature must be >= 0, got "
                                        f"{gains.metric_armature}")
        if nominal not in NOMINALS:
            raise ControllerConfigError(f"nominal {nominal!r} not one of {NOMINALS}")
        self.nominal = nominal
        if mode == "pid" and pid is None:
            raise ControllerConfigError("mode 'pid' needs PID gains")
        self.robot, self.mode, self.pid = robot, mode, pid
        self.gains = ControllerGains(kr, float(gains.alpha), float(gains.V_max),
                                     float(gains.r_threshold), float(gains.torque_limit_scale),
                                     gains.metric, metric_ia, float(gains.coulomb_band),
                                     float(gains.boundary_layer),
                                     float(gains.boundary_layer_exponent))
        self.model = robot.model
        self.data = self.model.createData()
        self._zero_nv = np.zeros(self.model.nv)   # read-only zero velocity/acceleration input
        self.model0 = self.model.copy()
        self.model0.gravity.setZero()
        self.data0 = self.model0.createData()
        self.tau_max = robot.limits.tau_max * self.gains.torque_limit_scale
        self.ee = robot.ee_columns
        self.theta_nominal = robot.theta()
        rel = robot.links_rel_uncertainty if theta_r_uncertainty else 0.0
        self._rad_links = rel * np.abs(self.theta_nominal)
        self._rad_links[self.ee] = 0.0
        # the box of what acts on the arm (β's share: controller.torque_offset, control/offset.py)
        fr = self._friction = controller_friction(robot)
        self.fric_nominal = fr.nominal.copy()                 # (nj, 4) [Fc, Fv, Ia, β]
        self._carry_friction = theta_r_uncertainty and mode != "wrong"
        self.fric_radius = fr.radius.copy() if self._carry_friction else np.zeros_like(fr.radius)
        # mass metric: P(q) = M(q; nominal θ) + diag(I_a,lo + metric_armature), I_a,lo ≥ 0
        self._metric_diag = np.maximum(fr.lower[:, 2], 0.0) + metric_ia
        self._signs = sign_vertices(robot.nj)
        self._strict_upper = np.triu_indices(robot.nj, 1)
        self._diag = np.diag_indices(robot.nj)
        self.prior = prior
        self._integral = np.zeros(robot.nj)
        self._last_t: float | None = None
        self.set_bounds(prior)

    # -- parameters ---------------------------------------------------------------------
    def set_bounds(self, box: ParameterBox) -> None:
        """Use a new θ_e box (from the identifier; names ``PARAM_NAMES``, else BoundsError).
        Ignored in modes that do not use it."""
        if box.names != PARAM_NAMES:
            raise BoundsError(f"theta_e box: parameters {list(box.names)} != {list(PARAM_NAMES)}")
        if self.mode == "conservative":
            box = self.prior
        elif self.mode == "wrong":
            theta_e = self.robot.theta_e()
            box = theta_e_box(theta_e, theta_e, frame=box.frame)
        self.box = box
        thc = self.theta_nominal.copy()
        thc[self.ee] = box.centre
        th0 = thc.copy()
        if self.nominal == "estimate" or self.mode == "pid":     # PID has no interval bound
            th0[self.ee] = box.nominal
        rad = self._rad_links.copy()
        rad[self.ee] = box.radius
        if self.mode == "wrong":
            rad[:] = 0.0          # the nominal model is taken as exact
        self.theta0, self.theta_c, self.theta_rad = th0, thc, rad

    def reset(self) -> None:
        """Forget the PID integral and the last time stamp (on activation)."""
        self._integral[:] = 0.0
        self._last_t = None

    # -- pieces -------------------------------------------------------------------------
    def passivity_regressor(self, q: np.ndarray, dq: np.ndarray, dq_a: np.ndarray,
                            ddq_a: np.ndarray) -> np.ndarray:
        """Y_p (nv, nθ): Y_p θ = H q̈_a + C(q, q̇) q̇_a + g (polarisation of RNEA's velocity term,
        docs/theory/controller.md#the-passivity-regressor-y_p)."""
        m, d, m0, d0 = self.model, self.data, self.model0, self.data0
        zero = self._zero_nv
        y = pin.computeJointTorqueRegressor(m, d, q, zero, ddq_a).copy()
        y += 0.5 * pin.computeJointTorqueRegressor(m0, d0, q, dq + dq_a, zero)
        y -= 0.5 * pin.computeJointTorqueRegressor(m0, d0, q, dq, zero)
        y -= 0.5 * pin.computeJointTorqueRegressor(m0, d0, q, dq_a, zero)
        return y

    def friction_columns(self, dq: np.ndarray, ddq_a: np.ndarray) -> np.ndarray:
        """(nj, 4): per joint the multipliers of [Fc, Fv, I_a, β] (q̇ measured, q̈_a); the
        Coulomb column is the ramp s(q̇) (:func:`coulomb_multiplier`): 0 within the band, where
        the friction is set-valued (``torque_interval`` carries it in the radius), rising to
        ±1 outside it without a step."""
        f = np.empty((dq.size, 4))          # filled column by column: cheaper than np.stack
        f[:, 0] = coulomb_multiplier(dq, self.gains.coulomb_band)
        f[:, 1] = dq
        f[:, 2] = ddq_a
        f[:, 3] = 1.0
        return f

    def torque_interval(self, q: np.ndarray, dq: np.ndarray, dq_a: np.ndarray,
                        ddq_a: np.ndarray) -> TorqueInterval:
        """Exact interval of τ(θ, θ_f) over the boxes, and τ₀ (module doc)."""
        y = self.passivity_regressor(q, dq, dq_a, ddq_a)
        f = self.friction_columns(dq, ddq_a)
        tau_f = (f * self.fric_nominal).sum(axis=1)
        tau0 = y @ self.theta0 + tau_f
        centre = y @ self.theta_c + tau_f
        radius = np.abs(y) @ self.theta_rad + (np.abs(f[:, 1:]) * self.fric_radius[:, 1:]).sum(
            axis=1)
        if self._carry_friction:
            # the Coulomb column's error is not |s|·radius: inside the band the true torque is
            # anywhere in [−F̄, F̄], on the ramp the feed-forward is only Fc_nom·s (module doc)
            fr = self._friction
            radius = radius + coulomb_error_bound(
                np.abs(f[:, 0]), np.abs(dq) <= self.gains.coulomb_band, self.fric_nominal[:, 0],
                fr.lower[:, 0], fr.upper[:, 0])
        return TorqueInterval(tau0, centre, radius)

    def metric(self, q: np.ndarray) -> np.ndarray:
        """The robust input's metric P at q (module doc): I, or the nominal mass matrix plus
        the diagonal ``_metric_diag``."""
        if self.gains.metric == "identity":
            return np.eye(self.robot.nj)
        h = pin.crba(self.model, self.data, q).copy()       # upper triangle filled
        lower = self._strict_upper[::-1]
        h[lower] = h[self._strict_upper]
        h[self._diag] += self._metric_diag
        return h

    def v_sup(self, q: np.ndarray, r: np.ndarray) -> float:
        """sup over the boxes of ½ rᵀ (H(q) + diag(I_a)) r (linear in θ and I_a)."""
        w = r @ pin.computeJointTorqueRegressor(self.model0, self.data0, q, self._zero_nv, r)
        ia_hi = self.fric_nominal[:, 2] + self.fric_radius[:, 2]
        return 0.5 * float(w @ self.theta_c + np.abs(w) @ self.theta_rad + ia_hi @ (r * r))

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """g(q) at the nominal parameters θ₀ (plus the constant friction offset β)."""
        zero = self._zero_nv
        y = pin.computeJointTorqueRegressor(self.model, self.data, q, zero, zero)
        return y @ self.theta0 + self.fric_nominal[:, 3]

    # -- the law --------------------------------------------------------------------------
    def compute(self, t: float, q: np.ndarray, dq: np.ndarray, q_d: np.ndarray,
                dq_d: np.ndarray, ddq_d: np.ndarray) -> ControlOutput:
        """Command at time ``t`` (s) from the measured (q, q̇) and the reference."""
        kr = self.gains.Kr
        e, de = q_d - q, dq_d - dq
        r = de + kr * e
        # norms as sqrt of dot products: np.linalg.norm's dispatch costs more than the sum here,
        # and this runs once per joint state at 1 kHz
        r_norm = math.sqrt(float(r @ r))
        zeros = np.zeros(q.size)             # returned as v: a fresh array, never the cache
        if self.mode == "pid":
            dt = 0.0 if self._last_t is None else max(0.0, t - self._last_t)
            pid = self.pid
            assert pid is not None          # __init__ refuses mode "pid" without PID gains
            self._integral = np.clip(self._integral + e * dt, -pid.i_clamp, pid.i_clamp)
            tau0 = self.gravity(q) + pid.Kp * e + pid.Ki * self._integral + pid.Kd * de
            self._last_t = t
            return self._finish(tau0, zeros, e, de, r, r_norm, np.nan, 0.0, 0.0)
        dq_a = dq_d + kr * e
        ddq_a = ddq_d + kr * de
        itv = self.torque_interval(q, dq, dq_a, ddq_a)
        bound = np.maximum(itv.upper - itv.tau0, itv.tau0 - itv.lower)
        bound_norm = math.sqrt(float(bound @ bound))
        vsup = self.v_sup(q, r)
        alpha, gap = self.gains.alpha, self.gains.V_max - vsup
        if self.gains.metric == "identity":
            # ARMOUR: β = ‖bound‖‖r‖ ≥ boundᵀ|r|, along r
            beta, pr = bound_norm * r_norm, r
            v_bound = np.full(self.robot.nj, bound_norm)
        else:
            # β = boundᵀ|r| (the exact support function of the box) along the metric P
            p = self.metric(q)
            pr = p @ r
            beta = float(bound @ np.abs(r))
            sb = self._signs * bound
            quad = np.einsum("si,ij,sj->s", sb, np.linalg.inv(p), sb, optimize=False)
            gamma = float(np.sqrt(max(float(quad.max()), 0.0)))
            v_bound = 0.5 * (gamma * np.sqrt(np.diag(p)) + bound)
        if r_norm > self.gains.r_threshold:
            sigma = max(0.0, 1.0 - alpha * max(gap, 0.0) / beta) if beta > 0.0 else 0.0
            # d = P r/(rᵀPr): rᵀd = 1 (P = I: r/‖r‖²)
            # boundary layer: the robust term ramps with (V_sup/(η·V_max))^p below η·V_max
            # (module doc): p = ½ linearly in r; p > ½ faster, its gain vanishing at r = 0
            layer = self.gains.boundary_layer * self.gains.V_max
            if layer > 0.0:
                sigma *= min(1.0, (max(vsup, 0.0) / layer) ** self.gains.boundary_layer_exponent)
            v = sigma * beta * pr / float(r @ pr) + alpha * max(-gap, 0.0) * r / r_norm ** 2
            lam = math.sqrt(float(v @ v))
        else:
            lam, v = 0.0, zeros
        return self._finish(itv.tau0 + v, v, e, de, r, r_norm, vsup, lam, bound_norm,
                            tau0=itv.tau0, v_bound=v_bound)

    def _finish(self, u: np.ndarray, v: np.ndarray, e: np.ndarray, de: np.ndarray, r: np.ndarray,
                r_norm: float, vsup: float, lam: float, bound_norm: float,
                tau0: np.ndarray | None = None, v_bound: np.ndarray | None = None
                ) -> ControlOutput:
        clipped_u = np.clip(u, -self.tau_max, self.tau_max)
        clipped = bool(np.any(clipped_u != u))
        return ControlOutput(clipped_u, u - v if tau0 is None else tau0, v, e, de, r, r_norm,
                             vsup, self.gains.V_max, lam, bound_norm, clipped, v_bound)
