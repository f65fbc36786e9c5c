"""``sysid-identify``: a rosbag2 JointState recording → sound box on θ_e as JSON.

A floating-base robot (``--robot b1_z1``) also needs the trunk IMU (``--imu-topic``, default
``/imu``): the arm joints' rows are formed with the trunk's angular velocity and specific force
(docs/theory/identification.md#what-the-ok-box-rests-on); a bag without that topic exits 2 naming it.

The first line on stderr summarises the data (samples, joints, span, rate, gaps); the last line
is the verdict. Exit codes:

- 0 ``ok`` (a box is written; warnings, if any, are in the last line and the JSON);
- 2 bad input, with a one-line reason (missing topic, wrong joints, NaN, non-monotonic stamps,
  no velocities, empty bag, corrupt file, bad option or config, unreadable calibration);
- 3 ``inconsistent``: the data contradict the stated bounds; no box, and the diagnosis (the
  noise scale the data need, per joint, and the worst time spans) in the last line and JSON;
- 4 ``insufficient_data``: no momentum window could be formed, with the reason (e.g. "every
  step is 10.0 ms apart > max_sample_gap 5.0 ms"); the JSON carries the prior box, marked so;
- 5 ``ok`` with warnings when ``--fail-on-warning`` is given (a box pinned to the prior's face,
  a least-squares estimate outside the box).

``--floor`` adds the identifiability floor of the stated boxes (:mod:`.floor`): the interval of
each θ_e coordinate that noise-free data from every motion would still leave, because the link
and friction boxes let other robots produce the same torques — the part of the box no excitation
can remove. Taken about the point estimate (or the nominal EE body). Without ``--bag`` only the
floor is computed (exit 0): how well the payload can be known at all before recording.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros import progress
from sysid_ros.batch.cli import add_batch_arguments
from sysid_ros.sample_screen import SkipLog
from sysid_ros.cli_messages import fail
from sysid_ros.identification.config import FRICTION_MODES, IdentificationConfig, \
    load_identification_config
from sysid_ros.identification.diagnostics import summarize
from sysid_ros.identification.errors import IdentificationError, UnsupportedRobotError
from sysid_ros.identification.identifier import METHODS, IdentificationResult, identify
from sysid_ros.identification.settings import OVERRIDE_SETTINGS
from sysid_ros.identification.transients import transient_note, transient_summary
from sysid_ros.model.errors import RobotConfigError, UnknownRobotError
from sysid_ros.model.box import PARAM_UNITS
from sysid_ros.model.parameters import PARAM_NAMES
from sysid_ros.model.robots import Robot, load_robot
from sysid_ros.param_table import add_options

__all__ = ["main", "build_parser", "run_single", "EXIT_CODES"]

EXIT_CODES = {"ok": 0, "bad_input": 2, "inconsistent": 3, "insufficient_data": 4,
              "ok_with_warnings": 5}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sysid-identify",
        description="Sound interval bounds on the payload's inertial parameters from a rosbag2 "
                    "JointState recording.",
        epilog="exit codes: 0 ok, 2 bad input, 3 inconsistent, 4 insufficient_data, "
               "5 ok with warnings (--fail-on-warning only); batch: 0 all ok, 2 nothing run, "
               "6 some item not ok (DIR/summary.md)")
    p.add_argument("--robot", default="gen3", help="robot registry name (default gen3)")
    # one --bag takes several values (a batch); a repeated --bag replaces the earlier one
    p.add_argument("--bag", nargs="+", metavar="PATH|GLOB",
                   help="rosbag2 directory or .mcap/.db3 file (required unless --floor); "
                        "several or globs with --out-dir")
    p.add_argument("--out", help="result JSON path (one recording)")
    add_batch_arguments(p, "recording")
    p.add_argument("--topic", "--joint-states-topic", dest="topic", default="/joint_states",
                   help="sensor_msgs/JointState topic (default /joint_states)")
    p.add_argument("--imu-topic", default="/imu",
                   help="sensor_msgs/Imu topic of the trunk IMU, read for floating-base robots "
                        "(b1_z1) only (default /imu)")
    # sensitivity (the seed paper's bound, no guarantee) is a comparison for the benchmarks
    # (docs/guide/benchmarks.md): accepted, not offered
    p.add_argument("--method", choices=METHODS, default="lp",
                   metavar="{" + ",".join(m for m in METHODS if m != "sensitivity") + "}")
    p.add_argument("--calibration", help="sysid-calibrate result (calib.yaml) to rest on")
    p.add_argument("--calibration-rows", metavar="FILE",
                   help="sysid-calibrate --export-rows file: the calibration's rows as "
                        "constraints on the shared link/friction unknowns (turns "
                        "theta_r_unknowns on; same robot, offsets unchanged since calibrating)")
    # the identification overrides, defined once with the identifier node's parameters
    add_options(p, OVERRIDE_SETTINGS, [o.name for o in OVERRIDE_SETTINGS])
    p.add_argument("--torque-gain-rel",
                   help="bound g on the torque reading's constant gain error: true torque = "
                        "k*tau_meas, k in 1 +- g (one number or one per joint)")
    p.add_argument("--friction", choices=FRICTION_MODES,
                   help="friction box: wide (uncalibrated), config (robot file / calibration), "
                        "none (link-side torques)")
    p.add_argument("--coulomb-band", type=float, help="rad/s of set-valued Coulomb friction")
    p.add_argument("--config", help="robot facts file to use instead of the registry's")
    p.add_argument("--fail-on-warning", action="store_true",
                   help="exit 5 when the box is ok but carries warnings")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--strict", action="store_true",
                   help="refuse the bag at its first bad message (NaN, zero/duplicate/backward/"
                        "far-future stamp, missing joint) instead of skipping and counting such messages "
                        "(JSON data.skipped)")
    p.add_argument("--floor", action="store_true",
                   help="also compute the identifiability floor of the stated link/friction "
                        "boxes (what no excitation can narrow); alone, without --bag")
    p.add_argument("--floor-states", type=int, default=300, metavar="N",
                   help="--floor: random states whose noise-free rows are stacked (default 300)")
    return p


def _fail(msg: object) -> int:
    return fail("sysid-identify", msg)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.bag is None and not args.floor:
        return _fail("--bag is required (only --floor runs without a recording)")
    if args.floor_states < 1:
        return _fail(f"--floor-states must be >= 1, got {args.floor_states}")
    if args.out_dir is not None:
        from sysid_ros.identification.batch import run_batch

        return run_batch(args, run_single)
    if args.out is None:
        return _fail("--out is required (or --out-dir for a batch of recordings)")
    if args.bag is not None and len(args.bag) > 1:
        return _fail(f"{len(args.bag)} recordings given: a batch writes one result per "
                     "recording, give --out-dir DIR instead of --out")
    if args.jobs != 1 or args.ray_address is not None:
        return _fail("--jobs and --ray-address run a batch: give --out-dir DIR")
    args.bag = None if args.bag is None else args.bag[0]
    return run_single(args)


def run_single(args: argparse.Namespace) -> int:
    """One recording (or the floor alone): the JSON at ``args.out``; returns the exit code."""
    from sysid_ros.bagio import BagError

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
    from sysid_ros.bagio import read_imu, read_joint_states

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
    from sysid_ros.identification.floor import identifiability_floor

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


if __name__ == "__main__":
    raise SystemExit(main())
