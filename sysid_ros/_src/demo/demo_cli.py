"""``sysid-demo``: the closed-loop demo on the built-in simulator (README command 1 runs it, with
``--hardware-like`` on a calibrated drawn Gen3, through scripts/demo_hardware_like.sh).

Gen3 carrying the 8 lb (3.63 kg) dumbbell, the obstacle layout of S3's experiment (b); or
``--robot z1`` with the Z1's demo section (a 1 kg dumbbell, a platform and a post). The graph
(``sim``, ``identifier``, ``exciting_planner``, ``robust_controller``, ``recorder``) is started by
the runner from ``launch/sim.launch.yaml`` — the same file ``ros2 launch`` reads. Phases:

1. identification: the planner publishes ``--trajectories`` certified exciting trajectories
   (receding horizon), the identifier updates the bounds after each;
2. move-and-place: this process checks the precomputed minimum-jerk task (two degree-5
   rest-to-rest segments of ``--segment`` seconds, as in the paper) with the planner's sound
   reachability for every θ_e in the controller's box (identified bounds; the prior box for
   ``conservative``), then publishes it on the same topic; it is tracked by the controller;
3. report: the recorded bag is evaluated (``sysid_ros._src.demo.report``) into ``report.md`` and PNGs.

Progress goes to stderr; the last line on stdout is the path of ``report.md``.

The θ_e prior every node starts from is ``--prior`` (an entry of the robot file's
``identification.priors``; default: ``demo.prior`` for the robust controller, the robot file's
``identification.prior`` for the baselines); the run's robot facts (the robot file with that
prior) are written to the output folder and passed to every node (``sysid_ros._src.demo.priors``).
Before starting, the robust run checks that the planner can certify holding the start pose for
every θ_e in that prior; if not and the robot file's ``demo.refuse_uncertified_start`` is true
(the Z1: its dry friction makes data at rest uninformative, so the box cannot shrink before a
certified motion), no motion can ever be certified and the demo refuses; otherwise (the Gen3)
the planner waits for the identifier's first box, learnt at rest.

Exit codes: 0 — ``Result: success``; 1 — ``Result: failure`` (report written, reasons in it and
on stderr); 2 — bad input (robot file without a demo task, unknown prior, unreadable
calibration); 3 — refused before starting: the prior cannot be certified at the start pose, or
``--hardware-like`` without ``--calibration`` for the robust controller, or with velocities off by
more than the robot file's ``controller.velocity_error_max`` (nothing ran); 4 — the run
produced no bag to evaluate (a node failed to start; see graph.log).

``--hardware-like --calibration calib.yaml``: the same run on hardware-like data of a robot
drawn off the catalogue (docs/guide/hardware-like-data.md), every node on the calibrated facts; dry
friction makes data at rest uninformative, so the prior must certify the start (a catalogued
payload class such as the Gen3's ``dumbbell_8lb``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sysid_ros._src.demo.errors import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_NO_BAG, EXIT_REFUSED, \
    EXIT_SUCCESS

__all__ = ["main", "EXIT_SUCCESS", "EXIT_FAILURE", "EXIT_BAD_INPUT", "EXIT_REFUSED",
           "EXIT_NO_BAG"]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="sysid-demo", description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="gen3",
                    help="gen3, z1, b1_z1 or a robot file path")
    ap.add_argument("--prior", default=None,
                    help="θ_e prior: an entry of the robot file's identification.priors (default: "
                    "demo.prior for the robust controller, identification.prior for baselines)")
    ap.add_argument("--payload", type=float, default=None,
                    help="dumbbell mass, kg (default: one drawn in a class prior, else "
                    "demo.payload)")
    ap.add_argument("--seed", type=int, default=0,
                    help="the payload drawn in a class prior (docs/guide/simulation.md)")
    ap.add_argument("--trajectories", type=int, default=4, help="exciting trajectories")
    ap.add_argument("--controller", default="robust",
                    choices=["robust", "wrong", "conservative", "pid"],
                    help="controller mode during the whole run (paper baselines)")
    ap.add_argument("--segment", type=float, default=None,
                    help="task segment duration, s (default: config demo.segment, else 1.0)")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default out/demo-<time>)")
    ap.add_argument("--timeout", type=float, default=280.0, help="wall-clock limit, s")
    ap.add_argument("--stall-timeout", type=float, default=15.0,
                    help="sim seconds without a new certified plan before the task starts anyway")
    ap.add_argument("--hardware-like", action="store_true",
                    help="the simulator publishes hardware-like data (the robot file's "
                         "simulation.hardware_like: a robot drawn off the catalogue, offsets, "
                         "dry friction, drops, jitter, noise) and the identifier states that "
                         "profile's bounds (docs/guide/hardware-like-data.md)")
    ap.add_argument("--hardware-seed", type=int, default=0,
                    help="with --hardware-like: which drawn robot (the sim node's hardware_seed; "
                         "calibrate the same one: sysid-sim-record --hardware-seed)")
    ap.add_argument("--calibration", default="",
                    help="sysid-calibrate result (calib.yaml) for the identifier, planner and "
                         "controller, as on hardware (with --hardware-like: of the same drawn "
                         "robot, docs/guide/hardware-like-data.md)")
    ap.add_argument("--sim-mode", default="lockstep", choices=["lockstep", "realtime"],
                    help="lockstep: the simulator waits for each command (exact closed loop)")
    ap.add_argument("--envelope", action="store_true",
                    help="floating base: print the operating envelope (payload classes x V_max "
                    "for the demo's task, the legs' contract, the limiting premise of each) and "
                    "plot it (--out/envelope.png); nothing runs (sysid_ros._src.demo.envelope)")
    ap.add_argument("--no-progress", action="store_true",
                    help="no progress bar of the phases on stderr (shown on a terminal only)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """``sysid-demo`` (module doc; exit codes there)."""
    args = _parse(argv)
    # the phases import the simulator, planner and ROS stack (about a second): only after the
    # flags are parsed, so --help and a bad flag answer at once
    from sysid_ros._src.demo.session import run_demo

    return run_demo(args)


if __name__ == "__main__":
    sys.exit(main())
