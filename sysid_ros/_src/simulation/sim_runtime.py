"""The simulator node's logic without ROS: what is simulated, when it is published, which command
acts, when lock-step waits (the ``sim`` node, ``sysid_ros._src.nodes.sim``, only moves messages).

:class:`SimRuntime` is driven by plain calls with explicit time:

- :meth:`SimRuntime.advance` → the next :class:`Publication`: the first is the initial state at
  t = 0; each later one is one publication period (1/rate_hz, a whole number of physics steps)
  of physics later, with the command that is fresh at the start of the period held constant
  (zero-order hold, as a torque-controlled drive applies its last set-point);
- :meth:`SimRuntime.command` — the newest command replaces the previous one; it acts until it
  is ``command_timeout`` *simulated* seconds old, then the simulator's hold controller (PD on the
  posture at that instant + gravity feed-forward) takes over;
- :meth:`SimRuntime.waits_for_command` — the lock-step decision;
- :meth:`SimRuntime.reset` — restart from the initial posture, the clock continuing;
- hardware-like publication (:class:`HardwareSensor`): ``joint_states`` of a period may be
  dropped (``Publication.joint_states is None``), stamped late, noisy, without velocity; the
  clock and IMU keep every period, the IMU with its datasheet bias and noise
  (:class:`~sysid_ros._src.simulation.imu.ImuProfile`).

Not thread-safe: the node serialises calls (one lock around command / advance / reset).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.errors import CommandError, SimConfigError
from sysid_ros._src.simulation.hardware_like import HardwareProfile, HardwareSensor
from sysid_ros._src.simulation.payload import Payload, dumbbell_for
from sysid_ros._src.simulation.simulator import ImuReading, Simulator
from sysid_ros._src.simulation.spec import SimConfig, SimulatorSpec, robot_physics_dt
from sysid_ros._src.simulation.imu import ImuProfile
from sysid_ros._src.simulation.truth import sim_truth

__all__ = ["MODES", "COMMANDER_MEMORY_S", "RuntimeSettings", "JointSample", "Publication",
           "SimRuntime", "RealtimePacer", "payload_from_settings", "payload_parameters",
           "publication_schedule"]

MODES = ("realtime", "lockstep")

#: Lock-step keeps waiting for a controller that sent a command within this many wall seconds
#: even when a graph query misses its publisher (DDS discovery can transiently lose one on a
#: loaded machine); after that, a vanished controller no longer slows the simulation.
COMMANDER_MEMORY_S = 1.0


@dataclass(frozen=True)
class RuntimeSettings:
    """The sim node's settings (its parameters; docs/reference/parameters.md gives types and ranges).

    ``physics_dt`` None: the robot file's ``simulation.physics_dt``, shortened to period/n when it
    does not divide the period. ``payload_mass`` 0 kg is no payload (a physical value, kept
    because the launch file always passes its ``payload`` argument); with ``payload_com`` and
    ``payload_inertia`` (about the CoM, [ixx, ixy, ixz, iyy, iyz, izz], EE frame) a custom
    payload, else a dumbbell of that mass. ``duration`` None: run until stopped.
    ``hardware_like``: the robot file's ``simulation.hardware_like`` profile replaces
    ``rate_hz``/``noise_*``/``quantize`` and sets the physics step (``physics_dt`` given too is
    refused rather than silently ignored). ``clock_rate_hz``: /clock is published on every
    publication whose sim time crosses a multiple of 1/clock_rate_hz (at most every
    publication). Every use_sim_time node runs a Python callback per /clock message (≈ 0.1 ms
    of CPU each, measured): at 1 kHz five nodes spend about half a core on the clock alone. The
    suite's nodes take their timing from message stamps (the controller evaluates its
    trajectory at the joint_states stamp), so ROS time only needs a coarser resolution: 100 Hz
    (10 ms), still finer than the gazebo_ros default of 10 Hz.
    """

    rate_hz: float = 1000.0
    physics_dt: float | None = None
    integrator: str = "Euler"
    mode: str = "realtime"
    lockstep_wait: float = 0.05
    noise_tau: float = 0.1
    noise_dq: float = 0.0
    quantize: bool = True
    command_timeout: float = 0.1
    seed: int = 0
    initial_q: tuple[float, ...] | None = None
    duration: float | None = None
    wait_subscribers: int = 0
    hardware_like: bool = False
    hardware_seed: int = 0
    payload_mass: float = 0.0
    payload_com: tuple[float, ...] | None = None
    payload_inertia: tuple[float, ...] | None = None
    clock_rate_hz: float = 100.0

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> RuntimeSettings:
        """The settings among a node's parameter values (others, e.g. ``robot``, are skipped)."""
        return cls(**{k: v for k, v in values.items() if k in cls.__dataclass_fields__})

    def __post_init__(self) -> None:
        def positive(name: str, value: float | None) -> None:
            if value is not None and not (math.isfinite(value) and value > 0.0):
                raise SimConfigError(f"sim setting {name} must be a finite number > 0, "
                                     f"got {value!r}")

        for name in ("rate_hz", "physics_dt", "lockstep_wait", "command_timeout", "duration",
                     "clock_rate_hz"):
            positive(name, getattr(self, name))
        if self.rate_hz > 10000.0:
            raise SimConfigError(f"sim setting rate_hz must be <= 10000 Hz, got {self.rate_hz}")
        if self.mode not in MODES:
            raise SimConfigError(f"sim setting mode must be one of {MODES}, got {self.mode!r}")
        for name in ("seed", "hardware_seed", "wait_subscribers"):
            if getattr(self, name) < 0:
                raise SimConfigError(f"sim setting {name} must be >= 0, got {getattr(self, name)}")
        if self.hardware_like and self.physics_dt is not None:
            raise SimConfigError("sim setting physics_dt cannot be given with hardware_like: the "
                                 "profile's physics_dt (robot file) is used")
        if not (math.isfinite(self.payload_mass) and self.payload_mass >= 0.0):
            raise SimConfigError(f"sim setting payload_mass must be >= 0 kg, "
                                 f"got {self.payload_mass!r}")


def payload_from_settings(robot: Robot, mass: float, com: Sequence[float] | None,
                          inertia: Sequence[float] | None) -> Payload | None:
    """Payload of the settings: None for mass 0, a dumbbell for a mass alone, else the custom
    body (CoM (3) m and inertia about the CoM [ixx, ixy, ixz, iyy, iyz, izz] kg·m², EE frame).
    Raises SimConfigError (incomplete/ignored fields) or PayloadError (not physical)."""
    com, inertia = tuple(com or ()), tuple(inertia or ())
    if mass == 0.0:
        if com or inertia:
            raise SimConfigError("payload_com / payload_inertia given without payload_mass > 0")
        return None
    if not com and not inertia:
        return dumbbell_for(robot, mass)
    if len(com) != 3 or len(inertia) != 6:
        raise SimConfigError("payload_com needs 3 values and payload_inertia 6 "
                             "[ixx, ixy, ixz, iyy, iyz, izz] (about the CoM, EE frame)")
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return Payload(mass, np.asarray(com, float),
                   np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], float))


def payload_parameters(payload: Payload) -> dict[str, list[float]]:
    """The sim settings ``payload_com`` and ``payload_inertia`` of ``payload`` (its mass is
    ``payload_mass``): what :func:`payload_from_settings` reads back as the same body."""
    i = payload.inertia_com
    return {"payload_com": [float(x) for x in payload.com],
            "payload_inertia": [float(i[0, 0]), float(i[0, 1]), float(i[0, 2]),
                                float(i[1, 1]), float(i[1, 2]), float(i[2, 2])]}


def publication_schedule(robot: Robot, rate_hz: float, physics_dt: float | None) -> float:
    """Physics step (s) for publishing at ``rate_hz``: ``physics_dt`` if given (it must divide
    the period), else the robot file's step shortened to the largest period/n below it."""
    period = 1.0 / rate_hz
    if physics_dt is None:
        return period / math.ceil(period / robot_physics_dt(robot) - 1e-9)
    steps = period / physics_dt
    if round(steps) < 1 or abs(steps - round(steps)) > 1e-6:
        raise SimConfigError(f"1/rate_hz = {period:g} s must be a whole number of "
                             f"physics_dt = {physics_dt:g} s steps")
    return physics_dt


@dataclass(frozen=True, eq=False)
class JointSample:
    """One ``joint_states`` message: stamp (integer ns), positions, velocities (None = the
    profile publishes none), measured efforts, in robot.joint_names order."""

    stamp_ns: int
    q: np.ndarray
    dq: np.ndarray | None
    effort: np.ndarray


@dataclass(frozen=True, eq=False)
class Publication:
    """What the node publishes after one period: ``k`` (0 = the initial state), sim time
    ``stamp_ns`` (integer ns; /clock and imu carry it), ``joint_states`` (None = dropped or in a
    stall of the hardware-like profile) and ``imu`` (floating-base robots, else None)."""

    k: int
    stamp_ns: int
    joint_states: JointSample | None
    imu: ImuReading | None
    clock: bool = True           # publish /clock with this one (``clock_rate_hz``)


class SimRuntime:
    """The simulator node's state machine (see the module docstring)."""

    def __init__(self, robot: Robot, settings: RuntimeSettings = RuntimeSettings()) -> None:
        self.robot, self.settings = robot, settings
        s = settings
        self.payload = payload_from_settings(robot, s.payload_mass, s.payload_com,
                                             s.payload_inertia)
        self.profile: HardwareProfile | None = None
        self.sensor: HardwareSensor | None = None
        self._imu_profile: ImuProfile | None = None
        if s.hardware_like:
            self.profile = HardwareProfile.from_robot(robot)
            if self.profile.velocity == "filtered":
                raise SimConfigError(
                    f"{robot.config_path}: simulation.hardware_like.profile.velocity 'filtered' "
                    "is a centred smoothing of a whole log (a post-processed recording): the sim "
                    "node publishes sample by sample; record such data with sysid-sim-record, or "
                    "choose 'noisy', 'exact' or 'finite_difference' here")
            truth = sim_truth(robot, s.hardware_seed, self.payload)
            self.sim = Simulator(SimulatorSpec.hardware_like(
                robot, self.payload, self.profile, truth, seed=s.seed, integrator=s.integrator))
            self.sensor = HardwareSensor(robot, self.profile, truth,
                                         np.random.default_rng([s.hardware_seed, 1]))
            if robot.floating_base:
                # the trunk IMU's datasheet errors (simulation.imu): one bias per run
                self._imu_profile = ImuProfile.from_robot(robot)
                self._imu_rng = np.random.default_rng([s.hardware_seed, 2])
                self._imu_bias = self._imu_profile.draw_bias(self._imu_rng)
            self.rate_hz = self.profile.rate_hz
        else:
            self.rate_hz = s.rate_hz
            dt = publication_schedule(robot, s.rate_hz, s.physics_dt)
            self.sim = Simulator(SimulatorSpec(
                robot, self.payload, SimConfig(physics_dt=dt, integrator=s.integrator,
                                               noise_tau=s.noise_tau, noise_dq=s.noise_dq,
                                               quantize=s.quantize), seed=s.seed))
        self.period = 1.0 / self.rate_hz
        self.steps_per_pub = int(round(self.period / self.sim.physics_dt))
        self.q0 = self.sim.home.copy() if s.initial_q is None else np.asarray(s.initial_q, float)
        self.sim.reset(self.q0)        # refuses a q0 of the wrong length, naming q0
        self._k = -1                   # index of the last publication
        self._clock_tick = -1          # clock_rate_hz period of the last /clock
        self._cmd: np.ndarray | None = None
        self._cmd_time = -math.inf     # sim time at which the newest command arrived
        self._cmd_wall = -math.inf     # wall time of the newest command (lock-step memory)
        self._answered = False         # a command arrived since the last publication
        self._step_wall = -math.inf    # wall time at which the last advance() began

    # -- state -----------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Simulated time (s) of the last publication's state."""
        return self.sim.time

    @property
    def finished(self) -> bool:
        """``duration`` reached (the last publication is at t = duration)."""
        d = self.settings.duration
        return d is not None and self._k >= 0 and self.sim.time >= d - 1e-12

    @property
    def answered(self) -> bool:
        """A command has answered the last publication (lock-step, see :meth:`command`)."""
        return self._answered

    def may_start(self, joint_state_subscribers: int) -> bool:
        """Sim time stays at 0 until ``wait_subscribers`` nodes listen to joint_states, so a
        graph started together (recorder included) sees the run from its first step."""
        return joint_state_subscribers >= self.settings.wait_subscribers

    # -- inputs ----------------------------------------------------------------------------
    def command(self, tau: np.ndarray | Sequence[float], wall_time: float) -> None:
        """The newest torque command (one per robot joint, or per ``arm_joints`` for B1 + Z1),
        received now (sim time :attr:`time`) and arrived at ``wall_time`` (any monotonic wall
        clock, s; the same clock as :meth:`advance`'s). It answers the last publication (for
        lock-step) only if it arrived after that publication's step began: one that arrived
        earlier, e.g. while the step ran, replies to an older state. Raises CommandError (wrong
        length, non-finite) and keeps the previous command."""
        tau = np.asarray(tau, dtype=float).reshape(-1)
        n_all, n_cmd = self.robot.nj, len(self.sim.command_joints)
        if tau.size not in (n_all, n_cmd) or not np.all(np.isfinite(tau)):
            raise CommandError(f"command with {tau.size} entries ignored (need {n_all} or "
                               f"{n_cmd} finite torques)")
        self._cmd, self._cmd_time, self._cmd_wall = tau, self.sim.time, wall_time
        self._answered = self._answered or wall_time >= self._step_wall

    def fresh_command(self) -> np.ndarray | None:
        """The command that acts over the next period: the newest one unless it is older than
        ``command_timeout`` sim seconds (None: the hold controller)."""
        if self._cmd is None or self.sim.time - self._cmd_time > self.settings.command_timeout:
            return None
        return self._cmd

    def waits_for_command(self, commander_seen: bool, wall_now: float) -> bool:
        """Lock-step: wait (up to ``lockstep_wait``) before the next period? Only when no command
        has answered the last publication yet and a controller exists: ``commander_seen`` (a
        publisher on the command topic) or a command within :data:`COMMANDER_MEMORY_S`.

        Assumption: the controller replies once per publication, within ``lockstep_wait``. A
        command does not say which state it answers, so a reply later than that is taken as
        the answer to the next state; the pairing lags one period until a reply arrives during
        a step (not counted, see :meth:`command`) or two replies fall within one period."""
        if self.settings.mode != "lockstep" or self._answered or self._k < 0:
            return False
        return commander_seen or wall_now - self._cmd_wall <= COMMANDER_MEMORY_S

    def reset(self) -> None:
        """Restart from the initial posture with the hold controller; time continues (the
        clock stays monotonic) and the publication schedule keeps its phase."""
        self.sim.reset(self.q0, t0=self.sim.time)
        self._cmd, self._cmd_time = None, -math.inf
        if self.sensor is not None:
            self.sensor.reset()     # no finite difference across the jump

    # -- stepping --------------------------------------------------------------------------
    def advance(self, wall_time: float = -math.inf) -> Publication:
        """The next publication: the initial state first, then one period of physics later each
        time (the profile's sample instants are the physics steps nearest k/rate_hz).
        ``wall_time``: when this step begins (lock-step pairing, see :meth:`command`)."""
        self._step_wall = wall_time
        if self._k >= 0:
            if self.profile is None:
                steps = self.steps_per_pub
            else:
                steps = int(self.profile.sample_step(self._k + 1)
                            - self.profile.sample_step(self._k))
            self.sim.step(self.fresh_command(), steps)
        self._k += 1
        self._answered = False
        m = self.sim.measure()
        stamp_ns = int(round(m.t * 1e9))
        js: JointSample | None
        if self.sensor is None:
            js = JointSample(stamp_ns, m.q, m.dq, m.tau_measured)
        else:
            out = self.sensor.read(np.array([m.t]), self.sim.q, self.sim.dq, self.sim.tau_applied)
            js = (JointSample(int(round(out.t[0] * 1e9)), out.q[0],
                              None if out.dq is None else out.dq[0], out.tau_meas[0])
                  if out.index.size else None)
        clock_tick = int(stamp_ns * self.settings.clock_rate_hz // 1_000_000_000)
        clock = self._k == 0 or clock_tick != self._clock_tick
        self._clock_tick = clock_tick
        return Publication(self._k, stamp_ns, js, self._imu_error(m.imu), clock)

    def _imu_error(self, imu: ImuReading | None) -> ImuReading | None:
        """The hardware-like IMU's reading: the exact one + the run's bias + truncated noise."""
        p = self._imu_profile
        if p is None or imu is None:
            return imu
        gyro_bias, accel_bias = self._imu_bias
        return dataclasses.replace(
            imu, angular_velocity=imu.angular_velocity + gyro_bias
            + p.noise(self._imu_rng, 1, p.gyro_sigma)[0],
            linear_acceleration=imu.linear_acceleration + accel_bias
            + p.noise(self._imu_rng, 1, p.accel_sigma)[0])


class RealtimePacer:
    """Wall-clock pacing of realtime mode: publication k is due at start + k·period. A pacer
    that falls more than ``max_lag`` behind (machine busy) moves its origin instead of
    publishing a burst: the simulation then runs slower than real time, never faster."""

    def __init__(self, period: float, wall_start: float, max_lag: float = 0.1) -> None:
        self.period, self.max_lag = period, max_lag
        self._origin, self._k = wall_start, 0
        self.slips = 0           # times the origin moved: the simulation fell behind real time
        self.lost_s = 0.0        # wall time given up in those moves (sim time runs that behind)

    def next_deadline(self, wall_now: float) -> float:
        """Wall time at which the next publication is due (≤ now: publish at once)."""
        self._k += 1
        target = self._origin + self._k * self.period
        lag = wall_now - target
        if lag > self.max_lag:
            self._origin += lag
            target += lag
            self.slips += 1
            self.lost_s += lag
        return target
