"""Fixed-base *arm view* of a floating-base robot (B1 + Z1): the arm with the trunk as its base.

The planner and the robust controller handle fixed-base arms. On a standing B1 the Z1's joint
equations, written in the trunk frame, are those of the same arm on a fixed base plus the
fictitious forces of the trunk's motion::

    H_a(q_a) q̈_a + C_a(q_a, q̇_a) q̇_a + g_a(q_a) + τ_f = τ_a + d,

H_a, C_a, g_a the arm subtree's (trunk fixed, gravity along the trunk's −z), and d the torque the
trunk's motion induces: its linear acceleration, angular velocity/acceleration and its tilt
(gravity no longer along the trunk's −z). :func:`arm_view` returns a :class:`Robot` the planner
and controller accept (Pinocchio model of the arm with every other joint — free flyer and legs —
locked; the legs at ``leg_standing_posture``, which moves nothing the arm's rows depend on); d
enters it as a widened constant-offset (β) box of the friction law, which both consumers already
carry in their interval torque (the controller's robust input dominates any mismatch inside that
box at every instant, the planner's torque check covers it), so nothing inside planning/ or
control/ changes.

:func:`base_disturbance_bound` gives |d_j| ≤ d̄_j, sound under :class:`TrunkMotionBound`
(config ``arm_view.trunk_motion``: ‖a_trunk‖ ≤ accel, ‖ω‖ ≤ omega, ‖α‖ ≤ alpha, tilt ≤ tilt):

    d̄_j = Σ_{i ⪰ j} [ r_ji F̄_i + ‖mc‖_i (a + (α + ω²) o_i + 2 ω V_i)
                      + tr(I_i) (3/2 α + 3/2 ω² + 4 ω Ω_i) ],
    F̄_i = m_i (a + (α + ω²) o_i + 2 ω V_i) + ‖mc‖_i (α + ω² + 2 ω Ω_i),
    a = accel + 2 g sin(tilt/2),

for the bodies i from joint j outward: r_ji ≥ ‖o_i − o_j‖ and o_i ≥ ‖o_i‖ (joint origins from the
trunk origin, triangle inequality over the joint placements), Ω_i = Σ_{k ≤ i} q̇̄_k and V_i the
largest speed of o_i relative to the trunk (joint speeds q̇̄: the smaller of the velocity limit
and ``arm_view.joint_speed_max``, which the view's velocity limits become, so the planner
certifies them); m, ‖mc‖ and tr(I) (inertia about the joint origin, ⪰ the one about the CoM;
tr(I) ≥ 2 m‖c‖² bounds every m‖c‖² term) at the top of each body's box:
θ_r nominal ± ``links_rel`` (or the calibrated θ_r box), θ_e the identifier's prior box. It
is the bound of the fictitious wrench F = m (a_O + α×p + ω×(ω×p) + 2 ω×ṗ) and
N = I α_extra + ω_b×Iω_b + cross terms on each body, whose moment about joint j's axis is at
most ‖p − o_j‖‖F‖ + ‖N‖. Loose (triangle inequalities, norms) but sound; it never uses the
arm's configuration. With ``arm_view.workspace`` (:func:`workspace`, the view's position limits)
the a and α parts are also enclosed over that box by interval RNEA (``enclosures.disturbance``)
and each joint keeps the smaller bound.

Assumptions, stated where they are used: the trunk motion bound holds (the standing controller's
job, checked against the recorded IMU by :func:`trunk_motion_report`); the arm's joint speeds
stay within the velocity limits (the planner certifies it); rotor armature acts on the joint's
relative acceleration (the package's friction law; the rotors' share of the trunk's rotation is
neglected, as every rotor gyroscopic term is). Obstacles and the tool path are in the **trunk**
frame: the view certifies clearance from boxes that move with the trunk, not from the world.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pinocchio as pin

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.enclosures.disturbance import trunk_acceleration_bound
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.robots import CollisionSphere, FrictionModel, JointLimits, Robot

__all__ = ["TrunkMotionBound", "TrunkMotionReport", "arm_view", "base_disturbance_bound",
           "DisturbanceRows", "disturbance_ratio", "interval_alpha", "joint_speed_bound",
           "trunk_motion_report", "workspace", "GRAVITY"]

GRAVITY = 9.81
#: sub-boxes of the workspace enclosure of d̄ (~1.1 s on the Z1; more sub-boxes are tighter
#: and slower: docs/theory/simulation.md#the-arm-view-of-a-floating-base-robot)
ENCLOSURE_BOXES = 50000
_PER_JOINT_KEYS = ("limits.position_lower", "limits.position_upper", "limits.velocity",
                   "limits.torque_Nm", "friction.Fc", "friction.Fv", "friction.Ia",
                   "friction.beta", "simulation.home", "simulation.encoder_resolution_deg",
                   "simulation.hold_kp", "simulation.hold_kd")


@dataclass(frozen=True)
class TrunkMotionBound:
    """Assumed bound on the trunk's motion while the arm works (trunk frame, at its origin):
    ‖a‖ ≤ accel (m/s², linear acceleration), ‖ω‖ ≤ omega (rad/s), ‖α‖ ≤ alpha (rad/s²), and
    the angle between the trunk's z axis and the vertical ≤ tilt (rad). ``alpha_axes``: per-axis
    bounds |α_x|, |α_y|, |α_z| instead (the trunk's roll, pitch and yaw answer the arm's
    reaction differently; ``alpha`` is then their norm)."""

    accel: float
    omega: float
    alpha: float
    tilt: float
    alpha_axes: tuple[float, float, float] | None = None

    @classmethod
    def from_robot(cls, robot: Robot) -> TrunkMotionBound:
        """``arm_view.trunk_motion`` of the robot file: accel_max, omega_max, alpha_max (a
        number, or three per-axis bounds), tilt_max_deg; RobotConfigError naming the field
        otherwise."""
        where = f"{robot.config_path}: field 'arm_view.trunk_motion"
        sec = ((robot.config.get("arm_view") or {}).get("trunk_motion"))
        if not isinstance(sec, dict):
            raise RobotConfigError(f"{where}': missing (accel_max, omega_max, alpha_max, "
                                   "tilt_max_deg)")
        values: dict[str, float] = {}
        axes = None
        for key in ("accel_max", "omega_max", "alpha_max", "tilt_max_deg"):
            v = sec.get(key)
            if key == "alpha_max" and isinstance(v, list):
                arr = np.asarray(v, float) if all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) for x in v) \
                    else np.array([np.nan])
                if arr.shape != (3,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
                    raise RobotConfigError(f"{where}.{key}': expected a non-negative number "
                                           f"or three (x, y, z), got {v!r}")
                axes = (float(arr[0]), float(arr[1]), float(arr[2]))
                values[key] = float(np.linalg.norm(arr))
                continue
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not np.isfinite(v) \
                    or v < 0:
                raise RobotConfigError(f"{where}.{key}': expected a non-negative number, got {v!r}")
            values[key] = float(v)
        return cls(values["accel_max"], values["omega_max"], values["alpha_max"],
                   np.deg2rad(values["tilt_max_deg"]), axes)

    @property
    def alpha_input(self) -> float | np.ndarray:
        """What the workspace enclosure of d̄ takes: the per-axis bounds, else the norm bound."""
        return self.alpha if self.alpha_axes is None else np.asarray(self.alpha_axes, float)

    @property
    def frame_accel(self) -> float:
        """m/s²: bound of the trunk frame's linear acceleration as the arm view sees it — ‖a‖
        plus the error of taking gravity along the trunk's z axis, ‖g − R g‖ = 2g·sin(tilt/2)."""
        return self.accel + 2.0 * GRAVITY * np.sin(0.5 * self.tilt)


def _arm_indices(robot: Robot) -> np.ndarray:
    arm = robot.config.get("arm_joints")
    if not arm:
        raise RobotConfigError(f"{robot.config_path}: field 'arm_joints': missing (the joints "
                               "of the arm the view keeps)")
    missing = [n for n in arm if n not in robot.joint_names]
    if missing:
        raise RobotConfigError(f"{robot.config_path}: field 'arm_joints': {missing} are not "
                               "among 'joints'")
    return np.array([robot.joint_names.index(n) for n in arm], dtype=int)


def _reduced_model(robot: Robot, arm: np.ndarray) -> pin.Model:
    """The arm with every other joint (free flyer, legs) locked: trunk at the origin, legs at
    their standing posture (the arm's rows do not depend on them)."""
    model = robot.model
    keep = {robot.joint_names[i] for i in arm}
    lock = [j for j in range(1, model.njoints) if model.names[j] not in keep]
    q_ref = robot.neutral()
    legs = np.setdiff1d(np.arange(robot.nj), arm)
    posture = robot.config.get("leg_standing_posture")
    if posture is not None and len(posture) == legs.size:
        q_ref[robot.q_index[legs]] = np.asarray(posture, float)
    return pin.buildReducedModel(model, lock, q_ref)


def _chain(model: pin.Model) -> np.ndarray:
    """Parent-to-child distances ‖t_k‖ of the joint placements (joint k from its parent's frame;
    for joint 1, from the base = trunk origin). The view's arm must be a serial chain."""
    for j in range(2, model.njoints):
        if model.parents[j] != j - 1:
            raise RobotConfigError("arm view: the arm joints must form one serial chain "
                                   f"({model.names[j]} does not follow {model.names[j - 1]})")
    return np.array([np.linalg.norm(model.jointPlacements[j].translation)
                     for j in range(1, model.njoints)])


def _body_tops(lower: np.ndarray, upper: np.ndarray) -> tuple[float, float, float]:
    """(m_max, ‖mc‖_max, tr(I)_max) of one body from its parameter box."""
    top = np.maximum(np.abs(lower), np.abs(upper))
    trace = top[4] + top[6] + top[9]
    return float(top[0]), float(np.linalg.norm(top[1:4])), float(trace)


def _body_boxes(robot: Robot, model: pin.Model,
                theta_e_box: ParameterBox) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper), each (n_arm, 10): every arm body's parameters in a box — the EE body's
    θ_e box, the others the calibrated θ_r box or nominal ± ``links_rel``."""
    ee = model.getJointId(robot.ee_joint)
    n = model.njoints - 1
    lower, upper = np.zeros((n, 10)), np.zeros((n, 10))
    for i in range(n):
        jid = i + 1
        theta = model.inertias[jid].toDynamicParameters()
        if jid == ee:
            lower[i], upper[i] = theta_e_box.lower, theta_e_box.upper
        elif robot.theta_r_box is not None:                  # a calibrated link box
            cols = _theta_r_columns(robot, model.names[jid])
            lower[i], upper[i] = robot.theta_r_box[0][cols], robot.theta_r_box[1][cols]
        else:
            rad = robot.links_rel_uncertainty * np.abs(theta)
            lower[i], upper[i] = theta - rad, theta + rad
    return lower, upper


def workspace(robot: Robot) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) rad of the arm joints: ``arm_view.workspace`` (lower/upper lists, one per
    arm joint) inside the position limits, default the limits. It becomes the view's position
    limits — the planner certifies every motion, and the controller admits only trajectories,
    inside it — and the disturbance bound holds over it."""
    arm = _arm_indices(robot)
    lo, hi = robot.limits.q_lower[arm], robot.limits.q_upper[arm]
    sec = (robot.config.get("arm_view") or {}).get("workspace")
    if sec is None:
        return lo.copy(), hi.copy()
    where = f"{robot.config_path}: field 'arm_view.workspace"
    try:
        w_lo = np.asarray(sec["lower"], float)
        w_hi = np.asarray(sec["upper"], float)
    except (TypeError, KeyError, ValueError) as exc:
        raise RobotConfigError(f"{where}': expected {{lower: [...], upper: [...]}} in rad, one "
                               f"per arm joint ({arm.size}), got {sec!r}") from exc
    if w_lo.shape != (arm.size,) or w_hi.shape != (arm.size,) \
            or not np.all(np.isfinite(w_lo)) or not np.all(np.isfinite(w_hi)):
        raise RobotConfigError(f"{where}': expected {arm.size} finite numbers in lower and "
                               f"upper, got {sec!r}")
    if np.any(w_lo < lo) or np.any(w_hi > hi) or np.any(w_lo >= w_hi):
        raise RobotConfigError(f"{where}': needs position_lower ≤ lower < upper ≤ "
                               f"position_upper per joint (limits {lo.tolist()} .. "
                               f"{hi.tolist()}), got {sec!r}")
    return w_lo, w_hi


def joint_speed_bound(robot: Robot) -> np.ndarray:
    """q̇̄ of the arm joints: the velocity limits, capped by ``arm_view.joint_speed_max``
    (rad/s, one number or one per arm joint) when the robot file gives it."""
    arm = _arm_indices(robot)
    dq = robot.limits.dq_max[arm].copy()
    cap = (robot.config.get("arm_view") or {}).get("joint_speed_max")
    if cap is not None:
        try:
            cap_arr = np.broadcast_to(np.asarray(cap, float), dq.shape)
        except ValueError:
            cap_arr = np.array([np.nan])
        if not np.all(np.isfinite(cap_arr)) or np.any(cap_arr <= 0):
            raise RobotConfigError(f"{robot.config_path}: field 'arm_view.joint_speed_max': "
                                   f"expected a positive number or {dq.size}, got {cap!r}")
        dq = np.minimum(dq, cap_arr)
    return dq


def _theta_r_columns(robot: Robot, joint: str) -> np.ndarray:
    """The 10 columns of ``joint``'s body in the full robot's θ_r (θ without the EE body)."""
    body = robot.model.getJointId(joint) - 1
    mask = np.ones(10 * robot.n_bodies, bool)
    mask[robot.ee_columns] = False
    return (np.cumsum(mask) - 1)[10 * body:10 * body + 10]


def base_disturbance_bound(robot: Robot, motion: TrunkMotionBound,
                           theta_e_box: ParameterBox | None = None,
                           max_boxes: int = ENCLOSURE_BOXES) -> np.ndarray:
    """d̄ (n_arm,) N·m: |d_j| ≤ d̄_j for the torque the trunk's motion induces on the arm's
    joints while they stay in :func:`workspace` (module doc). ``theta_e_box``: the box of the
    end-effector body's θ_e; default the robot's θ_e prior (``identification.prior``).

    The closed form (module doc, no configuration); with an ``arm_view.workspace``, the smaller
    per joint of that and the a and α parts enclosed over the workspace by interval RNEA
    (``enclosures.disturbance``, ``max_boxes`` sub-boxes) plus the closed form's ω part. (Over
    a whole joint box the enclosure's sub-boxes are too wide: 9–18× the closed form on the Z1.)"""
    return _disturbance_bound(robot, _reduced_model(robot, _arm_indices(robot)), motion,
                              theta_e_box, max_boxes)


def _disturbance_bound(robot: Robot, model: pin.Model, motion: TrunkMotionBound,
                       theta_e_box: ParameterBox | None, max_boxes: int) -> np.ndarray:
    """:func:`base_disturbance_bound` for the arm's reduced ``model`` (built by the caller)."""
    if theta_e_box is None:
        theta_e_box = prior_box(robot)
    lower, upper = _body_boxes(robot, model, theta_e_box)
    closed = _closed_form_bound(robot, model, motion, lower, upper)
    accel = motion.frame_accel
    if (robot.config.get("arm_view") or {}).get("workspace") is None \
            or (accel == 0.0 and motion.alpha == 0.0):
        return closed          # over the whole joint box the enclosure is the looser one
    spin = _closed_form_bound(robot, model, TrunkMotionBound(0.0, motion.omega, 0.0, 0.0),
                              lower, upper)
    q_lo, q_hi = workspace(robot)
    enclosed = trunk_acceleration_bound(model, robot.name, lower, upper, q_lo, q_hi, accel,
                                        motion.alpha_input, max_boxes)
    return np.minimum(closed, enclosed + spin)


def _closed_form_bound(robot: Robot, model: pin.Model, motion: TrunkMotionBound,
                       lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The module doc's triangle-inequality d̄ (no configuration) for body boxes (n_arm, 10)."""
    step = _chain(model)
    n = step.size
    dq = joint_speed_bound(robot)
    a = motion.frame_accel
    w, al = motion.omega, motion.alpha
    reach = np.cumsum(step)                        # o_i ≥ ‖o_i‖ (from the trunk origin)
    omega_rel = np.cumsum(dq)                      # Ω_i
    # V_i ≥ Σ_{k<i} q̇̄_k ‖o_i − o_k‖, with ‖o_i − o_k‖ ≤ Σ_{l=k+1..i} ‖t_l‖
    dist = np.array([[step[k + 1:i + 1].sum() if i > k else 0.0 for k in range(n)]
                     for i in range(n)])           # dist[i, k] ≥ ‖o_i − o_k‖ (k ≤ i)
    speed = np.array([float(dq[:i] @ dist[i, :i]) for i in range(n)])
    bound = np.zeros(n)
    for i in range(n):
        m, mc, trace = _body_tops(lower[i], upper[i])
        origin = a + (al + w * w) * reach[i] + 2 * w * speed[i]   # fictitious acc. at o_i
        force = m * origin + mc * (al + w * w + 2 * w * omega_rel[i])
        # ‖mc‖‖Ā‖ with m‖c‖² ≤ tr/2, plus ‖N‖ ≤ tr (α + ω² + 3ωΩ)
        own = mc * origin + trace * (1.5 * (al + w * w) + 4 * w * omega_rel[i])
        bound[: i + 1] += dist[i, : i + 1] * force + own
    return bound


def _subset(cfg: dict[str, Any], arm: np.ndarray, n_all: int) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    for key in _PER_JOINT_KEYS:
        node: Any = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(parts[-1]), list) \
                and len(node[parts[-1]]) == n_all:
            node[parts[-1]] = [node[parts[-1]][int(i)] for i in arm]
    return out


def arm_view(robot: Robot, motion: TrunkMotionBound | None = None) -> Robot:
    """The fixed-base arm of a floating-base ``robot`` (module doc); a fixed-base robot is
    returned unchanged. The β box of every arm joint is widened by
    :func:`base_disturbance_bound` under ``motion`` (default: the robot file's
    ``arm_view.trunk_motion``). Config sections are the robot file's, per-joint lists cut to the
    arm; ``planner``/``controller``/``demo`` are read as they are (they describe the arm)."""
    if not robot.floating_base:
        return robot
    arm = _arm_indices(robot)
    motion = motion or TrunkMotionBound.from_robot(robot)
    model = _reduced_model(robot, arm)
    d_bar = _disturbance_bound(robot, model, motion, None, ENCLOSURE_BOXES)
    names = tuple(robot.joint_names[i] for i in arm)
    fr = robot.friction
    lower, upper = fr.lower[arm].copy(), fr.upper[arm].copy()
    lower[:, 3] -= d_bar
    upper[:, 3] += d_bar
    friction = FrictionModel(fr.nominal[arm].copy(), lower, upper)
    lim = robot.limits
    q_lo, q_hi = workspace(robot)
    limits = JointLimits(q_lo, q_hi, joint_speed_bound(robot), lim.tau_max[arm].copy())
    spheres = tuple(CollisionSphere(s.joint, model.getJointId(s.joint), s.offset, s.radius)
                    for s in robot.spheres if s.joint in names)
    cfg = _subset(robot.config, arm, robot.nj)
    cfg["joints"] = list(names)
    cfg["model"] = {**cfg.get("model", {}), "floating_base": False}
    cfg.pop("arm_joints", None)
    cfg["arm_view"] = {**(cfg.get("arm_view") or {}), "of": robot.name,
                       "base_disturbance_Nm": d_bar.tolist()}
    theta_r_box = None
    if robot.theta_r_box is not None:
        cols = np.concatenate([_theta_r_columns(robot, n) for n in names
                               if n != robot.ee_joint])
        theta_r_box = (robot.theta_r_box[0][cols], robot.theta_r_box[1][cols])
    return replace(robot, name=f"{robot.name}_arm", model=model, joint_names=names,
                   floating_base=False, limits=limits, friction=friction,
                   ee_joint_id=model.getJointId(robot.ee_joint), spheres=spheres, config=cfg,
                   theta_r_box=theta_r_box)


@dataclass(frozen=True)
class TrunkMotionReport:
    """The largest trunk motion seen in a recording against the assumed bound."""

    accel: float
    omega: float
    alpha: float
    tilt: float
    bound: TrunkMotionBound
    #: longest IMU sampling interval (s): α is a mean over each interval (interval_alpha)
    max_step: float = 0.0
    #: max |α_k| per trunk axis (x, y, z) over the recording
    alpha_axes: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def violations(self) -> list[str]:
        out = []
        if self.bound.alpha_axes is not None:
            for axis, seen, bound in zip("xyz", self.alpha_axes, self.bound.alpha_axes):
                if seen > bound:
                    out.append(f"trunk alpha_{axis} {seen:.3g} rad/s² > assumed {bound:.3g} "
                               "rad/s²")
        checked = (("accel", "m/s²", 1.0), ("omega", "rad/s", 1.0),
                   ("alpha", "rad/s²", 1.0), ("tilt", "deg", 180.0 / np.pi))
        for name, unit, scale in (c for c in checked if c[0] != "alpha"
                                  or self.bound.alpha_axes is None):
            seen, bound = getattr(self, name), getattr(self.bound, name)
            if seen > bound:
                out.append(f"trunk {name} {seen * scale:.3g} {unit} > assumed "
                           f"{bound * scale:.3g} {unit}")
        return out


def interval_alpha(t: np.ndarray, gyro: np.ndarray) -> np.ndarray:
    """Mean angular acceleration over each sampling interval, (ω_k+1 − ω_k)/(t_k+1 − t_k),
    shape (N − 1, 3). Its norm is a lower bound of sup ‖α‖ on that interval — the most a sampled
    gyro says. Central differences are not: they average two intervals and cancel a motion
    that alternates at the sample rate (a 1 kHz B1 log: 0.49 rad/s² central against 2.3 over
    single intervals). Across a dropped sample the interval is longer and the bound weaker;
    :class:`TrunkMotionReport` carries the longest interval so a reader sees it."""
    t = np.asarray(t, float)
    return np.diff(np.asarray(gyro, float), axis=0) / np.diff(t)[:, None]


def trunk_motion_report(t: np.ndarray, orientation_xyzw: np.ndarray, gyro: np.ndarray,
                        specific_force: np.ndarray, bound: TrunkMotionBound) -> TrunkMotionReport:
    """Largest trunk motion in an IMU recording (IMU at the trunk origin, aligned with it, as on
    the B1): ω from the gyro, α over each sampling interval (:func:`interval_alpha`), linear
    acceleration a = f + Rᵀg (specific force plus gravity in the IMU frame), tilt from the
    orientation."""
    t = np.asarray(t, float)
    quat = np.asarray(orientation_xyzw, float)
    gyro = np.asarray(gyro, float)
    f = np.asarray(specific_force, float)
    x, y, z, w = quat.T
    # third row of R (world ← IMU): the world's z axis in IMU coordinates
    up = np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)
    accel = np.linalg.norm(f - GRAVITY * up, axis=1)
    tilt = np.arccos(np.clip(up[:, 2] / np.linalg.norm(up, axis=1), -1.0, 1.0))
    steps = interval_alpha(t, gyro) if t.size > 1 else np.zeros((1, 3))
    alpha = np.linalg.norm(steps, axis=1)
    per_axis = np.abs(steps).max(axis=0, initial=0.0)
    return TrunkMotionReport(float(accel.max(initial=0.0)),
                             float(np.linalg.norm(gyro, axis=1).max(initial=0.0)),
                             float(alpha.max(initial=0.0)), float(tilt.max(initial=0.0)), bound,
                             float(np.diff(t).max(initial=0.0)),
                             (float(per_axis[0]), float(per_axis[1]), float(per_axis[2])))


class DisturbanceRows:
    """Y_d with d = Y_d θ (view θ order): the arm rows of the view minus those of the arm on a
    free-flyer trunk held at the origin with base twist (0, ω), acceleration (0, α) and gravity
    −f_o (docs/theory/identification.md#floating-base-the-standing-b1--z1: exactly the floating
    robot's arm rows; q̈ cancels)."""

    def __init__(self, full: Robot, view: Robot) -> None:
        arm = _arm_indices(full)
        keep = {full.joint_names[i] for i in arm}
        legs = [j for j in range(1, full.model.njoints)
                if full.model.names[j] not in keep and full.model.joints[j].nq == 1]
        self.floating = pin.buildReducedModel(full.model, legs, full.neutral())
        if self.floating.nv != 6 + arm.size:
            raise RobotConfigError(f"{full.config_path}: the disturbance check needs a "
                                   "free-flyer trunk carrying only the arm joints (got nv = "
                                   f"{self.floating.nv})")
        self.view = view.model
        self._fdata, self._vdata = self.floating.createData(), self.view.createData()
        self._q = np.zeros(self.floating.nq)
        self._q[6] = 1.0                       # trunk at the origin, identity attitude
        self._v, self._a = np.zeros(self.floating.nv), np.zeros(self.floating.nv)
        self._zero = np.zeros(arm.size)

    def __call__(self, q: np.ndarray, dq: np.ndarray, omega: np.ndarray, alpha: np.ndarray,
                 specific_force: np.ndarray) -> np.ndarray:
        return self.view_rows(q, dq) - self.floating_rows(q, dq, omega, alpha, specific_force)

    def view_rows(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """The fixed-base view's rows at (q, q̇), q̈ = 0."""
        return pin.computeJointTorqueRegressor(self.view, self._vdata, q, dq, self._zero)

    def floating_rows(self, q: np.ndarray, dq: np.ndarray, omega: np.ndarray, alpha: np.ndarray,
                      specific_force: np.ndarray) -> np.ndarray:
        """The arm's rows on the free-flyer trunk (class doc), q̈ = 0."""
        self._q[7:], self._v[3:6], self._v[6:], self._a[3:6] = q, omega, dq, alpha
        self.floating.gravity.linear = -np.asarray(specific_force, float)
        # columns 0-9: the trunk body (legs merged into it), no effect on the arm rows
        return pin.computeJointTorqueRegressor(self.floating, self._fdata, self._q, self._v,
                                               self._a)[6:, 10:]


def disturbance_ratio(full: Robot, view: Robot, t: np.ndarray, q: np.ndarray, dq: np.ndarray,
                      gyro: np.ndarray, specific_force: np.ndarray) -> np.ndarray:
    """max over the samples of sup_θ |d_j| / d̄_j per arm joint (n_arm,): the fictitious torque
    the *recorded* trunk motion put on the arm, exactly, against the bound the controller and the
    planner carry (``view.config['arm_view']['base_disturbance_Nm']``). This is the premise the
    guarantee actually uses (|d| ≤ d̄); the trunk-motion bound is only how d̄ was obtained.

    d = (view rows) − (floating rows) at the same (q, q̇, q̈) — q̈ cancels (same arm block of H).
    By docs/theory/identification.md#floating-base-the-standing-b1--z1 the floating rows are
    those of the arm on a free-flyer trunk held at
    the origin with base twist (0, ω), base acceleration (0, α) and gravity −f_o (f_o the specific
    force at the trunk origin, trunk frame: the B1's IMU); so only the IMU and the arm's joint
    state enter, not the trunk's position or attitude. d is linear in θ: its sup over the boxes
    is |Y_d θ_c| + |Y_d| rad over every arm body's box (the view's θ_e box, θ_r nominal ±
    ``links_rel`` or the calibrated box). Each sample is taken with α over the sampling
    interval before it and over the one after it (:func:`interval_alpha`; central differences
    would cancel an alternation at the sample rate). Inputs per sample: stamps t (N,), q, dq
    (N, n_arm), gyro ω and specific force f (N, 3), IMU at the trunk origin aligned with it."""
    rows = DisturbanceRows(full, view)
    d_bar = np.asarray(view.config["arm_view"]["base_disturbance_Nm"], float)
    lower, upper = _body_boxes(view, view.model, prior_box(view))
    theta_c, rad = 0.5 * (lower + upper).ravel(), 0.5 * (upper - lower).ravel()
    steps = interval_alpha(t, gyro)
    worst = np.zeros(view.nj)
    for k in range(len(q)):
        y_v = rows.view_rows(q[k], dq[k])
        for i in {max(k - 1, 0), min(k, len(steps) - 1)}:      # the intervals around sample k
            y_d = y_v - rows.floating_rows(q[k], dq[k], gyro[k], steps[i], specific_force[k])
            worst = np.maximum(worst, np.abs(y_d @ theta_c) + np.abs(y_d) @ rad)
    return worst / d_bar
