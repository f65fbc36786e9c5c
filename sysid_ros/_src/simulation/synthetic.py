"""Reference data for identifier tests and benchmarks: a simulated robot with known truth.

Independent of the identifier's regressor code: forward dynamics are Pinocchio's ABA
(``pin.aba`` with ``model.armature`` = Ia) with joint friction Fc·sign(q̇) + Fv·q̇ + β subtracted
from the motor torque, integrated by classical RK4 on a jittered (non-uniform) time grid at
≈ ``rate_hz``. The motor torque is a continuous-time controller evaluated at every RK4 stage
(gravity compensation of the *nominal* model + PD around a sum-of-sines reference), so the
sampled torque is the true torque at the sample instant, as a torque sensor would measure it.

The simulated robot differs from the identifier's nominal model inside the stated boxes: every
non-end-effector parameter is scaled by an independent factor in [1 − rel, 1 + rel] (resampled
until the body stays physically consistent) and each friction coefficient is drawn in its box.
Measured torque = true torque + noise uniform in ±(abs + rel·|τ|) (optionally scaled/biased to
violate the bound on purpose).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pinocchio as pin

from sysid_ros._src.bagio.reader import ImuSamples
from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.model.robots import Robot

if TYPE_CHECKING:
    from sysid_ros._src.simulation import Payload

__all__ = ["SimulatedRun", "random_payload_theta", "perturbed_model", "simulate",
           "exciting_reference", "FloatingRun", "simulate_standing", "StandingMotion",
           "standing_motion", "write_bag", "z1_payload"]

#: A joint reference t → (q_d, q̇_d).
Reference = Callable[[float], tuple[np.ndarray, np.ndarray]]
_PathT = TypeVar("_PathT", str, os.PathLike[str])


@dataclass(frozen=True)
class SimulatedRun:
    """Samples (t (N,), q, q̇, τ true and measured (N, nj)) and the truth θ_e (10,)."""

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    tau_meas: np.ndarray
    theta_e: np.ndarray


def random_payload_theta(rng: np.random.Generator, mass_max: float = 4.0,
                         com_lower: Sequence[float] = (-0.05, -0.05, -0.25),
                         com_upper: Sequence[float] = (0.05, 0.05, -0.08),
                         size_max: float = 0.15) -> np.ndarray:
    """θ of a random solid box payload (mass in [0, mass_max], random orientation), EE frame."""
    m = rng.uniform(0.0, mass_max)
    c = rng.uniform(com_lower, com_upper)
    a, b, d = rng.uniform(0.01, size_max, 3)
    principal = m / 12.0 * np.array([b**2 + d**2, a**2 + d**2, a**2 + b**2])
    rot = pin.Quaternion(*rng.normal(size=4)).normalized().toRotationMatrix()
    i_c = rot @ np.diag(principal) @ rot.T
    return pin.Inertia(m, c, i_c).toDynamicParameters()


def perturbed_model(robot: Robot, rng: np.random.Generator, rel: float,
                    theta_e: np.ndarray) -> pin.Model:
    """Copy of the robot's model with θ_r scaled inside ±rel and the EE body set to θ_e."""
    model = robot.model.copy()
    for j in range(1, model.njoints):
        if j == robot.ee_joint_id:
            model.inertias[j] = pin.Inertia.FromDynamicParameters(np.asarray(theta_e, float))
            continue
        nominal = model.inertias[j].toDynamicParameters()
        for _ in range(100):
            theta = nominal * (1.0 + rel * rng.uniform(-1.0, 1.0, 10))
            if is_physically_consistent(theta):
                break
        else:
            theta = nominal
        model.inertias[j] = pin.Inertia.FromDynamicParameters(theta)
    return model


def exciting_reference(robot: Robot, rng: np.random.Generator, n_harmonics: int = 3,
                       speed: float = 0.6) -> Reference:
    """Random sum-of-sines reference q_d(t) (and derivatives) inside the joint limits.

    Returns a function t → (q_d, q̇_d); peak speed ≤ ``speed``·dq_max per joint.
    """
    nj = robot.nj
    lo = np.where(np.isfinite(robot.limits.q_lower), robot.limits.q_lower, -np.pi)
    hi = np.where(np.isfinite(robot.limits.q_upper), robot.limits.q_upper, np.pi)
    center = 0.5 * (lo + hi) + rng.uniform(-0.2, 0.2, nj) * (hi - lo) * 0.5
    omega = rng.uniform(0.8, 3.0, (n_harmonics, nj))
    phase = rng.uniform(0, 2 * np.pi, (n_harmonics, nj))
    amp = rng.uniform(0.5, 1.0, (n_harmonics, nj))
    # Scale so the peak speed bound holds and the motion stays well inside the limits.
    v_peak = np.sum(amp * omega, axis=0)
    scale = np.minimum(speed * robot.limits.dq_max / v_peak,
                       0.3 * (hi - lo) / np.sum(amp, axis=0))
    amp = amp * scale

    def ref(t: float) -> tuple[np.ndarray, np.ndarray]:
        arg = omega * t + phase
        return (center + np.sum(amp * (np.sin(arg) - np.sin(phase)), axis=0),
                np.sum(amp * omega * np.cos(arg), axis=0))

    return ref


def simulate(robot: Robot, rng: np.random.Generator, *, theta_e: np.ndarray, duration: float,
             rate_hz: float = 4000.0, jitter: float = 0.2, robot_rel: float = 0.05,
             friction_true: np.ndarray | None = None, noise_abs: float | np.ndarray = 0.0,
             noise_rel: float = 0.0, noise_scale: float = 1.0, noise_bias: float = 0.0,
             swap_theta_e: np.ndarray | None = None, swap_time: float | None = None,
             reference: Reference | None = None, bandwidth: float = 15.0) -> SimulatedRun:
    """Simulate ``duration`` seconds; see module docstring.

    ``noise_scale`` > 1 and ``noise_bias`` (fraction of the bound, added with a fixed sign per
    joint) violate the noise assumption on purpose; ``swap_theta_e`` replaces the payload at
    ``swap_time`` (violates the rigid-grasp assumption). The PD gains are critically damped at
    ``bandwidth`` rad/s for the diagonal of H(q₀) + Ia (whatever the robot's scale).
    """
    nj = robot.nj
    if friction_true is None:
        fr = robot.friction
        friction_true = fr.nominal + fr.radius * rng.uniform(-1.0, 1.0, fr.nominal.shape)
    models = [perturbed_model(robot, rng, robot_rel, theta_e)]
    if swap_theta_e is not None:
        swapped = models[0].copy()
        swapped.inertias[robot.ee_joint_id] = pin.Inertia.FromDynamicParameters(
            np.asarray(swap_theta_e, float))
        models.append(swapped)
    for m in models:
        m.armature = friction_true[:, 2].copy()
    datas = [m.createData() for m in models]
    nominal, nominal_data = robot.model, robot.model.createData()
    ref = reference or exciting_reference(robot, rng)
    fc, fv, beta = friction_true[:, 0], friction_true[:, 1], friction_true[:, 3]
    fv_nom = robot.friction.nominal[:, 1]

    q_start = ref(0.0)[0]
    m_diag = np.diag(pin.crba(nominal, nominal_data, q_start)) + robot.friction.nominal[:, 2]
    kp, kd = bandwidth**2 * m_diag, 2.0 * bandwidth * m_diag

    def control(t: float, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        q_d, dq_d = ref(t)
        g = pin.computeGeneralizedGravity(nominal, nominal_data, q)
        return g + fv_nom * dq_d + kp * (q_d - q) + kd * (dq_d - dq)

    def accel(k: int, t: float, q: np.ndarray, dq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tau = control(t, q, dq)
        ddq = pin.aba(models[k], datas[k], q, dq, tau - fc * np.sign(dq) - fv * dq - beta)
        return ddq, tau

    steps = int(np.ceil(duration * rate_hz))
    dts = (1.0 + jitter * rng.uniform(-1.0, 1.0, steps)) / rate_hz
    t = np.concatenate([[0.0], np.cumsum(dts)])
    q = np.empty((steps + 1, nj))
    dq = np.empty_like(q)
    tau = np.empty_like(q)
    q[0], dq[0] = ref(0.0)
    for i in range(steps + 1):
        k = 1 if (swap_time is not None and len(models) > 1 and t[i] >= swap_time) else 0
        a1, tau[i] = accel(k, t[i], q[i], dq[i])
        if i == steps:
            break
        h = dts[i]
        x, v = q[i], dq[i]
        k1x, k1v = v, a1
        k2x, k2v = v + 0.5 * h * k1v, accel(k, t[i] + 0.5 * h, x + 0.5 * h * k1x, v + 0.5 * h * k1v)[0]
        k3x, k3v = v + 0.5 * h * k2v, accel(k, t[i] + 0.5 * h, x + 0.5 * h * k2x, v + 0.5 * h * k2v)[0]
        k4x, k4v = v + h * k3v, accel(k, t[i] + h, x + h * k3x, v + h * k3v)[0]
        q[i + 1] = x + h / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x)
        dq[i + 1] = v + h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
    bound = np.asarray(noise_abs, float) + noise_rel * np.abs(tau)
    sign = rng.choice([-1.0, 1.0], nj)
    noise = noise_scale * bound * rng.uniform(-1.0, 1.0, tau.shape) + noise_bias * bound * sign
    return SimulatedRun(t, q, dq, tau, tau + noise, np.asarray(theta_e, float).copy())


def random_payload(rng: np.random.Generator, mass_max: float = 4.0, **kw: Any) -> Payload:
    """A random rigid box :class:`~sysid_ros._src.simulation.Payload` (same law as
    :func:`random_payload_theta`; mass ≥ 0.05 kg because the simulator needs a body)."""
    from sysid_ros._src.simulation import Payload

    th = random_payload_theta(rng, mass_max, **kw)
    th[:] = th if th[0] >= 0.05 else random_payload_theta(rng, mass_max, **kw)
    inertia = pin.Inertia.FromDynamicParameters(th)
    return Payload(max(float(inertia.mass), 0.05), inertia.lever.copy(), inertia.inertia.copy())


def simulate_mujoco(robot: Robot, rng: np.random.Generator, payload: Payload | None, *,
                    duration: float, noise_tau: float = 0.1, control_every: int = 4,
                    reference: Reference | None = None, bandwidth: float = 10.0) -> SimulatedRun:
    """Data from the built-in MuJoCo simulator (:class:`~sysid_ros._src.simulation.Simulator`): the
    robot with ``payload`` tracks a sum-of-sines reference (:func:`exciting_reference`) with a
    PD + nominal-gravity + nominal-viscous feed-forward law evaluated every ``control_every``
    physics steps (zero-order hold), sampled every physics step (4 kHz at the default 0.25 ms).

    The simulator's robot is the nominal one (θ_r and friction exact), positions are not
    quantised (the identifier assumes exact q), the torque sensor reports the applied motor
    torque + uniform noise in ±``noise_tau``. Returns a :class:`SimulatedRun` whose ``tau`` is
    the noise-free applied torque and ``theta_e`` the simulator's truth.
    """
    from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec

    sim = Simulator(SimulatorSpec(robot, payload, SimConfig(noise_tau=noise_tau, quantize=False),
                                  seed=int(rng.integers(2**31))))
    ref = reference or exciting_reference(robot, rng)
    q0, dq0 = ref(0.0)
    sim.reset(q0, dq0)
    nominal, ndata = robot.model, robot.model.createData()
    m_diag = np.diag(pin.crba(nominal, ndata, q0)) + robot.friction.nominal[:, 2]
    kp, kd = bandwidth**2 * m_diag, 2.0 * bandwidth * m_diag
    fv = robot.friction.nominal[:, 1]
    steps = int(np.ceil(duration / sim.physics_dt))
    nj = robot.nj
    t, q, dq, tau, tau_meas = (np.empty(steps) if k == 0 else np.empty((steps, nj))
                               for k in range(5))
    cmd = np.zeros(nj)
    for i in range(steps):
        if i % control_every == 0:
            x, v = sim.q, sim.dq
            q_d, dq_d = ref(sim.time)
            cmd = (pin.computeGeneralizedGravity(nominal, ndata, x) + fv * dq_d
                   + kp * (q_d - x) + kd * (dq_d - v))
        sim.step(cmd)
        meas = sim.measure()
        t[i], q[i], dq[i], tau_meas[i] = meas.t, meas.q, meas.dq, meas.tau_measured
        tau[i] = sim._tau_applied
    return SimulatedRun(t, q, dq, tau, tau_meas, sim.true_theta_e())


def z1_payload(rng: np.random.Generator, mass_max: float = 2.0) -> Payload:
    """A random box payload from the law the Z1 / B1 + Z1 prior box B₀ was derived for
    (config/b1_z1.yaml: mass 0–2 kg, CoM x in [−0.1, 0.3] m, y, z in [−0.1, 0.1] m, radius of
    gyration ≤ 0.12 m), so the truth is inside B₀ (assumption 5 of the identifier)."""
    return random_payload(rng, mass_max, com_lower=(-0.1, -0.1, -0.1),
                          com_upper=(0.3, 0.1, 0.1), size_max=0.15)


@dataclass(frozen=True)
class FloatingRun:
    """B1 + Z1 standing in the MuJoCo simulator: joint samples (as :class:`SimulatedRun`), the
    exact IMU readings at the same stamps (IMU frame: gyro (N, 3) rad/s, specific force
    (N, 3) m/s²) and the trunk's true pose (position (N, 3) m, rotation vector (N, 3) rad)."""

    run: SimulatedRun
    gyro: np.ndarray
    accel: np.ndarray
    trunk_position: np.ndarray
    trunk_rotation: np.ndarray


def simulate_standing(robot: Robot, rng: np.random.Generator, payload: Payload | None, *,
                      duration: float,
                      noise_tau: float = 0.1, settle: float = 0.4, amplitude: float = 0.35,
                      physics_dt: float = 1e-3, swap: tuple[float, Payload] | None = None
                      ) -> FloatingRun:
    """The floating-base robot standing on the simulator's ground (legs on the simulator's
    posture controller) while its arm tracks a random sum of sines with PD + nominal full-body
    gravity feed-forward (:func:`standing_motion`), sampled every physics step after ``settle``
    seconds (the drop onto the ground). Positions exact (not quantised), torque noise uniform in
    ±``noise_tau``; the IMU readings are the simulator's exact ones. ``swap`` = (t, payload):
    the payload is replaced t seconds into the recording (the run's ``theta_e`` is then the
    first payload's)."""
    from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec

    spec = SimulatorSpec(robot, payload, SimConfig(noise_tau=noise_tau, quantize=False,
                                                   physics_dt=physics_dt),
                         seed=int(rng.integers(2**31)))
    sim = Simulator(spec)
    theta_e = sim.true_theta_e()
    m = standing_motion(robot, sim, rng, duration, settle=settle, amplitude=amplitude, swap=swap,
                        measure=True)
    assert m.tau_meas is not None                       # measured (measure=True)
    return FloatingRun(SimulatedRun(m.t, m.q, m.dq, m.tau, m.tau_meas, theta_e), m.gyro, m.accel,
                       m.trunk_position, m.trunk_rotation)


@dataclass(frozen=True, eq=False)
class StandingMotion:
    """Exact samples of :func:`standing_motion`: t (N,), q, q̇, applied motor torque τ (N, nj),
    the simulator's measured torque (its own noise and offset; None unless measured), the exact
    IMU (gyro, specific force (N, 3), IMU frame) and the trunk pose (position, rotation
    vector (N, 3))."""

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    tau_meas: np.ndarray | None
    gyro: np.ndarray
    accel: np.ndarray
    trunk_position: np.ndarray
    trunk_rotation: np.ndarray


def standing_motion(robot: Robot, sim: Any, rng: np.random.Generator, duration: float, *,
                    settle: float = 0.4, amplitude: float = 0.35, every: int = 1,
                    swap: tuple[float, Payload] | None = None,
                    measure: bool = False) -> StandingMotion:
    """Drive the floating-base robot of ``sim`` (a :class:`~sysid_ros._src.simulation.Simulator`;
    reset here to ``simulation.home``): legs on the simulator's standing controller, the arm
    tracking a random sum of sines with PD (80 N·m/rad, 4 N·m·s/rad) + the *nominal* model's
    full-body gravity, around ``simulation.home`` moved (during ``settle``) at least
    amplitude + 0.15 rad inside the joint limits — MuJoCo's limit constraint is a torque the
    identifier does not model. Sampled every ``every`` physics steps after ``settle`` seconds
    (the drop onto the ground): the state at the sample instant, the motor torque of the
    physics step that ended there and the exact IMU. ``measure``: also the simulator's own
    torque reading (:meth:`Simulator.measure`). ``swap`` = (t, payload): the payload is
    replaced t seconds after ``settle``."""
    sim.reset()
    arm = np.array([robot.joint_names.index(j) for j in robot.config["arm_joints"]])
    home = sim.q[arm].copy()
    freq = rng.uniform(0.4, 1.2, (2, arm.size))
    phase = rng.uniform(0, 2 * np.pi, (2, arm.size))
    amp = amplitude * rng.uniform(0.5, 1.0, (2, arm.size)) / 2.0
    margin = amplitude + 0.15
    centre = np.clip(home, robot.limits.q_lower[arm] + margin, robot.limits.q_upper[arm] - margin)
    model, data = robot.model, robot.model.createData()
    kp, kd = 80.0, 4.0

    def ref(t: float) -> tuple[np.ndarray, np.ndarray]:
        w = 2 * np.pi * freq
        ramp = min(1.0, t / settle) if settle > 0 else 1.0
        return (home + ramp * (centre - home + np.sum(amp * np.sin(w * t + phase), axis=0)),
                ramp * np.sum(amp * w * np.cos(w * t + phase), axis=0))

    steps = int(np.ceil((settle + duration) / sim.physics_dt))
    skip = int(round(settle / sim.physics_dt))
    n, nj = len(range(skip + every - 1, steps, every)), robot.nj
    t = np.empty(n)
    q, dq, tau, tau_meas = (np.empty((n, nj)) for _ in range(4))
    gyro, acc, pos, rot = (np.empty((n, 3)) for _ in range(4))
    cmd = np.zeros(nj)
    swap_step = None if swap is None else skip + int(round(swap[0] / sim.physics_dt))
    k = 0
    for i in range(steps):
        if i == swap_step and swap is not None:
            sim.set_payload(swap[1])
        state = sim.state()
        q_d, dq_d = ref(sim.time)
        grav = pin.computeGeneralizedGravity(model, data, state.q)[robot.v_index]
        cmd[arm] = grav[arm] + kp * (q_d - sim.q[arm]) + kd * (dq_d - sim.dq[arm])
        sim.step(cmd)
        if i < skip or (i - skip + 1) % every:
            continue
        meas = sim.measure()
        assert meas.imu is not None
        t[k], q[k], dq[k], tau_meas[k] = meas.t, meas.q, meas.dq, meas.tau_measured
        tau[k] = sim.tau_applied
        gyro[k], acc[k] = meas.imu.angular_velocity, meas.imu.linear_acceleration
        base = sim.state().q
        pos[k] = base[:3]
        rot[k] = pin.log3(pin.Quaternion(base[3:7]).toRotationMatrix())
        k += 1
    return StandingMotion(t, q, dq, tau, tau_meas if measure else None, gyro, acc, pos, rot)


def write_bag(path: _PathT, run: SimulatedRun, names: Sequence[str], imu: ImuSamples | None = None,
              imu_topic: str = "/imu", t0: float = 100.0) -> _PathT:
    """An MCAP bag of ``run`` on /joint_states (columns in ``names`` = the robot's joint order)
    and, with ``imu`` (t, angular_velocity, linear_acceleration at the joint stamps), the trunk
    IMU on ``imu_topic``; header stamps and receive times t0 + t. Returns ``path``."""
    from sysid_ros._src.bagio import BagWriter, default_typestore

    ts = default_typestore()
    js, imu_t = ts.types["sensor_msgs/msg/JointState"], ts.types["sensor_msgs/msg/Imu"]
    header, stamp = ts.types["std_msgs/msg/Header"], ts.types["builtin_interfaces/msg/Time"]
    vec, quat = ts.types["geometry_msgs/msg/Vector3"], ts.types["geometry_msgs/msg/Quaternion"]
    with BagWriter(path) as w:
        for i in range(run.t.size):
            ns = int(round((t0 + run.t[i]) * 1e9))
            h = header(stamp=stamp(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="")
            w.write("/joint_states", js(header=h, name=list(names),
                                        position=np.ascontiguousarray(run.q[i], float),
                                        velocity=np.ascontiguousarray(run.dq[i], float),
                                        effort=np.ascontiguousarray(run.tau_meas[i], float)), ns)
            if imu is not None:
                g, a = imu.angular_velocity[i], imu.linear_acceleration[i]
                w.write(imu_topic, imu_t(
                    header=h, orientation=quat(x=0.0, y=0.0, z=0.0, w=1.0),
                    orientation_covariance=np.zeros(9),
                    angular_velocity=vec(x=float(g[0]), y=float(g[1]), z=float(g[2])),
                    angular_velocity_covariance=np.zeros(9),
                    linear_acceleration=vec(x=float(a[0]), y=float(a[1]), z=float(a[2])),
                    linear_acceleration_covariance=np.zeros(9)), ns)
    return path
