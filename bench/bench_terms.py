"""Adopted friction terms on simulated data with a known ripple: selection, boxes, payload.

    python -m bench.bench_terms [--amplitudes 1.0,0.3] [--robots 5] [--cal-seconds 8,8]
                                [--payload-seconds 6] [--json PATH]

For each amplitude A and robot k: a hardware-like Gen3 (``draw_case`` seed k) whose joints carry
the ripple A·(cos φ_j·sin(2q_j) + sin φ_j·cos(2q_j)) (phases φ from seed 100 + k), applied by
MuJoCo as a load at every physics step (``HardwareTruth.ripple``). It is calibrated without
payload twice — with the extra terms judged and adopted (the default) and with the linear law
(``terms=False``) — and the 3.63 kg dumbbell recording is identified (offline ``lp``) with each
calibration. Printed per draw: the selected terms and their gains, whether the adopted
harmonic-2 boxes hold the simulated coefficients, the mean noise bound, the payload status, the
mass width and whether the box holds the truth (docs/guide/calibrate.md#extra-friction-terms-judged-then-adopted).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import Robot, load_robot


def _ripple(robot: Robot, amplitude: float, k: int) -> np.ndarray:
    phase = np.random.default_rng(100 + k).uniform(0.0, 2.0 * np.pi, robot.nj)
    return amplitude * np.stack([np.cos(phase), np.sin(phase)], axis=1)


def _one(robot: Robot, case, ripple: np.ndarray, terms: bool) -> dict[str, Any]:
    res = calibrate(robot, case.recordings(), CalibrationOptions(link_boxes=False, terms=terms))
    calibrated = apply_calibration(robot, calibration_document(res))
    pay = case.payload
    out = identify(calibrated, load_identification_config(calibrated), pay.t, pay.q, pay.dq,
                   pay.tau_meas, "lp", point_estimate=False)
    ft = res.friction_terms
    holds = None
    if ft is not None and ft.names[0] == "harmonic 2":
        holds = int(np.sum((ft.lower[:, :2] <= ripple) & (ripple <= ft.upper[:, :2])))
    ok = out.status == "ok"
    return {"selected": [] if res.terms is None else list(res.terms.selected),
            "step_gain": [] if res.terms is None else [float(g) for g in res.terms.step_gain],
            "adopted": [] if ft is None else list(ft.names),
            "harmonic2_boxes_holding": holds, "noise_mean_Nm": float(np.mean(res.noise)),
            "status": out.status, "mass_width_kg": float(out.upper[0] - out.lower[0]) if ok else None,
            "truth_inside": bool(ok and out.contains(pay.truth.theta_e))}


def run(amplitudes: list[float], robots: int, cal_seconds: tuple[float, ...],
        payload_seconds: float) -> dict[str, Any]:
    robot = load_robot("gen3")
    out: dict[str, Any] = {"amplitudes": amplitudes, "robots": robots,
                           "cal_seconds": list(cal_seconds), "draws": []}
    for amplitude, k in progress.track([(amp, k) for amp in amplitudes for k in range(robots)],
                                       "draws"):
        ripple = _ripple(robot, amplitude, k)
        case = draw_case(robot, k, cal_seconds=cal_seconds,
                         payload_seconds=payload_seconds, ripple=ripple)
        item = {"amplitude": amplitude, "robot": k,
                "adopting": _one(robot, case, ripple, True),
                "linear": _one(robot, case, ripple, False)}
        out["draws"].append(item)
        a, lin = item["adopting"], item["linear"]
        holds = a["harmonic2_boxes_holding"]
        print(f"A={amplitude:g} N*m robot {k}: selected {a['selected']} gains "
              f"{[round(g, 2) for g in a['step_gain']]}, harmonic-2 boxes holding "
              f"{'-' if holds is None else holds}/{2 * robot.nj}; adopting: {a['status']} "
              f"{_width(a)} truth {'in' if a['truth_inside'] else 'OUT'}; linear law: "
              f"{lin['status']} {_width(lin)} truth {'in' if lin['truth_inside'] else 'OUT'}",
              flush=True)
    return out


def _width(item: dict[str, Any]) -> str:
    w = item["mass_width_kg"]
    return "" if w is None else f"mass {w:.2f} kg,"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--amplitudes", default="1.0,0.3", help="ripple amplitudes (N·m), comma-separated")
    p.add_argument("--robots", type=int, default=5, help="random robots per amplitude")
    p.add_argument("--cal-seconds", default="8,8", help="calibration recordings (s), comma-separated")
    p.add_argument("--payload-seconds", type=float, default=6.0)
    p.add_argument("--json", type=Path, help="write the figures as JSON")
    args = p.parse_args(argv)
    out = run([float(a) for a in args.amplitudes.split(",")], args.robots,
              tuple(float(s) for s in args.cal_seconds.split(",")), args.payload_seconds)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
