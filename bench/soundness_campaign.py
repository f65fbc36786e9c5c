"""Soundness campaign: random payloads x drawn robots (hardware-like) x rates, each calibrated
and identified as on real hardware, and checked against its truth.

    python -m bench.soundness_campaign --robots gen3 z1 b1_z1 --payloads 50 --seed 0
        [--rates 500 1000] [--draws 5] [--cal-seconds 20] [--payload-seconds 6]
        [--jobs N | --ray-address auto|local|HOST:PORT] [--json PATH] [--no-progress]

Per robot and rate, ``--draws`` robots are drawn off the catalogue
(:mod:`sysid_ros._src.calibration.campaign`: friction and armature ±50 %, dry friction, torque
offsets, links ±5 %, the robot file's hardware-like driver: drops, jitter, noise, and for the
Gen3 its lagging torque stream), each recorded without payload and calibrated; ``--payloads``
random dumbbells are spread over them, each recorded and identified with the calibrated facts.
Printed per robot and rate: containment (ok boxes holding the true θ_e over all cases), wrong
boxes (ok but missing the truth: must be 0), refusals with their reasons, the mass width
(median, max, median share of the prior's), and whether every calibrated friction box held
its draw's truth. The standing B1 + Z1 (``--robots b1_z1``) is not calibrated (a floating
base): each case is its hardware-like recording (trunk IMU with datasheet bias and noise,
:mod:`sysid_ros._src.simulation.standing_hardware`) of a payload drawn off the centre of the demo's
payload class, identified with the data's own stated bounds; a case also reports where the truth
sits in the class and in the box. Both phases run through the batch executor (local worker processes, or a Ray
cluster). Exit 0 when no box is wrong and no case errored, 1 otherwise, 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from sysid_ros._src.batch import BatchError, run_tasks
from sysid_ros._src.batch.executor import executor_fields
from sysid_ros._src.calibration.campaign import ROBOT_SETUPS, calibrate_draw, plan, run_case, tally


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="+", default=["gen3", "z1", "b1_z1"],
                   choices=sorted(ROBOT_SETUPS))
    p.add_argument("--payloads", type=int, default=10, help="cases per robot and rate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rates", nargs="+", type=float, default=[500.0], metavar="HZ")
    p.add_argument("--draws", type=int, default=5, help="drawn robots per robot and rate")
    p.add_argument("--cal-seconds", type=float, default=20.0)
    p.add_argument("--payload-seconds", type=float, default=6.0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--ray-address", metavar="ADDR")
    p.add_argument("--json", type=Path)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = _parse(argv)
    try:
        campaign = plan(a.robots, a.payloads, a.rates, a.draws, a.seed, a.cal_seconds,
                        a.payload_seconds)
    except ValueError as err:
        print(f"soundness_campaign: error: {err}", file=sys.stderr)
        return 2
    clock = time.perf_counter()
    run = dict(jobs=a.jobs, ray_address=a.ray_address, show_progress=not a.no_progress)
    try:
        cal = run_tasks(calibrate_draw, campaign.draws, desc="calibrations", **run)
        by_draw = {d.key: o.value for d, o in zip(campaign.draws, cal)}
        tasks = [(c, (by_draw[c.draw.key] or {}).get("calibration")) for c in campaign.cases]
        outs = run_tasks(run_case, tasks, desc="cases", **run)
    except BatchError as err:
        print(f"soundness_campaign: error: {err}", file=sys.stderr)
        return 2
    groups = tally(campaign.cases, [o.value for o in outs], [o.error for o in outs])
    for d, o in zip(campaign.draws, cal):
        g = groups[f"{d.robot}@{d.rate_hz:g}Hz"]
        g.setdefault("draws", 0)
        g["draws"] += 1
        g.setdefault("friction_boxes_hold_truth", 0)
        g.setdefault("calibrations_refused", [])
        if o.value is not None and o.value.get("uncalibrated"):
            g["uncalibrated"] = True      # identified with the data's own assumptions
        elif o.value is None:
            g["calibrations_refused"].append(f"{d.key}: {o.error}")
        elif o.value["refused"]:
            g["calibrations_refused"].append(f"{d.key}: {o.value['refused']}")
        else:
            g["friction_boxes_hold_truth"] += int(bool(o.value["friction_inside"]))
    wall = time.perf_counter() - clock
    _print(groups, wall, a)
    report: dict[str, Any] = {
        "robots": a.robots, "payloads": a.payloads, "rates": a.rates, "draws": a.draws,
        "seed": a.seed, "cal_seconds": a.cal_seconds, "payload_seconds": a.payload_seconds,
        "cases": len(campaign.cases), "groups": groups, "wall_s": wall,
        **executor_fields(a.jobs, a.ray_address),
        "cases_detail": [{"draw": c.draw.key, "payload": c.index, "mass_kg": c.mass_kg,
                          "result": o.value, "error": o.error}
                         for c, o in zip(campaign.cases, outs)]}
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {a.json}")
    bad = sum(g["wrong"] + g["errors"] for g in groups.values())
    return 0 if bad == 0 else 1


def _print(groups: dict[str, dict[str, Any]], wall: float, a: argparse.Namespace) -> None:
    n = sum(g["cases"] for g in groups.values())
    print(f"soundness campaign: {n} cases in {wall:.0f} s on "
          f"{executor_fields(a.jobs, a.ray_address)['executor']}")
    print(f"{'robot@rate':<14} {'cases':>5} {'contained':>9} {'wrong':>5} {'refused':>7} "
          f"{'errors':>6} {'containment':>11} {'m width med':>11} {'m width max':>11} "
          f"{'of prior':>8} {'friction ok':>11}")
    for key, g in groups.items():
        med, mx, share = (g["mass_width_kg_median"], g["mass_width_kg_max"],
                          g["mass_width_of_prior_median"])
        print(f"{key:<14} {g['cases']:>5} {g['contained']:>9} {g['wrong']:>5} "
              f"{g['refused']:>7} {g['errors']:>6} {100 * g['containment']:>10.1f}% "
              f"{'-' if med is None else f'{med:.3f} kg':>11} "
              f"{'-' if mx is None else f'{mx:.3f} kg':>11} "
              f"{'-' if share is None else f'{100 * share:.0f} %':>8} "
              + (f"{'uncalibrated':>12}" if g.get("uncalibrated") else
                 f"{g.get('friction_boxes_hold_truth', 0):>5}/{g.get('draws', 0)}"))
    for key, g in groups.items():
        for line in g["calibrations_refused"] + g["refusals"] + g["error_messages"]:
            print(f"  {key}: {line}")


if __name__ == "__main__":
    raise SystemExit(main())
