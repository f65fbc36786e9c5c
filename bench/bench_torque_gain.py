"""A constant gain error of the torque reading on random hardware-like Z1 robots: how often the
payload box holds the truth when the gain is ignored, stated, or measured with a known payload.

    python -m bench.bench_torque_gain [--robots 6] [--gain-rel 0.1] [--json PATH]

Each robot: the Z1 file's truth draw plus a gain per joint uniform in 1 ± ``--gain-rel``
(``random_hardware_truth(torque_gain_rel=...)``), exact velocities (only the gain at stake),
30 s without payload, 30 s with a known payload drawn off centre in the ``dumbbell_1kg``
class, 20 s with a 1.5 kg dumbbell
(identified under the rated prior). Three calibrations (margin 1.5, no link boxes, no lag):

- ``ignored``: unloaded bag, no gain statement;
- ``stated``: unloaded bag, ``torque_gain_rel`` = the draw's bound;
- ``measured``: unloaded + loaded bags, the drawn payload known exactly, the same statement.

Per variant: payload status, all ten parameters inside, mass width; for the calibrations with a
statement, whether the written gain box holds the true gains and its mean half-width on joints
2–4 (the ones the payload's gravity loads).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.calibration import CalibrationOptions, Recording, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.synthetic import draw_gain_case
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import load_robot

OPTIONS = dict(margin=1.5, link_boxes=False, terms=False, torque_lag="none", velocity_lag="none")


def one_robot(z1, seed: int, gain_rel: float) -> dict:
    case = draw_gain_case(z1, seed, gain_rel, known_class="dumbbell_1kg", velocity="exact")
    truth, known, cal, loaded, pay = case.truth, case.known, case.cal, case.loaded, case.payload
    rec = lambda r, p=None: Recording(r.t, r.q, r.dq, r.tau_meas, payload_theta=p)  # noqa: E731
    variants = {
        "ignored": ([rec(cal)], {}),
        "stated": ([rec(cal)], {"torque_gain_rel": gain_rel}),
        "measured": ([rec(cal), rec(loaded, known.theta())], {"torque_gain_rel": gain_rel}),
    }
    out: dict = {"seed": seed, "gain": truth.torque_gain.tolist()}
    for name, (recs, extra) in variants.items():
        clock = time.perf_counter()
        res = calibrate(z1, recs, CalibrationOptions(**OPTIONS, **extra))
        robot = apply_calibration(z1, calibration_document(res))
        config = load_identification_config(robot)
        box = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp",
                       point_estimate=False)
        lo, hi = res.torque_gain_box
        out[name] = {
            "status": box.status,
            "contains": bool(box.status == "ok" and box.contains(pay.truth.theta_e)),
            "mass_width": float(box.upper[0] - box.lower[0]) if box.status == "ok" else None,
            "gain_box_holds": bool(np.all((truth.torque_gain >= lo)
                                          & (truth.torque_gain <= hi))),
            "gain_halfwidth_j2_4": float(np.mean(0.5 * (hi - lo)[1:4])),
            "seconds": time.perf_counter() - clock,
        }
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", type=int, default=6)
    p.add_argument("--gain-rel", type=float, default=0.1)
    p.add_argument("--json")
    args = p.parse_args(argv)
    z1 = load_robot("z1")
    runs = []
    for seed in progress.track(range(args.robots), "robots"):
        r = one_robot(z1, seed, args.gain_rel)
        runs.append(r)
        print(f"seed {seed}: gains {np.round(r['gain'], 3).tolist()}")
        for name in ("ignored", "stated", "measured"):
            v = r[name]
            width = "-" if v["mass_width"] is None else f"{v['mass_width']:.2f} kg"
            print(f"  {name:8s} {v['status']:12s} truth inside {v['contains']!s:5s} "
                  f"mass width {width:8s} gain box holds {v['gain_box_holds']!s:5s} "
                  f"half-width j2-4 {v['gain_halfwidth_j2_4']:.3f}")
    print("summary (truth inside / robots):")
    for name in ("ignored", "stated", "measured"):
        inside = sum(r[name]["contains"] for r in runs)
        widths = [r[name]["mass_width"] for r in runs if r[name]["contains"]]
        med = f", median mass width {np.median(widths):.2f} kg" if widths else ""
        print(f"  {name:8s} {inside}/{len(runs)}{med}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gain_rel": args.gain_rel, "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
