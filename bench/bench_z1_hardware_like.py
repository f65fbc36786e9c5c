"""Mass width of the Z1 on hardware-like data, next to the Gen3's.

    python -m bench.bench_z1_hardware_like [--trials 3] [--duration 10] [--json PATH]

Z1: the robot file's hardware-like profile (500 Hz, 1 % drops, stamps up to 0.2 periods late,
0.01° encoder counts, current-based torque with 5 % relative noise, the driver's backward-difference
velocities) on robots drawn as the sim node draws them (``simulation.sim_truth``, seeds 0…),
calibrated without payload (20 s, margin 1.5) and then identified on ``--duration`` s with the
1 kg dumbbell, offline (``lp``, the robot file's prior), three ways:

- ``estimate``: the identifier's velocity estimate with its stated bound
  (``identification.differenced_velocity``; sysid_ros._src.identification.velocity_estimate), the
  calibration made from the same estimate (``sysid-calibrate --state-estimate slope``), the
  payload's share of the velocity error in the rows (scope ``payload``);
- ``exact``: the same robots and motions with exact velocities (the reference: what the
  velocities cost);
- ``differences``: the driver's differences with no velocity bound stated (the calibration's
  torque bound alone absorbing their error: no premise covers the payload's share, shown
  for the width it would give).

Gen3: its robot file's hardware-like profile (1 kHz, reported velocities within ±0.002 rad/s,
torque lag), calibrated the same way, a 3.63 kg dumbbell, its velocities with their stated bound
(``published``, the Gen3 demo's path).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.calibration import CalibrationOptions, Recording, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.state import slope_derivative
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros._src.identification.velocity_estimate import slope_source
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, record_hardware_like, sim_truth
from sysid_ros._src.simulation.assumptions import identifier_assumptions

MODES = ("estimate", "exact", "differences")


def _identified(name: str, k: int, mode: str, payload_kg: float, duration: float
                ) -> tuple[bool, bool, float]:
    """(ok, contains, mass width) of drawn robot ``k`` of ``name``, calibrated without payload
    and identified on ``duration`` s with a ``payload_kg`` dumbbell; ``mode`` (module doc) or
    ``published`` (the profile's own velocities with their stated bound)."""
    robot0 = load_robot(name)
    base = HardwareProfile.from_robot(robot0)
    prof = dataclasses.replace(base, velocity="exact") if mode == "exact" else base
    payload = dumbbell_for(robot0, payload_kg)
    cal = record_hardware_like(robot0, np.random.default_rng([k, 2, 0]), None, 20.0, prof,
                               sim_truth(robot0, k))
    pay = record_hardware_like(robot0, np.random.default_rng([k, 2, 2]), payload, duration,
                               prof, sim_truth(robot0, k, payload))
    recording = Recording(cal.t, cal.q, cal.dq, cal.tau_meas)
    if mode == "estimate":
        # calibrated on the identifier's own estimate (what scope payload rests on)
        half = float(robot0.config["identification"]["differenced_velocity"]["half_width_s"])
        recording = recording.with_velocity(slope_derivative(cal.t, cal.q, half).dq,
                                            slope_source(half))
    res = calibrate(robot0, [recording], CalibrationOptions(margin=1.5, link_boxes=False))
    robot = apply_calibration(robot0, calibration_document(res))
    kw = identifier_assumptions(robot, prof, calibrated=True) \
        if mode in ("estimate", "published") else {}
    r = identify(robot, load_identification_config(robot, **kw), pay.t, pay.q, pay.dq,
                 pay.tau_meas, "lp", point_estimate=False)
    width = float(r.upper[0] - r.lower[0]) if r.lower is not None else float("nan")
    return r.status == "ok", r.contains(pay.truth.theta_e), width


def rows(name: str, modes: tuple[str, ...], payload_kg: float, trials: int,
         duration: float) -> dict:
    """Per mode: ok and containment fractions, median and per-robot mass widths (kg)."""
    out: dict = {m: [] for m in modes}
    for k in progress.track(range(trials), f"{name} robots"):
        for mode in modes:
            out[mode].append(_identified(name, k, mode, payload_kg, duration))
    return {m: {"ok_fraction": float(np.mean([v[0] for v in r])),
                "contains_fraction": float(np.mean([v[1] for v in r])),
                "median_mass_width_kg": float(np.nanmedian([v[2] for v in r])),
                "mass_width_kg": [v[2] for v in r]} for m, r in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_z1_hardware_like")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    z1 = rows("z1", MODES, 1.0, a.trials, a.duration)
    gen3 = rows("gen3", ("published",), 3.63, a.trials, a.duration)
    print(f"\nmass width on hardware-like data, calibrated, {a.trials} drawn robots x "
          f"{a.duration:.0f} s of payload data")
    print(f"{'robot':<28}{'velocities':<14}{'ok':>6}{'contains':>10}{'median mass width kg':>22}"
          f"{'prior kg':>10}")
    prior = {n: float(load_identification_config(load_robot(n)).prior.width[0])
             for n in ("z1", "gen3")}
    table = [("Z1 500 Hz, 1 kg", m, z1[m], prior["z1"]) for m in MODES] + \
        [("Gen3 1 kHz, 3.63 kg", "published", gen3["published"], prior["gen3"])]
    for robot, mode, r, prior in table:
        print(f"{robot:<28}{mode:<14}{r['ok_fraction']:>6.2f}{r['contains_fraction']:>10.2f}"
              f"{r['median_mass_width_kg']:>22.3f}{prior:>10.2f}")
    if a.json:
        Path(a.json).write_text(json.dumps({"z1": z1, "gen3": gen3, "trials": a.trials,
                                            "duration_s": a.duration}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
