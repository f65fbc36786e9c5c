"""Robot registry: Pinocchio model plus the facts the identifier, planner and controller need.

``load_robot("gen3" | "z1" | "b1_z1")`` reads ``config/<name>.yaml`` (or any file given by path),
builds the Pinocchio model (free-flyer root for B1 + Z1), locks the joints the config names and
validates every field against the model, so a wrong length or unit fails here with the field's
name instead of as a shape error deep in the math.

Vocabulary used across the package:

- actuated joints: ``Robot.joint_names`` in config order; ``Robot.v_index`` maps them into the
  model's velocity vector (for a floating base the first 6 entries of v are the base twist).
- θ: all bodies' inertial parameters stacked in Pinocchio order (10 per joint body, see
  ``parameters.PARAM_NAMES``), i.e. the columns of ``pin.computeJointTorqueRegressor``.
- θ_e: the 10 parameters of ``end_effector_joint``'s body (gripper and payload lumped in).
- θ_r: every other body's parameters plus per-joint friction ``[Fc, Fv, Ia, β]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import yaml

from sysid_ros._src.schema import Section, parse_yaml, read_yaml
from sysid_ros._src.model.errors import RobotConfigError, UnknownRobotError
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.paths import example_robot_data_dir, package_share

__all__ = [
    "CollisionSphere",
    "FrictionModel",
    "JointLimits",
    "Robot",
    "available_robots",
    "load_robot",
    "FRICTION_NAMES",
    "REQUIRED_KEYS",
    "TOOL_KEYS",
]

FRICTION_NAMES = ("Fc", "Fv", "Ia", "beta")
_ERD_PREFIX = "example-robot-data:"


@dataclass(frozen=True)
class JointLimits:
    """Per actuated joint: position (rad, ±inf for continuous), velocity (rad/s), torque (N·m)."""

    q_lower: np.ndarray
    q_upper: np.ndarray
    dq_max: np.ndarray
    tau_max: np.ndarray


@dataclass(frozen=True)
class FrictionModel:
    """τ_f = Fc·sign(q̇) + Fv·q̇ + Ia·q̈ + β per joint: a nominal value and the box the truth is
    assumed to lie in, each (nj, 4) in [Fc, Fv, Ia, β] order. Catalogue boxes are symmetric
    (nominal ± abs + rel·|nominal|); calibrated ones need not be.

    Kept as a (joint × coefficient) table rather than a flat ``ParameterBox``: the control law
    and the reachability analysis index it by column (``lower[:, 2]`` = every armature), and its
    nominal need not be the centre — ``radius`` here is the half-width of the box centred on the
    nominal, not ``ParameterBox.radius``."""

    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    #: calibrated extra terms of the law (:mod:`.friction_terms`); None = the four above only
    terms: FrictionTerms | None = None

    @property
    def radius(self) -> np.ndarray:
        """Half-width of the smallest box centred on ``nominal`` that contains [lower, upper]."""
        return np.maximum(self.nominal - self.lower, self.upper - self.nominal)


@dataclass(frozen=True)
class CollisionSphere:
    """A sphere rigidly attached to ``joint``'s body: centre ``offset`` in that joint frame."""

    joint: str
    joint_id: int
    offset: np.ndarray
    radius: float


@dataclass(frozen=True)
class Robot:
    """A loaded robot: model, joint order, limits, friction, θ_e body and collision spheres."""

    name: str
    model: pin.Model
    joint_names: tuple[str, ...]
    floating_base: bool
    limits: JointLimits
    friction: FrictionModel
    ee_joint: str
    ee_joint_id: int
    tool_frame: str
    spheres: tuple[CollisionSphere, ...]
    links_rel_uncertainty: float
    config_path: Path
    config: dict[str, Any] = field(repr=False)
    # Explicit (lower, upper) box of θ_r from a calibration; None = links_rel around nominal.
    theta_r_box: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    sources: tuple[str, ...] = ()          # robot file and calibration file behind the facts

    @property
    def nj(self) -> int:
        """Number of actuated joints."""
        return len(self.joint_names)

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def n_bodies(self) -> int:
        """Bodies carrying inertial parameters (one per joint, root free-flyer included)."""
        return self.model.njoints - 1

    @property
    def joint_ids(self) -> np.ndarray:
        return np.array([self.model.getJointId(n) for n in self.joint_names], dtype=int)

    @property
    def v_index(self) -> np.ndarray:
        """Index of each actuated joint in the model's velocity vector."""
        return np.array([self.model.joints[int(j)].idx_v for j in self.joint_ids])

    @property
    def q_index(self) -> np.ndarray:
        """Index of each actuated joint in the model's configuration vector."""
        return np.array([self.model.joints[int(j)].idx_q for j in self.joint_ids])

    @property
    def ee_columns(self) -> slice:
        """Columns of θ (Pinocchio regressor order) that are θ_e."""
        start = 10 * (self.ee_joint_id - 1)
        return slice(start, start + 10)

    def theta(self) -> np.ndarray:
        """Nominal θ of all bodies in Pinocchio regressor order, shape (10·n_bodies,)."""
        return np.concatenate([self.model.inertias[i].toDynamicParameters()
                               for i in range(1, self.model.njoints)])

    def theta_r(self) -> np.ndarray:
        """Nominal θ of every non-end-effector body (model order, EE columns removed)."""
        theta = self.theta()
        mask = np.ones(theta.size, bool)
        mask[self.ee_columns] = False
        return theta[mask]

    def theta_e(self) -> np.ndarray:
        """Nominal θ_e (end-effector body without payload)."""
        return self.model.inertias[self.ee_joint_id].toDynamicParameters()

    def neutral(self) -> np.ndarray:
        """Neutral configuration (identity base orientation for a floating base)."""
        return pin.neutral(self.model)

    def random_configuration(self, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """Random configurations inside the joint limits (continuous joints in ±π)."""
        size = 1 if n is None else n
        q = np.tile(self.neutral(), (size, 1))
        lo = np.where(np.isfinite(self.limits.q_lower), self.limits.q_lower, -np.pi)
        hi = np.where(np.isfinite(self.limits.q_upper), self.limits.q_upper, np.pi)
        q[:, self.q_index] = rng.uniform(lo, hi, size=(size, self.nj))
        if self.floating_base:
            q[:, :3] = rng.normal(size=(size, 3))
            quat = rng.normal(size=(size, 4))
            q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        return q[0] if n is None else q


def available_robots() -> list[str]:
    """Robot names that have a config file in the package share."""
    return sorted(p.stem for p in (package_share() / "config").glob("*.yaml")
                  if _looks_like_robot_config(p))


def _looks_like_robot_config(path: Path) -> bool:
    try:
        data = parse_yaml(path.read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "joints" in data and "model" in data


def load_robot(name_or_path: str | Path, config_path: str | Path | None = None,
               calibration: str | Path | None = None) -> Robot:
    """Load a robot by registry name (``gen3``, ``z1``, ``b1_z1``) or from a config file path.

    ``config_path`` overrides the registry file for a named robot (a user's edited copy);
    ``calibration`` overlays a ``sysid-calibrate`` result (see :mod:`sysid_ros._src.model.calibration_overlay`).
    Raises ``UnknownRobotError`` for an unknown name and ``RobotConfigError`` naming the field
    for a missing file or a malformed config.
    """
    path = Path(config_path) if config_path is not None else _resolve_config(name_or_path)
    robot = _build(read_yaml_mapping(path, "robot config"), path)
    if calibration is not None:
        from sysid_ros._src.model.calibration_overlay import apply_calibration
        robot = apply_calibration(robot, calibration)
    return robot


#: Top-level keys of a robot facts file (anything else: a foreign or misspelt file).
ROBOT_KEYS = ("name", "model", "joints", "arm_joints", "end_effector_joint", "tool_frame",
              "leg_standing_posture", "limits", "friction", "model_uncertainty",
              "collision_spheres", "controller", "identification", "simulation", "arm_view",
              "planner", "demo")


#: The keys every robot file must have (``a|b``: one of the two; ``_deg``/``_deg_s``: in degrees):
#: :func:`load_robot` refuses a file without one, naming the file and every missing key. Every
#: other key has a default, or is needed by one tool only (:data:`TOOL_KEYS`).
REQUIRED_KEYS = ("model.urdf", "joints", "end_effector_joint", "tool_frame",
                 "limits.position_lower|limits.position_lower_deg",
                 "limits.position_upper|limits.position_upper_deg",
                 "limits.velocity|limits.velocity_deg_s", "limits.torque_Nm",
                 *(f"friction.{k}" for k in FRICTION_NAMES))
#: The keys one tool needs besides :data:`REQUIRED_KEYS` (its error names the missing one).
TOOL_KEYS = {"identifier": ("identification.prior",),
             "controller": ("controller.Kr", "controller.alpha", "controller.V_max"),
             "planner": ("planner.k_range",)}


def _missing_keys(cfg: dict[str, Any]) -> list[str]:
    """The entries of :data:`REQUIRED_KEYS` that ``cfg`` lacks (null counts as absent)."""
    def present(dotted: str) -> bool:
        node: Any = cfg
        for part in dotted.split("."):
            if not isinstance(node, dict) or node.get(part) is None:
                return False
            node = node[part]
        return True

    return [req for req in REQUIRED_KEYS if not any(present(k) for k in req.split("|"))]


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """A YAML file whose top level is a mapping (:func:`sysid_ros._src.schema.read_yaml`);
    RobotConfigError naming the file otherwise."""
    return read_yaml(path, what, RobotConfigError).data


def _resolve_config(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml"):
        return candidate
    path = package_share() / "config" / f"{name_or_path}.yaml"
    if not path.is_file() or not _looks_like_robot_config(path):
        raise UnknownRobotError(
            f"unknown robot {str(name_or_path)!r}; known robots: {', '.join(available_robots())}")
    return path


class _Fields:
    """Typed access to config fields that names the field in every error."""

    def __init__(self, cfg: dict[str, Any], path: Path) -> None:
        self.cfg, self.path = cfg, path

    def fail(self, key: str, why: str) -> RobotConfigError:
        return RobotConfigError(f"{self.path}: field '{key}': {why}")

    def get(self, key: str, default: Any = ...) -> Any:
        node: Any = self.cfg
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is not ...:
                    return default
                raise self.fail(key, "missing")
            node = node[part]
        return node

    def vector(self, key: str, n: int, allow_null: bool = False) -> np.ndarray:
        raw = self.get(key)
        if not isinstance(raw, list):
            raise self.fail(key, f"expected a list of {n} numbers, got {type(raw).__name__}")
        if len(raw) != n:
            raise self.fail(key, f"has {len(raw)} entries, expected {n} (one per joint in 'joints')")
        out = np.empty(n)
        for i, x in enumerate(raw):
            if x is None and allow_null:
                out[i] = np.nan
            elif isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x):
                out[i] = float(x)
            else:
                raise self.fail(key, f"entry {i} is {x!r}, expected a finite number"
                                + (" or null" if allow_null else ""))
        return out

    def number(self, key: str, default: float) -> float:
        """A finite number at ``key`` (``default`` when absent)."""
        raw = self.get(key, default)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not np.isfinite(raw):
            raise self.fail(key, f"expected a finite number, got {raw!r}")
        return float(raw)

    def angle_vector(self, key: str, n: int, allow_null: bool = False,
                     suffix: str = "_deg") -> np.ndarray:
        """``key`` in rad(/s) or ``key<suffix>`` in degrees(/s): exactly one must be present."""
        has_rad = self.get(key, None) is not None
        has_deg = self.get(key + suffix, None) is not None
        if has_rad == has_deg:
            raise self.fail(key, f"give exactly one of '{key}' (SI) or '{key}{suffix}' (degrees)")
        return self.vector(key, n, allow_null) if has_rad else \
            np.deg2rad(self.vector(key + suffix, n, allow_null))


def _build_model(f: _Fields) -> pin.Model:
    urdf = str(f.get("model.urdf"))
    if urdf.startswith(_ERD_PREFIX):
        urdf_path = example_robot_data_dir() / urdf[len(_ERD_PREFIX):]
    else:
        urdf_path = package_share() / urdf
    if not urdf_path.is_file():
        raise f.fail("model.urdf", f"file not found: {urdf_path}")
    floating = bool(f.get("model.floating_base", False))
    model = (pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer()) if floating
             else pin.buildModelFromUrdf(str(urdf_path)))
    locked = f.get("model.locked_joints", {}) or {}
    if not isinstance(locked, dict):
        raise f.fail("model.locked_joints", "expected a mapping joint name -> position")
    if locked:
        q_ref = pin.neutral(model)
        ids = []
        for name, value in locked.items():
            if not model.existJointName(name):
                raise f.fail("model.locked_joints", f"no joint named {name!r} in {urdf_path.name}")
            jid = model.getJointId(name)
            q_ref[model.joints[jid].idx_q] = float(value)
            ids.append(jid)
        model = pin.buildReducedModel(model, ids, q_ref)
    return model


def _collision_spheres(f: _Fields, model: pin.Model) -> list[CollisionSphere]:
    """The ``collision_spheres`` mapping: joint name → [[x, y, z], radius] (m) items."""
    spheres = []
    sphere_map = f.get("collision_spheres", {}) or {}
    if not isinstance(sphere_map, dict):
        raise f.fail("collision_spheres", "expected a mapping joint name -> list of spheres")
    for joint, items in sphere_map.items():
        if not model.existJointName(str(joint)):
            raise f.fail("collision_spheres", f"no joint named {joint!r}")
        if not isinstance(items, list):
            raise f.fail(f"collision_spheres.{joint}", "expected a list of [[x, y, z], radius]")
        for k, item in enumerate(items):
            ok = (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list)
                  and len(item[0]) == 3 and isinstance(item[1], (int, float)) and item[1] > 0
                  and all(isinstance(x, (int, float)) and np.isfinite(x) for x in item[0]))
            if not ok:
                raise f.fail(f"collision_spheres.{joint}[{k}]",
                             "expected [[x, y, z], radius] with radius > 0 (metres)")
            spheres.append(CollisionSphere(str(joint), model.getJointId(str(joint)),
                                           np.asarray(item[0], float), float(item[1])))
    return spheres


def _build(cfg: dict[str, Any], path: Path) -> Robot:
    if "sysid_calibration" in cfg:
        raise RobotConfigError(f"{path}: a calibration overlay (sysid_calibration), not robot "
                               "facts: give it as the calibration (--calibration, calibration:=)")
    Section(str(path), cfg, "", RobotConfigError, ROBOT_KEYS)
    missing = _missing_keys(cfg)
    if missing:
        raise RobotConfigError(f"{path}: missing required key{'s' if len(missing) > 1 else ''} "
                               + ", ".join(repr(k) for k in missing)
                               + " (every robot file needs them: docs/reference/robot-file.md)")
    f = _Fields(cfg, path)
    model = _build_model(f)
    names = f.get("joints")
    if not isinstance(names, list) or not names:
        raise f.fail("joints", "expected a non-empty list of joint names")
    for n in names:
        if not model.existJointName(str(n)) or model.joints[model.getJointId(str(n))].nv != 1:
            raise f.fail("joints", f"{n!r} is not a 1-DoF joint of the model")
    if len(set(names)) != len(names):
        raise f.fail("joints", "duplicate joint names")
    n_free = 6 if bool(f.get("model.floating_base", False)) else 0
    if len(names) + n_free != model.nv:
        raise f.fail("joints", f"lists {len(names)} joints but the model has {model.nv - n_free} "
                     "actuated joints (lock the others under model.locked_joints)")
    nj = len(names)

    q_lo = f.angle_vector("limits.position_lower", nj, allow_null=True)
    q_hi = f.angle_vector("limits.position_upper", nj, allow_null=True)
    q_lo, q_hi = np.where(np.isnan(q_lo), -np.inf, q_lo), np.where(np.isnan(q_hi), np.inf, q_hi)
    if np.any(q_lo >= q_hi):
        raise f.fail("limits.position_lower", "must be below limits.position_upper")
    dq = f.angle_vector("limits.velocity", nj, suffix="_deg_s")
    tau = f.vector("limits.torque_Nm", nj)
    for key, arr in (("limits.velocity", dq), ("limits.torque_Nm", tau)):
        if np.any(arr <= 0):
            raise f.fail(key, "must be positive")
    limits = JointLimits(q_lo, q_hi, dq, tau)

    nominal = np.stack([f.vector(f"friction.{k}", nj) for k in FRICTION_NAMES], axis=1)
    rel = np.array([f.number(f"friction.uncertainty.rel.{k}", 0.0) for k in FRICTION_NAMES])
    absr = np.array([f.number(f"friction.uncertainty.abs.{k}", 0.0) for k in FRICTION_NAMES])
    if np.any(rel < 0) or np.any(absr < 0):
        raise f.fail("friction.uncertainty", "radii must be non-negative")
    rad = absr + rel * np.abs(nominal)
    friction = FrictionModel(nominal, nominal - rad, nominal + rad)

    ee = str(f.get("end_effector_joint"))
    if ee not in names:
        raise f.fail("end_effector_joint", f"{ee!r} is not one of 'joints'")
    tool = str(f.get("tool_frame"))
    if not model.existFrame(tool):
        raise f.fail("tool_frame", f"no frame named {tool!r}")

    spheres = _collision_spheres(f, model)

    links_rel = f.number("model_uncertainty.links_rel", 0.05)
    if not 0.0 <= links_rel < 1.0:
        raise f.fail("model_uncertainty.links_rel", "expected a fraction in [0, 1)")

    return Robot(
        name=str(f.get("name", path.stem)), model=model, joint_names=tuple(map(str, names)),
        floating_base=n_free == 6, limits=limits, friction=friction, ee_joint=ee,
        ee_joint_id=model.getJointId(ee), tool_frame=tool, spheres=tuple(spheres),
        links_rel_uncertainty=links_rel, config_path=path, config=cfg, sources=(str(path),))
