"""The seed paper's experiments in simulation: S3 Table III and Table V, one command.

Gen3 + the five dumbbells of S3 (1.81 … 3.63 kg), in-process lock-step closed loop
(``sysid_ros._src.demo.pipeline``: the node runtimes of ``launch/sim.launch.yaml`` with its settings —
MuJoCo at 4 kHz, the robust controller's runtime at 1 kHz with trajectory admission, the online
identifier's runtime every 0.5 s, the receding-horizon planner every t_p — then the ``sysid-demo``
move-and-place task) and the same verdict as ``sysid-demo`` (``sysid_ros._src.demo.report.evaluate``:
no torque-limit hit, no collision sphere in an obstacle, V ≤ V_max with the true θ_e, final box
contains the truth; the task refused by the controller's admission is a failure).

Experiments: (b) = the obstacle layout of ``planner.obstacles`` in config/gen3.yaml (platform
0.50 m in front of the robot, one high obstacle); (a) = the same task without obstacles (our
definition; S3's layout (a) is not reproduced). The planner sees the experiment's obstacles and
the verdict checks them. Methods whose motion does not depend on the obstacles (``random``: k is
drawn in 𝒦 ∩ joint limits; ``wrong``, ``conservative``, ``grav-pid``: no planner) are simulated
once per dumbbell and evaluated against each experiment's obstacles — the same runs, so the two
experiments differ for them only by what counts as a collision.

Table III: success, or fail with the phase (identification / task) and the reason.
Table V: cond(Y_e) of the identification data (end-effector columns of the inverse-dynamics
regressor along the executed exciting motion at 100 Hz, the planner's objective), ours vs random.
Final box widths: ours' final θ_e box against the random draws' (mass, principal inertias, and
which box is the smaller by log-volume over all ten entries), side by side.

Ratios printed against baselines measured in the same run: cond ours / random per dumbbell and
experiment, and each episode's real-time factor (sim seconds per wall second).

Usage:
  python -m bench.paper_tables [--json PATH] [--dumbbells 1.81,3.63] [--methods ours,random]
                               [--experiments a,b] [--random-seeds N] [--quick]
                               [--objective cond|box|staged] [--planner KEY=VALUE ...]
                               [--cpu-budget] [--jobs N | --ray-address ADDR] [--no-progress]
                               [--markdown docs/results.md] [--details]
The markdown's generated block (between the BEGIN/END markers) is replaced; the hand-written
discussion around it is kept.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sysid_ros._src.batch import BatchError, run_tasks
from sysid_ros._src.demo.pipeline import (METHODS, Episode, EpisodeConfig, EpisodeResult, EpisodeSpec,
                                     evaluate_episode, node_params, simulate_episode_task)
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.planning import PlannerConfig, obstacles_from_config
from sysid_ros._src.planning.nominal import OBJECTIVES
from sysid_ros._src.simulation import DUMBBELLS_KG

BEGIN = "<!-- BEGIN GENERATED: python -m bench.paper_tables -->"
END = "<!-- END GENERATED -->"
EXPERIMENTS = {"a": "no obstacles", "b": "platform + high obstacle (planner.obstacles)"}
OBSTACLE_DEPENDENT = {"ours"}          # methods whose motion depends on the obstacles


def _tag(reason: str) -> str:
    """Short failure cause for the table."""
    for key, tag in (("not certifiable", "not certifiable, not sent"),
                     ("torque limit", "torque limit"), ("collision", "collision"),
                     ("tracking bound", "V > V_max"),
                     ("excludes the true", "box misses truth"),
                     ("no certified plan", "no certified plan"),
                     ("certified in", "too few certified plans"),
                     ("no data", "no task data")):
        if key in reason:
            return tag
    return reason


def _cell(results: list[EpisodeResult]) -> str:
    ok = sum(r.success for r in results)
    if ok == len(results):
        # ✓*: the run succeeded, but the box was too wide to certify it (module doc)
        star = "*" if any(r.worst > 1.0 for r in results) else ""
        return f"✓{star}" if len(results) == 1 else f"✓{star} {ok}/{len(results)}"
    fails = [r for r in results if not r.success]
    tags = sorted({_tag(x) for r in fails for x in r.reasons})
    phases = {r.phase for r in fails}
    phase = f"{phases.pop()}: " if len(phases) == 1 else ""
    prefix = "✗" if ok == 0 else f"{ok}/{len(results)} ✓, ✗"
    return f"{prefix} {phase}{', '.join(tags)}"


#: θ_e entries whose final box widths the JSON reports: all of them (PARAM_NAMES)
WIDTH_PARAMETERS = PARAM_NAMES


def _record(r: EpisodeResult, ep: Episode) -> dict[str, Any]:
    final = r.evaluation.final_bounds if r.evaluation is not None else None
    return {"success": r.success, "phase": r.phase, "reasons": r.reasons,
            "tags": sorted({_tag(x) for x in r.reasons}),
            "contains_truth": r.contains_truth,
            "mass_interval_kg": list(r.mass_interval) if r.mass_interval else None,
            "cond": r.cond, "plans_executed": r.plans_executed, "plan_cycles": r.plan_cycles,
            "random_would_verify": r.random_would_verify,
            "max_V_task_J": r.max_V_task, "peak_torque_ratio": r.peak_torque_ratio,
            "worst_torque_ratio": r.worst_torque_ratio,
            "min_clearance_mm": r.min_clearance_mm,
            "plans_rejected": r.plans_rejected,
            "plan_seconds": r.plan_seconds, "late_plans": r.late_plans,
            "plan_failures": r.plan_failures,
            "wall_seconds": r.wall_seconds,
            "final_box_width": ({n: float(final.width[final.index(n)]) for n in WIDTH_PARAMETERS}
                                if final is not None else None),
            # per executed plan: |k| and the planner's (or the draw's) cond(Y_e) of that segment
            "plan_k_norm": [float(np.linalg.norm(k)) for _tr, k, _a, _b in ep.executed],
            "plan_cond": [float(p["cond"]) for p in ep.plans],
            "plan_status": [str(p["status"]) for p in ep.plans]}


#: θ_e entries of the final-widths table (the mass and the principal
#: inertias); the log-volume column uses every entry
WIDTH_TABLE = ("m", "Ixx", "Iyy", "Izz")


def _width_comparison(table: dict, masses: list[float], exps: list[str]) -> dict[str, Any]:
    """Per experiment and dumbbell: ours' final box widths, random's (mean over its draws) and
    whether ours' box is the smaller by log-volume Σ log w_i (all ten θ_e entries)."""
    out: dict[str, Any] = {}
    for e in exps:
        for m in masses:
            ours = table[e]["ours"].get(str(m)) or []
            rand = table[e]["random"].get(str(m)) or []
            if not ours or ours[0]["final_box_width"] is None or not rand \
                    or any(r["final_box_width"] is None for r in rand):
                continue
            ow = ours[0]["final_box_width"]
            rw = {n: float(np.mean([r["final_box_width"][n] for r in rand])) for n in ow}
            out.setdefault(e, {})[str(m)] = {
                "ours": ow, "random_mean": rw,
                "ours_log_volume_smaller": bool(_log_volume(ow) < np.mean(
                    [_log_volume(r["final_box_width"]) for r in rand]))}
    return out


def _log_volume(widths: dict[str, float]) -> float:
    """Σ log w_i over a box's widths (a zero width counts as 1e-300)."""
    return float(sum(np.log(max(w, 1e-300)) for w in widths.values()))


def _widths_markdown(widths: dict, masses: list[float], exps: list[str]) -> list[str]:
    out = ["### Final box widths, ours against random", "",
           "Width of the final θ_e box (after the task) for ours and the mean of the random "
           "draws (m in kg, inertias in kg·m²); smaller = ours' box is the smaller by "
           "log-volume over all ten entries.", "",
           "| exp | dumbbell | " + " | ".join(f"{n} ours | {n} random" for n in WIDTH_TABLE)
           + " | smaller |", "|---|---|" + "---|---|" * len(WIDTH_TABLE) + "---|"]
    for e in exps:
        for m in masses:
            w = widths.get(e, {}).get(str(m))
            if w is None:
                continue
            out.append(f"| {e} | {m:.2f} kg | " + " | ".join(
                f"{w['ours'][n]:.3g} | {w['random_mean'][n]:.3g}" for n in WIDTH_TABLE)
                + f" | {'yes' if w['ours_log_volume_smaller'] else 'no'} |")
    return out + [""]


def _fmt_interval(iv) -> str:
    return f"[{iv[0]:.2f}, {iv[1]:.2f}]" if iv else "—"


def _shown_argv(argv: list[str]) -> list[str]:
    """The options that shaped the tables (output paths dropped: the page is about results)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--json", "--markdown"):
            skip = True
        elif not a.startswith(("--json=", "--markdown=")):
            out.append(a)
    return out


def _markdown(args, data: dict[str, Any], robot) -> str:
    masses, methods, exps = data["dumbbells"], data["methods"], data["experiments"]
    v_max = robot.config["controller"]["V_max"]
    out = [BEGIN, "",
           "Generated by `" + " ".join(["python -m bench.paper_tables", *_shown_argv(args.argv)])
           + f"` in {data['wall_seconds']:.0f} s wall "
           f"({data['episodes']} simulated episodes, seed {args.seed}).", "",
           f"Settings: V_max = {v_max} J, Kr = {robot.config['controller']['Kr']}, controller "
           f"nominal = {robot.config['controller'].get('nominal', 'centre')}, "
           f"{data['config']['n_trajectories']} exciting trajectories (t_f = "
           f"{data['config']['t_f']} s, t_p = {data['config']['t_p']} s), start pose "
           f"`simulation.home` = {robot.config['simulation']['home']}, torque-sensor noise "
           f"±{data['config']['noise_tau']} N·m.", ""]
    for exp in exps:
        out += [f"### Table III ({exp}): {EXPERIMENTS[exp]}", "",
                "| method | " + " | ".join(f"{m:.2f} kg" for m in masses) + " |",
                "|---|" + "---|" * len(masses)]
        for meth in methods:
            row = data["table_iii"][exp][meth]
            cells = [_cell([_Result(x) for x in row[str(m)]]) for m in masses]
            out.append(f"| {meth} | " + " | ".join(cells) + " |")
        out.append("")
    if "ours" in methods or "random" in methods:
        both = "ours" in methods and "random" in methods
        out += ["### Table V: cond(Y_e) of the identification data", "",
                "| dumbbell | " + " | ".join(f"ours ({e})" for e in exps if "ours" in methods)
                + (" | random | " + " | ".join(f"ours/random ({e})" for e in exps)
                   if "random" in methods else "") + " |"]
        ncol = (sum(1 for e in exps if "ours" in methods) + (1 if "random" in methods else 0)
                + (len(exps) if both else 0))
        out.append("|---|" + "---|" * ncol)
        for m in masses:
            tv = data["table_v"][str(m)]
            cells = [f"{tv['ours'][e]:.0f}" if tv["ours"].get(e) else "—"
                     for e in exps if "ours" in methods]
            if "random" in methods:
                cells.append(f"{tv['random']:.0f}" if tv.get("random") else "—")
            if both:
                cells += [f"{r:.2f}" if (r := tv["ratio_by_experiment"].get(e)) else "—"
                          for e in exps]
            out.append(f"| {m:.2f} kg | " + " | ".join(cells) + " |")
        out.append("")
    if data.get("final_widths"):
        out += _widths_markdown(data["final_widths"], masses, exps)
    if args.details:
        out += _details_markdown(data, methods, masses, exps, v_max)
    out += ["", END]
    return "\n".join(out)


def _details_markdown(data: dict[str, Any], methods: list[str], masses: list[float],
                      exps: list[str], v_max: float) -> list[str]:
    """One row per episode (``--details``): the figures behind every cell of Table III."""
    out = ["### Episode details", "",
           "max V / V_max and torque ratios over the task; worst = max (|τ₀| + ‖bound‖)/τ_max, "
           "what the controller's guarantee may demand (> 1: the box is too wide to certify "
           "the task; such successes are marked ✓* above); plans = executed (admitted by the "
           "controller) / planning cycles (ours: certified; random: drawn, with how many would "
           "have passed the sound check).", "",
           "| exp | method | kg | verdict | m box [kg] | truth in box | plans | "
           "max V/V_max | peak τ/τ_max | worst τ/τ_max | clearance [mm] |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for exp in exps:
        for meth in methods:
            for m in masses:
                for x in data["table_iii"][exp][meth][str(m)]:
                    verdict = "success" if x["success"] else \
                        f"fail ({x['phase']}): {', '.join(x['tags'])}"
                    plans = f"{x['plans_executed']}/{x['plan_cycles']}" if x["plan_cycles"] \
                        else "—"
                    if x.get("plans_rejected"):
                        plans += f" ({x['plans_rejected']} rejected by the controller)"
                    if x["late_plans"]:
                        plans += f" ({x['late_plans']} over max_solve_time)"
                    if x["random_would_verify"] is not None:
                        plans += f" ({x['random_would_verify']} would verify)"
                    out.append(
                        f"| {exp} | {meth} | {m:.2f} | {verdict} | "
                        f"{_fmt_interval(x['mass_interval_kg'])} | "
                        f"{'—' if x['contains_truth'] is None else x['contains_truth']} | "
                        f"{plans} | {x['max_V_task_J'] / v_max:.2f} | "
                        f"{x['peak_torque_ratio']:.2f} | {x['worst_torque_ratio']:.2f} | "
                        f"{x['min_clearance_mm']:.0f} |")
    return out


class _Result:
    """Adapter: a JSON record looks like an EpisodeResult to ``_cell``."""

    def __init__(self, rec: dict[str, Any]) -> None:
        self.success, self.phase, self.reasons = rec["success"], rec["phase"], rec["reasons"]
        self.worst = rec["worst_torque_ratio"]


def _write_markdown(path: Path, block: str) -> None:
    text = path.read_text() if path.exists() else \
        "# Seed paper experiments in simulation\n\n" + BEGIN + "\n" + END + "\n"
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) else \
        text.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.paper_tables",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures here (stable keys)")
    ap.add_argument("--details", action="store_true",
                    help="also a table of every episode in the markdown (the JSON always has them)")
    ap.add_argument("--dumbbells", help="comma-separated kg (default: S3's five)")
    ap.add_argument("--methods", help=f"comma-separated, of {', '.join(METHODS)} (default all)")
    ap.add_argument("--experiments", default="a,b", help="comma-separated of a, b")
    ap.add_argument("--random-seeds", type=int, default=1,
                    help="random-excitation episodes per dumbbell (different draws)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--solve-time", type=float, default=1.45,
                    help="planner wall-clock budget per cycle, s (< t_p). Sim time stands still "
                         "during a solve, so this only decides how much CPU the planner gets; "
                         "the default gives a loaded machine the whole t_p, and cycles over the "
                         "config's max_solve_time are counted as late (0: config value)")
    ap.add_argument("--objective", choices=OBJECTIVES,
                    help="planner objective for `ours` (default: the robot file's planner.objective)")
    ap.add_argument("--planner", action="append", default=[], metavar="KEY=VALUE",
                    help="a PlannerConfig override for `ours` (value parsed as YAML), e.g. "
                         "refresh_margins=true; repeatable")
    ap.add_argument("--cpu-budget", action="store_true",
                    help="the planner's budget counts the planning thread's CPU seconds instead "
                         "of wall seconds, so that other processes' load does not decide how many "
                         "Ipopt iterations a plan gets (A/B of planner options on a shared "
                         "machine); cycles are then 'late' by CPU seconds")
    ap.add_argument("--jobs", type=int, default=1,
                    help="episodes simulated at once by local worker processes (default 1: the "
                         "planner's wall-clock budget then has a core of its own)")
    ap.add_argument("--ray-address", metavar="ADDR",
                    help="simulate the episodes on a Ray cluster (auto, local or HOST:PORT)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    ap.add_argument("--quick", action="store_true",
                    help="lightest and heaviest dumbbell only (~3 min)")
    ap.add_argument("--markdown", type=Path, default=Path("docs/results.md"),
                    help="markdown file whose generated block is replaced ('-': none)")
    args = ap.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    robot = load_robot("gen3")
    masses = ([float(x) for x in args.dumbbells.split(",")] if args.dumbbells
              else [DUMBBELLS_KG[0], DUMBBELLS_KG[-1]] if args.quick else list(DUMBBELLS_KG))
    methods = args.methods.split(",") if args.methods else list(METHODS)
    exps = args.experiments.split(",")
    bad = [m for m in methods if m not in METHODS] + [e for e in exps if e not in EXPERIMENTS]
    if bad or not masses or args.random_seeds < 1:
        print(f"unknown method/experiment {bad}; methods: {', '.join(METHODS)}; experiments: "
              "a, b; need at least one dumbbell and --random-seeds >= 1", file=sys.stderr)
        return 2
    obstacles = {"a": (), "b": obstacles_from_config(robot.config["planner"]["obstacles"])}
    overrides: dict[str, Any] = {"max_solve_time": args.solve_time} if args.solve_time > 0 else {}
    if args.objective:
        overrides["objective"] = args.objective
    for item in args.planner:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"--planner {item!r}: expected KEY=VALUE", file=sys.stderr)
            return 2
        overrides[key] = yaml.safe_load(value)
    cfg = EpisodeConfig(planner_overrides=overrides)
    reg = Regressors(robot)
    wall0 = time.perf_counter()
    table: dict[str, dict[str, dict[str, list]]] = {e: {m: {} for m in methods} for e in exps}
    conds: dict[str, dict[str, Any]] = {str(m): {"ours": {}, "random": None, "random_all": []}
                                        for m in masses}
    rtf: list[float] = []

    def log(msg: str) -> None:
        print(msg, flush=True)

    # every episode as plain values, simulated through the batch executor, evaluated here
    runs: list[tuple[str, float, str, str | None]] = []      # label, mass, method, experiment
    specs: list[EpisodeSpec] = []
    for mi, mass in enumerate(masses):
        for meth in methods:
            # random: different draws per dumbbell and per repetition
            seeds = [args.seed + 1000 * mi + i for i in range(args.random_seeds)] \
                if meth == "random" else [args.seed]
            for exp_run in (exps if meth in OBSTACLE_DEPENDENT else [None]):
                for seed in seeds:
                    runs.append((f"{meth} {mass:.2f} kg" + (f" exp ({exp_run})" if exp_run else "")
                                 + (f" seed {seed}" if len(seeds) > 1 else ""), mass, meth,
                                 exp_run))
                    specs.append((robot.name, mass, meth,
                                  tuple(obstacles[exp_run]) if exp_run else (), seed, cfg,
                                  args.cpu_budget))
    try:
        outcomes = run_tasks(simulate_episode_task, specs, jobs=args.jobs,
                             ray_address=args.ray_address, desc="episodes",
                             show_progress=not args.no_progress)
    except BatchError as err:
        print(f"paper_tables: error: {err}", file=sys.stderr)
        return 2
    episodes, errors = 0, []
    for (label, mass, meth, exp_run), out in zip(runs, outcomes):
        log(f"[{time.perf_counter() - wall0:6.0f} s] {label}")
        ep = out.value
        if ep is None:
            errors.append(f"{label}: {out.error}")
            log(f"         episode failed: {out.error}")
            continue
        episodes += 1
        sim_s = float(ep.run.t[-1]) if ep.run.t.size else 0.0
        rtf.append(sim_s / max(ep.wall_seconds, 1e-9))
        for exp in ([exp_run] if exp_run else exps):
            res = evaluate_episode(robot, ep, obstacles[exp], reg)
            table[exp][meth].setdefault(str(mass), []).append(_record(res, ep))
            rec = table[exp][meth][str(mass)][-1]
            widths = rec["final_box_width"]
            log(f"         ({exp}) {res.summary()}"
                + (f"  cond {res.cond:.0f}" if res.cond else "")
                + f"  [{ep.wall_seconds:.0f} s wall, {sim_s:.1f} s sim]"
                + ("\n         widths " + " ".join(
                    f"{n} {w:.3g}" for n, w in widths.items()) if widths else "")
                + "\n         plans |k| " + " ".join(
                    f"{x:.2f}" for x in rec["plan_k_norm"])
                + "  cond " + " ".join(f"{c:.0f}" for c in rec["plan_cond"]))
            if meth == "ours":
                conds[str(mass)]["ours"][exp] = res.cond
            elif meth == "random" and exp == (exps[0]):
                conds[str(mass)]["random_all"].append(res.cond)
    for m in masses:
        tv = conds[str(m)]
        if tv["random_all"]:
            tv["random"] = float(np.median(tv["random_all"]))   # median over --random-seeds
        ours = [c for c in tv["ours"].values() if c]
        tv["ours_over_random"] = (float(np.mean(ours)) / tv["random"]
                                  if ours and tv["random"] else None)
        # the ratio in each experiment, not their mean: one experiment may hide another
        tv["ratio_by_experiment"] = {e: (c / tv["random"] if c and tv["random"] else None)
                                     for e, c in tv["ours"].items()}
    data_widths = _width_comparison(table, masses, exps) if {"ours", "random"} <= set(methods) \
        else None
    pcfg = PlannerConfig.from_robot(robot)          # the robot file's planner, defaults filled in
    data = {
        "dumbbells": masses, "methods": methods, "experiments": exps,
        "config": {"n_trajectories": cfg.n_trajectories, "solve_time": args.solve_time,
                   "t_f": pcfg.t_f, "t_p": pcfg.t_p,
                   "noise_tau": node_params("sim").get("noise_tau"), "seed": args.seed,
                   "random_seeds": args.random_seeds, "planner_overrides": overrides,
                   "cpu_budget": args.cpu_budget,
                   "V_max": robot.config["controller"]["V_max"]},
        "table_iii": table, "table_v": conds, "final_widths": data_widths,
        "episodes": episodes, "episode_errors": errors,
        "wall_seconds": time.perf_counter() - wall0,
        "real_time_factor_median": float(np.median(rtf)) if rtf else None,
    }

    print(f"\nTable III (✓ success; ✗ failure: cause), {episodes} episodes in "
          f"{data['wall_seconds']:.0f} s wall, median real-time factor "
          f"{data['real_time_factor_median']:.2f} x (sim s / wall s)")
    for exp in exps:
        print(f"\n({exp}) {EXPERIMENTS[exp]}")
        print(f"{'method':14s}" + "".join(f" {m:>38.2f}" for m in masses))
        for meth in methods:
            print(f"{meth:14s}" + "".join(
                f" {_cell([_Result(x) for x in table[exp][meth][str(m)]]):>38s}" for m in masses))
    if "ours" in methods and "random" in methods:
        print("\nTable V: cond(Y_e); ratio = ours / random per experiment (baseline: random, "
              "same run)")
        print(f"{'dumbbell':10s}" + "".join(f"{'ours (' + e + ')':>12s}" for e in exps)
              + f"{'random':>12s}" + "".join(f"{'ratio ' + e:>9s}" for e in exps))
        for m in masses:
            tv = conds[str(m)]
            print(f"{m:<10.2f}" + "".join(f"{tv['ours'].get(e) or float('nan'):12.1f}"
                                          for e in exps)
                  + f"{tv['random'] or float('nan'):12.1f}"
                  + "".join(f"{tv['ratio_by_experiment'].get(e) or float('nan'):9.2f}"
                            for e in exps))
    if args.json:
        args.json.write_text(json.dumps(data, indent=2, default=float))
        print(f"wrote {args.json}")
    if str(args.markdown) != "-":
        _write_markdown(args.markdown, _markdown(args, data, robot))
        print(f"wrote {args.markdown}")
    for line in errors:
        print(f"episode failed: {line}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
