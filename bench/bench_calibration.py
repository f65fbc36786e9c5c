"""Calibration benchmark: soundness over random robots, prediction on held-out data, cost, and
what calibration buys the payload identifier.

    python -m bench.bench_calibration [--robots 20] [--xval-robots 3] [--json PATH]
                                      [--skip soundness,xval,timing,payload]

All data are hardware-like Gen3 recordings (``sysid_ros._src.calibration.synthetic``: friction and
armature up to ±50 % off the robot file, Coulomb friction, sensor offsets, links ±5 %, MuJoCo dry
friction, the robot file's sensor noise, stamp jitter, dropped samples), so the truth is known.

1. **soundness** — ``--robots`` random robots at 500 Hz (20 s calibration, 10 s with the 3.63 kg
   dumbbell): how often the calibrated Fc/Fv/Ia/β boxes contain the truth, and how often the
   payload identifier (``lp``, friction ``config`` after applying the calibration) returns
   ``ok`` with all ten parameters inside; the same payload data with the shipped facts; and the
   smallest noise margin that would still have contained the truth (bisection, resolution
   1/16), which says how much of the default 1.25 is used. The same payload data with the
   calibration's rows as LP constraints (``sysid-calibrate --export-rows``: θ_r shared, the
   rows on θ_r and friction; docs/guide/calibrate.md#limits-and-open-questions): status,
   containment, mass width. Also the positions-only path
   (RTS state estimate for calibration and identification) on the first 5 robots.
2. **xval** — ``--xval-robots`` robots at 1 kHz (30 s calibration, 15 s validation not used for
   fitting): torque RMS per joint (per sample, q̇/q̈ from the RTS smoother) for the linear and
   Stribeck laws, with and without energy rows, against two floors measured in the same run:
   the sensor noise (τ̂ minus the true motor torque + offset) and the truth model (the simulated
   robot's own parameters through the same predictor and state estimate).
3. **timing** — wall time of ``calibrate`` (default options, link boxes on) on 15/30/60/120 s
   of 1 kHz data, with the baseline of one ``Regressors.momentum_pair`` pass over the same
   samples (in 4000-sample chunks) measured in the same run (target: 60 s in ≤ 30 s on
   2 cores; linear growth?).
4. **payload** — the online identifier (0.5 s updates, ``lp``) on 30 s of 1 kHz data with the
   3.63 kg dumbbell, with the facts calibrated from the 60 s recording vs the shipped ±5 %
   friction box (``config``) and the shipped default ``wide`` box; target mass width ≤ 0.15 kg.
   Also the calibrated facts with 1000 of their rows and with all rows (online ``lp`` with the
   per-update time, and offline).
   Offline boxes with measured and with RTS-smoothed velocities for comparison.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.calibration import CalibrationOptions, Recording, calibrate
from sysid_ros._src.calibration.calibrate import exported_rows
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.state import encoder_sigma, rts_smoother
from sysid_ros._src.calibration.synthetic import as_recording, draw_case
from sysid_ros._src.calibration.validate import nominal_model, predict_torque
from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config
from sysid_ros import apply_calibration
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import FRICTION_NAMES, load_robot

SECTIONS = ("soundness", "xval", "timing", "payload")


def _identify(robot, rec: Recording, config=None, method="lp"):
    config = config or load_identification_config(robot)
    return identify(robot, config, rec.t, rec.q, rec.dq, rec.tau, method, point_estimate=False)


def _calibrated(robot, result):
    return apply_calibration(robot, calibration_document(result))


def _contains(res, truth) -> bool:
    return res.status == "ok" and res.contains(truth)


def _needed_margin(robot, cal: list[Recording], pay: Recording, truth,
                   windows: dict) -> float:
    """Smallest margin (floor 0) whose calibration still gives an ok box with the truth."""
    def good(margin: float) -> bool:
        res = calibrate(robot, cal, CalibrationOptions(link_boxes=False, margin=margin,
                                                       noise_floor=0.0, **windows))
        return _contains(_identify(_calibrated(robot, res), pay), truth)

    lo, hi = 1.0, 2.0
    if good(lo):
        return lo
    if not good(hi):
        return float("inf")
    for _ in range(4):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if good(mid) else (mid, hi)
    return hi


def _smoothed(rec: Recording, sigma_q, positions_only: bool = False) -> Recording:
    est = rts_smoother(rec.t, rec.q, None if positions_only else rec.dq, sigma_q=sigma_q)
    return rec.with_velocity(est.dq, "state estimate (rts)")


def soundness(robot, n: int, margins: bool, windows: dict) -> dict:
    sigma_q = encoder_sigma(robot)
    rows, t0 = [], time.perf_counter()
    shipped = load_identification_config(robot, friction="config")
    for k in progress.track(range(n), "robots"):
        case = draw_case(robot, 500 + k, cal_seconds=(20.0,), payload_seconds=10.0)
        cal, pay = case.recordings(), as_recording(case.payload, "payload")
        truth_f, truth_e = case.truth.friction, case.payload.truth.theta_e
        res = calibrate(robot, cal, CalibrationOptions(**windows))
        inside = (truth_f >= res.friction_lower) & (truth_f <= res.friction_upper)
        calibrated = _calibrated(robot, res)
        out = _identify(calibrated, pay)
        with_rows = _identify(calibrated, pay, load_identification_config(
            calibrated, calibration_rows=exported_rows(res)))
        ship = _identify(robot, pay, shipped)
        # the driver's velocity noise stated again through the whole arm, or for the payload's
        # share only (velocity_noise_scope: payload; the calibration absorbed the rest)
        eps = np.broadcast_to(np.asarray(case.payload.profile.velocity_noise, float),
                              (robot.nj,))
        vel = {scope: _identify(calibrated, pay, load_identification_config(
            calibrated, velocity_noise_abs=eps, velocity_noise_scope=scope))
            for scope in ("all", "payload")}
        row = {"seed": case.seed, "friction_inside": inside.all(axis=0).tolist(),
               "status": out.status, "contains": _contains(out, truth_e),
               "mass_width_kg": float(out.upper[0] - out.lower[0]) if out.status == "ok"
               else None,
               "rows_status": with_rows.status, "rows_contains": _contains(with_rows, truth_e),
               "rows_mass_width_kg": float(with_rows.upper[0] - with_rows.lower[0])
               if with_rows.status == "ok" else None,
               **{f"velocity_{s}_status": v.status for s, v in vel.items()},
               **{f"velocity_{s}_contains": _contains(v, truth_e) for s, v in vel.items()},
               **{f"velocity_{s}_mass_width_kg": float(v.upper[0] - v.lower[0])
                  if v.status == "ok" else None for s, v in vel.items()},
               "shipped_status": ship.status,
               "shipped_wrong_ok": ship.status == "ok" and not ship.contains(truth_e),
               "calibrate_s": float(sum(res.seconds.values()))}
        if margins:
            row["margin_needed"] = _needed_margin(robot, cal, pay, truth_e, windows)
        if k < 5:   # positions only: estimator velocities on both sides
            case_p = draw_case(robot, 900 + k, cal_seconds=(20.0,), payload_seconds=10.0,
                               velocity="missing")
            cal_p = [_smoothed(r, sigma_q, True) for r in case_p.recordings()]
            pay_p = _smoothed(as_recording(case_p.payload, "payload"), sigma_q, True)
            out_p = _identify(_calibrated(robot, calibrate(robot, cal_p,
                                                           CalibrationOptions(**windows))),
                              pay_p)
            row["positions_only_status"] = out_p.status
            row["positions_only_contains"] = _contains(out_p, case_p.payload.truth.theta_e)
        rows.append(row)
        print(f"  robot {k + 1}/{n}: friction inside {row['friction_inside']}, payload "
              f"{row['status']} contains={row['contains']}, with rows {row['rows_status']} "
              f"contains={row['rows_contains']} width {row['rows_mass_width_kg']}, shipped "
              f"{row['shipped_status']}"
              + (f", margin needed {row['margin_needed']:.3g}" if margins else ""), flush=True)
    inside = np.array([r["friction_inside"] for r in rows])
    widths = [r["mass_width_kg"] for r in rows if r["mass_width_kg"] is not None]
    rw = [r["rows_mass_width_kg"] for r in rows if r["rows_mass_width_kg"] is not None]
    pos = [r for r in rows if "positions_only_status" in r]
    summary = {
        "robots": n,
        "friction_inside_count": dict(zip(FRICTION_NAMES, inside.sum(axis=0).tolist())),
        "payload_ok": sum(r["status"] == "ok" for r in rows),
        "payload_contains": sum(r["contains"] for r in rows),
        "median_mass_width_kg": float(np.median(widths)) if widths else None,
        "rows_ok": sum(r["rows_status"] == "ok" for r in rows),
        "rows_contains": sum(r["rows_contains"] for r in rows),
        "rows_median_mass_width_kg": float(np.median(rw)) if rw else None,
        **{f"velocity_{s}_{k}": f([r[f"velocity_{s}_{key}"] for r in rows])
           for s in ("all", "payload")
           for k, key, f in (("ok", "status", lambda v: sum(x == "ok" for x in v)),
                             ("contains", "contains", sum),
                             ("median_mass_width_kg", "mass_width_kg", _median))},
        "shipped_inconsistent": sum(r["shipped_status"] == "inconsistent" for r in rows),
        "shipped_wrong_ok": sum(r["shipped_wrong_ok"] for r in rows),
        "positions_only_ok": sum(r["positions_only_status"] == "ok" for r in pos),
        "positions_only_contains": sum(r["positions_only_contains"] for r in pos),
        "positions_only_robots": len(pos),
        "windows": windows, "seconds": time.perf_counter() - t0, "per_robot": rows}
    if margins:
        need = np.array([r["margin_needed"] for r in rows])
        summary["margin_needed_max"] = float(need.max())
        summary["margin_needed_median"] = float(np.median(need))
    return summary


def _median(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.median(kept)) if kept else None


def _truth_vector(robot, truth) -> tuple[np.ndarray, np.ndarray]:
    return truth.theta(robot), np.asarray(truth.friction)


def xval(robot, n: int) -> dict:
    sigma_q = encoder_sigma(robot)
    variants = {"linear": {}, "stribeck": {"friction_law": "stribeck"},
                "linear+energy": {"energy": True},
                "stribeck+energy": {"friction_law": "stribeck", "energy": True}}
    rms = {v: [] for v in variants}
    floor_sensor, floor_model = [], []
    for k in progress.track(range(n), "robots"):
        case = draw_case(robot, 600 + k, cal_seconds=(30.0, 15.0), payload_seconds=0.0,
                         rate_hz=1000.0)
        cal, val = case.recordings()
        val_hw = case.cal[1]
        est = rts_smoother(val.t, val.q, val.dq, sigma_q=sigma_q)
        theta, fr = _truth_vector(robot, case.truth)
        truth_pred = predict_torque(robot, nominal_model(robot, theta), fr, val.q, est.dq,
                                    est.ddq)
        floor_model.append(np.sqrt(np.mean((val.tau - truth_pred) ** 2, axis=0)))
        sensor = val_hw.tau_motor + fr[:, 3]
        floor_sensor.append(np.sqrt(np.mean((val.tau - sensor) ** 2, axis=0)))
        for name, kw in variants.items():
            res = calibrate(robot, [cal], CalibrationOptions(link_boxes=False, **kw))
            pred = predict_torque(robot, nominal_model(robot, res.link_nominal),
                                  res.friction_nominal, val.q, est.dq, est.ddq, res.stribeck)
            rms[name].append(np.sqrt(np.mean((val.tau - pred) ** 2, axis=0)))
        print(f"  xval robot {k + 1}/{n} done", flush=True)
    out = {"robots": n, "floor_sensor_rms": np.mean(floor_sensor, 0).tolist(),
           "floor_model_rms": np.mean(floor_model, 0).tolist(),
           "rms": {v: np.mean(r, 0).tolist() for v, r in rms.items()}}
    return out


def timing(robot, durations: list[float]) -> tuple[dict, object]:
    long = draw_case(robot, 700, cal_seconds=(max(durations),), payload_seconds=30.0,
                     rate_hz=1000.0, drop_prob=0.005)
    rec = long.recordings()[0]
    reg = Regressors(robot)
    rows = {}
    result60 = None
    for d in durations:
        keep = rec.t < rec.t[0] + d
        part = Recording(rec.t[keep], rec.q[keep], rec.dq[keep], rec.tau[keep], f"{d:g}s")
        c0 = time.perf_counter()
        res = calibrate(robot, [part])
        wall = time.perf_counter() - c0
        qf = np.tile(robot.neutral(), (keep.sum(), 1))
        qf[:, robot.q_index] = part.q
        vf = np.zeros((keep.sum(), robot.nv))
        vf[:, robot.v_index] = part.dq
        c0 = time.perf_counter()
        for a in range(0, qf.shape[0], 4000):     # in chunks, as MomentumWindows evaluates it
            reg.momentum_pair(qf[a:a + 4000], vf[a:a + 4000])
        base = time.perf_counter() - c0
        rows[f"{d:g}"] = {"samples": int(keep.sum()), "wall_s": wall, "baseline_s": base,
                          "ratio": wall / base, "parts_s": res.seconds}
        print(f"  {d:>5.0f} s of data: {wall:.2f} s", flush=True)
        if d == 60.0:
            result60 = res
    return rows, (long, result60 or res)


def _online_width(robot, config, rec: Recording) -> dict:
    online = OnlineIdentifier(robot, config, "lp", point_estimate=False)
    step = 0.5
    t0 = rec.t[0]
    edges = np.searchsorted(rec.t, np.arange(t0, rec.t[-1] + step, step))
    statuses, update_s = [], []
    c0 = time.perf_counter()
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            online.add_samples(rec.t[a:b], rec.q[a:b], rec.dq[a:b], rec.tau[a:b])
            c1 = time.perf_counter()
            statuses.append(online.update())
            update_s.append(time.perf_counter() - c1)
    return {"status": online.status, "lower": online.lower.tolist(),
            "upper": online.upper.tolist(),
            "mass_width_kg": float(online.upper[0] - online.lower[0]),
            "updates": len(statuses), "cpu_s": time.perf_counter() - c0,
            "update_s_median": float(np.median(update_s)) if update_s else None,
            "update_s_max": float(np.max(update_s)) if update_s else None}


def payload(robot, long, result) -> dict:
    sigma_q = encoder_sigma(robot)
    pay = as_recording(long.payload, "payload")
    truth = long.payload.truth.theta_e
    calibrated = _calibrated(robot, result)
    out = {}
    for name, (rb, cfg) in {
            "calibrated": (calibrated, load_identification_config(calibrated)),
            "calibrated_rows_1000": (calibrated, load_identification_config(
                calibrated, calibration_rows=exported_rows(result), calibration_rows_max=1000)),
            "calibrated_rows_all": (calibrated, load_identification_config(
                calibrated, calibration_rows=exported_rows(result))),
            "shipped_config": (robot, load_identification_config(robot, friction="config")),
            "shipped_wide": (robot, load_identification_config(robot, friction="wide"))}.items():
        on = _online_width(rb, cfg, pay)
        on["contains"] = bool(on["status"] == "ok"
                              and np.all(np.array(on["lower"]) <= truth)
                              and np.all(truth <= np.array(on["upper"])))
        off = _identify(rb, pay, cfg)
        on["offline_status"] = off.status
        on["offline_mass_width_kg"] = float(off.upper[0] - off.lower[0]) \
            if off.status == "ok" else None
        on["offline_contains"] = _contains(off, truth)
        out[name] = on
        print(f"  {name}: online {on['status']} mass width {on['mass_width_kg']:.3f} kg "
              f"(update median {on['update_s_median']:.3f} s), offline {off.status} "
              f"{on['offline_mass_width_kg']}", flush=True)
    # an earlier key, kept: calibrated_rows_all's offline box
    every = out["calibrated_rows_all"]
    out["calibrated_all_rows_offline"] = {
        "status": every["offline_status"], "contains": every["offline_contains"],
        "mass_width_kg": every["offline_mass_width_kg"]}
    # what limits the width (diagnostic only, NOT sound): the calibrated config with one
    # friction coefficient pinned at its nominal, or with the other bodies exactly at their URDF
    cfg = load_identification_config(calibrated)
    nom = result.friction_nominal
    limits = {}
    for k, name in enumerate(FRICTION_NAMES):
        lo, hi = cfg.friction_lower.copy(), cfg.friction_upper.copy()
        lo[:, k], hi[:, k] = nom[:, k], nom[:, k]
        r = _identify(calibrated, pay, cfg.with_overrides(friction_lower=lo, friction_upper=hi))
        limits[f"{name}_pinned"] = float(r.upper[0] - r.lower[0]) if r.status == "ok" else None
    r = _identify(calibrated, pay, cfg.with_overrides(robot_uncertainty_rel=0.0))
    limits["theta_r_point"] = float(r.upper[0] - r.lower[0]) if r.status == "ok" else None
    out["width_if_pinned_offline"] = limits
    # offline with smoothed velocities on both sides (sysid-calibrate --state-estimate)
    rec = long.recordings()[0]
    keep = rec.t < rec.t[0] + 60.0
    part = Recording(rec.t[keep], rec.q[keep], rec.dq[keep], rec.tau[keep], "60s")
    rb = _calibrated(robot, calibrate(robot, [_smoothed(part, sigma_q)]))
    off = _identify(rb, _smoothed(pay, sigma_q))
    out["calibrated_rts_offline"] = {
        "status": off.status, "contains": _contains(off, truth),
        "mass_width_kg": float(off.upper[0] - off.lower[0]) if off.status == "ok" else None}
    out["truth_mass_kg"] = float(truth[0])
    return out


def _print(report: dict, robot) -> None:
    s = report.get("soundness")
    if s:
        print(f"\nsoundness, {s['robots']} random robots (500 Hz, 20 s calibration, 10 s "
              f"dumbbell), windows {s['windows']['window_s']} s every "
              f"{s['windows']['stride_s']} s:")
        print("  friction boxes contain the truth: " + ", ".join(
            f"{k} {v}/{s['robots']}" for k, v in s["friction_inside_count"].items()))
        print(f"  payload box with calibrated facts: ok {s['payload_ok']}/{s['robots']}, "
              f"contains all ten {s['payload_contains']}/{s['robots']}, median mass width "
              f"{s['median_mass_width_kg']:.3f} kg")
        rw = s["rows_median_mass_width_kg"]
        print(f"  ... with the calibration rows: ok {s['rows_ok']}/{s['robots']}, contains all "
              f"ten {s['rows_contains']}/{s['robots']}, median mass width "
              + (f"{rw:.3f} kg" if rw is not None else "-"))
        for scope in ("all", "payload"):
            w = s[f"velocity_{scope}_median_mass_width_kg"]
            print(f"  ... with the velocity noise stated ({scope}): ok "
                  f"{s[f'velocity_{scope}_ok']}/{s['robots']}, contains all ten "
                  f"{s[f'velocity_{scope}_contains']}/{s['robots']}, median mass width "
                  + (f"{w:.3f} kg" if w is not None else "-"))
        print(f"  shipped facts on the same data: inconsistent {s['shipped_inconsistent']}/"
              f"{s['robots']}, ok without the truth {s['shipped_wrong_ok']}")
        print(f"  positions only (RTS on both sides): ok {s['positions_only_ok']}/"
              f"{s['positions_only_robots']}, contains {s['positions_only_contains']}")
        if "margin_needed_max" in s:
            print(f"  noise margin needed for containment: median {s['margin_needed_median']:.3f}"
                  f", max {s['margin_needed_max']:.3f} (default 1.25 + 0.02 N·m)")
    x = report.get("xval")
    if x:
        names = robot.joint_names
        print(f"\nheld-out torque RMS per joint (N·m), mean over {x['robots']} robots, 1 kHz:")
        print(f"{'':<18}" + "".join(f"{n:>9}" for n in names) + f"{'mean':>9}{'/model':>8}")
        fm = np.array(x["floor_model_rms"])
        for label, vals in [("sensor noise", x["floor_sensor_rms"]),
                            ("truth model", x["floor_model_rms"]), *x["rms"].items()]:
            v = np.array(vals)
            print(f"{label:<18}" + "".join(f"{a:>9.3f}" for a in v)
                  + f"{v.mean():>9.3f}{v.mean() / fm.mean():>8.2f}")
    t = report.get("timing")
    if t:
        print("\ncalibrate() wall time, 1 kHz Gen3 (default options, link boxes on):")
        print(f"{'data s':>8}{'samples':>9}{'wall s':>9}{'baseline s':>12}{'ratio':>8}"
              f"{'s per data s':>14}")
        for d, r in t.items():
            print(f"{float(d):>8.0f}{r['samples']:>9}{r['wall_s']:>9.2f}{r['baseline_s']:>12.3f}"
                  f"{r['ratio']:>8.1f}{r['wall_s'] / float(d):>14.3f}")
    p = report.get("payload")
    if p:
        print(f"\n3.63 kg dumbbell, 30 s at 1 kHz (true mass {p['truth_mass_kg']:.3f} kg), online"
              " lp, 0.5 s updates:")
        for name in ("calibrated", "calibrated_rows_1000", "calibrated_rows_all",
                     "shipped_config", "shipped_wide"):
            r = p[name]
            w = f"{r['mass_width_kg']:.3f}" if r["status"] == "ok" else "-"
            ow = r["offline_mass_width_kg"]
            print(f"  {name:<20} online {r['status']:<13} mass width {w:>7} kg, contains "
                  f"{r['contains']}, update median {r['update_s_median']:.3f} s max "
                  f"{r['update_s_max']:.3f} s; offline {r['offline_status']} "
                  + (f"{ow:.3f} kg" if ow is not None else "-"))
        base = p["calibrated"]["mass_width_kg"]
        lim = p.get("width_if_pinned_offline", {})
        if lim:
            print("  offline mass width if one box were a point (diagnostic, not sound): "
                  + ", ".join(f"{k} {v:.3f}" if v is not None else f"{k} -"
                              for k, v in lim.items()) + " kg")
        r = p["calibrated_all_rows_offline"]
        if r["mass_width_kg"] is not None:
            print(f"  calibrated, all calibration rows, offline: {r['status']} mass width "
                  f"{r['mass_width_kg']:.3f} kg, contains {r['contains']}")
        r = p["calibrated_rts_offline"]
        if r["mass_width_kg"] is not None:
            print(f"  calibrated, RTS velocities, offline: {r['status']} mass width "
                  f"{r['mass_width_kg']:.3f} kg ({r['mass_width_kg'] / base:.2f} x online "
                  f"calibrated), contains {r['contains']} (target 0.15 kg)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_calibration", description=__doc__.splitlines()[0])
    ap.add_argument("--robots", type=int, default=20)
    ap.add_argument("--xval-robots", type=int, default=3)
    ap.add_argument("--durations", default="15,30,60,120")
    ap.add_argument("--no-margins", action="store_true",
                    help="skip the margin bisection (5-6 calibrations per robot)")
    ap.add_argument("--skip", default="", help=f"comma list of {SECTIONS}")
    ap.add_argument("--window-s", type=float, default=0.4,
                    help="soundness section: calibration windows (s)")
    ap.add_argument("--stride-s", type=float, default=0.1,
                    help="soundness section: window stride (s)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    robot = load_robot("gen3")
    report: dict = {}
    t0 = time.perf_counter()
    if "soundness" not in skip:
        print("soundness ...", flush=True)
        report["soundness"] = soundness(robot, a.robots, not a.no_margins,
                                        {"window_s": a.window_s, "stride_s": a.stride_s})
    if "xval" not in skip:
        print("cross-validation ...", flush=True)
        report["xval"] = xval(robot, a.xval_robots)
    if "timing" not in skip or "payload" not in skip:
        print("timing ...", flush=True)
        durations = [float(d) for d in a.durations.split(",")]
        if "payload" not in skip and 60.0 not in durations:
            durations.append(60.0)
        rows, (long, res60) = timing(robot, sorted(durations))
        report["timing"] = rows
        if "payload" not in skip:
            print("payload ...", flush=True)
            report["payload"] = payload(robot, long, res60)
    report["seconds"] = time.perf_counter() - t0
    _print(report, robot)
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
