"""ARMOUR-style robust passivity controller with interval parameter bounds, and its baselines.

Vocabulary (docs/design.md §5, S3): e = q_d − q, ė = q̇_d − q̇, K_r a diagonal gain,
q̇_a = q̇_d + K_r e, q̈_a = q̈_d + K_r ė, and the composite error r = ė + K_r e = q̇_a − q̇.
θ stacks every body's 10 inertial parameters (θ_e: end-effector body incl. payload; θ_r: the
others) and θ_f the per-joint friction [Fc, Fv, I_a, β].

Plant assumed (the friction law of docs/design.md §3.3):
M(q) q̈ + C(q,q̇) q̇ + g(q) + Fv q̇ + Fc sign(q̇) + β = u, with M = H + diag(I_a). Define

    τ(θ, θ_f) = M q̈_a + C(q,q̇) q̇_a + g + Fv q̇ + Fc sign(q̇) + β
              = Y_p(q, q̇, q̇_a, q̈_a) θ + F(q̇, q̈_a) θ_f.

Friction is taken at the *measured* q̇ and the armature at q̈_a: then M ṙ + C r = τ_true − u
exactly, and with V = ½ rᵀ M r and Ṁ − 2C skew, V̇ = rᵀ(τ_true − u). Both terms are linear in
(θ, θ_f), so over the boxes the exact interval is τ_c ± |Y_p| rad θ + |F| rad θ_f.

Command ``u = τ₀ + v`` with τ₀ = τ(θ₀, θ_f0) (θ_r and θ_f nominal = their box centres; θ_e's θ₀
is the CENTRE of the θ_e box by default, ``nominal="centre"``, or the identifier's point estimate
with ``nominal="estimate"``), ``bound_i = max(τ_sup,i − τ₀,i, τ₀,i − τ_inf,i)``, V_sup = sup
over the boxes of ½ rᵀ M r, and ``v = λ r/‖r‖``,
``λ = max(0, −α(V_max − V_sup)/‖r‖ + ‖bound‖)`` (v = 0 if ‖r‖ ≤ threshold).

Why the centre by default: τ(θ) is linear in θ, so with θ₀ at the centre the bound is exactly
|Y_p|·rad — the smallest possible over all choices of θ₀ — while a point estimate near a corner
of the box makes it up to |Y_p|·(hi − lo), twice as large. The planner (``sysid_ros.planning``)
certifies plans against this bound, so halving it is what lets it certify while the box is
still wide; the guarantee below holds for either choice.

Guarantee (continuous time, the assumptions): if the true θ_e lies in the box, θ_r and θ_f in
theirs, the plant is the one above (rigid payload, friction of that form), and the command is
not clipped, then V̇ ≤ ‖r‖‖τ_true − τ₀‖ − λ‖r‖ ≤ −α(V_sup − V_max) whenever V_sup ≥ V_max, so
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

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from sysid_ros.control.errors import BoundsError, ControllerConfigError
from sysid_ros.model.robots import Robot

__all__ = ["MODES", "NOMINALS", "ControllerGains", "ControlOutput", "RobustController", "PidGains",
           "ThetaBox", "TorqueInterval"]

MODES = ("robust", "conservative", "wrong", "pid")
NOMINALS = ("centre", "estimate")     # where θ_e's θ₀ sits in its box (module doc)


@dataclass(frozen=True)
class ThetaBox:
    """A box on θ_e (10,) with a nominal inside it (the identifier's point estimate)."""

    lower: np.ndarray
    nominal: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        for name in ("lower", "nominal", "upper"):
            arr = np.asarray(getattr(self, name), float)
            if arr.shape != (10,) or not np.all(np.isfinite(arr)):
                raise BoundsError(f"theta_e box {name}: expected 10 finite values, got "
                                  f"{np.shape(getattr(self, name))}")
            object.__setattr__(self, name, arr)
        if np.any(self.lower > self.upper):
            raise BoundsError("theta_e box: lower > upper")

    @classmethod
    def point(cls, theta_e: np.ndarray) -> "ThetaBox":
        return cls(theta_e, theta_e, theta_e)


@dataclass(frozen=True)
class ControllerGains:
    """K_r (per joint), α, V_max, the ‖r‖ threshold below which v = 0, torque limit scale."""

    Kr: np.ndarray
    alpha: float
    V_max: float
    r_threshold: float = 1e-10
    torque_limit_scale: float = 1.0


@dataclass(frozen=True)
class PidGains:
    Kp: np.ndarray
    Ki: np.ndarray
    Kd: np.ndarray
    i_clamp: np.ndarray        # |∫e| ≤ i_clamp per joint (anti-windup)


@dataclass(frozen=True)
class TorqueInterval:
    """τ(θ) over the boxes: [center − radius, center + radius], and τ₀ at the nominal."""

    tau0: np.ndarray
    center: np.ndarray
    radius: np.ndarray

    @property
    def lower(self) -> np.ndarray:
        return self.center - self.radius

    @property
    def upper(self) -> np.ndarray:
        return self.center + self.radius


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
    lam: float
    bound_norm: float
    clipped: bool


class RobustController:
    """Control law of one robot (fixed base). Not thread-safe (owns Pinocchio ``Data``)."""

    def __init__(self, robot: Robot, gains: ControllerGains, *, mode: str = "robust",
                 prior: ThetaBox, pid: PidGains | None = None,
                 theta_r_uncertainty: bool = True, nominal: str = "centre") -> None:
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
                and 0 < gains.torque_limit_scale <= 1.0):
            raise ControllerConfigError("need alpha > 0, V_max > 0, r_threshold >= 0 and "
                                        f"0 < torque_limit_scale <= 1, got {gains}")
        if nominal not in NOMINALS:
            raise ControllerConfigError(f"nominal {nominal!r} not one of {NOMINALS}")
        self.nominal = nominal
        if mode == "pid" and pid is None:
            raise ControllerConfigError("mode 'pid' needs PID gains")
        self.robot, self.mode, self.pid = robot, mode, pid
        self.gains = ControllerGains(kr, float(gains.alpha), float(gains.V_max),
                                     float(gains.r_threshold), float(gains.torque_limit_scale))
        self.model = robot.model
        self.data = self.model.createData()
        self.model0 = self.model.copy()
        self.model0.gravity.setZero()
        self.data0 = self.model0.createData()
        self.tau_max = robot.limits.tau_max * self.gains.torque_limit_scale
        self.ee = robot.ee_columns
        self.theta_nominal = robot.theta()
        rel = robot.links_rel_uncertainty if theta_r_uncertainty else 0.0
        self._rad_links = rel * np.abs(self.theta_nominal)
        self._rad_links[self.ee] = 0.0
        fr = robot.friction
        self.fric_nominal = fr.nominal.copy()                 # (nj, 4) [Fc, Fv, Ia, β]
        self.fric_radius = fr.radius.copy() if theta_r_uncertainty and mode != "wrong" \
            else np.zeros_like(fr.radius)
        self.prior = prior
        self._integral = np.zeros(robot.nj)
        self._last_t: float | None = None
        self.set_bounds(prior)

    # -- parameters ---------------------------------------------------------------------
    def set_bounds(self, box: ThetaBox) -> None:
        """Use a new θ_e box (from the identifier). Ignored in modes that do not use it."""
        if self.mode == "conservative":
            box = self.prior
        elif self.mode == "wrong":
            box = ThetaBox.point(self.robot.theta_e())
        self.box = box
        thc = self.theta_nominal.copy()
        thc[self.ee] = 0.5 * (box.lower + box.upper)
        th0 = thc.copy()
        if self.nominal == "estimate" or self.mode == "pid":     # PID has no interval bound
            th0[self.ee] = box.nominal
        rad = self._rad_links.copy()
        rad[self.ee] = 0.5 * (box.upper - box.lower)
        if self.mode == "wrong":
            rad[:] = 0.0          # the nominal model is taken as exact
        self.theta0, self.theta_c, self.theta_rad = th0, thc, rad

    def reset(self) -> None:
        """Forget the PID integral and the last time stamp (on activation)."""
        self._integral[:] = 0.0
        self._last_t = None

    # -- pieces -------------------------------------------------------------------------
    def passivity_regressor(self, q, dq, dq_a, ddq_a) -> np.ndarray:
        """Y_p (nv, nθ): Y_p θ = H q̈_a + C(q, q̇) q̇_a + g (polarisation of RNEA's velocity term,
        docs/design.md §5.2)."""
        m, d, m0, d0 = self.model, self.data, self.model0, self.data0
        zero = np.zeros_like(dq)
        y = pin.computeJointTorqueRegressor(m, d, q, zero, ddq_a).copy()
        y += 0.5 * pin.computeJointTorqueRegressor(m0, d0, q, dq + dq_a, zero)
        y -= 0.5 * pin.computeJointTorqueRegressor(m0, d0, q, dq, zero)
        y -= 0.5 * pin.computeJointTorqueRegressor(m0, d0, q, dq_a, zero)
        return y

    def friction_columns(self, dq: np.ndarray, ddq_a: np.ndarray) -> np.ndarray:
        """(nj, 4): per joint the multipliers of [Fc, Fv, I_a, β] (q̇ measured, q̈_a)."""
        return np.stack([np.sign(dq), dq, ddq_a, np.ones_like(dq)], axis=1)

    def torque_interval(self, q, dq, dq_a, ddq_a) -> TorqueInterval:
        """Exact interval of τ(θ, θ_f) over the boxes, and τ₀ (module doc)."""
        y = self.passivity_regressor(q, dq, dq_a, ddq_a)
        f = self.friction_columns(dq, ddq_a)
        tau0 = y @ self.theta0 + np.einsum("jk,jk->j", f, self.fric_nominal)
        center = y @ self.theta_c + np.einsum("jk,jk->j", f, self.fric_nominal)
        radius = np.abs(y) @ self.theta_rad + np.einsum("jk,jk->j", np.abs(f), self.fric_radius)
        return TorqueInterval(tau0, center, radius)

    def v_sup(self, q: np.ndarray, r: np.ndarray) -> float:
        """sup over the boxes of ½ rᵀ (H(q) + diag(I_a)) r (linear in θ and I_a)."""
        w = r @ pin.computeJointTorqueRegressor(self.model0, self.data0, q, np.zeros_like(r), r)
        ia_hi = self.fric_nominal[:, 2] + self.fric_radius[:, 2]
        return 0.5 * float(w @ self.theta_c + np.abs(w) @ self.theta_rad + ia_hi @ (r * r))

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """g(q) at the nominal parameters θ₀ (plus the constant friction offset β)."""
        zero = np.zeros(self.model.nv)
        y = pin.computeJointTorqueRegressor(self.model, self.data, q, zero, zero)
        return y @ self.theta0 + self.fric_nominal[:, 3]

    # -- the law --------------------------------------------------------------------------
    def compute(self, t: float, q: np.ndarray, dq: np.ndarray, q_d: np.ndarray,
                dq_d: np.ndarray, ddq_d: np.ndarray) -> ControlOutput:
        """Command at time ``t`` (s) from the measured (q, q̇) and the reference."""
        kr = self.gains.Kr
        e, de = q_d - q, dq_d - dq
        r = de + kr * e
        r_norm = float(np.linalg.norm(r))
        zeros = np.zeros_like(q)
        if self.mode == "pid":
            dt = 0.0 if self._last_t is None else max(0.0, t - self._last_t)
            p = self.pid
            self._integral = np.clip(self._integral + e * dt, -p.i_clamp, p.i_clamp)
            tau0 = self.gravity(q) + p.Kp * e + p.Ki * self._integral + p.Kd * de
            self._last_t = t
            return self._finish(tau0, zeros, e, de, r, r_norm, np.nan, 0.0, 0.0)
        dq_a = dq_d + kr * e
        ddq_a = ddq_d + kr * de
        itv = self.torque_interval(q, dq, dq_a, ddq_a)
        bound = np.maximum(itv.upper - itv.tau0, itv.tau0 - itv.lower)
        bound_norm = float(np.linalg.norm(bound))
        vsup = self.v_sup(q, r)
        if r_norm > self.gains.r_threshold:
            lam = max(0.0, -self.gains.alpha * (self.gains.V_max - vsup) / r_norm + bound_norm)
            v = lam * r / r_norm
        else:
            lam, v = 0.0, zeros
        return self._finish(itv.tau0 + v, v, e, de, r, r_norm, vsup, lam, bound_norm,
                            tau0=itv.tau0)

    def _finish(self, u, v, e, de, r, r_norm, vsup, lam, bound_norm, tau0=None) -> ControlOutput:
        clipped_u = np.clip(u, -self.tau_max, self.tau_max)
        clipped = bool(np.any(clipped_u != u))
        return ControlOutput(clipped_u, u - v if tau0 is None else tau0, v, e, de, r, r_norm,
                             vsup, self.gains.V_max, lam, bound_norm, clipped)
