"""Real-data benchmark: calibration and identification on a real arm's logs, by rotation.

    python -m bench.bench_real_data --data DIR [--prior none] [--link-rel R] [--method M]
        [--calibration-rows] [--noise-speed] [--json PATH]

DIR holds runs in the per-quantity text layout of docs/guide/identify-recording.md: for each run N the files
``t_downsampled_N.csv`` (s), ``q_downsampled_N.csv`` (rad), ``q_d_downsampled_N.csv`` (rad/s),
``q_dd_downsampled_N.csv`` (rad/s², used only to predict torques per sample) and
``tau_downsampled_N.csv`` (N·m), 7 columns in the Gen3's joint order; optionally the lab's
own model: ``friction_parameters_solution_*.csv`` (Fc, Fv, Ia, 7 values each, one a line) and
``Endeffector_parameters_solution_*.csv`` (the end-effector body, Pinocchio order).

Every run is imported with ``sysid-import`` into a rosbag2 (temporary directory). For each run
held out in turn:

1. **prediction** — per joint, the held-out torque RMS (N·m, per sample, with the folder's
   accelerations) of plain least squares (all link parameters + Fc·sign(q̇) + Fv·q̇ + Ia·q̈ + β,
   fitted on the other runs), of the lab's published model, and of ``sysid-calibrate`` on the
   other runs (its nominal, its friction law with any adopted extra terms, and its torque lag:
   it predicts the torque read ``torque_lag_s`` after the state, the other two the torque read
   at the state's stamp), all on the same samples (those whose lagged torque exists);
2. **consistency** — whether the held-out run's rows fit the written bounds (``validate``),
   and the extra friction terms: the best candidate's cross-validated gain, the selected and the
   adopted ones (docs/guide/calibrate.md#extra-friction-terms-judged-then-adopted);
3. **identification** — ``sysid-identify`` of the held-out run with that calibration, the
   prior ``--prior``, ``--method`` and, with ``--calibration-rows``, the calibration's own rows
   (``sysid-calibrate --export-rows``): status, mass box, warnings, and per joint the rows'
   mean radius as a window-averaged torque with the share of it that is the calibrated
   torque-error bound δ (what a narrower box would have to shrink). With ``--noise-speed`` the
   calibration writes a speed-dependent bound δ0 + δ1·mean |speed| (``CalibrationOptions``
   ``noise_speed``).

The wall time of each calibration is printed; the last table lists the mass boxes, whether
they all overlap (one robot, one tool), their intersection and how many lower ends are the
prior's face (an overlap the prior alone makes says little).
"""
from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.bagio.import_cli import main as import_main
from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.data import Recording, read_recording
from sysid_ros._src.calibration.calibrate import exported_rows
from sysid_ros._src.calibration.document import calibration_document, write_calibration
from sysid_ros._src.calibration.validate import aligned_torque, nominal_model, predict_torque, validate
from sysid_ros import apply_calibration
from sysid_ros._src.identification import METHODS, identify, load_identification_config
from sysid_ros._src.identification.problem import PayloadProblem
from sysid_ros._src.identification.windows import MomentumWindows
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot, load_robot


def _runs(data: Path) -> list[int]:
    found = sorted(int(m.group(1)) for p in data.glob("t_downsampled_*.csv")
                   if (m := re.fullmatch(r"t_downsampled_(\d+)\.csv", p.name)))
    if len(found) < 2:
        raise SystemExit(f"{data}: need at least two runs (t_downsampled_N.csv ...), "
                         f"found {len(found)}")
    return found


def _import(data: Path, run: int, out: Path) -> Path:
    files = ",".join(f"{k}={data / f'{stem}_downsampled_{run}.csv'}" for k, stem in
                     (("t", "t"), ("q", "q"), ("dq", "q_d"), ("tau", "tau")))
    bag = out / f"run{run}"
    code = import_main(["--robot", "gen3", "--files", files, "--out", str(bag)])
    if code != 0:
        raise SystemExit(f"sysid-import failed on run {run} (exit {code})")
    return bag


def _regressor(robot: Robot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """(N, nj, 10·nb + 4·nj): Y(q, q̇, q̈) and the linear friction law's columns."""
    reg = Regressors(robot)
    qf = np.tile(robot.neutral(), (q.shape[0], 1))
    qf[:, robot.q_index] = q
    vi = robot.v_index
    return np.concatenate([reg.Y(qf, dq, ddq), reg.friction(dq, ddq)], axis=2)[:, vi]


def _rms(err: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(err ** 2, axis=0))


def _lab_model(robot: Robot, data: Path) -> tuple[Any, np.ndarray] | None:
    fr = sorted(data.glob("friction_parameters_solution_*.csv"))
    ee = sorted(data.glob("Endeffector_parameters_solution_*.csv"))
    if not fr or not ee:
        return None
    f = np.loadtxt(fr[-1]).reshape(-1)
    nj = robot.nj
    friction = np.stack([f[:nj], f[nj:2 * nj], f[2 * nj:3 * nj], np.zeros(nj)], axis=1)
    theta = robot.theta().copy()
    theta[robot.ee_columns] = np.loadtxt(ee[-1]).reshape(-1)[:10]
    return nominal_model(robot, theta), friction


def _radius(robot: Robot, cfg: Any, rec: Recording) -> dict[str, list[float]]:
    """Per joint, the identification rows' mean radius as a window-averaged torque (N·m) and
    the share of it that is the calibrated torque-error bound (the rest: Coulomb interval,
    quadrature, bridged gaps, link box, timing remainder)."""
    m = MomentumWindows(robot, cfg, Regressors(robot), rate_hz=rec.rate_hz).extend(
        rec.t, rec.q, rec.dq, rec.tau)
    rows = PayloadProblem(robot, cfg).rows(m)
    T = rows.t_end - rows.t_start
    per_s, share = [], []
    for j in range(robot.nj):
        s = rows.joint == j
        per_s.append(float(np.mean(rows.r[s] / T[s])) if s.any() else float("nan"))
        share.append(float(np.sum(rows.r_noise[s]) / np.sum(rows.r[s])) if s.any()
                     else float("nan"))
    return {"mean_Nm": per_s, "noise_share": share}


def _identify(robot: Robot, calib: Path, rec: Recording, prior: str, method: str
              ) -> dict[str, Any]:
    cal = apply_calibration(robot, calib)
    cfg = load_identification_config(cal, prior=prior)
    res = identify(cal, cfg, rec.t, rec.q, rec.dq, rec.tau, method=method)
    out: dict[str, Any] = {"status": res.status, "warnings": list(res.warnings),
                           "row_radius": _radius(cal, cfg, rec)}
    if res.status == "ok" and res.box is not None:
        out["mass"] = [float(res.box.lower[0]), float(res.box.upper[0])]
        prior_box = cfg.prior
        out["spans_prior"] = [name for k, name in enumerate(res.box.names)
                                  if res.box.lower[k] <= prior_box.lower[k] + 1e-9
                                  and res.box.upper[k] >= prior_box.upper[k] - 1e-9]
    return out


def _prior_mass(robot: Robot, prior: str) -> list[float]:
    """[lower, upper] of the mass in the identification prior ``prior``."""
    box = load_identification_config(robot, prior=prior).prior
    return [float(box.lower[0]), float(box.upper[0])]


def _table(names: list[str], rows: dict[str, np.ndarray]) -> list[str]:
    head = "| model | " + " | ".join(names) + " | mean |"
    lines = [head, "|---" * (len(names) + 2) + "|"]
    base = rows.get("least squares")
    for label, v in rows.items():
        ratio = "" if base is None else f" ({np.mean(v) / np.mean(base):.2f}x)"
        lines.append(f"| {label} | " + " | ".join(f"{x:.2f}" for x in v)
                     + f" | {np.mean(v):.2f}{ratio} |")
    return lines


def run(data: Path, prior: str, link_rel: float | None, method: str = "lp",
        calibration_rows: bool = False, noise_speed: bool = False,
        window_s: float | None = None) -> dict[str, Any]:
    robot = load_robot("gen3")
    runs = _runs(data)
    lab = _lab_model(robot, data)
    out: dict[str, Any] = {"runs": runs, "prior": prior, "link_rel": link_rel, "method": method,
                           "calibration_rows": calibration_rows, "noise_speed": noise_speed,
                           "held_out": [],
                           "prior_mass": _prior_mass(robot, prior)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        recs = {k: read_recording(_import(data, k, tmp_dir), robot) for k in runs}
        ddq = {k: np.loadtxt(data / f"q_dd_downsampled_{k}.csv") for k in runs}
        Y = {k: _regressor(robot, recs[k].q, recs[k].dq, ddq[k]) for k in runs}
        for k in progress.track(runs, "held-out runs"):
            others = [r for r in runs if r != k]
            clock = time.perf_counter()
            result = calibrate(robot, [recs[r] for r in others],
                               CalibrationOptions(ee_prior=prior, link_rel=link_rel,
                                                  noise_speed=noise_speed,
                                                  **({} if window_s is None
                                                     else {"window_s": window_s,
                                                           "stride_s": window_s / 4})))
            seconds = time.perf_counter() - clock
            rec = recs[k]
            keep, tau_lagged = aligned_torque(rec, result.config)
            model = nominal_model(robot, result.link_nominal)
            ours = predict_torque(robot, model, result.friction_nominal, rec.q[keep],
                                  rec.dq[keep], ddq[k][keep], terms=result.friction_terms)
            A = np.concatenate([Y[r].reshape(-1, Y[r].shape[2]) for r in others])
            b = np.concatenate([recs[r].tau.reshape(-1) for r in others])
            x = np.linalg.lstsq(A, b, rcond=None)[0]
            rms = {"least squares": _rms(rec.tau[keep] - Y[k][keep] @ x)}
            if lab is not None:
                pred = predict_torque(robot, lab[0], lab[1], rec.q[keep], rec.dq[keep],
                                      ddq[k][keep])
                rms["lab's model"] = _rms(rec.tau[keep] - pred)
            rms["sysid-calibrate"] = _rms(tau_lagged - ours)
            val = validate(result, [rec])
            calib = tmp_dir / f"calib_without_{k}.yaml"
            doc = calibration_document(result, val)
            if calibration_rows:
                # as sysid-calibrate --export-rows: the rows beside the overlay, θ_r shared
                exported_rows(result).save(calib.with_suffix(".rows.npz"))
                doc["identification"]["calibration_rows"] = calib.with_suffix(".rows.npz").name
                doc["identification"]["theta_r_unknowns"] = True
            write_calibration(calib, doc)
            ident = _identify(robot, calib, rec, prior, method)
            item = {"run": k, "calibrated_on": others, "calibration_s": seconds,
                    "rms": {m: v.tolist() for m, v in rms.items()},
                    "consistent": bool(val.consistent), "needs_scale": float(val.scale),
                    "torque_lag_s": result.config.torque_lag_s.tolist(),
                    "velocity_lag_s": result.config.velocity_lag_s.tolist(),
                    "velocity_lag_radius_s": result.config.velocity_lag_radius_s.tolist(),
                    "noise_bound_Nm": result.noise.tolist(),
                    "noise_speed_Nm_per_rad_s": None if result.noise_speed is None
                    else result.noise_speed.tolist(),
                    "excluded_rows": result.excluded.get("rows_by_reason", {}),
                    "terms": _terms(result),
                    "identification": ident}
            out["held_out"].append(item)
            print(f"\n## run {k} held out (calibrated on {others} in {seconds:.1f} s)\n")
            print("\n".join(_table(list(robot.joint_names), rms)))
            print(f"\nheld-out rows {'consistent' if val.consistent else 'INCONSISTENT'} with the "
                  f"written bounds (needs {val.scale:.2f} x); identification: {ident['status']}"
                  + (f", mass [{ident['mass'][0]:.3f}, {ident['mass'][1]:.3f}] kg "
                     f"({ident['mass'][1] - ident['mass'][0]:.3f} wide), spanning the whole "
                     f"prior: {ident['spans_prior'] or 'none'}" if "mass" in ident else "")
                  + (f"; warnings: {ident['warnings']}" if ident["warnings"] else ""))
            print(f"extra friction terms: {item['terms']}")
            c = result.config
            print("lags (ms): torque " + ", ".join(
                f"{1e3 * v:.0f}±{1e3 * r:.0f}" for v, r in zip(c.torque_lag_s,
                                                           c.torque_lag_radius_s))
                  + "; velocity " + ", ".join(f"{1e3 * v:.0f}±{1e3 * r:.0f}" for v, r in
                                              zip(c.velocity_lag_s, c.velocity_lag_radius_s)))
            rr = ident["row_radius"]
            print("row radius (N·m, window-averaged; noise-bound share): "
                  + ", ".join(f"{n} {r:.2f} ({100 * f:.0f} %)" for n, r, f in
                              zip(robot.joint_names, rr["mean_Nm"], rr["noise_share"]))
                  + "; noise bound δ " + ", ".join(f"{d:.2f}" for d in result.noise)
                  + ("" if result.noise_speed is None else " + mean |speed| x "
                     + ", ".join(f"{d:.2f}" for d in result.noise_speed)))
    _summary(out, list(robot.joint_names))
    return out


def _terms(result) -> dict[str, Any]:
    """The cross-validation's verdict on the extra friction terms: the best candidate's gain,
    the selected terms and those the calibration adopted."""
    sel = result.terms
    if sel is None:
        return {}
    best = int(np.argmax(sel.candidate_gain))
    return {"best": sel.names[best], "best_gain": float(sel.candidate_gain[best]),
            "selected": list(sel.selected),
            "adopted": [] if result.friction_terms is None else list(result.friction_terms.names)}


def _summary(out: dict[str, Any], names: list[str]) -> None:
    items = out["held_out"]
    models = list(items[0]["rms"])
    mean = {m: np.mean([it["rms"][m] for it in items], axis=0) for m in models}
    print("\n## held-out torque RMS (N·m), mean over the rotations\n")
    print("\n".join(_table(names, mean)))
    boxes = [it["identification"].get("mass") for it in items]
    ok = [b for b in boxes if b is not None]
    common = (max(b[0] for b in ok), min(b[1] for b in ok)) if ok else None
    overlap = common is not None and common[0] <= common[1]
    # an overlap that only the prior's face makes says nothing about the runs agreeing
    floor = out["prior_mass"][0]
    at_floor = sum(b[0] <= floor + 1e-9 for b in ok)
    out["summary"] = {"rms_mean": {m: v.tolist() for m, v in mean.items()},
                      "mass_boxes_overlap": overlap, "mass_intersection": common,
                      "mass_lower_at_prior": at_floor,
                      "calibration_s_max": max(it["calibration_s"] for it in items)}
    print(f"\nmass boxes {'overlap' if overlap else 'DO NOT overlap'}: "
          + ", ".join("-" if b is None else f"[{b[0]:.3f}, {b[1]:.3f}]" for b in boxes)
          + ("" if common is None or not overlap else
             f" (common [{common[0]:.3f}, {common[1]:.3f}] kg; {at_floor} of {len(ok)} lower "
             f"ends on the prior's {floor:g} kg)")
          + f"; slowest calibration {out['summary']['calibration_s_max']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, type=Path, help="folder of runs (module docstring)")
    p.add_argument("--prior", default="none",
                   help="end-effector prior for calibration and identification (default none: "
                        "an unknown tool at the bare bracelet)")
    p.add_argument("--link-rel", type=float,
                   help="calibration prior of the link parameters, relative (default: the robot "
                        "file's model_uncertainty.links_rel)")
    p.add_argument("--method", choices=METHODS, default="lp",
                   help="identification method (default lp)")
    p.add_argument("--calibration-rows", action="store_true",
                   help="identify with the calibration's own rows as further constraints "
                        "(sysid-calibrate --export-rows)")
    p.add_argument("--noise-speed", action="store_true",
                   help="calibrate a speed-dependent torque-error bound (δ0 + δ1·mean |speed|)")
    p.add_argument("--window", type=float,
                   help="momentum window of calibration and identification (s; stride a "
                        "quarter of it; default: sysid-calibrate's)")
    p.add_argument("--json", type=Path, help="write the figures as JSON")
    args = p.parse_args(argv)
    out = run(args.data, args.prior, args.link_rel, args.method, args.calibration_rows,
              args.noise_speed, args.window)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
