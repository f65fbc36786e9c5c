"""Benchmark of the safe exciting-trajectory planner.

Gen3, the two box obstacles of ``planner.obstacles`` (platform 0.50 m in front, overhead box),
128 time sub-intervals, t_f = 3 s, t_p = 1.5 s. For each of the five dumbbells (1.81 … 3.63 kg),
θ_e bounds = truth ± (5 % + 0.005) — what the identifier reports after some excitation — and a
receding-horizon run from a start pose (``HOME`` below) until four plans are certified (at most 8 cycles):

1. planning time per cycle (median, p95; targets ≤ 0.5 s / ≤ 1.0 s, < t_p) and the share of
   cycles certified; the sound check of one k alone is the baseline measured in the same run
   (a "draw k and verify" planner would pay it per candidate). For scale only (not measured
   here): the authors' C++ ARMOUR takes about 8 s per iteration on this machine.
2. cond(Y_e) of the identification data — end-effector columns of the inverse-dynamics
   regressor sampled at 100 Hz along the executed desired motion (each plan for t_p, the last
   to rest) — after four planned trajectories versus four with k uniform in 𝒦 ∩ joint limits
   (S3 Table V: about 234–283 versus 312–480). The random baseline is not safety-checked; the
   share of its k that would have passed the sound check is reported.

Desired, not simulated, motion is used for cond (tracking errors are ≤ e_max ≈ 0.015 rad).

Usage: python -m bench.bench_planner [--json PATH] [--trajectories 4] [--max-cycles 8]
                                     [--objective cond|box|staged] [--planner KEY=VALUE ...]
                                     [--cpu-budget]
--cpu-budget: the planner's budget and every time reported count the calling thread's CPU
seconds, not wall seconds — what a cycle costs with a core to itself, whatever else runs on the
machine (a shared machine's load otherwise decides both the times and, through the budget, the
plans).
"""
from __future__ import annotations

import argparse
import json
import time
from types import SimpleNamespace

import numpy as np
import yaml

from sysid_ros._src import progress
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.planning import ExcitingPlanner, PlannerConfig, QuinticTrajectory, controller_model
from sysid_ros._src.planning import planner as planner_module
from sysid_ros._src.planning.nominal import OBJECTIVES
from sysid_ros._src.simulation.payload import DUMBBELLS_KG, dumbbell_for, true_theta_e

# Start pose: Kinova home with the wrist straightened (tool pointing down, forearm folded) — at
# the home pose itself even holding a 3.63 kg dumbbell still is not certifiable (joint 2 may need
# 59.7 N·m > 56.7 with the box and robust-input bounds), so no planner could start there.
HOME = np.array([0.0, 0.3, 3.14, -2.4, 0.0, -0.1, 1.57])
#: the clock of the random baseline's sound-check timing (``--cpu-budget``: thread CPU time)
_clock = time.perf_counter
ARMOUR_QUOTED_S = 8.0


def _bounds(robot, mass: float) -> tuple[np.ndarray, np.ndarray]:
    theta = true_theta_e(robot, dumbbell_for(robot, mass))
    rad = 0.05 * np.abs(theta) + 0.005
    return theta - rad, theta + rad


def _cond(reg: Regressors, segments: list[tuple[QuinticTrajectory, np.ndarray, float]]) -> float:
    rows = []
    for traj, k, duration in segments:
        t = np.arange(0.0, duration, 0.01)
        q, dq, ddq = traj.sample(t, k)
        rows.append(reg.split(reg.Y(q, dq, ddq))[0].reshape(-1, 10))
    return float(np.linalg.cond(np.concatenate(rows)))


def _run(planner: ExcitingPlanner, lo, hi, n_traj: int, max_cycles: int, rng, random_k: bool):
    """Receding horizon from HOME at rest; returns (segments, cycle records)."""
    cfg = planner.config
    state = (HOME.copy(), np.zeros(7), np.zeros(7))
    segments: list = []
    records = []
    current = None
    for _ in range(max_cycles):
        if len(segments) >= n_traj:
            break
        if random_k:
            traj = QuinticTrajectory(*state, cfg.t_f)
            k_lo, k_hi, _ = planner.k_box(traj)
            # an empty joint interval (the carried-over velocity cannot be stopped inside the
            # limits) gets its midpoint: the random baseline executes unchecked motion anyway
            k = np.where(k_lo <= k_hi, rng.uniform(np.minimum(k_lo, k_hi), np.maximum(k_lo, k_hi)),
                         0.5 * (k_lo + k_hi))
            t0 = _clock()
            ver = planner.reach.verify(traj, k, lo, hi, k_lo, k_hi)
            records.append({"time": _clock() - t0, "verified": ver.ok})
            ok = True                    # the random baseline executes whatever it drew
        else:
            res = planner.plan(*state, theta_e_box(lo, hi))
            records.append({"time": res.solve_time, "verified": res.verified,
                            "iterations": res.iterations, "cond": res.cond,
                            "reasons": res.reasons})
            ok, traj, k = res.verified, res.trajectory, res.k
        if ok:
            if segments:
                segments[-1] = (segments[-1][0], segments[-1][1], cfg.t_p)
            segments.append((traj, k, cfg.t_f))
            current = (traj, k, 0.0)
        if current is None:
            continue
        traj_c, k_c, t_in = current
        t_in += cfg.t_p
        current = (traj_c, k_c, t_in)
        state = traj_c.state_at(t_in, k_c)
    return segments, records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--trajectories", type=int, default=4)
    ap.add_argument("--max-cycles", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--objective", choices=OBJECTIVES,
                    help="planner objective (default: the robot file's planner.objective)")
    ap.add_argument("--planner", action="append", default=[], metavar="KEY=VALUE",
                    help="a PlannerConfig override (value parsed as YAML); repeatable")
    ap.add_argument("--cpu-budget", action="store_true",
                    help="budget and times in the planning thread's CPU seconds (module doc)")
    args = ap.parse_args(argv)
    if args.cpu_budget:
        global _clock
        _clock = time.thread_time
        # the planner reads its clock as planner.time.monotonic (deadlines, solve_time) only
        planner_module.time = SimpleNamespace(monotonic=time.thread_time)  # type: ignore[assignment]
    overrides = {"objective": args.objective} if args.objective else {}
    for item in args.planner:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--planner {item!r}: expected KEY=VALUE")
        overrides[key] = yaml.safe_load(value)

    robot = load_robot("gen3")
    ctrl = controller_model(robot)
    reg = Regressors(robot)
    rng = np.random.default_rng(args.seed)
    plan_times, verify_times, certified = [], [], []
    cond_plan, cond_rand, rand_pass, iters = {}, {}, [], []
    for mass in progress.track(DUMBBELLS_KG, "payloads"):
        lo, hi = _bounds(robot, mass)
        planner = ExcitingPlanner(robot, PlannerConfig.from_robot(robot, overrides), ctrl)
        seg, rec = _run(planner, lo, hi, args.trajectories, args.max_cycles, rng, False)
        plan_times += [r["time"] for r in rec]
        certified += [r["verified"] for r in rec]
        iters += [r["iterations"] for r in rec]
        cond_plan[mass] = _cond(reg, seg) if len(seg) == args.trajectories else float("nan")
        seg_r, rec_r = _run(planner, lo, hi, args.trajectories, args.trajectories, rng, True)
        verify_times += [r["time"] for r in rec_r]
        rand_pass += [r["verified"] for r in rec_r]
        cond_rand[mass] = _cond(reg, seg_r)
        print(f"  {mass:.2f} kg: planned cond {cond_plan[mass]:8.1f} ({len(seg)} plans in "
              f"{len(rec)} cycles), random cond {cond_rand[mass]:8.1f}", flush=True)

    pt, vt = np.asarray(plan_times), np.asarray(verify_times)
    cp = np.array([cond_plan[m] for m in DUMBBELLS_KG])
    cr = np.array([cond_rand[m] for m in DUMBBELLS_KG])
    fig = {
        "plan_time_median_s": float(np.median(pt)), "plan_time_p95_s": float(np.percentile(pt, 95)),
        "verify_time_median_s": float(np.median(vt)),
        "plan_over_verify_ratio": float(np.median(pt) / np.median(vt)),
        "plan_over_tp_ratio": float(np.median(pt) / 1.5),
        "armour_quoted_over_plan_ratio": float(ARMOUR_QUOTED_S / np.median(pt)),
        "certified_share": float(np.mean(certified)), "cycles": int(pt.size),
        "ipopt_iterations_median": float(np.median(iters)),
        "random_k_pass_share": float(np.mean(rand_pass)),
        "cond_planned": {str(m): cond_plan[m] for m in DUMBBELLS_KG},
        "cond_random": {str(m): cond_rand[m] for m in DUMBBELLS_KG},
        "cond_planned_range": [float(np.nanmin(cp)), float(np.nanmax(cp))],
        "cond_random_range": [float(np.min(cr)), float(np.max(cr))],
        "cond_planned_over_random_median_ratio": float(np.nanmedian(cp / cr)),
        "planner_overrides": overrides, "cpu_budget": args.cpu_budget,
    }
    print("\nplanner, gen3, 2 box obstacles, 128 sub-intervals, t_p = 1.5 s")
    print(f"{'quantity':44s} {'value':>12s} {'ratio':>22s}")
    print(f"{'sound check of one k (baseline), median':44s} {fig['verify_time_median_s']:11.3f}s "
          f"{'1.00':>22s}")
    print(f"{'planning cycle, median':44s} {fig['plan_time_median_s']:11.3f}s "
          f"{fig['plan_over_verify_ratio']:17.2f} x chk")
    print(f"{'planning cycle, p95 (target 0.5 s)':44s} {fig['plan_time_p95_s']:11.3f}s "
          f"{fig['plan_time_p95_s'] / 1.5:17.2f} x t_p")
    print(f"{'ARMOUR C++ (quoted, not measured)':44s} {ARMOUR_QUOTED_S:11.3f}s "
          f"{fig['armour_quoted_over_plan_ratio']:15.1f} x ours")
    print(f"{'cycles certified':44s} {fig['certified_share']:12.2%} {'':>22s}")
    print(f"{'random k that would pass the sound check':44s} {fig['random_k_pass_share']:12.2%}")
    print(f"{'cond(Y_e) after 4 trajectories':44s} {'planned':>12s} {'random':>12s}")
    for m in DUMBBELLS_KG:
        print(f"{'  dumbbell ' + format(m, '.2f') + ' kg':44s} {cond_plan[m]:12.1f} "
              f"{cond_rand[m]:12.1f}")
    print(f"{'  median ratio planned / random':44s} "
          f"{fig['cond_planned_over_random_median_ratio']:12.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(fig, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
