"""``sysid-calibrate``: calibration bags (no payload) → calib.yaml for the payload identifier.

    sysid-calibrate --robot gen3 --bag CAL [--bag CAL2 ...] --out calib.yaml
                    [--validate BAG ...] [--json PATH] [--report DIR] [--config FILE]
                    [--friction-law linear|stribeck] [--margin 1.25] [--state-estimate [rts]]
    sysid-calibrate --robot gen3 --bag LOG --state-estimate --write-bag LOG_WITH_VELOCITIES
    sysid-calibrate --robot z1 --bag CAL --payload-bag LOADED --payload-prior dumbbell_1kg \
                    --torque-gain-rel 0.1 --out calib.yaml   # measures the torque reading's gain

The first stderr line summarises the data, the last one is the verdict. Exit codes:

- 0 calibrated (file written);
- 2 bad input, with a one-line reason (bag, joints, option, robot file);
- 3 the calibration data are inconsistent even with the prior boxes (the reason names the
  joints and the noise bound they would need); nothing written;
- 4 calibrated, but a ``--validate`` bag needs a larger noise bound than the one written (the
  file is written and its provenance says so: do not rely on it for data like that bag).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sysid_ros._src.bagio import write_joint_state_arrays
from sysid_ros._src import progress
from sysid_ros._src.batch.batch_mode import add_batch_arguments
from sysid_ros._src.cli_messages import fail, say
from sysid_ros._src.sample_screen import SkipLog
from sysid_ros._src.calibration.calibrate import FRICTION_LAWS, TORQUE_LAG_MODES, CalibrationOptions, \
    calibrate, calibration_stages
from sysid_ros._src.calibration.data import Recording, read_recording
from sysid_ros._src.calibration.errors import CalibrationInconsistentError, CalibrationInputError
from sysid_ros._src.calibration.map_estimate import ROBUST_LOSSES
from sysid_ros._src.calibration.prior import FRICTION_PRIORS
from sysid_ros._src.calibration.state import ESTIMATORS, encoder_sigma, estimate_state
from sysid_ros._src.identification.velocity_estimate import slope_source

__all__ = ["main", "build_parser", "run_single", "EXIT_CODES", "write_recording_bag",
           "with_estimated_state"]

EXIT_CODES = {"ok": 0, "bad_input": 2, "inconsistent": 3, "validation_inconsistent": 4}
PROG = "sysid-calibrate"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Measure the friction/armature/offset boxes and the torque-error bound the "
                    "payload identifier rests on, from bags of the robot moving without payload.",
        epilog="exit codes: 0 ok, 2 bad input, 3 calibration data inconsistent with the prior, "
               "4 a validation bag needs a larger bound than written; batch: 0 all ok, 2 nothing "
               "run, 6 some robot not ok (DIR/summary.md)")
    _add_recording_arguments(p)
    _add_fit_arguments(p)
    _add_payload_arguments(p)
    _add_timing_and_reading_arguments(p)
    add_batch_arguments(p, "robot")
    return p


def _add_recording_arguments(p: argparse.ArgumentParser) -> None:
    """The robot, its recordings and what is written."""
    p.add_argument("--robot", default="gen3", help="robot registry name (default gen3)")
    p.add_argument("--config", help="robot facts file to use instead of the registry's")
    p.add_argument("--bag", action="append",
                   help="calibration bag (repeat for several)")
    p.add_argument("--manifest", metavar="FILE",
                   help="batch (with --out-dir): YAML of robot names and their recordings")
    p.add_argument("--topic", default="/joint_states")
    p.add_argument("--out", help="calib.yaml to write")
    p.add_argument("--validate", action="append", default=[], metavar="BAG",
                   help="bag not used for fitting: consistency and torque RMS (repeatable)")
    p.add_argument("--json", help="summary JSON (friction boxes, noise, validation)")
    p.add_argument("--export-rows", action="store_true",
                   help="also write the calibration rows (OUT with suffix .rows.npz) and point "
                        "the overlay at them: the identifier then uses them as constraints on "
                        "the shared link and friction unknowns (narrower payload boxes; "
                        "theta_r_unknowns on; docs/guide/calibrate.md#limits-and-open-questions)")
    p.add_argument("--report", metavar="DIR", help="markdown report with plots")


def _add_fit_arguments(p: argparse.ArgumentParser) -> None:
    """The friction law, the noise bound's margin, the windows and the prior boxes."""
    p.add_argument("--friction-law", choices=FRICTION_LAWS, default="linear",
                   help="linear (boxes and nominal) or stribeck (adds a smooth fit for "
                        "prediction; the boxes stay linear)")
    p.add_argument("--margin", type=float, default=1.25,
                   help="noise bound = margin x smallest consistent bound + floor")
    p.add_argument("--noise-floor", type=float, default=0.02, help="N*m added to every bound")
    p.add_argument("--noise-speed", action="store_true",
                   help="a speed-dependent bound torque_noise_abs + torque_noise_speed x the "
                        "window's mean |speed| instead of a constant one")
    p.add_argument("--window-s", type=float, default=0.4,
                   help="momentum window (s), written for the identifier (default 0.4)")
    p.add_argument("--stride-s", type=float, default=0.1,
                   help="time between window starts (s), written for the identifier "
                        "(default 0.1)")
    p.add_argument("--coulomb-band", type=float, help="rad/s of set-valued Coulomb friction")
    p.add_argument("--link-rel", type=float,
                   help="prior half-width of body parameters, relative (default: the robot "
                        "file's model_uncertainty.links_rel)")
    p.add_argument("--friction-prior", choices=FRICTION_PRIORS, default="wide",
                   help="prior friction box: wide (uncalibrated robot) or config (catalogue)")
    p.add_argument("--no-link-boxes", action="store_true",
                   help="skip the body-parameter LPs (the prior box stays)")
    p.add_argument("--energy", action="store_true", help="energy rows in the point estimate")
    p.add_argument("--robust", choices=ROBUST_LOSSES, default="huber", help="IRLS loss")


def _add_payload_arguments(p: argparse.ArgumentParser) -> None:
    """A known payload, the torque reading's gain and the end-effector body's prior."""
    p.add_argument("--payload-theta", metavar="V1,...,V10",
                   help="a known payload's 10 parameters (Pinocchio order, end-effector frame): "
                        "in the --payload-bag bags, or in every bag without one")
    p.add_argument("--payload-bag", action="append", default=[], metavar="BAG",
                   help="a bag recorded with the known payload (--payload-theta or "
                        "--payload-prior); with the --bag bags (no payload) they measure the "
                        "torque reading's gain (--torque-gain-rel)")
    p.add_argument("--payload-prior", metavar="NAME|FILE",
                   help="the --payload-bag payload as a prior of the robot file (its box holds "
                        "the end-effector body with the payload), e.g. dumbbell_1kg")
    p.add_argument("--torque-gain-rel", metavar="G|G1,...",
                   help="bound on the torque reading's gain error |k - 1| (one value or one "
                        "per joint; default: the robot file's identification.torque_gain_rel)")
    p.add_argument("--prior", metavar="NAME|FILE",
                   help="the end-effector body's box is this prior (a name of the robot file's "
                        "priors or a YAML file, as sysid-identify --prior): for a tool the URDF "
                        "does not describe (default: the URDF's body, links-rel box)")


def _add_timing_and_reading_arguments(p: argparse.ArgumentParser) -> None:
    """Stream lags, excluded windows and how the bags are read."""
    p.add_argument("--torque-lag", choices=TORQUE_LAG_MODES, default="estimate",
                   help="estimate the torque stream's lag behind the states per joint, with "
                        "its uncertainty, and compensate it (default), or take the streams as "
                        "aligned (none)")
    p.add_argument("--velocity-lag", default="estimate", metavar="estimate|none|L1,...",
                   help="the measured velocity's lag behind the positions (a driver's velocity "
                        "filter), compensated like the torque's: estimate (from q vs dq; "
                        "default), none, or the known lag per joint (s)")
    p.add_argument("--exclude-speed", default="auto", metavar="auto|none|V1,...",
                   help="drop a joint's rows in windows where its speed reaches its drive's "
                        "clamp: auto (clamp plateaus found in the data, rows dropped from "
                        "0.9 x the clamp), none, or one speed per joint (rad/s; inf: no rule)")
    p.add_argument("--exclude-after-start", type=float, default=0.2, metavar="S",
                   help="drop the rows of windows starting within S seconds of a run's start "
                        "(recording start, gap); default 0.2")
    p.add_argument("--strict", action="store_true",
                   help="refuse a bag at its first bad message (NaN, zero/duplicate/backward/"
                        "far-future stamp, missing joint) instead of skipping and counting such messages")
    p.add_argument("--state-estimate", nargs="?", const="rts", choices=ESTIMATORS,
                   help="estimate velocities from positions (and measured velocities, if any) "
                        "before everything else; the identifier must then get the same "
                        "estimator's velocities (--write-bag)")
    p.add_argument("--write-bag", metavar="OUT",
                   help="with --state-estimate and one --bag: write that bag with estimated "
                        "velocities (for sysid-identify)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")


def _fail(msg: object) -> int:
    return fail(PROG, msg, EXIT_CODES["bad_input"])


def _say(msg: str) -> None:
    say(PROG, msg)


def with_estimated_state(rec: Recording, method: str, sigma_q, half_width_s: float = 0.02
                         ) -> Recording:
    """``rec`` with velocities from the state estimator ``method`` (``slope``: the identifier's
    own, over ±``half_width_s``, from the positions only)."""
    est = estimate_state(rec.t, rec.q, rec.dq, method, sigma_q=sigma_q,
                         half_width_s=half_width_s)
    if method == "slope":
        return rec.with_velocity(est.dq, slope_source(half_width_s))
    source = f"state estimate ({method}" + (", positions + measured velocities)"
                                            if rec.dq is not None else ", positions only)")
    return rec.with_velocity(est.dq, source)


def write_recording_bag(path: str | Path, rec: Recording, robot) -> Path:
    """Write ``rec`` as a JointState bag (its velocities, e.g. estimated ones)."""
    if Path(path).exists():
        raise CalibrationInputError(f"--write-bag {path}: already exists")
    return write_joint_state_arrays(path, rec.t, rec.q, rec.dq, rec.tau, robot.joint_names)


def _payload(text: str | None) -> np.ndarray | None:
    if text is None:
        return None
    try:
        vals = np.array([float(v) for v in text.replace(",", " ").split()])
    except ValueError:
        raise CalibrationInputError(f"--payload-theta {text!r}: not numbers") from None
    if vals.shape != (10,):
        raise CalibrationInputError(f"--payload-theta: expected 10 numbers, got {vals.size}")
    return vals


def _options(args) -> CalibrationOptions:
    return CalibrationOptions(
        window_s=args.window_s, stride_s=args.stride_s, coulomb_band=args.coulomb_band,
        link_rel=args.link_rel, friction_prior=args.friction_prior, margin=args.margin,
        noise_floor=args.noise_floor, link_boxes=not args.no_link_boxes,
        friction_law=args.friction_law, energy=args.energy, robust=args.robust,
        payload_theta=None if args.payload_bag else _payload(args.payload_theta),
        ee_prior=args.prior,
        torque_gain_rel=_gain_rel(args.torque_gain_rel),
        torque_lag=args.torque_lag,
        velocity_lag=_per_joint_or(args.velocity_lag, ("estimate", "none"), "--velocity-lag", "s"),
        exclude_speed=_per_joint_or(args.exclude_speed, ("auto", "none"), "--exclude-speed",
                                    "rad/s; inf: no rule"),
        exclude_after_start_s=args.exclude_after_start, noise_speed=args.noise_speed)


def _gain_rel(text: str | None) -> float | np.ndarray | None:
    if text is None:
        return None
    try:
        vals = np.array([float(v) for v in text.replace(",", " ").split()])
        return float(vals[0]) if vals.size == 1 else vals
    except ValueError:
        raise CalibrationInputError(f"--torque-gain-rel {text!r}: expected one fraction or one "
                                    "per joint") from None


def _payload_recordings(args: argparse.Namespace, robot, skips: dict[str, SkipLog]
                        ) -> list[Recording]:
    """The --payload-bag bags, each carrying the payload --payload-theta or --payload-prior."""
    from sysid_ros._src.calibration.prior import named_payload
    from sysid_ros._src.identification.errors import IdentificationError

    if args.payload_prior is not None and not args.payload_bag:
        raise CalibrationInputError("--payload-prior names the payload of --payload-bag bags; "
                                    "give them")
    if not args.payload_bag:
        return []
    if (args.payload_theta is None) == (args.payload_prior is None):
        raise CalibrationInputError("--payload-bag: give the payload with exactly one of "
                                    "--payload-theta and --payload-prior")
    theta: np.ndarray | None
    radius: np.ndarray | None = None
    if args.payload_prior is not None:
        try:
            theta, radius = named_payload(robot, args.payload_prior)
        except IdentificationError as err:
            raise CalibrationInputError(f"--payload-prior: {err}") from err
    else:
        theta = _payload(args.payload_theta)
    out = []
    for b in args.payload_bag:
        rec = _read(b, robot, args, skips[b])
        out.append(dataclasses.replace(rec, payload_theta=theta, payload_radius=radius))
    return out


def _per_joint_or(text: str, words: tuple[str, ...], flag: str, unit: str
                  ) -> str | np.ndarray:
    """One of ``words``, or one number per joint (comma or space separated)."""
    if text in words:
        return text
    try:
        return np.array([float(v) for v in text.replace(",", " ").split()])
    except ValueError:
        raise CalibrationInputError(f"{flag} {text!r}: expected {', '.join(words)} or one "
                                    f"value per joint ({unit})") from None


def _describe(recs: list[Recording]) -> str:
    parts = []
    for r in recs:
        vel = "velocities" if r.dq is not None else "NO velocities"
        steps = np.diff(r.t)
        gaps = steps > 2.5 * np.median(steps)
        gap = f", {int(gaps.sum())} gaps (longest {steps.max():.3g} s)" if gaps.any() else ""
        parts.append(f"{Path(r.name).name}: {len(r)} samples, {r.duration:.1f} s, "
                     f"{r.rate_hz:.0f} Hz, {vel}{gap}")
    return "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.manifest is not None or args.out_dir is not None:
        from sysid_ros._src.calibration.batch import run_batch

        return run_batch(args, run_single)
    if not args.bag:
        return _fail("--bag is required (or --manifest FILE --out-dir DIR for a batch of "
                     "robots)")
    if args.jobs != 1 or args.ray_address is not None:
        return _fail("--jobs and --ray-address run a batch: give --manifest FILE --out-dir DIR")
    return run_single(args)


def _read(bag: str, robot, args: argparse.Namespace, skip: SkipLog | None) -> Recording:
    """One recording, with a bar over its messages when it is long."""
    bar, done = progress.callback(f"reading {Path(bag).name}", not args.no_progress,
                                  unit="msg")
    try:
        return read_recording(bag, robot, args.topic, skip, progress=bar)
    finally:
        done()


def run_single(args: argparse.Namespace) -> int:
    """One calibration from ``args`` (the parsed command line); returns the exit code."""
    from sysid_ros._src.model.errors import RobotConfigError, UnknownRobotError
    from sysid_ros._src.model.robots import load_robot

    clock = time.perf_counter()
    if args.out is None and args.write_bag is None:
        return _fail("nothing to do: give --out calib.yaml (and/or --state-estimate "
                     "--write-bag OUT)")
    if args.write_bag is not None and (args.state_estimate is None or len(args.bag) != 1):
        return _fail("--write-bag needs --state-estimate and exactly one --bag")
    try:
        robot = load_robot(args.robot, args.config)
        options = _options(args)
        options.check()
        skips = {b: SkipLog(refuse=args.strict)
                 for b in [*args.bag, *args.payload_bag, *args.validate]}
        recs = [_read(b, robot, args, skips[b]) for b in args.bag]
        recs += _payload_recordings(args, robot, skips)
        vals = [_read(b, robot, args, skips[b]) for b in args.validate]
        _say("data: " + _describe(recs))
        for bag, log in skips.items():
            if log is not None and log.total:
                _say(f"{bag}: {log.describe()}")
        args.skipped = {b: log.as_dict() for b, log in skips.items() if log is not None}
        if args.state_estimate is not None:
            sigma_q = encoder_sigma(robot)
            # slope: the half-width the identifier's estimate uses (the robot file's)
            half = float(((robot.config.get("identification") or {}).get(
                "differenced_velocity") or {}).get("half_width_s", 0.02))
            recs = [with_estimated_state(r, args.state_estimate, sigma_q, half) for r in recs]
            vals = [with_estimated_state(r, args.state_estimate, sigma_q, half) for r in vals]
            _say(f"velocities from the '{args.state_estimate}' state estimator")
            if args.write_bag is not None:
                out = write_recording_bag(args.write_bag, recs[0], robot)
                _say(f"wrote {out} (estimated velocities)")
                if args.out is None:
                    return EXIT_CODES["ok"]
        missing = [r.name for r in recs + vals if r.dq is None]
        if missing:
            return _fail(f"{missing[0]}: no joint velocities; add --state-estimate (velocities "
                         "are never assumed 0)")
        with progress.stages(len(calibration_stages(options)), "calibrating",
                             not args.no_progress) as enter:
            result = calibrate(robot, recs, options, stage=enter)
    except (CalibrationInputError, RobotConfigError, UnknownRobotError) as err:
        return _fail(str(err))
    except CalibrationInconsistentError as err:
        _say(f"inconsistent: {err}")
        return EXIT_CODES["inconsistent"]
    return _finish(args, robot, result, vals, clock)


def _finish(args, robot, result, vals, clock) -> int:
    from sysid_ros._src.calibration.document import calibration_document, summary_json, \
        write_calibration
    from sysid_ros._src.calibration.validate import validate

    validation = None
    if vals:
        validation = validate(result, vals, sigma_q=encoder_sigma(robot))
        _say(validation.describe())
    doc = calibration_document(result, validation, bags=list(args.bag))
    try:
        if args.export_rows and args.out:
            from sysid_ros._src.calibration.calibrate import exported_rows

            rows_path = Path(args.out).with_suffix(".rows.npz")
            exported_rows(result).save(rows_path)
            # relative to the overlay, so calib.yaml and its rows move together
            doc["identification"]["calibration_rows"] = rows_path.name
            doc["identification"]["theta_r_unknowns"] = True
        write_calibration(args.out, doc)
        if args.json:
            summary = summary_json(result, validation)
            summary["skipped"] = args.skipped
            summary["seconds"]["total"] = time.perf_counter() - clock
            Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
        if args.report:
            from sysid_ros._src.calibration.report import write_report

            path = write_report(args.report, result, validation)
            _say(f"report: {path}")
    except OSError as err:
        return _fail(f"cannot write output: {err}")
    noise = ", ".join(f"{v:.3f}" for v in result.noise)
    speed = ("" if result.noise_speed is None else " + [" + ", ".join(
        f"{v:.3f}" for v in result.noise_speed) + "] N*m/(rad/s) x mean |speed|")
    head = (f"ok: wrote {args.out}; torque_noise_abs [{noise}] N*m{speed} for "
            f"{result.config.window_s} s windows; {time.perf_counter() - clock:.1f} s")
    if validation is not None and not validation.consistent:
        bad = [f"{robot.joint_names[j]} x{s:.2f}" for j, s in enumerate(validation.noise_scale)
               if s > 1.0]
        _say(head + f"; VALIDATION INCONSISTENT: the validation data need {validation.scale:.2f}"
             " x the written bounds" + (" (" + ", ".join(bad) + ")" if bad else "")
             + " — the bounds do not cover those data")
        return EXIT_CODES["validation_inconsistent"]
    _say(head)
    return EXIT_CODES["ok"]


if __name__ == "__main__":
    raise SystemExit(main())
