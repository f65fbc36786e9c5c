"""The simulated robot's truth for hardware-like data: what the physics uses, in the identifier's
convention, so evaluation can compare estimates against it (no ROS import).

Convention (docs/theory/models.md#joint-friction-and-armature, the identifier's): per actuated
joint the *measured* torque is

    τ̂ = H(q) q̈ + C(q, q̇) q̇ + g(q) + Ia q̈ + Fv q̇ + Fc·sign(q̇) + β + noise

with H, C, g from every body's 10 inertial parameters (θ_r for the bodies that are not the
end effector, θ_e for the end-effector body including its payload). :class:`HardwareTruth`
holds exactly these numbers as simulated; the MuJoCo model is built from them (armature = Ia,
damping = Fv, dry friction = Fc, body inertias = θ_r and θ_e), and β is a torque-*sensor*
offset: it never acts on the arm, it only shifts the measurement.

Only the sign law of the convention is an idealisation of the simulation: with
``SimConfig(coulomb="mujoco")`` the dry friction is MuJoCo's ``frictionloss`` constraint (made
stiff, ``mjmodel.DRY_FRICTION_SOLIMP``): equal to Fc while a joint slides, anywhere below it
while the joint sticks (it creeps at under 2 mrad/s), resolved by the constraint solver rather
than by the identifier's sign law.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.simulation._util import per_joint, readonly
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.payload import Payload, true_theta_e

__all__ = ["HardwareTruth", "random_hardware_truth", "hardware_truth_settings", "drawn_truth",
           "sim_truth"]

#: Keys of ``simulation.hardware_like.truth`` in a robot facts file (keyword arguments of
#: :func:`random_hardware_truth`).
TRUTH_KEYS = ("friction_rel", "fc_max", "offset_max", "link_rel", "torque_gain_rel")
# Draws per body before giving up on a physically consistent scaled θ (then: nominal kept).
_CONSISTENCY_TRIES = 200


@dataclass(frozen=True, eq=False)
class HardwareTruth:
    """Ground truth of a simulated robot, in the identifier's convention (module docstring).

    Attributes:
        friction: (nj, 4) per actuated joint (config order) ``[Fc, Fv, Ia, beta]``: Coulomb
            friction level Fc (N·m, ≥ 0; MuJoCo's dry-friction bound), viscous friction Fv
            (N·m·s/rad, ≥ 0; MuJoCo damping), armature Ia (kg·m², ≥ 0; reflected rotor
            inertia, MuJoCo armature) and the torque-sensor offset beta (N·m; added to the
            measurement only).
        theta_r: (10·(n_bodies − 1),) inertial parameters of every body except the end
            effector's, Pinocchio order per body ``[m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz,
            Izz]`` (inertia about the joint-frame origin), bodies in Pinocchio joint order: θ with
            the θ_e columns (``robot.ee_columns``) removed.
        theta_e: (10,) the end-effector body as simulated: EE link (gripper lumped in) plus
            payload, the identifier's target. :meth:`with_payload` sets it for a payload.
        ripple: optional (nj, 2) position-dependent load torque per joint (N·m),
            a·sin(h·q) + b·cos(h·q) with [a, b] per row and h = ``ripple_order``: gear ripple
            or cable drag the motor has to overcome (it enters the motion and the motor torque
            the sensor reads, like friction). None: no ripple.
        ripple_order: the harmonic order h of ``ripple`` (a positive integer).
        torque_gain: (nj,) k_j > 0, the constant gain of the torque *reading*: the sensor
            reports (τ_motor + β)/k_j (plus noise), so k_j·τ̂ is the torque of the convention
            above — a current-based estimate whose motor torque constant is off by k_j. Default
            all 1 (an exact gain).

    Arrays are read-only copies.
    """

    friction: np.ndarray
    theta_r: np.ndarray
    theta_e: np.ndarray
    ripple: np.ndarray | None = None
    ripple_order: int = 2
    torque_gain: np.ndarray | None = None

    def __post_init__(self) -> None:
        friction = np.asarray(self.friction, dtype=float)
        gain = np.ones(friction.shape[0] if friction.ndim == 2 else 0) \
            if self.torque_gain is None else np.asarray(self.torque_gain, dtype=float)
        theta_r = np.asarray(self.theta_r, dtype=float).reshape(-1)
        theta_e = np.asarray(self.theta_e, dtype=float).reshape(-1)
        if friction.ndim != 2 or friction.shape[1] != 4 or not np.all(np.isfinite(friction)):
            raise SimConfigError("HardwareTruth.friction must be a finite (nj, 4) array "
                                 "[Fc, Fv, Ia, beta]")
        if np.any(friction[:, :3] < 0):
            raise SimConfigError("HardwareTruth.friction: Fc, Fv and Ia must be >= 0 "
                                 f"(got min {friction[:, :3].min(axis=0)})")
        if theta_r.size % 10 or not np.all(np.isfinite(theta_r)):
            raise SimConfigError("HardwareTruth.theta_r must be 10 finite numbers per body")
        if theta_e.shape != (10,) or not np.all(np.isfinite(theta_e)):
            raise SimConfigError("HardwareTruth.theta_e must be 10 finite numbers")
        if gain.shape != friction.shape[:1] or not np.all(np.isfinite(gain)) \
                or np.any(gain <= 0):
            raise SimConfigError("HardwareTruth.torque_gain must be one finite gain > 0 per "
                                 "joint")
        object.__setattr__(self, "torque_gain", readonly(gain))
        if self.ripple is not None:
            ripple = np.asarray(self.ripple, dtype=float)
            if ripple.shape != (friction.shape[0], 2) or not np.all(np.isfinite(ripple)):
                raise SimConfigError("HardwareTruth.ripple must be a finite (nj, 2) array "
                                     "[sin, cos amplitude] per joint")
            object.__setattr__(self, "ripple", readonly(ripple))
        if isinstance(self.ripple_order, bool) or not isinstance(self.ripple_order, int) \
                or self.ripple_order < 1:
            raise SimConfigError(f"HardwareTruth.ripple_order must be a positive integer, got "
                                 f"{self.ripple_order!r}")
        object.__setattr__(self, "friction", readonly(friction))
        object.__setattr__(self, "theta_r", readonly(theta_r))
        object.__setattr__(self, "theta_e", readonly(theta_e))

    # -- constructors --------------------------------------------------------------------------
    @classmethod
    def nominal(cls, robot: Robot, payload: Payload | None = None) -> HardwareTruth:
        """The robot facts file's model (config friction, nominal bodies) + ``payload``: what
        the identifier assumes, i.e. what hardware-like data must *not* look like exactly."""
        theta = robot.theta()
        return cls(robot.friction.nominal, np.delete(theta, _ee_range(robot)),
                   true_theta_e(robot, payload))

    def with_payload(self, robot: Robot, payload: Payload | None) -> HardwareTruth:
        """The same robot carrying ``payload``: θ_e = nominal EE link + payload."""
        return replace(self, theta_e=true_theta_e(robot, payload))

    # -- views ---------------------------------------------------------------------------------
    def ripple_torque(self, q: np.ndarray) -> np.ndarray:
        """The ripple's load torque at positions q (…, nj) (N·m; zeros without a ripple)."""
        q = np.asarray(q, dtype=float)
        if self.ripple is None:
            return np.zeros_like(q)
        h = self.ripple_order
        return self.ripple[:, 0] * np.sin(h * q) + self.ripple[:, 1] * np.cos(h * q)

    def check(self, robot: Robot) -> None:
        """Raise SimConfigError unless the shapes fit ``robot``."""
        if self.friction.shape != (robot.nj, 4):
            raise SimConfigError(f"HardwareTruth.friction has shape {self.friction.shape}, "
                                 f"robot {robot.name} needs ({robot.nj}, 4)")
        if self.theta_r.size != 10 * (robot.n_bodies - 1):
            raise SimConfigError(f"HardwareTruth.theta_r has {self.theta_r.size} values, robot "
                                 f"{robot.name} needs {10 * (robot.n_bodies - 1)}")

    def theta(self, robot: Robot) -> np.ndarray:
        """θ of all bodies (10·n_bodies,), Pinocchio regressor order, θ_e in its columns."""
        self.check(robot)
        start = robot.ee_columns.start
        return np.concatenate([self.theta_r[:start], self.theta_e, self.theta_r[start:]])

    def pinocchio_model(self, robot: Robot) -> pin.Model:
        """A Pinocchio model with the true inertias and ``armature`` = Ia (for evaluation)."""
        theta = self.theta(robot).reshape(-1, 10)
        model = robot.model.copy()
        for j in range(1, model.njoints):
            model.inertias[j] = pin.Inertia.FromDynamicParameters(theta[j - 1])
        armature = np.zeros(model.nv)
        armature[robot.v_index] = self.friction[:, 2]
        model.armature = armature
        return model


def _ee_range(robot: Robot) -> np.ndarray:
    return np.arange(robot.ee_columns.start, robot.ee_columns.stop)


def hardware_truth_settings(robot: Robot) -> dict[str, Any]:
    """The robot file's ``simulation.hardware_like.truth`` section as keyword arguments of
    :func:`random_hardware_truth` (missing keys are left to its defaults)."""
    truth = simulation_section(robot).hardware_like.get("truth", {}) or {}
    where = f"{robot.config_path}: simulation.hardware_like.truth"
    if not isinstance(truth, Mapping):
        raise SimConfigError(f"{where} must be a mapping")
    unknown = sorted(set(truth) - set(TRUTH_KEYS))
    if unknown:
        raise SimConfigError(f"{where}: unknown keys {unknown}; known: {list(TRUTH_KEYS)}")
    return dict(truth)


def drawn_truth(robot: Robot, rng: np.random.Generator,
                payload: Payload | None = None) -> HardwareTruth:
    """A robot drawn off its catalogue from ``rng`` with the robot file's
    ``simulation.hardware_like.truth`` settings, carrying ``payload``."""
    return random_hardware_truth(robot, rng, **hardware_truth_settings(robot), payload=payload)


def sim_truth(robot: Robot, hardware_seed: int, payload: Payload | None = None) -> HardwareTruth:
    """The robot the sim node draws with ``hardware_like`` and ``hardware_seed``: the robot
    file's truth settings, its seed stream 0 (the payload does not change the draw). A
    calibration recording of the same robot (``sysid-sim-record``) draws it here too."""
    return drawn_truth(robot, np.random.default_rng([int(hardware_seed), 0]), payload)


def random_hardware_truth(robot: Robot, rng: np.random.Generator, friction_rel: float = 0.5,
                          fc_max: float | Sequence[float] | None = None,
                          offset_max: float | Sequence[float] | None = None,
                          link_rel: float = 0.0, payload: Payload | None = None,
                          torque_gain_rel: float = 0.0) -> HardwareTruth:
    """Draw a robot that differs from its facts file the way a real one does.

    Per joint: Fv and Ia uniform in nominal·[1 − friction_rel, 1 + friction_rel] (clipped at
    0); Fc uniform in [0, fc_max]; the sensor offset β uniform in ±offset_max. Every body but
    the end effector: its 10 parameters scaled by independent factors in [1 − link_rel,
    1 + link_rel], redrawn until the body is physically consistent (pseudo-inertia positive
    definite; after 200 failed draws the body keeps its nominal values). θ_e = nominal EE link
    + ``payload``. The torque reading's gain per joint (``HardwareTruth.torque_gain``): uniform
    in [1 − torque_gain_rel, 1 + torque_gain_rel], drawn last and only when torque_gain_rel > 0
    (an exact gain leaves the rest of the draw as it was).

    ``fc_max`` / ``offset_max`` (N·m, scalar or per joint) default to the robot file's
    ``simulation.hardware_like.truth`` values, else to the config's nominal Fc and 0.
    """
    nj = robot.nj
    if not (np.isfinite(friction_rel) and 0.0 <= friction_rel <= 1.0):
        raise SimConfigError(f"friction_rel must be in [0, 1], got {friction_rel!r}")
    if not (np.isfinite(link_rel) and 0.0 <= link_rel < 1.0):
        raise SimConfigError(f"link_rel must be in [0, 1), got {link_rel!r}")
    if not (np.isfinite(torque_gain_rel) and 0.0 <= torque_gain_rel < 1.0):
        raise SimConfigError(f"torque_gain_rel must be in [0, 1), got {torque_gain_rel!r}")
    settings = hardware_truth_settings(robot)
    nominal = robot.friction.nominal
    if fc_max is None:
        fc_max = settings.get("fc_max", nominal[:, 0])
    if offset_max is None:
        offset_max = settings.get("offset_max", 0.0)
    fc_hi = per_joint(fc_max, nj, "fc_max")
    beta_hi = per_joint(offset_max, nj, "offset_max")

    friction = np.empty((nj, 4))
    friction[:, 0] = rng.uniform(0.0, 1.0, nj) * fc_hi
    scale = 1.0 + friction_rel * rng.uniform(-1.0, 1.0, (nj, 2))
    friction[:, 1:3] = np.maximum(nominal[:, 1:3] * scale, 0.0)
    friction[:, 3] = beta_hi * rng.uniform(-1.0, 1.0, nj)

    bodies = robot.theta().reshape(-1, 10)
    ee = robot.ee_joint_id - 1
    if link_rel > 0.0:
        for b in range(bodies.shape[0]):
            if b == ee:
                continue
            # all candidates at once: one batched eigenvalue test instead of a Python retry loop
            tries = bodies[b] * (1.0 + link_rel * rng.uniform(-1.0, 1.0, (_CONSISTENCY_TRIES, 10)))
            ok = np.flatnonzero(is_physically_consistent(tries))
            if ok.size:
                bodies[b] = tries[ok[0]]
    theta_r = np.delete(bodies, ee, axis=0).reshape(-1)
    gain = (1.0 + torque_gain_rel * rng.uniform(-1.0, 1.0, nj)) if torque_gain_rel > 0 \
        else np.ones(nj)
    return HardwareTruth(friction, theta_r, true_theta_e(robot, payload), torque_gain=gain)
