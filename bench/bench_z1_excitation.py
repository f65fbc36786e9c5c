"""How well the Z1's identification phase excites the payload: planned versus random excitation.

For each excitation (``ours``: certified receding-horizon plans from the demo's payload class
``dumbbell_1kg``; ``random``: k uniform in 𝒦 ∩ joint limits, unchecked), one in-process episode
(``sysid_ros.demo.pipeline``: MuJoCo, the robust controller at 1 kHz, the demo's 1 kg dumbbell,
torque-sensor noise uniform in ±``--noise`` N·m) runs the identification phase; its recorded
samples (1 kHz, or every ``--decimate``-th) from the first plan's start to 0.5 s after the
last one's end are then identified offline under the RATED prior (0-2 kg: what the data alone
say, not the demo's class) with the noise bound equal to the noise. Printed side by side: the
mass interval width (target ≤ 0.25 kg), the widths of the first moments, cond(Y_e) of the
executed desired motion (the planner's objective, S3 Table V) and whether the box holds the
truth.

Usage: python -m bench.bench_z1_excitation [--noise 0.3] [--trajectories 4] [--seed 0]
       [--decimate 1] [--objective cond|box] [--skip-random] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from sysid_ros.demo.pipeline import EpisodeConfig, identification_cond, simulate_episode
from sysid_ros.demo.priors import robot_with_prior
from sysid_ros.identification import identify, load_identification_config
from sysid_ros.model.robots import load_robot
from sysid_ros.planning.obstacles import obstacles_from_config


def measure(method: str, noise: float, n_traj: int, seed: int, decimate: int,
            objective: str = "cond") -> dict:
    base = load_robot("z1")
    robot = load_robot(robot_with_prior(base, base.config["demo"]["prior"],
                                        Path(tempfile.mkdtemp(prefix="z1_excitation_"))))
    obstacles = obstacles_from_config(robot.config["planner"]["obstacles"])
    ep = simulate_episode(robot, float(robot.config["demo"]["payload"]), method, obstacles,
                          seed=seed, config=EpisodeConfig(
                              noise_tau=noise, n_trajectories=n_traj, max_cycles=2 * n_traj,
                              planner_overrides={"objective": objective}))
    if ep.ident_window is None:
        return {"method": method, "executed": 0}
    a, b = ep.ident_window
    run = ep.run
    sel = np.flatnonzero((run.t >= a) & (run.t <= b + 0.5))[::decimate]
    cfg = load_identification_config(base, prior="rated", friction="config",
                                      torque_noise_abs=noise, torque_noise_rel=0.0)
    res = identify(base, cfg, run.t[sel], run.q[sel], run.dq[sel], run.tau_measured[sel], "lp",
                   point_estimate=False)
    out = {"method": method, "executed": len(ep.executed), "status": res.status,
           "cond": identification_cond(robot, ep), "seconds_of_data": float(b + 0.5 - a),
           "rate_hz": float(1.0 / np.median(np.diff(run.t[sel])))}
    if res.lower is not None:
        width = res.upper - res.lower
        out.update(mass_width=float(width[0]), first_moment_widths=width[1:4].tolist(),
                   contains_truth=bool(res.contains(run.truth)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--noise", type=float, default=0.3)
    ap.add_argument("--trajectories", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--decimate", type=int, default=1)
    ap.add_argument("--objective", default="cond", choices=["cond", "box"],
                    help="planner objective of the planned excitation (random ignores it)")
    ap.add_argument("--skip-random", action="store_true", help="planned excitation only")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    rows = [measure(m, args.noise, args.trajectories, args.seed, args.decimate, args.objective)
            for m in (("ours",) if args.skip_random else ("ours", "random"))]
    print(f"Z1, 1 kg dumbbell, ±{args.noise} N·m, {args.trajectories} trajectories, rated prior, "
          f"planner objective {args.objective}")
    print(f"{'':22s}" + "".join(f"{r['method']:>14s}" for r in rows))
    for key in ("executed", "status", "cond", "mass_width", "contains_truth", "rate_hz"):
        cells = []
        for r in rows:
            v = r.get(key, "-")
            cells.append(f"{v:14.3f}" if isinstance(v, float) else f"{str(v):>14s}")
        print(f"{key:22s}" + "".join(cells))
    if args.json:
        Path(args.json).write_text(json.dumps({r["method"]: r for r in rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
