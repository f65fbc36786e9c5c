"""``sysid-identify``: a rosbag2 JointState recording → sound box on θ_e as JSON.

Exit codes: 0 ok (also ``insufficient_data``, which returns the prior box), 3 inconsistent
(the data contradict the stated bounds; no box is written), 2 bad input with a one-line reason
on stderr (missing topic, wrong joints, NaN, non-monotonic stamps, empty bag, corrupt file, bad
option).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sysid_ros.identification.config import load_identification_config
from sysid_ros.identification.errors import IdentificationError
from sysid_ros.identification.identifier import METHODS, identify
from sysid_ros.model.errors import RobotConfigError, UnknownRobotError
from sysid_ros.model.parameters import PARAM_NAMES
from sysid_ros.model.robots import load_robot

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sysid-identify",
                                description="Sound interval bounds on the payload's inertial "
                                            "parameters from a rosbag2 JointState recording.")
    p.add_argument("--robot", default="gen3", help="robot registry name (default gen3)")
    p.add_argument("--bag", required=True, help="rosbag2 directory or .mcap/.db3 file")
    p.add_argument("--out", required=True, help="result JSON path")
    p.add_argument("--topic", default="/joint_states")
    p.add_argument("--method", choices=METHODS, default="lp")
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("--torque-noise-abs", type=float, help="N·m per joint")
    noise.add_argument("--torque-noise-rel", type=float, help="fraction of |tau|")
    p.add_argument("--robot-uncertainty-rel", type=float, help="theta_r box (fraction)")
    p.add_argument("--window", type=int)
    p.add_argument("--stride", type=int)
    p.add_argument("--friction", choices=("config", "none"))
    p.add_argument("--config", help="robot facts file to use instead of the registry's")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return p


class _Progress:
    """A one-line progress bar on stderr, shown only for long inputs."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.label, self.enabled, self.shown = label, enabled, False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < 20_000:
            return
        frac = done / max(total, 1)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}% ({done}/{total})")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _fail(msg: str) -> int:
    print(f"sysid-identify: error: {' '.join(str(msg).split())}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    from sysid_ros.bagio import BagError, read_joint_states

    args = build_parser().parse_args(argv)
    clock = time.perf_counter()
    try:
        robot = load_robot(args.robot, args.config)
        overrides = dict(torque_noise_abs=args.torque_noise_abs,
                         torque_noise_rel=args.torque_noise_rel,
                         robot_uncertainty_rel=args.robot_uncertainty_rel, window=args.window,
                         stride=args.stride, friction=args.friction)
        # One noise flag replaces the whole noise model, not just its own half.
        if args.torque_noise_abs is not None:
            overrides["torque_noise_rel"] = 0.0
        if args.torque_noise_rel is not None:
            overrides["torque_noise_abs"] = 0.0
        config = load_identification_config(robot, **overrides)
        bar = _Progress("reading", not args.no_progress)
        series = read_joint_states(args.bag, args.topic, robot.joint_names, progress=bar)
        bar.close()
        t_read = time.perf_counter() - clock
        bar = _Progress("identifying", not args.no_progress)
        result = identify(robot, config, series.t, series.position, series.velocity,
                          series.effort, args.method, progress=bar)
        bar.close()
    except BagError as err:
        return _fail(str(err))
    except (IdentificationError, UnknownRobotError, RobotConfigError) as err:
        return _fail(str(err))
    seconds = {"read": t_read, **result.seconds, "total": time.perf_counter() - clock}

    def listed(x):
        return None if x is None else np.asarray(x, float).tolist()

    doc = {
        "robot": robot.name,
        "body": robot.ee_joint,
        "method": result.method,
        "parameter_names": list(PARAM_NAMES),
        "lower": listed(result.lower),
        "nominal": listed(result.nominal),
        "upper": listed(result.upper),
        "status": result.status,
        "samples_used": result.samples_used,
        "windows_used": result.windows_used,
        "assumptions": config.assumptions(),
        "notes": result.notes,
        "seconds": seconds,
        "bag": str(args.bag),
        "topic": args.topic,
    }
    try:
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    except OSError as err:
        return _fail(f"cannot write {args.out}: {err}")
    if result.status == "inconsistent":
        print("sysid-identify: data inconsistent with the stated noise/model bounds "
              "(see assumptions in the result)", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
