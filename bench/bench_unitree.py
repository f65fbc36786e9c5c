"""The Unitree robots on hardware-like data next to the Gen3, and the B1 + Z1's operating
envelope, in one table.

    python -m bench.bench_unitree [--trials 2] [--duration 10] [--json PATH]

Every row is measured in this run by the code of the benchmark that owns it:

- Gen3, 1 kHz, 3.63 kg dumbbell, calibrated, its reported velocities with their stated bound
  (:mod:`bench.bench_z1_hardware_like`, ``published``);
- Z1, 500 Hz, 1 kg dumbbell, calibrated, the identifier's velocity estimate with its stated
  bound (:mod:`bench.bench_z1_hardware_like`, ``estimate``), and beside it the same robots and
  motions with exact velocities (``exact``: what the driver's differenced velocities cost; a
  reference, not a claim about the driver);
- B1 + Z1 standing, 500 Hz, payload drawn off the centre of the demo's class, uncalibrated, the
  trunk IMU with its datasheet bias and noise in the rows (the soundness campaign's cases, as
  ``bench_identify --only-b1-hw``).

Columns: cases whose box holds the truth, median mass width, the prior's mass width. Then the
envelope of ``demo.envelope``'s grid (:mod:`sysid_ros._src.demo.envelope`, as ``sysid-demo --robot
b1_z1 --envelope``): per payload class, the V_max levels inside and the first failed premise of
the levels outside.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench.bench_z1_hardware_like import rows
from sysid_ros._src import progress
from sysid_ros._src.identification import load_identification_config
from sysid_ros._src.model.robots import load_robot


def _fixed_base(name: str, modes: tuple[str, ...], payload_kg: float, trials: int,
                duration: float) -> list[dict]:
    prior = float(load_identification_config(load_robot(name)).prior.width[0])
    by_mode = rows(name, modes, payload_kg, trials, duration)
    return [{"cases": trials, "contained": round(by_mode[m]["contains_fraction"] * trials),
             "median_mass_width_kg": by_mode[m]["median_mass_width_kg"],
             "prior_mass_width_kg": prior} for m in modes]


def _b1_z1(trials: int, duration: float) -> dict:
    from sysid_ros._src.calibration.campaign import plan, run_case, tally

    campaign = plan(["b1_z1"], trials, [500.0], 1, seed=0, payload_seconds=duration)
    results = [run_case((c, None)) for c in progress.track(campaign.cases, "b1_z1 cases")]
    group = tally(campaign.cases, results, [None] * len(results))["b1_z1@500Hz"]
    # the prior each case started from: its box's width over its share of the prior's
    prior = [r["mass_width_kg"] / r["mass_width_of_prior"] for r in results
             if r.get("mass_width_of_prior")]
    return {"cases": group["cases"], "contained": group["contained"],
            "refused": group["refused"], "wrong": group["wrong"],
            "median_mass_width_kg": group["mass_width_kg_median"],
            "prior_mass_width_kg": float(np.median(prior)) if prior else None}


def _envelope() -> list[dict]:
    from sysid_ros._src.demo.envelope import envelope

    full = load_robot("b1_z1")
    grid = full.config["demo"]["envelope"]
    points = envelope(full, [float(m) for m in grid["payload_kg"]],
                      [float(v) for v in grid["V_max"]], float(grid.get("class_rel", 0.03)))
    out = []
    for m in dict.fromkeys(p.payload_kg for p in points):
        mine = [p for p in points if p.payload_kg == m]
        outside = [p for p in mine if not p.inside]
        out.append({"payload_kg": m, "V_max_inside": [p.v_max for p in mine if p.inside],
                    "V_max_outside": [p.v_max for p in outside],
                    "first_failed_premise": outside[0].failures[0] if outside else None})
    return out


def _print(table: dict[str, dict], envelope: list[dict], trials: int, duration: float) -> None:
    print(f"\nmass width on hardware-like data, {duration:.0f} s of payload data, {trials} cases "
          "per robot")
    print(f"{'robot':<52}{'contained':>10}{'median mass width kg':>22}{'prior kg':>10}")
    for label, r in table.items():
        width = r["median_mass_width_kg"]
        prior = r["prior_mass_width_kg"]
        print(f"{label:<52}{r['contained']:>5}/{r['cases']:<4}"
              f"{width if width is not None else float('nan'):>22.3f}"
              f"{prior if prior is not None else float('nan'):>10.3f}")
    print("\nB1 + Z1 operating envelope (demo.envelope grid; demo task, dumbbell classes)")
    print(f"{'payload kg':>10} | V_max inside | first failed premise outside")
    for e in envelope:
        inside = ", ".join(f"{v:.0e}" for v in e["V_max_inside"]) or "none"
        first = e["first_failed_premise"]
        outside = "-" if first is None else \
            f"V_max {e['V_max_outside'][0]:.0e}: {first}"
        print(f"{e['payload_kg']:>10.3g} | {inside:<12} | {outside}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_unitree")
    ap.add_argument("--trials", type=int, default=2, help="cases per robot")
    ap.add_argument("--duration", type=float, default=10.0, help="payload data per case, s")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    gen3 = _fixed_base("gen3", ("published",), 3.63, a.trials, a.duration)
    z1 = _fixed_base("z1", ("estimate", "exact"), 1.0, a.trials, a.duration)
    table = {
        "Gen3 1 kHz, 3.63 kg, calibrated (torque sensors)": gen3[0],
        "Z1 500 Hz, 1 kg, calibrated (current torque)": z1[0],
        "  same robots, exact velocities (reference)": z1[1],
        "B1 + Z1 500 Hz, class payload, IMU (current torque)": _b1_z1(a.trials, a.duration),
    }
    env = _envelope()
    _print(table, env, a.trials, a.duration)
    if a.json:
        Path(a.json).write_text(json.dumps({"mass_width": table, "envelope": env,
                                            "trials": a.trials, "duration_s": a.duration},
                                           indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
