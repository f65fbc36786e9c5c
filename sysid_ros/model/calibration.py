"""Calibration overlay: a ``sysid-calibrate`` result (``calib.yaml``) applied to the robot facts.

The file is an overlay of ``config/<robot>.yaml``; ``friction`` and ``identification`` (with
``torque_noise_abs``, ``window_s``, ``stride_s``) are required, the rest optional::

    sysid_calibration: 1                 # format version
    robot: gen3                          # must match the robot it is applied to
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

Applying it replaces the friction model (nominal and box, with its extra terms if any), sets
the listed bodies' inertial parameters to their calibrated nominal in the Pinocchio model (so
every regressor, controller and planner uses them) with their box as the θ_r box (unlisted
bodies keep ``links_rel`` around their nominal), and merges ``identification`` keys.
Everything is validated here, naming the key, so a malformed file fails at load time rather
than as a shape error later.
"""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from sysid_ros.model.errors import RobotConfigError
from sysid_ros.model.files import read_yaml_mapping
from sysid_ros.model.friction_terms import FrictionTerms
from sysid_ros.model.parameters import is_physically_consistent

if TYPE_CHECKING:  # robots.py imports this module at run time, never the other way
    from sysid_ros.model.robots import Robot

__all__ = ["FORMAT_VERSION", "apply_calibration", "read_calibration"]

FORMAT_VERSION = 1
_FRICTION_NAMES = ("Fc", "Fv", "Ia", "beta")


def _fail(path: Path, key: str, why: str) -> RobotConfigError:
    return RobotConfigError(f"{path}: calibration {key}: {why}")


def read_calibration(path: str | Path) -> dict[str, Any]:
    """The parsed calibration file (a mapping with ``sysid_calibration`` = format version)."""
    path = Path(path)
    doc = read_yaml_mapping(path, "calibration")
    if doc.get("sysid_calibration") != FORMAT_VERSION:
        raise _fail(path, "sysid_calibration",
                    f"expected format version {FORMAT_VERSION} (is this a sysid-calibrate file?)")
    return doc


def _numbers(path: Path, key: str, raw: Any, n: int) -> np.ndarray:
    """``raw`` as n finite numbers, or a RobotConfigError naming ``key``."""
    ok = isinstance(raw, list) and len(raw) == n and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw)
    arr = np.asarray(raw, float) if ok else np.empty(0)
    if not ok or not np.all(np.isfinite(arr)):
        raise _fail(path, key, f"expected {n} finite numbers")
    return arr


def _friction_table(path: Path, sec: dict[str, Any], key: str, nj: int) -> np.ndarray:
    table = sec.get(key)
    if not isinstance(table, dict):
        raise _fail(path, f"friction.{key}", "expected a mapping {Fc, Fv, Ia, beta}")
    cols = []
    for name in _FRICTION_NAMES:
        cols.append(_numbers(path, f"friction.{key}.{name}", table.get(name), nj))
    return np.stack(cols, axis=1)


#: What every calibration carries: without them a file would silently leave the robot
#: uncalibrated (the friction box) or the identifier without its measured bound and windows.
REQUIRED = {"friction": ("nominal", "lower", "upper"),
            "identification": ("torque_noise_abs", "window_s", "stride_s")}


def _require_sections(path: Path, doc: dict[str, Any]) -> None:
    """A file cut short (a section or key missing) is refused, naming what is missing."""
    for section, keys in REQUIRED.items():
        sec = doc.get(section)
        if not isinstance(sec, dict):
            raise _fail(path, section, "missing: a calibration file carries the sections "
                        f"{sorted(REQUIRED)} (a file cut short? re-run sysid-calibrate)")
        missing = [k for k in keys if k not in sec]
        if missing:
            raise _fail(path, f"{section}.{missing[0]}", f"missing (the section needs {list(keys)}; "
                        "a file cut short? re-run sysid-calibrate)")


def apply_calibration(robot: Robot, calibration: str | Path | dict[str, Any]) -> Robot:
    """A copy of ``robot`` (a :class:`~sysid_ros.model.robots.Robot`) with the calibration
    applied. ``calibration``: a file path or an already parsed mapping."""
    if isinstance(calibration, dict):
        doc, path = calibration, Path("<calibration>")
    else:
        path = Path(calibration)
        doc = read_calibration(path)
    if doc.get("robot") not in (None, robot.name):
        raise _fail(path, "robot", f"made for {doc.get('robot')!r}, applied to {robot.name!r}")
    _require_sections(path, doc)
    nj = robot.nj
    friction = robot.friction
    if "friction" in doc:
        sec = doc["friction"]
        if not isinstance(sec, dict):
            raise _fail(path, "friction", "expected a mapping with nominal/lower/upper")
        nom, lo, hi = (_friction_table(path, sec, k, nj) for k in ("nominal", "lower", "upper"))
        if np.any(lo > nom) or np.any(nom > hi):
            raise _fail(path, "friction", "nominal must lie inside [lower, upper]")
        terms = None
        if sec.get("terms"):
            try:
                terms = FrictionTerms.from_mapping(sec["terms"], nj)
            except ValueError as err:
                raise _fail(path, "friction.terms", str(err)) from None
        friction = dataclasses.replace(friction, nominal=nom, lower=lo, upper=hi, terms=terms)

    model = robot.model.copy()
    theta_r_box = robot.theta_r_box
    links = doc.get("links") or {}
    if not isinstance(links, dict):
        raise _fail(path, "links", "expected a mapping joint name -> {nominal, lower, upper}")
    if links:
        if links.keys() & {robot.ee_joint}:
            raise _fail(path, "links", f"{robot.ee_joint} is the payload body θ_e: it is "
                        "identified online, not calibrated")
        per_body: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for joint, entry in links.items():
            if not model.existJointName(str(joint)):
                raise _fail(path, f"links.{joint}", "no such joint in the model")
            if not isinstance(entry, dict):
                raise _fail(path, f"links.{joint}", "expected a mapping {nominal, lower, upper}")
            vals = {k: _numbers(path, f"links.{joint}.{k}", entry.get(k), 10)
                    for k in ("nominal", "lower", "upper")}
            if np.any(vals["lower"] > vals["nominal"]) or np.any(vals["nominal"] > vals["upper"]):
                raise _fail(path, f"links.{joint}", "nominal must lie inside [lower, upper]")
            if not is_physically_consistent(vals["nominal"]):
                raise _fail(path, f"links.{joint}.nominal", "not a physically consistent body")
            jid = model.getJointId(str(joint))
            model.inertias[jid] = pin.Inertia.FromDynamicParameters(vals["nominal"])
            per_body[jid] = (vals["lower"], vals["upper"])
        # θ_r box in model order: listed bodies from the file, the others links_rel around
        # their (uncalibrated) nominal.
        lo_parts, hi_parts = [], []
        for jid in range(1, model.njoints):
            if jid == robot.ee_joint_id:
                continue
            if jid in per_body:
                lo_b, hi_b = per_body[jid]
            elif theta_r_box is not None:
                slot = _body_slot(robot, jid)
                lo_b, hi_b = theta_r_box[0][slot:slot + 10], theta_r_box[1][slot:slot + 10]
            else:
                th = model.inertias[jid].toDynamicParameters()
                rad = robot.links_rel_uncertainty * np.abs(th)
                lo_b, hi_b = th - rad, th + rad
            lo_parts.append(lo_b)
            hi_parts.append(hi_b)
        theta_r_box = (np.concatenate(lo_parts), np.concatenate(hi_parts))

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
    return dataclasses.replace(robot, model=model, friction=friction, config=config,
                               theta_r_box=theta_r_box,
                               sources=(*robot.sources, str(path)))


def _body_slot(robot: Robot, jid: int) -> int:
    """Offset of body ``jid`` in the θ_r vector (bodies in model order, EE body skipped)."""
    k = 0
    for j in range(1, jid):
        if j != robot.ee_joint_id:
            k += 10
    return k
