"""``sysid-sim-record``: a hardware-like recording of the robot the sim node simulates.

The sim node with ``hardware_like:=true hardware_seed:=N`` simulates one robot drawn off the
catalogue (``simulation.sim_truth``). Calibrating it, as a user calibrates a real arm before
carrying payloads (docs/guide/calibrate.md), needs data of *that* robot without payload; this writes
them as a rosbag2 of ``/joint_states`` (the robot file's ``simulation.hardware_like.profile``:
rate, drops, jitter, noise, quantisation), the robot moved by its own tracking controller along
exciting sum-of-sines motions (``record_hardware_like``). Then::

    sysid-sim-record --robot gen3 --seconds 60 --out calib_bag
    sysid-sim-record --robot gen3 --seconds 20 --seed 1 --out validation_bag
    sysid-calibrate --robot gen3 --bag calib_bag --validate validation_bag --out calib.yaml
    sysid-demo --hardware-like --calibration calib.yaml --prior dumbbell_8lb

Exit codes: 0 written, 2 bad input (unknown robot, floating base, output exists).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from sysid_ros._src import progress

__all__ = ["main"]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="sysid-sim-record", description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="gen3", help="registry name or robot facts file")
    ap.add_argument("--seconds", type=float, default=60.0, help="robot time recorded (s)")
    ap.add_argument("--hardware-seed", type=int, default=0,
                    help="the sim node's hardware_seed: which drawn robot (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0,
                    help="motion, drops, stamps and noise of this recording (use another one "
                         "for a validation bag)")
    ap.add_argument("--payload", type=float, default=None,
                    help="dumbbell mass (kg) carried; default none (a calibration run)")
    ap.add_argument("--out", required=True, type=Path, help="rosbag2 directory to create")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    from sysid_ros._src.errors import SysidError
    from sysid_ros._src.model.robots import load_robot
    from sysid_ros._src.simulation import (HardwareProfile, dumbbell_for, record_hardware_like,
                                      sim_truth, write_joint_states_bag)

    def fail(msg: str) -> int:
        print(f"sysid-sim-record: {msg}", file=sys.stderr)
        return 2

    if args.out.exists():
        return fail(f"--out {args.out}: already exists")
    if not (np.isfinite(args.seconds) and args.seconds > 0):
        return fail(f"--seconds must be positive, got {args.seconds}")
    try:
        robot = load_robot(args.robot)
        payload = None if args.payload is None else dumbbell_for(robot, args.payload)
        truth = sim_truth(robot, args.hardware_seed, payload)
        with progress.stages(2, "recording", not args.no_progress) as enter:
            enter(f"simulating {args.seconds:g} s")
            rec = record_hardware_like(robot,
                                       np.random.default_rng([args.hardware_seed, 2, args.seed]),
                                       payload, args.seconds, HardwareProfile.from_robot(robot),
                                       truth)
            enter("writing the bag")
            path = write_joint_states_bag(args.out, rec, robot)
    except (SysidError, ValueError, OSError) as exc:
        return fail(str(exc))
    print(f"sysid-sim-record: {rec.t.size} joint states, {rec.t[-1] - rec.t[0]:.1f} s at "
          f"{rec.profile.rate_hz:.0f} Hz of {robot.name} (hardware_seed {args.hardware_seed}, "
          f"{'no payload' if payload is None else f'{args.payload} kg dumbbell'})",
          file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
