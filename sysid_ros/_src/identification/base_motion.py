"""Floating base: the trunk IMU → the arm rows' base inputs and their sound error radii.

Why the arm rows need only (ω, f) of the trunk
-----------------------------------------------
For a floating-base robot whose arm is a branch of the trunk (B1 + Z1), the momentum rows of
the arm joints involve only the arm subtree's bodies (θ_r of the arm links and θ_e): H's
arm/leg block is zero (different branches), and foot contact forces enter through J_footᵀ,
whose arm columns are zero (assumption: nothing touches the arm or payload). Write the world
spatial velocity of an arm body as (v_o, 0) + V⁰ with v_o the velocity of the trunk origin and
V⁰ the velocity it would have with the trunk origin at rest (the trunk only rotating, ω). Then
K = K⁰ + v_oᵀ·d/dt(M·R·c) + ½M|v_o|², with M·c(q) the arm subtree's mass moment in the trunk
frame and R the trunk orientation. In the Euler–Lagrange expression of an arm joint j
(a true coordinate) the middle term gives, after integrating by parts, exactly a_oᵀ·M·R·∂_j c,
and the potential gives −gᵀ·M·R·∂_j c, so

    d/dt ∂K⁰/∂q̇_j − ∂K⁰/∂q_j + (a_o − g)ᵀ R · M ∂_j c = τ_j − τ_f,j.

K⁰ depends on (ω_body, q, q̇) only and Rᵀ(a_o − g) = f_o is the specific force of the trunk
origin in the trunk frame. So the arm rows are *exactly* those of the model with the trunk
fixed at the origin (identity orientation), base velocity (0, ω_body) and gravity −f_o: the
base's linear velocity (not measurable without drift) and its attitude drop out. This is the
Galilean-invariance argument carried to its end: a velocity offset (constant or not) only
enters through its derivative, and a drift-free accelerometer measures that derivative with
gravity. (test_floating_base checks the identity against Pinocchio's full-body RNEA.)

IMU → (ω, f_o) per joint-state sample
-------------------------------------
The IMU reports ω̂ and f̂ in its own frame, mounted rigidly on the trunk (rotation R_ti,
position r in the trunk frame, from the model's frame of ``imu_body``):

    ω = R_ti·ω_imu,     f_o = R_ti·f_imu − ω×(ω×r) − α×r      (rigid body, α = ω̇).

IMU samples are linearly interpolated to the joint-state stamps. For a signal with
|ẋ_i| ≤ L the interpolation error at t between samples t₁ ≤ t ≤ t₂ is ≤ 2L(t−t₁)(t₂−t)/(t₂−t₁)
(0 on a shared stamp, as when the IMU and the joints arrive in one LowState message).
A joint sample with no IMU sample at or before it and at or after it within ``max_gap``
gets no base state: ``valid`` is False and the windows never span it (no silently wrong row).

The accelerometer error is split into a constant bias b (|b_a| ≤ ``accel_bias_abs`` per trunk
axis, the same over the whole recording) and the rest (noise, in-run drift, quantisation:
≤ ``accel_noise_abs`` per sample). The bias does not go into any radius: with the true
effective gravity g = ĝ + b + n, the row gains −Σ_a b_a·(∫G(e_a) dt)·θ, which
:class:`~.problem.PayloadProblem` carries as shared LP unknowns — b_a itself for the θ_r part
(b_a·∫G_r(e_a)·θ_r^c; the θ_r radius part β·|∫G_r(e_a)|·rad θ_r goes into r) and z_a = b_a·θ_e
(10 per axis, box β·max|θ_e|) for the payload part: the exact bilinear term relaxed to a linear
one, as the friction coefficients are. A bias then costs a ~β/g relative uncertainty on the
gravity-borne part of θ_e instead of a per-window radius of β·|G|·|θ|.

Error radii (per sample, per trunk axis), from the configured :class:`ImuBounds`:

- ε_ω = |R_ti|·(gyro_noise_abs + 2·angular_accel_abs·(t−t₁)(t₂−t)/h);
- ε_f = |R_ti|·(accel_noise_abs + 2·jerk_abs·(t−t₁)(t₂−t)/h) + lever: the α×r term is not
  measured and is bounded by angular_accel_abs·(|r_j| + |r_k|) on axis i; the centripetal
  term computed from ω̂ is off by ≤ 2‖r‖·‖δ‖·(2‖ω̂‖ + ‖δ‖), ‖δ‖ ≤ ‖ε_ω + gyro_bias_abs‖.

:func:`arm_regressors` turns them into radius rows (|error of a row·θ| ≤ radius·|θ|max):

- W_m is linear in the velocity: δ(W_m θ) = Σ_k δω_k W_m(e_k)θ, so r_m = Σ_k ε_ω,k |W_m(e_k)|
  (the noise part; the gyro bias is treated per window, below);
- W_c(v) = vᵀQv + G(g) is quadratic in v and affine in the gravity g, so, exactly,
  W_c(v̂) − W_c(v) = Σ_k δ_k·2B(v̂, e_k) − Σ_kl δ_kδ_l Q_kl (δ = v̂ − v) and
  G(ĝ) − G(g) = Σ_a δg_a G(e_a); with 2B(v̂, e_k) = [W_c(v̂+e_k) − W_c(v̂−e_k)]/2,
  Q_kk = [W_c(v̂+e_k) + W_c(v̂−e_k) − 2W_c(v̂)]/2 and 2Q_kl = W_c(v̂+e_k+e_l) − W_c(v̂+e_k)
  − W_c(v̂+e_l) + W_c(v̂) (all exact for a quadratic; gravity cancels in the differences),
  r_c = Σ_k ε_k|2B_k| + Σ_k ε_k²|Q_kk| + Σ_{k<l} ε_kε_l|2Q_kl| + Σ_a ε_g,a|G(e_a)|.

(in the quadratic terms ε_k is ε_ω,k + gyro_bias_abs: bias and noise together). The window
row's error from the per-sample parts is then ≤ (r_m(a) + r_m(b) + Σ trapezoid weights·r_c)
·|θ|max: the trapezoid sum of per-sample errors is bounded by the trapezoid sum of their
bounds, with no quadrature assumption added. A constant gyro bias b_ω enters the row
linearly as Σ_k b_ω,k·D_k·θ with D_k = W_m(q_b, e_k) − W_m(q_a, e_k) − ∫2B(v̂, e_k)dt (the
endpoint momenta nearly cancel over a 0.1 s window: the radius β_ω·Σ_k|D_k|·|θ|max is far
below the per-sample bound β_ω·(|W_m(q_a,e_k)| + |W_m(q_b,e_k)|)·|θ|max, which for the Z1 on
the B1 trunk, ~2.5 kg·m² about the trunk origin, would dominate every other radius).

Assumptions (repeated in the result's ``assumptions``): the IMU is rigidly mounted where the
model says; every gyro (accelerometer) reading is truth + b + n per axis with a constant
|b| ≤ gyro_bias_abs (accel_bias_abs) and |n| ≤ gyro_noise_abs (accel_noise_abs) at every
sample (scale-factor error and in-run bias drift counted in n); the true |ω̇| ≤
angular_accel_abs and |ḟ| ≤ jerk_abs per axis (used only between IMU samples and for the
lever arm; both vanish for an IMU at the trunk origin sampled with the joints); no contact on
the arm/payload.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.identification.errors import IdentificationConfigError, SampleError, \
    UnsupportedRobotError
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.sample_screen import RESTART, RETRACT, SKIP, SampleScreen

__all__ = ["ImuBounds", "BaseMotion", "ImuMount", "base_motion", "ImuStream",
           "ArmModel", "arm_model", "arm_regressors", "imu_mount", "trunk_bias"]

#: keys of ``identification.imu`` (all required)
KEYS = ("gyro_bias_abs", "gyro_noise_abs", "accel_bias_abs", "accel_noise_abs",
        "angular_accel_abs", "jerk_abs", "max_gap")

# Perturbed velocities per sample for the radius rows (arm_regressors): v̂, v̂ ± e_d and
# v̂ + e_d + e_l over the error directions d (the trunk's three axes, and the arm joints with a
# velocity error), and the three unit gravities at rest.


@dataclass(frozen=True)
class ImuBounds:
    """Per-axis IMU error bounds and the rate bounds used between samples.

    gyro_bias_abs and accel_bias_abs (rad/s, m/s²): constant over the recording;
    gyro_noise_abs and accel_noise_abs: per sample; angular_accel_abs rad/s², jerk_abs m/s³,
    max_gap s.
    """

    gyro_bias_abs: float
    gyro_noise_abs: float
    accel_bias_abs: float
    accel_noise_abs: float
    angular_accel_abs: float
    jerk_abs: float
    max_gap: float

    @staticmethod
    def from_mapping(raw: Any, where: str) -> ImuBounds:
        if not isinstance(raw, dict):
            raise IdentificationConfigError(f"{where}: expected a mapping with {', '.join(KEYS)}")
        vals = {}
        for key in KEYS:
            if key not in raw:
                raise IdentificationConfigError(f"{where}.{key}: missing")
            try:
                v = float(raw[key])
            except (TypeError, ValueError) as exc:
                raise IdentificationConfigError(f"{where}.{key}: {raw[key]!r} is not a "
                                                "number") from exc
            if not (np.isfinite(v) and v >= 0) or (key == "max_gap" and v <= 0):
                raise IdentificationConfigError(f"{where}.{key}: {v} must be finite and "
                                                f"{'> 0' if key == 'max_gap' else '>= 0'}")
            vals[key] = v
        return ImuBounds(**vals)

    def scaled(self, factor: float) -> ImuBounds:
        """The same bounds with the sensor errors (not the rate bounds) times ``factor``."""
        return ImuBounds(self.gyro_bias_abs * factor, self.gyro_noise_abs * factor,
                         self.accel_bias_abs * factor,
                         self.accel_noise_abs * factor, self.angular_accel_abs, self.jerk_abs,
                         self.max_gap)


@dataclass(frozen=True)
class ImuMount:
    """The IMU's rotation R_ti (IMU → trunk) and position r (m) in the trunk frame."""

    rotation: np.ndarray
    position: np.ndarray


def imu_mount(robot: Robot) -> ImuMount:
    """The mount of ``simulation.imu_body`` (default: the root body) from the Pinocchio model."""
    if not robot.floating_base:
        raise UnsupportedRobotError(f"{robot.name}: no floating base, no trunk IMU")
    model = robot.model
    name = simulation_section(robot).imu_body
    if not name:
        return ImuMount(np.eye(3), np.zeros(3))
    if not model.existFrame(name):
        raise UnsupportedRobotError(f"{robot.name}: imu_body {name!r} is not a frame of the model")
    frame = model.frames[model.getFrameId(name)]
    if frame.parentJoint != 1:
        raise UnsupportedRobotError(f"{robot.name}: imu_body {name!r} is not on the trunk")
    return ImuMount(frame.placement.rotation.copy(), frame.placement.translation.copy())


def trunk_bias(mount: ImuMount, bias_abs: float) -> np.ndarray:
    """(3,) bound per trunk axis of a bias bounded by ``bias_abs`` per IMU axis: |R_ti·b|."""
    return bias_abs * np.abs(mount.rotation).sum(axis=1)


@dataclass(frozen=True)
class BaseMotion:
    """Per joint-state sample, trunk frame: ω (N, 3), effective gravity g = −f_o (N, 3), their
    per-axis error bounds (N, 3) each, and ``valid`` (N,) (False: no IMU around that stamp)."""

    omega: np.ndarray
    gravity: np.ndarray
    eps_omega: np.ndarray
    eps_gravity: np.ndarray
    valid: np.ndarray

    def __len__(self) -> int:
        return int(self.valid.shape[0])

    def take(self, index: Any) -> BaseMotion:
        return BaseMotion(self.omega[index], self.gravity[index], self.eps_omega[index],
                          self.eps_gravity[index], self.valid[index])

    def stacked(self) -> np.ndarray:
        """(N, 12) [ω | g | ε_ω | ε_g], the form the windows carry sample by sample."""
        return np.concatenate([self.omega, self.gravity, self.eps_omega, self.eps_gravity],
                              axis=1)


def _check_imu(t: np.ndarray, gyro: np.ndarray, acc: np.ndarray) -> None:
    if gyro.shape != (t.size, 3) or acc.shape != (t.size, 3):
        raise SampleError(f"imu: expected ({t.size}, 3) angular_velocity and "
                          f"linear_acceleration, got {gyro.shape} and {acc.shape}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(gyro)) and np.all(np.isfinite(acc))):
        raise SampleError("imu: non-finite value")
    if np.any(np.diff(t) <= 0):
        raise SampleError("imu: stamps not strictly increasing")


def base_motion(mount: ImuMount, bounds: ImuBounds, t_imu: np.ndarray, gyro: np.ndarray,
                acc: np.ndarray, t: np.ndarray) -> BaseMotion:
    """Base inputs and radii at joint stamps ``t`` from IMU samples (see module docstring)."""
    t_imu = np.asarray(t_imu, float).reshape(-1)
    gyro, acc = np.asarray(gyro, float), np.asarray(acc, float)
    _check_imu(t_imu, gyro, acc)
    t = np.asarray(t, float).reshape(-1)
    n = t.size
    if t_imu.size == 0:
        z = np.zeros((n, 3))
        return BaseMotion(z, z, z, z, np.zeros(n, bool))
    k = np.clip(np.searchsorted(t_imu, t, side="right") - 1, 0, t_imu.size - 1)
    exact = t_imu[k] == t
    k2 = np.minimum(k + 1, t_imu.size - 1)
    h = t_imu[k2] - t_imu[k]
    inside = (t > t_imu[k]) & (k2 > k) & (h <= bounds.max_gap)
    valid = exact | inside
    w = np.where(inside, (t - t_imu[k]) / np.where(h > 0, h, 1.0), 0.0)
    # 2(t−t₁)(t₂−t)/h: the interpolation error per unit rate bound
    lag = np.where(inside, 2.0 * (t - t_imu[k]) * (t_imu[k2] - t) / np.where(h > 0, h, 1.0), 0.0)
    gyro_t = (1 - w)[:, None] * gyro[k] + w[:, None] * gyro[k2]
    acc_t = (1 - w)[:, None] * acc[k] + w[:, None] * acc[k2]
    rot, r = mount.rotation, mount.position
    abs_rot = np.abs(rot)
    omega = gyro_t @ rot.T
    f_o = acc_t @ rot.T - np.cross(omega, np.cross(omega, r))
    eps_w = (bounds.gyro_noise_abs + bounds.angular_accel_abs * lag)[:, None] * abs_rot.sum(axis=1)
    norm_r = float(np.linalg.norm(r))
    d = np.linalg.norm(eps_w + trunk_bias(mount, bounds.gyro_bias_abs), axis=1)
    centripetal = 2.0 * norm_r * d * (2.0 * np.linalg.norm(omega, axis=1) + d)
    lever = bounds.angular_accel_abs * (np.abs(r).sum() - np.abs(r))          # |α×r|_i bound
    eps_f = ((bounds.accel_noise_abs + bounds.jerk_abs * lag)[:, None] * abs_rot.sum(axis=1)
             + centripetal[:, None] + lever[None, :])
    zero = ~valid
    omega[zero], f_o[zero], eps_w[zero], eps_f[zero] = 0.0, 0.0, 0.0, 0.0
    return BaseMotion(omega, -f_o, eps_w, eps_f, valid)


class ImuStream:
    """Online IMU buffer: joint samples become usable once an IMU sample at or after them has
    arrived; a joint sample still uncovered ``hold_s`` after a newer joint sample is given up
    (invalid: no window spans it). IMU messages follow the shared bad-sample policy
    (:class:`~sysid_ros._src.sample_screen.SampleScreen`): bad ones are dropped and counted, a
    persistent jump back empties the buffer (no interpolation across the jump)."""

    def __init__(self, mount: ImuMount, bounds: ImuBounds, hold_s: float = 0.5,
                 screen: SampleScreen | None = None) -> None:
        self.mount, self.bounds, self.hold_s = mount, bounds, hold_s
        self.screen = SampleScreen() if screen is None else screen
        self.reset()

    def reset(self) -> None:
        """Forget every IMU sample and the last stamp."""
        self._clear()
        self.screen.reset()
        self.n_samples = 0

    def _clear(self) -> None:
        self._t = np.zeros(0)
        self._gyro = np.zeros((0, 3))
        self._acc = np.zeros((0, 3))

    @property
    def n_rejected(self) -> int:
        """IMU messages dropped (bad stamp, non-finite value)."""
        return self.screen.log.total

    @property
    def last_time(self) -> float | None:
        return float(self._t[-1]) if self._t.size else None

    def add(self, t: Any, gyro: Any, acc: Any) -> int:
        """Append IMU samples; ones at or before the last accepted stamp are dropped and
        counted (``n_rejected``). Returns the number accepted."""
        t = np.asarray(t, float).reshape(-1)
        gyro = np.asarray(gyro, float).reshape(-1, 3)
        acc = np.asarray(acc, float).reshape(-1, 3)
        if gyro.shape[0] != t.size or acc.shape[0] != t.size:
            raise SampleError("imu: stamps, angular_velocity and linear_acceleration differ in "
                              "length")
        keep = np.zeros(t.size, bool)
        for i, ti in enumerate(t):
            stamp = int(round(ti * 1e9)) if np.isfinite(ti) else 0
            verdict = self.screen.check(stamp, (("angular_velocity", gyro[i]),
                                                ("linear_acceleration", acc[i])), "xyz")
            if verdict in (RESTART, RETRACT):     # drop everything before, keep this one
                self._clear()
                keep[:i] = False
            keep[i] = verdict != SKIP
        self._t = np.concatenate([self._t, t[keep]])
        self._gyro = np.concatenate([self._gyro, gyro[keep]])
        self._acc = np.concatenate([self._acc, acc[keep]])
        self.n_samples += int(keep.sum())
        return int(keep.sum())

    def resolve(self, t: np.ndarray, newest: float) -> tuple[int, BaseMotion]:
        """(n_ready, base motion of t[:n_ready]): the leading joint stamps that an IMU sample
        covers, or that waited longer than ``hold_s`` behind ``newest`` (those are invalid)."""
        t = np.asarray(t, float).reshape(-1)
        last = -np.inf if not self._t.size else self._t[-1]
        ready = (t <= last) | (t < newest - self.hold_s)
        n_ready = int(np.argmin(ready)) if not ready.all() else t.size
        motion = base_motion(self.mount, self.bounds, self._t, self._gyro, self._acc,
                             t[:n_ready])
        if n_ready:
            # keep one IMU sample at or before the next joint stamp for interpolation
            keep_from = max(0, int(np.searchsorted(self._t, t[n_ready - 1], side="right")) - 1)
            self._t, self._gyro, self._acc = (x[keep_from:] for x in
                                              (self._t, self._gyro, self._acc))
        return n_ready, motion


@dataclass(frozen=True)
class ArmModel:
    """The floating model with every joint outside the arm locked (pin.buildReducedModel): the
    arm rows and the arm bodies' columns are those of the full model (the arm's kinematics and
    inertias do not depend on the legs; the legs' inertia fused into the trunk enters no arm
    row), at a fraction of the cost. Index maps from the robot's joints / bodies."""

    reg: Regressors
    kept: np.ndarray        # robot joint indices (config order) present in the reduced model
    q_index: np.ndarray     # their reduced configuration indices
    v_index: np.ndarray     # their reduced velocity indices
    rows_v: np.ndarray      # reduced velocity index of each row joint
    bodies: np.ndarray      # reduced 0-based body index of each column body (full-model order)


def arm_model(robot: Robot, row_joints: np.ndarray, bodies: np.ndarray) -> ArmModel:
    """:class:`ArmModel` for rows ``row_joints`` (robot joint indices) and column ``bodies``
    (full-model 0-based body indices)."""
    import pinocchio as pin

    model = robot.model
    body_ids = {int(b) + 1 for b in bodies}
    lock = [int(j) for j in range(2, model.njoints) if j not in body_ids]
    reduced = pin.buildReducedModel(model, lock, pin.neutral(model))
    names = list(reduced.names)
    kept = np.array([k for k, n in enumerate(robot.joint_names) if n in names], int)
    ids = [reduced.getJointId(robot.joint_names[k]) for k in kept]
    holder = _ModelHolder(reduced)
    return ArmModel(
        Regressors(holder),  # type: ignore[arg-type]   # momentum_pair needs the model only
        kept, np.array([reduced.joints[i].idx_q for i in ids]),
        np.array([reduced.joints[i].idx_v for i in ids]),
        np.array([reduced.joints[reduced.getJointId(robot.joint_names[int(k)])].idx_v
                  for k in row_joints]),
        np.array([reduced.getJointId(model.names[int(b) + 1]) - 1 for b in bodies]))


class _ModelHolder:
    """What :class:`Regressors` reads of a robot for ``momentum_pair``: its model."""

    def __init__(self, model: Any) -> None:
        self.model = model


def arm_regressors(arm: ArmModel, q: np.ndarray, dq: np.ndarray, base: np.ndarray,
                   gyro_bias: np.ndarray, joint_eps: np.ndarray | None = None
                   ) -> tuple[np.ndarray, ...]:
    """Per sample, in the arm rows × column bodies (nr, nc): W_m, W_c, the radius rows r_m,
    r_c of the per-sample IMU and joint-velocity errors, and (N, 3, nr, nc) each: G_a = W_c's
    gravity part per unit gravity along trunk axis a (what the accelerometer bias multiplies),
    M_k = W_m(e_k) and B_k = 2B(v̂, e_k) (what a constant gyro bias multiplies).

    ``q``/``dq``: (N, nj) robot joints; ``base``: (N, 12) :meth:`BaseMotion.stacked`. The
    quadratic gyro term uses ε_ω + ``gyro_bias`` ((3,) per trunk axis, :func:`trunk_bias`: bias
    and noise together); the linear terms
    use ε_ω only — the constant bias's linear effect is bounded per window by the caller from
    ΔM_k − ∫B_k (see the module docstring). ``joint_eps`` ((len(arm.kept),) rad/s, default
    none): a bound on the error of each arm joint's measured velocity at every sample, which
    enters exactly as a trunk-rate error does (W_m is linear and W_c quadratic in the whole
    velocity): more directions e_d in r_m, 2B and the Q terms.
    """
    n = q.shape[0]
    model = arm.reg.model
    omega, grav, eps_w, eps_g = base[:, 0:3], base[:, 3:6], base[:, 6:9], base[:, 9:12]
    q_red = np.tile(np.asarray(_neutral(model)), (n, 1))
    q_red[:, arm.q_index] = q[:, arm.kept]
    q_red[:, :7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    v = np.zeros((n, model.nv))
    v[:, arm.v_index] = dq[:, arm.kept]
    v[:, 3:6] = omega
    # error directions: the trunk's three axes, then every arm joint with a velocity error
    jeps = np.zeros(arm.kept.size) if joint_eps is None else np.asarray(joint_eps, float)
    noisy = np.flatnonzero(jeps > 0)
    dirs = [3, 4, 5] + [int(arm.v_index[i]) for i in noisy]
    eps_d = np.concatenate([eps_w, np.broadcast_to(jeps[noisy], (n, noisy.size))], axis=1)
    eps_q = np.concatenate([eps_w + gyro_bias, eps_d[:, 3:]], axis=1)  # quadratic: bias too
    nd = len(dirs)
    pairs = [(k, ll) for k in range(nd) for ll in range(k + 1, nd)]
    vs = [v]
    for sign in (1.0, -1.0):
        for d in dirs:
            vk = v.copy()
            vk[:, d] += sign
            vs.append(vk)
    for k, ll in pairs:
        vkl = v.copy()
        vkl[:, dirs[k]] += 1.0
        vkl[:, dirs[ll]] += 1.0
        vs.append(vkl)
    n_vel = len(vs)
    e = np.eye(3)
    q_all = np.tile(q_red, (n_vel + 3, 1))
    v_all = np.concatenate(vs + [np.zeros_like(v)] * 3)
    g_all = np.concatenate([np.tile(grav, (n_vel, 1))]
                           + [np.broadcast_to(e[a], (n, 3)) for a in range(3)])
    w_m, w_c = arm.reg.momentum_pair(q_all, v_all, arm.bodies, gravity=g_all)
    shape = (n_vel + 3, n, arm.rows_v.size, -1)
    w_m, w_c = w_m[:, arm.rows_v].reshape(shape), w_c[:, arm.rows_v].reshape(shape)
    c0 = w_c[0]
    plus, minus = slice(1, 1 + nd), slice(1 + nd, 1 + 2 * nd)
    m_k = 0.5 * (w_m[plus] - w_m[minus])            # W_m(e_d): W_m is linear in v
    b_k = 0.5 * (w_c[plus] - w_c[minus])            # 2B(v̂, e_d)
    q_kk = 0.5 * (w_c[plus] + w_c[minus] - 2.0 * c0)  # Q_dd
    r_m = np.einsum("nk,knrc->nrc", eps_d, np.abs(m_k))
    r_c = (np.einsum("nk,knrc->nrc", eps_d, np.abs(b_k))
           + np.einsum("nk,knrc->nrc", eps_q**2, np.abs(q_kk))
           + np.einsum("nk,knrc->nrc", eps_g, np.abs(w_c[n_vel:])))
    for p, (k, ll) in enumerate(pairs):
        both = w_c[1 + 2 * nd + p] - w_c[1 + k] - w_c[1 + ll] + c0          # 2Q_kl
        r_c += (eps_q[:, k] * eps_q[:, ll])[:, None, None] * np.abs(both)
    return (w_m[0], c0, r_m, r_c, np.swapaxes(w_c[n_vel:], 0, 1), np.swapaxes(m_k[:3], 0, 1),
            np.swapaxes(b_k[:3], 0, 1))


def _neutral(model: Any) -> np.ndarray:
    import pinocchio as pin

    return pin.neutral(model)
