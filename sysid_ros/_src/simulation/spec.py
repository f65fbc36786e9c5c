"""What a :class:`~sysid_ros._src.simulation.simulator.Simulator` simulates, resolved in one object.

A :class:`SimulatorSpec` is built once from its choices — the robot, the payload it carries, the
simulated robot (:class:`~sysid_ros._src.simulation.truth.HardwareTruth`, drawn beforehand, or the
facts file's nominal model), the settings (:class:`SimConfig`) and the sensor-noise seed — and
resolves at construction everything the simulator reads from them: the physics step, the
simulated end-effector body and joint friction, per-joint noise bounds, encoder resolution, hold
gains, which joints take commands and which hold a standing posture (a floating base's legs),
and the home posture. Every setting is checked there, with an error naming it. Random draws
(the hardware truth, a payload drawn in its class) happen before, when the spec's arguments are
made from their seeds; the spec then fully determines a run: the simulator reads nothing else
and draws only its sensor noise, from ``seed``.

Two kinds of simulated robot:

- ideal (``truth`` None): the robot facts file's model; the torque offset β acts on the arm, the
  Coulomb law is the simulator's exact set-valued one unless ``SimConfig.coulomb`` says otherwise;
- hardware-like (:meth:`SimulatorSpec.hardware_like`): a drawn truth's friction, armature and
  inertias, β a torque-*sensor* offset, MuJoCo's dry friction, the publication profile's physics
  step, noise-free unquantised sensors (the profile's
  :class:`~sysid_ros._src.simulation.hardware_like.HardwareSensor` adds what a driver publishes).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import SimulationSection, home_posture, \
    simulation_section
from sysid_ros._src.simulation._util import encoder_resolution, per_joint, readonly
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.mjmodel import check_physics
from sysid_ros._src.simulation.payload import Payload, true_theta_e
from sysid_ros._src.simulation.truth import HardwareTruth

if TYPE_CHECKING:      # hardware_like builds its simulators from a spec: a type hint only
    from sysid_ros._src.simulation.hardware_like import HardwareProfile

__all__ = ["SimConfig", "SimulatorSpec", "robot_physics_dt"]


def robot_physics_dt(robot: Robot) -> float:
    """The robot file's ``simulation.physics_dt`` (s; its default in :mod:`.simulation_section`
    of the model)."""
    dt = simulation_section(robot).physics_dt
    if not (np.isfinite(dt) and 0.0 < dt <= 1e-3):
        raise SimConfigError(f"{robot.config_path}: simulation.physics_dt must be in (0, 1e-3] s, "
                             f"got {dt!r}")
    return dt


@dataclass(frozen=True)
class SimConfig:
    """Simulator settings. Arrays may be a scalar (all joints) or one value per joint.

    physics_dt: physics step (s), ≤ 1 ms; 0.25 ms default so 4 kHz publication gets fresh
        states every step; 0 = the robot file's ``simulation.physics_dt`` (0.25 ms if absent;
        B1 + Z1: 1 ms, see config/b1_z1.yaml).
    integrator: ``Euler`` (semi-implicit, implicit joint damping), ``implicitfast`` or
        ``implicit`` (RK4 cannot be split for per-step control).
    noise_tau: torque-sensor noise bound (N·m): uniform in ±noise_tau.
    noise_dq: velocity noise bound (rad/s): uniform in ±noise_dq.
    quantize: round positions to the encoder resolution (robot ``simulation.encoder_resolution_deg``).
    hold_kp/hold_kd: override the robot's ``simulation.hold_kp``/``hold_kd``.
    coulomb: ``exact`` (the simulator's set-valued Fc·sign(q̇) law, default) or ``mujoco``
        (MuJoCo's soft ``frictionloss`` constraint; hardware-like data).
    """

    physics_dt: float = 2.5e-4
    integrator: str = "Euler"
    noise_tau: float | Sequence[float] = 0.0
    noise_dq: float | Sequence[float] = 0.0
    quantize: bool = True
    hold_kp: Sequence[float] | None = None
    hold_kd: Sequence[float] | None = None
    coulomb: str = "exact"


@dataclass(frozen=True, eq=False)
class SimulatorSpec:
    """One simulator run's specification (module docstring).

    Arguments: ``robot``; ``payload`` carried from the start (None: nothing); ``config``, the
    settings as given; ``seed`` of the sensor noise (None: fresh entropy); ``truth`` the
    simulated robot (None: the facts file's; its θ_e is replaced by nominal EE link + payload).

    Resolved at construction (read-only arrays, one entry per joint in config order):
    ``physics_dt`` (s); ``theta_e`` the simulated end-effector body with the payload;
    ``friction`` (nj, 4) ``[Fc, Fv, Ia, β]`` simulated; ``noise_tau``, ``noise_dq`` the sensors'
    bounds; ``resolution`` the encoder's (rad, 0 = exact); ``hold_kp``, ``hold_kd`` the hold
    and standing controllers' gains; ``command_joints`` the joints that take torque commands
    (``arm_joints``, else all); ``posture`` the angles the other joints are held at (0 for
    commanded ones; B1's ``leg_standing_posture``); ``home`` the reset posture
    (``simulation.home``, else the neutral one).
    """

    robot: Robot
    payload: Payload | None = None
    config: SimConfig = SimConfig()
    seed: int | None = None
    truth: HardwareTruth | None = None
    physics_dt: float = field(init=False)
    theta_e: np.ndarray = field(init=False)
    friction: np.ndarray = field(init=False)
    noise_tau: np.ndarray = field(init=False)
    noise_dq: np.ndarray = field(init=False)
    resolution: np.ndarray = field(init=False)
    hold_kp: np.ndarray = field(init=False)
    hold_kd: np.ndarray = field(init=False)
    command_joints: tuple[str, ...] = field(init=False)
    posture: np.ndarray = field(init=False)
    home: np.ndarray = field(init=False)

    @classmethod
    def hardware_like(cls, robot: Robot, payload: Payload | None, profile: HardwareProfile,
                      truth: HardwareTruth, *, seed: int | None = None,
                      integrator: str = "Euler") -> SimulatorSpec:
        """The simulator of ``truth`` (+ payload) with MuJoCo dry friction at the profile's
        physics step; noise-free and unquantised (the profile's sensor does that)."""
        config = SimConfig(physics_dt=profile.physics_step, integrator=integrator, noise_tau=0.0,
                           noise_dq=0.0, quantize=False, coulomb="mujoco")
        return cls(robot, payload, config, seed, truth)

    def __post_init__(self) -> None:
        robot, config, nj = self.robot, self.config, self.robot.nj
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        physics_dt = config.physics_dt or robot_physics_dt(robot)
        check_physics(physics_dt, config.integrator, config.coulomb)
        put("physics_dt", float(physics_dt))
        if self.truth is not None:
            self.truth.check(robot)
            put("truth", self.truth.with_payload(robot, self.payload))
        put("theta_e", readonly(true_theta_e(robot, self.payload) if self.truth is None
                                else self.truth.theta_e))
        put("friction", readonly(robot.friction.nominal if self.truth is None
                                 else self.truth.friction))
        put("noise_tau", readonly(per_joint(config.noise_tau, nj, "noise_tau")))
        put("noise_dq", readonly(per_joint(config.noise_dq, nj, "noise_dq")))
        put("resolution", readonly(encoder_resolution(robot)))
        section = simulation_section(robot)
        kp, kd = _hold_gains(robot, config, section)
        put("hold_kp", kp)
        put("hold_kd", kd)
        put("command_joints", _command_joints(robot))
        put("posture", _posture(robot, self.command_joints, section))
        put("home", _home(robot))

    def __repr__(self) -> str:
        payload = "no payload" if self.payload is None else f"{self.payload.mass:g} kg payload"
        body = "nominal" if self.truth is None else "hardware truth"
        return (f"SimulatorSpec({self.robot.name}, {payload}, {body}, physics_dt "
                f"{self.physics_dt:g} s, {self.config.integrator}, coulomb {self.config.coulomb}, "
                f"seed {self.seed})")

    @property
    def standing(self) -> bool:
        """A floating base whose non-commanded joints (legs) stand on the ground."""
        return bool(self.robot.floating_base and len(self.command_joints) < self.robot.nj)


def _hold_gains(robot: Robot, config: SimConfig,
                section: SimulationSection) -> tuple[np.ndarray, np.ndarray]:
    """The hold controller's gains: the config's, else the robot file's ``simulation``."""
    kp = config.hold_kp if config.hold_kp is not None else section.hold_kp
    kd = config.hold_kd if config.hold_kd is not None else section.hold_kd
    if kp is None or kd is None:
        raise SimConfigError(f"{robot.config_path}: section 'simulation' needs hold_kp and "
                             "hold_kd (or pass SimConfig.hold_kp/hold_kd)")
    return (readonly(per_joint(kp, robot.nj, "hold_kp")),
            readonly(per_joint(kd, robot.nj, "hold_kd")))


def _command_joints(robot: Robot) -> tuple[str, ...]:
    """The joints that take torque commands: ``arm_joints`` when given, else all."""
    arm = robot.config.get("arm_joints")
    joints = tuple(arm) if arm else tuple(robot.joint_names)
    unknown = set(joints) - set(robot.joint_names)
    if unknown:
        raise SimConfigError(f"arm_joints {sorted(unknown)} are not among the robot's joints")
    return joints


def _posture(robot: Robot, command_joints: tuple[str, ...],
             section: SimulationSection) -> np.ndarray:
    """(nj,) the standing posture of the joints that take no command (0 on the others)."""
    held = np.array([n not in command_joints for n in robot.joint_names], dtype=bool)
    posture = np.zeros(robot.nj)
    if np.any(held):
        legs = section.leg_standing_posture
        legs = np.asarray(legs if legs is not None else [], dtype=float)
        if legs.shape != (int(held.sum()),):
            raise SimConfigError("leg_standing_posture needs one angle per non-arm joint")
        posture[held] = legs
    return readonly(posture)


def _home(robot: Robot) -> np.ndarray:
    """The reset posture (:func:`~sysid_ros._src.model.simulation_section.home_posture`)."""
    try:
        return readonly(home_posture(robot))
    except RobotConfigError as err:
        raise SimConfigError(str(err)) from err
