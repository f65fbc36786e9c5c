"""One recording through ``sysid-identify`` (:mod:`sysid_ros._src.identification.identify_cli` parses the
options): read the bag, identify, write the result JSON, print the verdict; or the
identifiability floor alone. Exit codes: :data:`sysid_ros._src.identification.options.EXIT_CODES`.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.sample_screen import SkipLog
from sysid_ros._src.cli_messages import fail
from sysid_ros._src.identification.config import IdentificationConfig, load_identification_config
from sysid_ros._src.identification.diagnostics import summarize
from sysid_ros._src.identification.errors import IdentificationError, UnsupportedRobotError
from sysid_ros._src.identification.payload_identifier import IdentificationResult, identify
from sysid_ros._src.identification.options import EXIT_CODES
from sysid_ros._src.identification.transients import transient_note, transient_summary
from sysid_ros._src.model.errors import RobotConfigError, UnknownRobotError
from sysid_ros._src.model.box import PARAM_UNITS
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import Robot, load_robot

__all__ = ["identify_one"]


def _fail(msg: object) -> int:
    return fail("sysid-identify", msg)


def identify_one(args: argparse.Namespace) -> int:
    """One recording (or the floor alone): the JSON at ``args.out``; returns the exit code."""
    from sysid_ros._src.bagio import BagError

    clock = time.perf_counter()
    robot = None
    try:
        robot = load_robot(args.robot, args.config, args.calibration)
        config = load_identification_config(robot, **_config_overrides(args))
        if args.bag is None:
            return _floor_only(robot, config, args)
        reading = _read_recording(args, robot)
        t_read = time.perf_counter() - clock
        _print_data_summary(reading.series, robot, config)
        result = _identify_recording(args, robot, config, reading)
    except BagError as err:
        if robot is not None and robot.floating_base and args.imu_topic in str(err):
            return _fail(f"{err} (the floating-base robot {robot.name} needs the trunk IMU on "
                         f"{args.imu_topic}; --imu-topic remaps it)")
        return _fail(str(err))
    except (IdentificationError, UnknownRobotError, RobotConfigError) as err:
        return _fail(str(err))
    seconds = {"read": t_read, **result.seconds, "total": time.perf_counter() - clock}
    doc = _result_doc(args, robot, config, result, reading, seconds)
    if args.floor:
        about = result.box.nominal if result.box is not None and result.estimated else None
        try:
            doc["floor"] = _floor_doc(robot, config, about, args.floor_states, result)
        except IdentificationError as err:
            return _fail(str(err))
    try:
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    except OSError as err:
        return _fail(f"cannot write {args.out}: {err}")
    return _verdict(result, args.fail_on_warning)


def _config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The identification settings the command line gives (None: the robot file's)."""
    overrides = dict(torque_noise_abs=args.torque_noise_abs,
                     torque_noise_rel=args.torque_noise_rel,
                     torque_gain_rel=args.torque_gain_rel,
                     robot_uncertainty_rel=args.robot_uncertainty_rel, window=args.window,
                     stride=args.stride, friction=args.friction, window_s=args.window_s,
                     stride_s=args.stride_s, max_sample_gap=args.max_sample_gap,
                     coulomb_band=args.coulomb_band, prior=args.prior,
                     velocity_noise_abs=args.velocity_noise_abs,
                     velocity_noise_scope=args.velocity_noise_scope,
                     calibration_rows=None if args.calibration_rows is None
                     else str(Path(args.calibration_rows).resolve()))
    # A noise flag given alone replaces the whole noise model, not just its own half.
    if args.torque_noise_abs is not None and args.torque_noise_rel is None:
        overrides["torque_noise_rel"] = 0.0
    if args.torque_noise_rel is not None and args.torque_noise_abs is None:
        overrides["torque_noise_abs"] = 0.0
    return overrides


@dataclasses.dataclass
class _Reading:
    """What the recording gave: the joint states, the trunk IMU of a floating base, and the
    messages skipped in each."""

    series: Any
    skip: SkipLog
    imu: Any = None
    imu_skip: SkipLog | None = None


def _read_recording(args: argparse.Namespace, robot: Robot) -> _Reading:
    """Read ``args.bag`` (and the trunk IMU of a floating base); skipped messages are reported
    on stderr. Raises BagError, or IdentificationError for a recording without velocities."""
    from sysid_ros._src.bagio import read_imu, read_joint_states

    bar, done = progress.callback("reading", not args.no_progress, unit="msg")
    skip = SkipLog(refuse=args.strict)
    try:
        series = read_joint_states(args.bag, args.topic, robot.joint_names, progress=bar,
                                   require=("position", "effort"), skip=skip)
    finally:
        done()
    if skip.total:
        print(f"sysid-identify: {skip.describe()}", file=sys.stderr)
    if series.velocity is None:
        raise IdentificationError(
            f"{args.bag}: {args.topic} has no joint velocities; the identifier never assumes "
            "them zero — estimate them first (sysid-calibrate --state-estimate writes a bag "
            "with estimated velocities)")
    reading = _Reading(series, skip)
    if robot.floating_base:
        # the arm rows of a floating base need the trunk's motion (identification.base_motion)
        reading.imu_skip = SkipLog(refuse=args.strict)
        reading.imu = read_imu(args.bag, args.imu_topic, skip=reading.imu_skip)
        if reading.imu_skip.total:
            print(f"sysid-identify: {args.imu_topic}: {reading.imu_skip.describe()}",
                  file=sys.stderr)
    return reading


def _print_data_summary(series: Any, robot: Robot, config: IdentificationConfig) -> None:
    """The first stderr line: samples, joints, span, median rate, gaps."""
    if series.t.size >= 2 and np.all(np.diff(series.t) > 0):
        plan = config.sampling_plan(float(np.median(np.diff(series.t))))
        print("sysid-identify: data: "
              + summarize(series.t, robot.joint_names, plan).describe(), file=sys.stderr)


def _identify_recording(args: argparse.Namespace, robot: Robot, config: IdentificationConfig,
                        reading: _Reading) -> IdentificationResult:
    series = reading.series
    # read_joint_states raised unless every message has them (require=)
    assert series.position is not None and series.effort is not None
    bar, done = progress.callback("identifying", not args.no_progress, unit="sample")
    try:
        return identify(robot, config, series.t, series.position, series.velocity,
                        series.effort, args.method, imu=reading.imu, progress=bar)
    finally:
        done()


def _result_doc(args: argparse.Namespace, robot: Robot, config: IdentificationConfig,
                result: IdentificationResult, reading: _Reading,
                seconds: dict[str, float]) -> dict[str, Any]:
    """The result JSON: the box as the box writes itself (names, units, frame; no box when
    inconsistent), the data, the consistency and every assumption used."""
    t0 = float(reading.series.t[0])
    box = result.box.as_dict() if result.box is not None else {
        "names": list(PARAM_NAMES), "units": list(PARAM_UNITS), "frame": robot.ee_joint,
        "lower": None, "nominal": None, "upper": None}
    skipped_imu = {} if reading.imu_skip is None else {"skipped_imu": reading.imu_skip.as_dict()}
    return {
        "robot": robot.name,
        "body": box["frame"],
        "method": result.method,
        "parameter_names": box["names"],
        "parameter_units": box["units"],
        "status": result.status,
        "lower": box["lower"],
        "nominal": box["nominal"] if result.estimated else None,
        "upper": box["upper"],
        "box_is_prior": result.status == "insufficient_data",
        "reason": result.reason,
        "warnings": result.warnings,
        "prior": config.prior_name,
        "data": None if result.summary is None else
        result.summary.as_dict() | {"skipped": reading.skip.as_dict()} | skipped_imu,
        "consistency": None if result.consistency is None else
        result.consistency.as_dict(robot.joint_names, t0),
        "samples_used": result.samples_used,
        "windows_used": result.windows_used,
        "assumptions": config.assumptions(),
        "notes": result.notes,
        "transients": transient_summary(result.transients),
        "seconds": seconds,
        "bag": str(args.bag),
        "topic": args.topic,
        "imu_topic": args.imu_topic if robot.floating_base else None,
        "calibration": args.calibration,
    }


def _floor_doc(robot: Robot, config: IdentificationConfig, about: np.ndarray | None,
               states: int, result: IdentificationResult | None = None) -> dict[str, Any]:
    """The floor as JSON (and its line on stderr), about ``about`` when it lies in the prior,
    else about the nominal end-effector body."""
    from sysid_ros._src.identification.floor import identifiability_floor

    if robot.floating_base:
        raise UnsupportedRobotError(f"{robot.name}: --floor needs a fixed-base robot")
    where = "point estimate"
    if about is None or not config.prior.contains(about):
        about, where = np.clip(robot.theta_e(), config.prior.lower, config.prior.upper), \
            "nominal end-effector body"
    floor = identifiability_floor(robot, config, about, states=states)
    doc: dict[str, Any] = {
        "about": where, "lower": floor.box.lower.tolist(), "upper": floor.box.upper.tolist(),
        "width": floor.width.tolist(), "null_space_dim": floor.null_dim,
        "witness_residual": floor.residual, "witnesses_consistent": floor.consistent,
        "states": floor.states}
    line = f"floor of the stated boxes: m width {floor.width[0]:.3g} kg"
    if result is not None and result.lower is not None and result.upper is not None:
        width = result.upper - result.lower
        doc["share_of_box"] = (floor.width / np.where(width > 0, width, np.inf)).tolist()
        line += (f" of this box's {width[0]:.3g} kg (the rest is the excitation's and the "
                 "noise's)")
    print(f"sysid-identify: {line}", file=sys.stderr)
    return doc


def _floor_only(robot: Robot, config: IdentificationConfig, args: argparse.Namespace) -> int:
    doc = {"robot": robot.name, "body": robot.ee_joint, "parameter_names": list(PARAM_NAMES),
           "parameter_units": list(PARAM_UNITS), "prior": config.prior_name,
           "assumptions": config.assumptions(), "calibration": args.calibration,
           "floor": _floor_doc(robot, config, None, args.floor_states)}
    try:
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    except OSError as err:
        return _fail(f"cannot write {args.out}: {err}")
    return EXIT_CODES["ok"]


def _verdict(result: IdentificationResult, fail_on_warning: bool) -> int:
    """Print the last line and return the exit code."""
    if result.transients:
        print(f"sysid-identify: {transient_note(result.transients)}", file=sys.stderr)
    if result.status == "inconsistent":
        print(f"sysid-identify: inconsistent: {result.reason}", file=sys.stderr)
        return EXIT_CODES["inconsistent"]
    if result.status == "insufficient_data":
        print(f"sysid-identify: insufficient_data: {result.reason}", file=sys.stderr)
        return EXIT_CODES["insufficient_data"]
    lo, hi = result.lower, result.upper
    assert lo is not None and hi is not None        # status ok: the box is always reported
    head = f"ok: m in [{lo[0]:.3f}, {hi[0]:.3f}] kg"
    if result.consistency is not None and np.isfinite(result.consistency.noise_scale):
        head += f", consistency margin {result.consistency.margin:.2f}"
    if result.warnings:
        print(f"sysid-identify: {head}, WARNINGS ({len(result.warnings)}): "
              + " | ".join(result.warnings), file=sys.stderr)
        return EXIT_CODES["ok_with_warnings"] if fail_on_warning else EXIT_CODES["ok"]
    print(f"sysid-identify: {head}", file=sys.stderr)
    return EXIT_CODES["ok"]
