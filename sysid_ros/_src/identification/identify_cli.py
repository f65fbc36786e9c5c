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
from collections.abc import Sequence

from sysid_ros._src.batch.batch_mode import add_batch_arguments
from sysid_ros._src.cli_messages import fail
from sysid_ros._src.identification.options import EXIT_CODES, FRICTION_MODES, METHODS
from sysid_ros._src.identification.settings import OVERRIDE_SETTINGS
from sysid_ros._src.param_table import add_options

__all__ = ["main", "build_parser", "run_single", "EXIT_CODES"]


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
        from sysid_ros._src.identification.batch import run_batch

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
    """One recording (or the floor alone): the JSON at ``args.out``; returns the exit code.
    The identification loads here, on first use: a batch's driver only parses, and its workers
    import this function by name without loading more than the items need."""
    from sysid_ros._src.identification.single import identify_one

    return identify_one(args)


if __name__ == "__main__":
    raise SystemExit(main())
