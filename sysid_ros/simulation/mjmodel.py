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
- Joint friction/armature from ``robot.friction.nominal``: ``armature`` = Ia, ``damping`` = Fv
  (MuJoCo's Euler integrator treats it implicitly), ``frictionloss`` = 0. Coulomb friction and
  the offset β are applied by the simulator as a generalized force each physics step rather than
  with MuJoCo's ``frictionloss`` (a soft constraint whose regularisation lets joints creep and
  whose force while sliding depends on solver settings): while sliding it is exactly the
  package's Fc·sign(q̇) (DESIGN §3), so Pinocchio agreement stays testable step by step.
- Floating base: a free joint on the URDF root body plus a ground plane; an IMU site on the
  ``simulation.imu_body`` with framequat / gyro / accelerometer sensors.
- The payload is a welded child body of the EE body with explicit inertial (fused at compile).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import mujoco
import numpy as np

from sysid_ros.model.robots import Robot
from sysid_ros.paths import example_robot_data_dir, package_share
from sysid_ros.simulation.errors import SimConfigError
from sysid_ros.simulation.payload import Payload

__all__ = ["MujocoRobot", "build_mujoco_model", "IMU_SENSORS", "INTEGRATORS"]

_ERD_PREFIX = "example-robot-data:"
IMU_SENSORS = ("imu_quat", "imu_gyro", "imu_acc")
INTEGRATORS = {"Euler": mujoco.mjtIntegrator.mjINT_EULER,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
               "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT}


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


def build_mujoco_model(robot: Robot, payload: Payload | None = None, physics_dt: float = 2.5e-4,
                       integrator: str = "Euler") -> MujocoRobot:
    """Compile the MuJoCo model of ``robot`` (+ ``payload`` welded to the EE body)."""
    if integrator not in INTEGRATORS:
        raise SimConfigError(f"integrator {integrator!r} unknown; use one of {sorted(INTEGRATORS)}")
    if not (np.isfinite(physics_dt) and 0.0 < physics_dt <= 1e-3):
        raise SimConfigError(f"physics_dt must be in (0, 1e-3] s, got {physics_dt!r}")
    section = robot.config.get("simulation", {}) or {}
    contact_links = set(section.get("contact_links", []) or [])
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

    root = spec.worldbody.first_body()
    if robot.floating_base:
        root.add_freejoint(name="root_free")
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], name="ground",
                                friction=[1.0, 0.005, 0.0001])
        imu_name = str(section.get("imu_body", root.name))
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

    if payload is not None:
        ee = spec.joint(robot.ee_joint).parent
        holder = ee.add_body(name="sim_payload")
        holder.explicitinertial = True
        holder.mass = payload.mass
        holder.ipos = payload.com
        i = payload.inertia_com
        holder.fullinertia = [i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]]

    nom = robot.friction.nominal
    for k, name in enumerate(robot.joint_names):
        joint = spec.joint(name)
        if joint is None:
            raise SimConfigError(f"joint {name!r} not found in the MuJoCo model")
        joint.armature = float(nom[k, 2])
        joint.damping = [float(nom[k, 1]), 0.0, 0.0]  # MuJoCo 4: polynomial coefficients
        joint.frictionloss = 0.0

    model = spec.compile()
    jids = [model.joint(n).id for n in robot.joint_names]
    hinge_dofs = int(np.sum(model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE))
    if hinge_dofs != robot.nj:
        raise SimConfigError(f"MuJoCo model has {hinge_dofs} hinge joints, robot {robot.nj}: "
                             "unlocked joints differ between the URDF and the robot config")
    free = model.joint("root_free").id if robot.floating_base else None
    contact = np.array([g for g in range(model.ngeom)
                        if model.geom_type[g] != mujoco.mjtGeom.mjGEOM_PLANE], dtype=int)
    return MujocoRobot(
        model=model,
        qpos_adr=model.jnt_qposadr[jids].copy(),
        dof_adr=model.jnt_dofadr[jids].copy(),
        ee_body=int(model.jnt_bodyid[model.joint(robot.ee_joint).id]),
        free_qpos=None if free is None else int(model.jnt_qposadr[free]),
        free_dof=None if free is None else int(model.jnt_dofadr[free]),
        imu_body=None if free is None else int(model.site("imu_site").bodyid[0]),
        contact_geoms=contact,
    )
