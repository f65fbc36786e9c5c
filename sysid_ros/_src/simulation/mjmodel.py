"""Build a MuJoCo model from the same URDF and robot facts as the Pinocchio registry.

Why these choices:

- Visual and mesh collision elements are stripped from the URDF text (their ``package://`` paths
  do not resolve and they carry no inertia). Primitive collision shapes are kept only on the
  links named in ``simulation.contact_links`` (B1's feet), so arm links never touch anything and
  the arm's dynamics stay those of Pinocchio's rigid-body model.
- Inertia comes only from the URDF ``<inertial>`` elements (``inertiafromgeom=false``, no inertia
  balancing); fixed joints are fused (``fusestatic``), which lumps e.g. the Gen3's bracelet and
  gripper into the ``joint_7`` body exactly as Pinocchio does.
- Locked joints (``model.locked_joints``) are deleted and their body welded at the locked
  position, matching ``pin.buildReducedModel``.
- Joint friction/armature from ``robot.friction.nominal`` (or a :class:`HardwareTruth`):
  ``armature`` = Ia, ``damping`` = Fv (MuJoCo's Euler integrator treats it implicitly).
  ``coulomb="exact"`` (default): ``frictionloss`` = 0 and the simulator applies Coulomb friction
  and the offset β as a generalized force each physics step rather than with MuJoCo's
  ``frictionloss`` (a soft constraint whose regularisation lets joints creep and whose force
  while sliding depends on solver settings): while sliding it is exactly the package's
  Fc·sign(q̇) (docs/theory/models.md#joint-friction-and-armature), so Pinocchio agreement stays testable step by step.
  ``coulomb="mujoco"`` (hardware-like data): ``frictionloss`` = Fc as MuJoCo's constraint,
  deliberately not the identifier's sign law, made stiff (:data:`DRY_FRICTION_SOLIMP`): a joint
  sticks below Fc and slides at Fc, as a gearbox does, rather than creeping at a speed set by
  its inertia (MuJoCo's default softness).
- With a truth, body inertias are written into the compiled model afterwards
  (:func:`set_body_theta`): every body whose θ differs from the robot's nominal one (θ_r) and
  the end-effector body (θ_e, payload included). Bodies the truth leaves nominal keep MuJoCo's
  compiled inertia (equal up to rounding), so a truth equal to the nominal model changes
  nothing.
- Floating base: a free joint on the URDF root body plus a ground plane; an IMU site on the
  ``simulation.imu_body`` with framequat / gyro / accelerometer sensors.
- The payload is a welded child body of the EE body with explicit inertial (fused at compile).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import mujoco
import numpy as np

from sysid_ros._src.model.parameters import com_inertia_from_theta, is_physically_consistent
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import SimulationSection, simulation_section
from sysid_ros._src.paths import example_robot_data_dir, package_share
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.payload import Payload, true_theta_e
from sysid_ros._src.simulation.truth import HardwareTruth

__all__ = ["MujocoRobot", "build_mujoco_model", "check_physics", "set_body_theta",
           "refresh_constants", "IMU_SENSORS", "INTEGRATORS", "COULOMB_MODES"]

_ERD_PREFIX = "example-robot-data:"
IMU_SENSORS = ("imu_quat", "imu_gyro", "imu_acc")
INTEGRATORS = {"Euler": mujoco.mjtIntegrator.mjINT_EULER,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
               "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT}
#: MuJoCo's frictionloss as a stiff constraint (``coulomb="mujoco"``): impedance 0.9999 and a
#: 4-ms time constant (MuJoCo raises any below 2 physics steps; ours are ≤ 1 ms). With MuJoCo's defaults
#: (impedance 0.9–0.95, 20 ms) a sticking joint creeps at ~(1 − d)·τ/(d·b·I): on the Z1's wrist
#: (I ≈ 0.001 kg·m²) joint 6's friction never reached 0.9·Fc below 0.68 rad/s without payload
#: and 0.26 rad/s with its 1 kg dumbbell — a friction law that changes with the payload's inertia,
#: which no gearbox has, and which made every calibrated Z1 payload recording inconsistent on
#: joint 6. Stiff: ≥ 0.9·Fc from 0.003 rad/s on every joint, payload or not.
DRY_FRICTION_SOLREF = (0.004, 1.0)
DRY_FRICTION_SOLIMP = (0.9999, 0.9999, 0.001, 0.5, 2.0)
#: Coulomb friction models: the simulator's exact set-valued law, or MuJoCo's frictionloss.
COULOMB_MODES = ("exact", "mujoco")


@dataclass(frozen=True)
class MujocoRobot:
    """Compiled model plus the address maps from the robot's actuated joints (config order)."""

    model: mujoco.MjModel
    qpos_adr: np.ndarray   # (nj,) qpos address of each actuated joint
    dof_adr: np.ndarray    # (nj,) qvel/qfrc address of each actuated joint
    ee_body: int           # MuJoCo body id of the end-effector joint's body
    free_qpos: int | None  # qpos address of the free joint (None for a fixed base)
    free_dof: int | None
    imu_body: int | None
    contact_geoms: np.ndarray
    body_of: np.ndarray    # (n_bodies,) MuJoCo body id of each Pinocchio joint body (1..njoints-1)


def _urdf_path(robot: Robot):
    urdf = str(robot.config["model"]["urdf"])
    if urdf.startswith(_ERD_PREFIX):
        return example_robot_data_dir() / urdf[len(_ERD_PREFIX):]
    return package_share() / urdf


def _strip(urdf_text: str, contact_links: set[str]) -> str:
    """Drop visuals, mesh collisions and collisions of links that may not touch anything."""
    text = re.sub(r"<visual\b.*?</visual>", "", urdf_text, flags=re.S)

    def link(m: re.Match) -> str:
        body = m.group(0)
        if m.group(1) in contact_links:
            return re.sub(r"<collision\b(?:(?!</collision>).)*<mesh.*?</collision>", "", body,
                          flags=re.S)
        return re.sub(r"<collision\b.*?</collision>", "", body, flags=re.S)

    text = re.sub(r'<link\s+name="([^"]+)"\s*>.*?</link>', link, text, flags=re.S)
    return re.sub(r"<gazebo\b.*?</gazebo>", "", text, flags=re.S)


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(4)
    mujoco.mju_mulQuat(out, np.asarray(a, float), np.asarray(b, float))
    return out


def _weld_joint(spec: mujoco.MjSpec, name: str, value: float) -> None:
    """Delete hinge ``name``; its body is welded at angle ``value`` (rotation about the axis
    through the joint position, expressed in the body frame)."""
    joint = spec.joint(name)
    if joint is None:
        raise SimConfigError(f"locked joint {name!r} not found in the MuJoCo model")
    body = joint.parent
    if value != 0.0:
        axis = np.asarray(joint.axis, float) / np.linalg.norm(joint.axis)
        rot_q = np.empty(4)
        mujoco.mju_axisAngle2Quat(rot_q, axis, float(value))
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, rot_q)
        p = np.asarray(joint.pos, float)
        body_rot = np.empty(9)
        mujoco.mju_quat2Mat(body_rot, np.asarray(body.quat, float))
        body.pos = np.asarray(body.pos) + body_rot.reshape(3, 3) @ (p - rot.reshape(3, 3) @ p)
        body.quat = _quat_mul(body.quat, rot_q)
    spec.delete(joint)


def _repair_placeholder_inertias(spec: mujoco.MjSpec) -> None:
    """Drop the off-diagonals of non-physical placeholder inertias (B1's ``base`` link has
    m = 1e-6 with all six entries 1e-6, which Pinocchio accepts and MuJoCo rejects). The change is
    ≤ 1e-6 kg·m², far below anything the tests or the identifier resolve."""
    for body in spec.bodies:
        if not body.explicitinertial:
            continue
        f = np.asarray(body.fullinertia, float)
        full = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
        if np.any(full) and np.linalg.eigvalsh(full)[0] <= 0.0:
            body.fullinertia = [f[0], f[1], f[2], 0.0, 0.0, 0.0]


def set_body_theta(model: mujoco.MjModel, body: int, theta: np.ndarray) -> None:
    """Write θ (10, Pinocchio order, inertia about the body frame origin) into a compiled
    model's body: mass, CoM, principal inertia and its frame. Call :func:`refresh_constants`
    afterwards (the constraint solver's weights depend on the inertias)."""
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (10,) or not is_physically_consistent(theta):
        raise SimConfigError(f"body {model.body(body).name!r}: θ {theta} is not a physically "
                             "consistent body (pseudo-inertia must be positive definite)")
    mass, com, inertia = com_inertia_from_theta(theta)
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    if np.linalg.det(axes) < 0:  # MuJoCo needs a rotation, not a reflection
        axes[:, 0] = -axes[:, 0]
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, axes.reshape(-1))
    model.body_mass[body] = mass
    model.body_ipos[body] = com
    model.body_iquat[body] = quat
    model.body_inertia[body] = moments


def refresh_constants(model: mujoco.MjModel) -> None:
    """Recompute the model constants derived from inertias (subtree masses, the constraint
    solver's inverse weights) after :func:`set_body_theta`; uses scratch data."""
    mujoco.mj_setConst(model, mujoco.MjData(model))


def check_physics(physics_dt: float, integrator: str, coulomb: str) -> None:
    """SimConfigError unless the physics step is in (0, 1 ms] and the integrator and the
    Coulomb mode are known ones."""
    if integrator not in INTEGRATORS:
        raise SimConfigError(f"integrator {integrator!r} unknown; use one of {sorted(INTEGRATORS)}")
    if coulomb not in COULOMB_MODES:
        raise SimConfigError(f"coulomb {coulomb!r} unknown; use one of {list(COULOMB_MODES)}")
    if not (np.isfinite(physics_dt) and 0.0 < physics_dt <= 1e-3):
        raise SimConfigError(f"physics_dt must be in (0, 1e-3] s, got {physics_dt!r}")


def build_mujoco_model(robot: Robot, payload: Payload | None = None, physics_dt: float = 2.5e-4,
                       integrator: str = "Euler", *, truth: HardwareTruth | None = None,
                       coulomb: str = "exact") -> MujocoRobot:
    """Compile the MuJoCo model of ``robot`` (+ ``payload`` welded to the EE body).

    ``truth``: joint armature/damping/dry friction and body inertias from it instead of the
    robot facts file; its θ_e replaces EE link + payload (pass ``truth.with_payload(robot,
    payload)``). ``coulomb``: ``"exact"`` (``frictionloss`` 0; the simulator applies the law)
    or ``"mujoco"`` (``frictionloss`` = Fc, MuJoCo's dry-friction constraint, made stiff).
    """
    check_physics(physics_dt, integrator, coulomb)
    if truth is not None:
        truth.check(robot)
    section = simulation_section(robot)
    spec = _base_spec(robot, section, physics_dt, integrator)
    root = spec.worldbody.first_body()
    if robot.floating_base:
        _add_ground_and_imu(spec, root, section)
    if payload is not None:
        _add_payload(spec, robot, payload)
    _set_joint_friction(spec, robot, robot.friction.nominal if truth is None else truth.friction,
                        coulomb)
    model = spec.compile()
    return _compiled(robot, model, root.name, truth, payload)


def _base_spec(robot: Robot, section: SimulationSection, physics_dt: float,
               integrator: str) -> mujoco.MjSpec:
    """The URDF as MuJoCo reads it: visuals dropped, fixed joints fused, inertias only from
    ``<inertial>``, locked joints welded."""
    contact_links = set(section.contact_links)
    spec = mujoco.MjSpec.from_string(_strip(_urdf_path(robot).read_text(), contact_links))
    spec.compiler.fusestatic = True
    spec.compiler.discardvisual = True
    spec.compiler.balanceinertia = False
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.autolimits = True
    spec.option.timestep = float(physics_dt)
    spec.option.integrator = INTEGRATORS[integrator]
    _repair_placeholder_inertias(spec)
    for name, value in (robot.config["model"].get("locked_joints", {}) or {}).items():
        _weld_joint(spec, str(name), float(value))
    return spec


def _add_ground_and_imu(spec: mujoco.MjSpec, root: mujoco.MjsBody,
                        section: SimulationSection) -> None:
    """A floating base: a free joint on the root, a ground plane, and the IMU's site and
    sensors on ``simulation.imu_body`` (default the root)."""
    root.add_freejoint(name="root_free")
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], name="ground",
                            friction=[1.0, 0.005, 0.0001])
    imu_name = section.imu_body or root.name
    imu_body = spec.body(imu_name)
    if imu_body is None:
        raise SimConfigError(f"simulation.imu_body {imu_name!r} is not a body of the model")
    site = imu_body.add_site(name="imu_site")
    spec.add_sensor(name="imu_quat", type=mujoco.mjtSensor.mjSENS_FRAMEQUAT,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname="imu_site")
    spec.add_sensor(name="imu_gyro", type=mujoco.mjtSensor.mjSENS_GYRO,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name)
    spec.add_sensor(name="imu_acc", type=mujoco.mjtSensor.mjSENS_ACCELEROMETER,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name)


def _add_payload(spec: mujoco.MjSpec, robot: Robot, payload: Payload) -> None:
    """The payload as a rigid body welded to the end-effector body."""
    ee = spec.joint(robot.ee_joint).parent
    holder = ee.add_body(name="sim_payload")
    holder.explicitinertial = True
    holder.mass = payload.mass
    holder.ipos = payload.com
    i = payload.inertia_com
    holder.fullinertia = [i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]]


def _set_joint_friction(spec: mujoco.MjSpec, robot: Robot, friction: np.ndarray,
                        coulomb: str) -> None:
    """Armature and damping per joint; dry friction as MuJoCo's stiff constraint only with
    ``coulomb="mujoco"`` (otherwise the simulator applies the law)."""
    for k, name in enumerate(robot.joint_names):
        joint = spec.joint(name)
        if joint is None:
            raise SimConfigError(f"joint {name!r} not found in the MuJoCo model")
        joint.armature = float(friction[k, 2])
        joint.damping = [float(friction[k, 1]), 0.0, 0.0]  # MuJoCo 4: polynomial coefficients
        joint.frictionloss = float(friction[k, 0]) if coulomb == "mujoco" else 0.0
        if coulomb == "mujoco":
            joint.solref_friction = list(DRY_FRICTION_SOLREF)
            joint.solimp_friction = list(DRY_FRICTION_SOLIMP)


def _compiled(robot: Robot, model: mujoco.MjModel, root_name: str, truth: HardwareTruth | None,
              payload: Payload | None) -> MujocoRobot:
    """Check the compiled model against the robot and index it (joint addresses, the body of
    every Pinocchio joint); a truth's inertias are written into it."""
    jids = [model.joint(n).id for n in robot.joint_names]
    hinge_dofs = int(np.sum(model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE))
    if hinge_dofs != robot.nj:
        raise SimConfigError(f"MuJoCo model has {hinge_dofs} hinge joints, robot {robot.nj}: "
                             "unlocked joints differ between the URDF and the robot config")
    free = model.joint("root_free").id if robot.floating_base else None
    contact = np.array([g for g in range(model.ngeom)
                        if model.geom_type[g] != mujoco.mjtGeom.mjGEOM_PLANE], dtype=int)
    # Pinocchio joint j's body is the MuJoCo body of the joint of the same name (the free
    # flyer's is the root body): both lump fixed children into it.
    body_of = np.array([model.body(root_name).id if (robot.floating_base and j == 1)
                        else int(model.jnt_bodyid[model.joint(robot.model.names[j]).id])
                        for j in range(1, robot.model.njoints)], dtype=int)
    if truth is not None:
        _apply_truth_inertias(robot, model, body_of, truth, payload)
    return MujocoRobot(
        model=model,
        qpos_adr=model.jnt_qposadr[jids].copy(),
        dof_adr=model.jnt_dofadr[jids].copy(),
        ee_body=int(model.jnt_bodyid[model.joint(robot.ee_joint).id]),
        free_qpos=None if free is None else int(model.jnt_qposadr[free]),
        free_dof=None if free is None else int(model.jnt_dofadr[free]),
        imu_body=None if free is None else int(model.site("imu_site").bodyid[0]),
        contact_geoms=contact,
        body_of=body_of,
    )


def _apply_truth_inertias(robot: Robot, model: mujoco.MjModel, body_of: np.ndarray,
                          truth: HardwareTruth, payload: Payload | None) -> None:
    nominal = robot.theta().reshape(-1, 10)
    theta = truth.theta(robot).reshape(-1, 10)
    ee = robot.ee_joint_id - 1
    changed = False
    for b in range(theta.shape[0]):
        same = (np.array_equal(theta[b], true_theta_e(robot, payload)) if b == ee
                else np.array_equal(theta[b], nominal[b]))
        if not same:
            set_body_theta(model, int(body_of[b]), theta[b])
            changed = True
    if changed:
        refresh_constants(model)
