"""Calibration overlay: a ``sysid-calibrate`` result (``calib.yaml``) applied to the robot facts.

The file is an overlay of ``config/<robot>.yaml``; ``friction`` and ``identification`` (with
``torque_noise_abs``, ``window_s``, ``stride_s``) are required, the rest optional::

    sysid_calibration: 1                 # format version
    robot: gen3                          # must match the robot it is applied to
    joints: [joint_1, ...]               # optional; when given, the robot's joints in order
    provenance: {bags: [...], method: {...}, date: ..., residuals: {...}, assumptions: [...]}
    friction:                            # per joint, lists in the robot's joint order
      nominal: {Fc: [...], Fv: [...], Ia: [...], beta: [...]}
      lower:   {Fc: [...], Fv: [...], Ia: [...], beta: [...]}
      upper:   {Fc: [...], Fv: [...], Ia: [...], beta: [...]}
      terms:                             # optional: adopted extra terms (model/friction_terms)
        harmonic 2: {nominal: {sin(2q): [...], cos(2q): [...]}, lower: {...}, upper: {...}}
    links:                               # other bodies, by the name of their joint
      joint_1: {nominal: [10 values], lower: [10], upper: [10]}    # Pinocchio order
    identification:                      # merged into the robot file's identification section
      torque_noise_abs: [...]            # N·m per joint: a bound, not a standard deviation
      calibration_rows: calib.rows.npz   # optional (--export-rows): relative to this file
    complete: true                       # the last line: a file cut short lacks it

Applying it replaces the friction model (nominal and box, with its extra terms if any), sets
the listed bodies' inertial parameters to their calibrated nominal in the Pinocchio model (so
every regressor, controller and planner uses them) with their box as the θ_r box (unlisted
bodies keep ``links_rel`` around their nominal), and merges ``identification`` keys.
Everything is validated here through :mod:`sysid_ros._src.schema` (unknown keys refused, types and
lengths checked), naming the file and the key, so a malformed or foreign file fails at load
time rather than as a shape error later.
"""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.schema import Section, read_yaml

if TYPE_CHECKING:  # robots.py imports this module at run time, never the other way
    from sysid_ros._src.model.robots import FrictionModel, Robot

__all__ = ["COMPLETE", "FORMAT_VERSION", "apply_calibration", "read_calibration"]

FORMAT_VERSION = 1
#: Key of a calibration file's last line, ``complete: true``: a file cut short lacks it.
COMPLETE = "complete"
_FRICTION_NAMES = ("Fc", "Fv", "Ia", "beta")


def _fail(path: Path, key: str, why: str) -> RobotConfigError:
    return RobotConfigError(f"{path}: calibration {key}: {why}")


#: Top-level keys of a calibration file (anything else: a foreign or damaged file).
TOP_KEYS = ("sysid_calibration", "robot", "joints", "provenance", "friction", "links",
            "identification", COMPLETE)
#: Keys of its identification section: what sysid-calibrate writes, and the identification
#: keys a user may add (docs/guide/calibrate.md).
IDENTIFICATION_KEYS = (
    "torque_noise_abs", "torque_noise_rel", "window_s", "stride_s", "coulomb_band",
    "quadrature_safety", "friction", "torque_lag_s", "torque_lag_radius_s", "velocity_lag_s",
    "velocity_lag_radius_s", "exclude_speed_rad_s", "exclude_after_start_s", "calibration_rows",
    "calibration_rows_max",
    "velocity_noise_abs", "velocity_noise_scope", "max_sample_gap", "gap_factor", "gap_floor",
    "torque_delay_samples", "robot_uncertainty_rel", "friction_unknowns", "theta_r_unknowns",
    "torque_rate_abs", "bridge_factor", "torque_gain", "torque_gain_rel", "torque_noise_speed")
#: What every calibration carries: without them a file would silently leave the robot
#: uncalibrated (the friction box) or the identifier without its measured bound and windows.
REQUIRED = {"friction": ("nominal", "lower", "upper"),
            "identification": ("torque_noise_abs", "window_s", "stride_s")}


def read_calibration(path: str | Path) -> dict[str, Any]:
    """The parsed calibration file (a mapping with ``sysid_calibration`` = format version),
    its top-level keys checked (a robot file, a prior or another tool's YAML is refused)."""
    path = Path(path)
    doc = read_yaml(path, "calibration", RobotConfigError)
    doc.equal("sysid_calibration", FORMAT_VERSION,
              f"format version {FORMAT_VERSION} (is this a sysid-calibrate file?)")
    Section(str(path), doc.data, "", RobotConfigError, TOP_KEYS)
    if doc.data.get(COMPLETE) is not True:
        raise _fail(path, COMPLETE, "missing or not 'true': sysid-calibrate writes "
                    f"'{COMPLETE}: true' as the last line, so this file was cut short (or "
                    "written by hand without it); re-run sysid-calibrate")
    return doc.data


def _check(path: Path, doc: dict[str, Any], robot: Robot) -> Section:
    """The overlay's schema for ``robot``: required sections and keys, the robot's name, its
    joints (count and names), friction tables of one number per joint, the identification keys
    with their types. Returns the identification section."""
    top = Section(str(path), doc, "", RobotConfigError, TOP_KEYS)
    if doc.get("robot") is not None and doc["robot"] != robot.name:
        raise _fail(path, "robot", f"made for {doc.get('robot')!r}, applied to {robot.name!r}")
    if "joints" in doc:
        joints = top.names("joints")
        if joints != tuple(robot.joint_names):
            raise _fail(path, "joints", f"calibrated joints {list(joints)}, but {robot.name} has "
                        f"{list(robot.joint_names)} (another robot's file, or a reordered one?)")
    for section, keys in REQUIRED.items():
        if not isinstance(doc.get(section), dict):
            raise _fail(path, section, "missing: a calibration file carries the sections "
                        f"{sorted(REQUIRED)} (a file cut short? re-run sysid-calibrate)")
        missing = [k for k in keys if k not in doc[section]]
        if missing:
            raise _fail(path, f"{section}.{missing[0]}", f"missing (the section needs "
                        f"{list(keys)}; a file cut short? re-run sysid-calibrate)")
    nj, per_joint = robot.nj, "one per joint"
    friction = top.section("friction", ("nominal", "lower", "upper", "terms"))
    assert friction is not None
    for key in ("nominal", "lower", "upper"):
        table = friction.section(key, _FRICTION_NAMES)
        assert table is not None
        for name in _FRICTION_NAMES:
            table.numbers(name, nj, per_joint)
    ident = top.section("identification", IDENTIFICATION_KEYS)
    assert ident is not None
    ident.numbers("torque_noise_abs", nj, per_joint)
    ident.number("window_s", positive=True)
    ident.number("stride_s", positive=True)
    for key in ("torque_noise_rel", "coulomb_band", "quadrature_safety", "exclude_after_start_s"):
        ident.number(key, default=None)
    for key in ("torque_lag_s", "torque_lag_radius_s", "velocity_lag_s", "velocity_lag_radius_s",
                "velocity_noise_abs",
                "torque_gain", "torque_gain_rel", "torque_noise_speed"):
        ident.numbers(key, nj, per_joint, default=None)
    ident.numbers("exclude_speed_rad_s", nj, per_joint, allow_null=True, default=None)
    ident.string("friction", ("config", "wide", "none"), default=None)
    ident.string("calibration_rows", default=None)
    return ident


def _friction_table(table: dict[str, Any]) -> np.ndarray:
    """(nj, 4) Fc, Fv, Ia, beta columns of a table :func:`_check` has validated."""
    return np.stack([np.asarray(table[name], float) for name in _FRICTION_NAMES], axis=1)


def apply_calibration(robot: Robot, calibration: str | Path | dict[str, Any]) -> Robot:
    """A copy of ``robot`` (a :class:`~sysid_ros._src.model.robots.Robot`) with the calibration
    applied. ``calibration``: a file path or an already parsed mapping."""
    if isinstance(calibration, dict):
        doc, path = calibration, Path("<calibration>")
    else:
        path = Path(calibration)
        doc = read_calibration(path)
    _check(path, doc, robot)
    friction = _calibrated_friction(path, doc, robot)
    model = robot.model.copy()
    theta_r_box = robot.theta_r_box
    per_body = _calibrated_links(path, doc, robot, model)
    if per_body is not None:
        theta_r_box = _theta_r_box(robot, model, per_body)
    return dataclasses.replace(robot, model=model, friction=friction,
                               config=_calibrated_config(path, doc, robot),
                               theta_r_box=theta_r_box,
                               sources=(*robot.sources, str(path)))


def _calibrated_friction(path: Path, doc: dict[str, Any], robot: Robot) -> FrictionModel:
    """The robot's friction model with the overlay's ``friction`` section (if any) applied."""
    friction = robot.friction
    if "friction" not in doc:
        return friction
    nom, lo, hi = (_friction_table(doc["friction"][k]) for k in ("nominal", "lower", "upper"))
    if np.any(lo > nom) or np.any(nom > hi):
        raise _fail(path, "friction", "nominal must lie inside [lower, upper]")
    sec, nj = doc["friction"], robot.nj
    terms = None
    if sec.get("terms"):
        try:
            terms = FrictionTerms.from_mapping(sec["terms"], nj)
        except ValueError as err:
            raise _fail(path, "friction.terms", str(err)) from None
    return dataclasses.replace(friction, nominal=nom, lower=lo, upper=hi, terms=terms)


def _calibrated_links(path: Path, doc: dict[str, Any], robot: Robot, model: pin.Model
                      ) -> dict[int, tuple[np.ndarray, np.ndarray]] | None:
    """Apply the overlay's ``links`` section to ``model`` (nominal inertias, in place) and return
    joint id → (lower, upper) of every listed body; None without a ``links`` section."""
    links = Section(str(path), doc, "", RobotConfigError).section("links", default={})
    assert links is not None
    if not links.data:
        return None
    if links.data.keys() & {robot.ee_joint}:
        raise _fail(path, "links", f"{robot.ee_joint} is the payload body θ_e: it is "
                    "identified online, not calibrated")
    per_body: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for joint in links.data:
        if not model.existJointName(str(joint)):
            raise _fail(path, f"links.{joint}", "no such joint in the model")
        entry = links.section(joint, ("nominal", "lower", "upper"))
        assert entry is not None
        vals = {k: entry.numbers(k, 10, "inertial parameters, Pinocchio order")
                for k in ("nominal", "lower", "upper")}
        if np.any(vals["lower"] > vals["nominal"]) or np.any(vals["nominal"] > vals["upper"]):
            raise _fail(path, f"links.{joint}", "nominal must lie inside [lower, upper]")
        if not is_physically_consistent(vals["nominal"]):
            raise _fail(path, f"links.{joint}.nominal", "not a physically consistent body")
        jid = model.getJointId(str(joint))
        model.inertias[jid] = pin.Inertia.FromDynamicParameters(vals["nominal"])
        per_body[jid] = (vals["lower"], vals["upper"])
    return per_body


def _theta_r_box(robot: Robot, model: pin.Model,
                 per_body: dict[int, tuple[np.ndarray, np.ndarray]]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """θ_r box in model order: listed bodies from the file, the others as the robot had them
    (or links_rel around their uncalibrated nominal)."""
    lo_parts, hi_parts = [], []
    for jid in range(1, model.njoints):
        if jid == robot.ee_joint_id:
            continue
        if jid in per_body:
            lo_b, hi_b = per_body[jid]
        elif robot.theta_r_box is not None:
            slot = _body_slot(robot, jid)
            lo_b = robot.theta_r_box[0][slot:slot + 10]
            hi_b = robot.theta_r_box[1][slot:slot + 10]
        else:
            th = model.inertias[jid].toDynamicParameters()
            rad = robot.links_rel_uncertainty * np.abs(th)
            lo_b, hi_b = th - rad, th + rad
        lo_parts.append(lo_b)
        hi_parts.append(hi_b)
    return np.concatenate(lo_parts), np.concatenate(hi_parts)


def _calibrated_config(path: Path, doc: dict[str, Any], robot: Robot) -> dict[str, Any]:
    """The robot's config with the overlay's ``identification`` keys merged in and the
    calibration recorded under ``calibration``."""
    config = copy.deepcopy(robot.config)
    ident = doc.get("identification") or {}
    if not isinstance(ident, dict):
        raise _fail(path, "identification", "expected a mapping of identification keys")
    ident = copy.deepcopy(ident)
    rows_file = ident.get("calibration_rows")
    if rows_file is not None:
        if not isinstance(rows_file, str) or not rows_file:
            raise _fail(path, "identification.calibration_rows", "expected a file name")
        # written next to calib.yaml: relative to the overlay, not to the robot file
        if not Path(rows_file).is_absolute():
            ident["calibration_rows"] = str(path.parent / rows_file)
    config.setdefault("identification", {}).update(ident)
    if "friction" in doc:
        # a calibrated friction box is what the identifier should rest on
        config["identification"].setdefault("friction", "config")
        if config["identification"].get("friction") == "wide":
            config["identification"]["friction"] = "config"
    config["calibration"] = {"file": str(path), "provenance": doc.get("provenance", {})}
    return config


def _body_slot(robot: Robot, jid: int) -> int:
    """Offset of body ``jid`` in the θ_r vector (bodies in model order, EE body skipped)."""
    k = 0
    for j in range(1, jid):
        if j != robot.ee_joint_id:
            k += 10
    return k
