"""Mass width of the Z1 on hardware-like data, next to the Gen3's.

    python -m bench.bench_z1_hardware_like [--trials 3] [--duration 10] [--json PATH]

Z1: the robot file's hardware-like profile (500 Hz, 1 % drops, stamps up to 0.2 periods late,
0.01° encoder counts, current-based torque with 5 % relative noise, the driver's backward-difference
velocities) on robots drawn as the sim node draws them (``simulation.sim_truth``, seeds 0…),
calibrated without payload (20 s, margin 1.5) and then identified on ``--duration`` s with the
1 kg dumbbell, offline (``lp``, rated prior 2.45 kg wide), three ways:

- ``estimate``: the identifier's velocity estimate with its stated bound
  (``identification.differenced_velocity``; sysid_ros.identification.velocity_estimate), the
  product path;
- ``exact``: the same robots and motions with exact velocities (the reference: what the
  velocities cost);
- ``differences``: the driver's differences with no velocity bound stated (the calibration's
  torque bound alone absorbing their error: no premise covers the payload's share, shown
  for the width it would give).

Gen3: the hardware-like section of ``bench.bench_identify`` at 500 Hz (10 % drops, uncalibrated,
exact velocities), the same code path.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

from sysid_ros import progress
from sysid_ros.calibration import CalibrationOptions, Recording, calibrate
from sysid_ros.calibration.document import calibration_document
from sysid_ros.identification import identify, load_identification_config
from sysid_ros.model.calibration import apply_calibration
from sysid_ros.model.robots import load_robot
from sysid_ros.simulation import HardwareProfile, dumbbell_for, record_hardware_like, sim_truth
from sysid_ros.simulation.assumptions import identifier_assumptions

MODES = ("estimate", "exact", "differences")


def z1_rows(trials: int, duration: float) -> dict:
    """Per mode: ok and containment fractions, median mass width (kg)."""
    z1 = load_robot("z1")
    base = HardwareProfile.from_robot(z1)
    payload = dumbbell_for(z1, 1.0)
    out: dict = {m: {"ok": [], "contains": [], "mass_width_kg": []} for m in MODES}
    for k in progress.track(range(trials), "Z1 robots"):
        for mode in MODES:
            prof = dataclasses.replace(base, velocity="exact") if mode == "exact" else base
            cal = record_hardware_like(z1, np.random.default_rng([k, 2, 0]), None, 20.0, prof,
                                       sim_truth(z1, k))
            pay = record_hardware_like(z1, np.random.default_rng([k, 2, 2]), payload, duration,
                                       prof, sim_truth(z1, k, payload))
            res = calibrate(z1, [Recording(cal.t, cal.q, cal.dq, cal.tau_meas)],
                            CalibrationOptions(margin=1.5, link_boxes=False))
            robot = apply_calibration(z1, calibration_document(res))
            kw = identifier_assumptions(robot, prof, calibrated=True) if mode == "estimate" \
                else {}
            cfg = load_identification_config(robot, **kw)
            r = identify(robot, cfg, pay.t, pay.q, pay.dq, pay.tau_meas, "lp",
                         point_estimate=False)
            row = out[mode]
            row["ok"].append(r.status == "ok")
            row["contains"].append(r.contains(pay.truth.theta_e))
            row["mass_width_kg"].append(float(r.upper[0] - r.lower[0]) if r.lower is not None
                                        else float("nan"))
    return {m: {"ok_fraction": float(np.mean(v["ok"])),
                "contains_fraction": float(np.mean(v["contains"])),
                "median_mass_width_kg": float(np.nanmedian(v["mass_width_kg"])),
                "mass_width_kg": v["mass_width_kg"]} for m, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_z1_hardware_like")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    from bench.bench_identify import _real_rates

    z1 = z1_rows(a.trials, a.duration)
    gen3 = _real_rates(load_robot("gen3"), [500.0], a.trials, a.duration)[0]
    print(f"\nmass width on hardware-like data at 500 Hz, {a.trials} robots x {a.duration:.0f} s "
          "of payload data")
    print(f"{'robot':<8}{'velocities':<40}{'ok':>6}{'contains':>10}{'median mass width kg':>22}")
    for mode in MODES:
        r = z1[mode]
        print(f"{'Z1':<8}{mode:<40}{r['ok_fraction']:>6.2f}{r['contains_fraction']:>10.2f}"
              f"{r['median_mass_width_kg']:>22.3f}")
    width = gen3["median_mass_width_kg"]
    print(f"{'Gen3':<8}{'exact (uncalibrated, 10 % drops)':<40}{gen3['ok_fraction']:>6.2f}"
          f"{gen3['contains_fraction']:>10.2f}"
          + (f"{width:>22.3f}" if width is not None else f"{'no ok box':>22}"))
    if a.json:
        Path(a.json).write_text(json.dumps({"z1": z1, "gen3_500hz": gen3,
                                            "trials": a.trials, "duration_s": a.duration},
                                           indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
