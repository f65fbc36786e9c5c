"""How well the Z1's identification phase excites the payload: planned versus random excitation
(``--robot gen3``: the same for the Gen3 and its 3.63 kg dumbbell, identified under its robot
file's prior; ``--containment`` and the static-pose diagnosis are the Z1's only).

For each excitation (``ours``: certified receding-horizon plans from the demo's payload class
``dumbbell_1kg``; ``random``: k uniform in 𝒦 ∩ joint limits, unchecked), one in-process episode
(``sysid_ros._src.demo.pipeline``: MuJoCo, the robust controller at 1 kHz, a payload of the demo's
class drawn off its centre with ``--seed`` as ``sysid-demo`` draws it (the Gen3: its 3.63 kg dumbbell),
torque-sensor noise uniform in ±``--noise`` N·m) runs the identification phase; its recorded
samples (1 kHz, or every ``--decimate``-th) from the first plan's start to 0.5 s after the
last one's end are then identified offline under the RATED prior (0-2 kg: what the data alone
say, not the demo's class) with the noise bound equal to the noise. Printed side by side: the
mass interval width (target ≤ 0.25 kg), the widths of the first moments, cond(Y_e) of the
executed desired motion (the planner's objective, S3 Table V) and whether the box holds the
truth.

``--diagnose`` adds where the width comes from, on the same executed data (``diagnosis`` in the
JSON; widths in kg, None when a variant cannot be formed):

- ``as_is``: the bench's identification (catalogue friction box, 5 % θ_r box, ±noise);
- ``theta_r_exact`` / ``friction_exact`` / ``robot_exact``: the θ_r box, the friction box, or
  both of zero width at the simulator's values (its truth is the nominal robot);
- ``theta_r_shared``: θ_r as shared LP unknowns (``identification.theta_r_unknowns``);
- ``noise_halved``: the recorded torque error halved (true torque = the command the simulator
  held over the step, checked against the noise bound) and the bound with it;
- ``theta_r_floor``: the true torque, a 0.01 N·m bound and exact friction: what the θ_r box
  alone leaves, whatever the excitation's noise;
- ``floor`` / ``floor_calibrated``: the identifiability floor of the same boxes about the truth
  (``identification.floor``: what noise-free data from every motion leave), without and with a
  perfect no-payload calibration (EE body ± 3 %): the part of ``as_is`` no excitation removes;
- ``static_extension`` / ``static_extension_no_coulomb_exact_links``: rows from 48 static poses
  with the payload 0.6-0.8 m from the shoulder axis (Pinocchio gravity of the nominal links +
  the true θ_e, ±noise), as is and with neither Coulomb friction nor a θ_r box (the
  back-of-envelope m·g·L against δ).

``--calibrate`` adds what a calibration of the same simulated robot buys (``calibration`` in the
JSON): a second episode *without* payload (``random`` excitation, ``--trajectories`` of them, a
prior of the unloaded EE body ± 3 % (``--calibration-ee-rel``), seed + 1000, same noise) is calibrated
(``sysid_ros._src.calibration.calibrate``, friction prior ``config``), then the payload data are
identified with

- ``rows``: the bench's identification plus the calibration's rows as constraints on the shared
  θ_r and friction unknowns (``identification.calibration_rows``; per-sample ±noise bound on the
  payload rows, the calibration's window-averaged bound on its own rows);
- ``overlay``: the calibration overlay (its window-averaged noise bound, 0.4 s windows,
  calibrated friction box) as ``sysid-identify --calibration`` uses it;
- ``overlay_rows``: the overlay and its rows (``sysid-calibrate --export-rows``).

``--containment N`` runs only this: one calibration, then N episodes (``random`` excitation,
seeds seed + k) with dumbbells of random mass in [0.5, 1.5] kg, each identified with those
variants; it counts the boxes that hold the truth.

Usage: python -m bench.bench_z1_excitation [--robot z1|gen3] [--noise 0.3] [--trajectories 4]
       [--seed 0]
       [--decimate 1] [--objective cond|box|radius|width] [--skip-random] [--diagnose]
       [--calibrate] [--calibration-trajectories N]
       [--containment N] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from sysid_ros._src import progress
from sysid_ros._src.calibration import CalibrationOptions, CalibrationResult, Recording, calibrate
from sysid_ros._src.calibration.calibrate import exported_rows
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros import apply_calibration

from sysid_ros._src.demo.pipeline import EpisodeConfig, identification_cond, simulate_episode
from sysid_ros._src.demo.class_payload import class_prior
from sysid_ros._src.demo.priors import robot_with_prior
from sysid_ros._src.demo.report import RunData
from sysid_ros._src.identification import IdentificationConfig, identify, load_identification_config
from sysid_ros._src.identification.floor import identifiability_floor
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.robots import Robot, load_robot
from sysid_ros._src.planning.obstacles import obstacles_from_config
from sysid_ros._src.simulation.offcentre import draw_in_class

#: half-width of the unloaded EE body's box during calibration, relative (``--calibration-ee-rel``)
EE_REL = 0.03
#: static poses (q2, q3) with the payload 0.6-0.8 m from the shoulder (joint2) axis; the wrist
#: takes every combination of q4 ∈ ±0.6, 0, q5 ∈ ±0.8, q6 ∈ {0, 1.5} at each
_EXTENDED = ((0.3, -2.7), (2.6, -2.7), (0.6, -2.4), (2.3, -2.4))


def _mass_width(robot: Robot, cfg: IdentificationConfig,
                data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], truth: np.ndarray,
                misses: list[str], name: str) -> float | None:
    """Mass width of the ``lp`` box (None without one); ``name`` goes to ``misses`` if the box
    does not hold the truth."""
    res = identify(robot, cfg, *data, "lp", point_estimate=False)
    if res.lower is None or res.upper is None:
        return None
    if not res.contains(truth):
        misses.append(name)
    return float(res.upper[0] - res.lower[0])


def _true_torque(run: RunData, sel: np.ndarray, noise: float) -> np.ndarray | None:
    """The torque the simulator applied at samples ``sel``: the last command before each (zero-
    order hold over the control step). None if that does not explain the measurement within
    the noise bound (then the recording is not what this assumes)."""
    k = np.searchsorted(run.cmd_t, run.t[sel], side="left") - 1
    if np.any(k < 0):
        return None
    tau = run.cmd[k]
    return tau if np.max(np.abs(run.tau_measured[sel] - tau)) <= noise * (1 + 1e-9) else None


def static_extension(robot: Robot, truth: np.ndarray, noise: float, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, q, dq, τ̂) of 0.5 s holds at 48 extended poses, 1.5 s apart (no window spans two):
    nominal links + θ_e = ``truth``, gravity only, torque noise uniform in ±``noise``."""
    model, data = robot.model, robot.model.createData()
    theta = robot.theta_r().copy()
    theta = np.insert(theta, robot.ee_columns.start, truth)
    ts, qs, taus = [], [], []
    poses = [(0.0, a, b, c, d, e) for a, b in _EXTENDED for c in (-0.6, 0.0, 0.6)
             for d in (-0.8, 0.8) for e in (0.0, 1.5)]
    n = 500
    for i, pose in enumerate(poses):
        q = np.asarray(pose, float)
        g = pin.computeJointTorqueRegressor(model, data, q, np.zeros(6), np.zeros(6)) @ theta
        ts.append(2.0 * i + 1e-3 * np.arange(n))
        qs.append(np.tile(q, (n, 1)))
        taus.append(g + rng.uniform(-noise, noise, (n, robot.nj)))
    q = np.concatenate(qs)
    return np.concatenate(ts), q, np.zeros_like(q), np.concatenate(taus)


def diagnose(robot: Robot, cfg: IdentificationConfig, run: RunData, sel: np.ndarray, noise: float,
             ee_rel: float = EE_REL) -> dict[str, float | None | list[str]]:
    """Mass widths of the module docstring's variants; ``misses`` names any whose box does not
    hold the truth (none should)."""
    if run.truth is None:
        raise ValueError("diagnose: the run carries no truth (a simulated episode does)")
    truth = run.truth
    misses: list[str] = []
    data = (run.t[sel], run.q[sel], run.dq[sel], run.tau_measured[sel])
    exact_fr = {"friction_radius": 0.0}
    variants: dict[str, tuple[IdentificationConfig,
                              tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = {
        "as_is": (cfg, data),
        "theta_r_exact": (cfg.with_overrides(robot_uncertainty_rel=0.0), data),
        "friction_exact": (cfg.with_overrides(**exact_fr), data),
        "robot_exact": (cfg.with_overrides(robot_uncertainty_rel=0.0, **exact_fr), data),
        "theta_r_shared": (cfg.with_overrides(theta_r_unknowns=True), data)}
    tt = _true_torque(run, sel, noise)
    if tt is not None:
        variants["noise_halved"] = (cfg.with_overrides(torque_noise_abs=0.5 * noise),
                                    (data[0], data[1], data[2], tt + 0.5 * (data[3] - tt)))
        variants["theta_r_floor"] = (cfg.with_overrides(torque_noise_abs=0.01, **exact_fr),
                                     (data[0], data[1], data[2], tt))
    if robot.name == "z1":                  # its poses are the Z1's (six joints)
        static = static_extension(robot, truth, noise, np.random.default_rng(0))
        variants["static_extension"] = (cfg, static)
        variants["static_extension_no_coulomb_exact_links"] = (
            cfg.with_overrides(friction="none", robot_uncertainty_rel=0.0), static)
    out: dict[str, float | None | list[str]] = {"noise_halved": None, "theta_r_floor": None}
    for name, (c, d) in variants.items():
        out[name] = _mass_width(robot, c, d, truth, misses, name)
    out["misses"] = misses
    # what no excitation removes: noise-free data from every motion under the same boxes
    # (identification.floor), about the truth, plus a perfect calibration (EE body ± 3 %)
    out["floor"] = float(identifiability_floor(robot, cfg, truth).width[0])
    ee = robot.theta_e()
    rad = ee_rel * np.abs(ee) + 1e-5
    out["floor_calibrated"] = float(identifiability_floor(
        robot, cfg, truth, calibration_ee=theta_e_box(ee - rad, ee + rad, ee)).width[0])
    return out


def unloaded_robot(base: Robot, directory: Path, ee_rel: float = EE_REL) -> Robot:
    """``base`` with the prior ``unloaded`` (the EE body ± 3 % + 1e-5, as the robot file's
    dumbbell class is derived) selected: what the calibration episode's nodes assume."""
    config = yaml.safe_load(Path(base.config_path).read_text())
    theta = base.theta_e()
    rad = ee_rel * np.abs(theta) + 1e-5
    ident = config["identification"]
    ident["priors"]["unloaded"] = {"lower": (theta - rad).tolist(),
                                   "upper": (theta + rad).tolist()}
    ident["prior"] = "unloaded"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{base.name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return load_robot(path)


def calibrate_unloaded(base: Robot, noise: float, n_traj: int, seed: int, decimate: int,
                       ee_rel: float = EE_REL) -> tuple[CalibrationResult, float] | None:
    """Calibration of the simulated robot from an episode without payload (``random`` excitation,
    seed + 1000, unloaded prior): the result and the seconds of data (None if nothing ran)."""
    robot = unloaded_robot(base, Path(tempfile.mkdtemp(prefix=f"{base.name}_calibration_")),
                           ee_rel)
    ep = simulate_episode(robot, 0.0, "random", (), seed=seed + 1000, config=EpisodeConfig(
        noise_tau=noise, n_trajectories=n_traj, max_cycles=2 * n_traj))
    if ep.ident_window is None:
        return None
    a, b = ep.ident_window
    run = ep.run
    keep = np.flatnonzero((run.t >= a) & (run.t <= b + 0.5))[::decimate]
    rec = Recording(run.t[keep], run.q[keep], run.dq[keep], run.tau_measured[keep],
                    f"{base.name}-no-payload")
    return calibrate(base, [rec], CalibrationOptions(friction_prior="config",
                                                     link_boxes=False)), float(b + 0.5 - a)


def _payload_prior(robot: Robot) -> str | None:
    """The prior the payload data are identified under: the Z1's rated class (0-2 kg), else the
    robot file's own (None)."""
    return "rated" if robot.name == "z1" else None


def calibration_variants(base: Robot, cfg: IdentificationConfig, result: CalibrationResult,
                         data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                         truth: np.ndarray) -> dict[str, float | str | bool | None]:
    """Mass width, status, containment and seconds of the ``--calibrate`` variants of the
    module docstring on the payload ``data``."""
    rows = exported_rows(result)
    calibrated = apply_calibration(base, calibration_document(result))
    overlay = load_identification_config(calibrated, prior=_payload_prior(base))
    out: dict[str, float | str | bool | None] = {}
    for name, (rb, c) in {"shared": (base, cfg.with_overrides(theta_r_unknowns=True)),
                          "rows": (base, cfg.with_overrides(theta_r_unknowns=True,
                                                            calibration_rows=rows)),
                          "overlay": (calibrated, overlay),
                          "overlay_rows": (calibrated, overlay.with_overrides(
                              theta_r_unknowns=True, calibration_rows=rows))}.items():
        clock = time.perf_counter()
        res = identify(rb, c, *data, "lp", point_estimate=False)
        out[f"{name}_seconds"] = time.perf_counter() - clock
        out[f"{name}_status"] = res.status
        out[name] = None if res.box is None else float(res.box.upper[0] - res.box.lower[0])
        out[f"{name}_contains"] = bool(res.contains(truth))
    return out


def containment(noise: float, n_traj: int, seed: int, decimate: int, n_payloads: int) -> dict:
    """One calibration of the simulated Z1, then ``n_payloads`` episodes (``random``
    excitation, seeds seed + k) with dumbbells of random mass in [0.5, 1.5] kg, each identified
    offline under the rated prior with the :func:`calibration_variants`: how often each box
    holds the truth."""
    base = load_robot("z1")
    cal = calibrate_unloaded(base, noise, n_traj, seed, decimate)
    if cal is None:
        return {"calibration": "no trajectory executed"}
    result, _ = cal
    cfg = load_identification_config(base, prior="rated", friction="config",
                                      torque_noise_abs=noise, torque_noise_rel=0.0)
    rng = np.random.default_rng(seed)
    robot = load_robot(robot_with_prior(base, base.config["demo"]["prior"],
                                        Path(tempfile.mkdtemp(prefix="z1_containment_"))))
    runs = []
    for k in progress.track(range(n_payloads), "payloads"):
        kg = float(rng.uniform(0.5, 1.5))
        ep = simulate_episode(robot, kg, "random", (), seed=seed + k, config=EpisodeConfig(
            noise_tau=noise, n_trajectories=n_traj, max_cycles=2 * n_traj))
        run = ep.run
        if ep.ident_window is None or run.truth is None:
            runs.append({"payload_kg": kg, "executed": 0})
            continue
        a, b = ep.ident_window
        sel = np.flatnonzero((run.t >= a) & (run.t <= b + 0.5))[::decimate]
        row: dict = {"payload_kg": kg, "executed": len(ep.executed)}
        row.update(calibration_variants(base, cfg, result, (run.t[sel], run.q[sel], run.dq[sel],
                                                            run.tau_measured[sel]), run.truth))
        runs.append(row)
        print(f"  payload {k + 1}/{n_payloads}: {kg:.2f} kg, " + ", ".join(
            f"{v} {row[v + '_status']} {row[v] if row[v] is None else round(row[v], 3)} "
            f"contains={row[v + '_contains']}" for v in ("rows", "overlay", "overlay_rows")),
            flush=True)
    done = [r for r in runs if r["executed"]]
    summary: dict = {"payloads": n_payloads, "identified": len(done), "per_payload": runs}
    for v in ("shared", "rows", "overlay", "overlay_rows"):
        widths = [r[v] for r in done if r[v] is not None]
        summary[v] = {"ok": sum(r[f"{v}_status"] == "ok" for r in done),
                      "contains": sum(r[f"{v}_contains"] for r in done),
                      "median_mass_width": float(np.median(widths)) if widths else None,
                      "max_mass_width": float(np.max(widths)) if widths else None}
    return summary


def measure(method: str, noise: float, n_traj: int, seed: int, decimate: int,
            objective: str = "cond", diagnosis: bool = False,
            planner_overrides: dict | None = None, calibration: bool = False,
            robot_name: str = "z1", calibration_trajectories: int | None = None,
            calibration_ee_rel: float = EE_REL) -> dict:
    base = load_robot(robot_name)
    demo_prior = base.config["demo"].get("prior")       # the Gen3 starts from its file's prior
    robot = base if demo_prior is None else load_robot(robot_with_prior(
        base, demo_prior, Path(tempfile.mkdtemp(prefix=f"{robot_name}_excitation_"))))
    obstacles = obstacles_from_config(robot.config["planner"].get("obstacles") or [])
    # from a payload class (the Z1's dumbbell_1kg) a payload of the class drawn off its centre,
    # as sysid-demo carries; from the Gen3's generic box its file's dumbbell
    klass = class_prior(robot)
    payload = (draw_in_class(robot, klass.lower, klass.upper, seed).payload
               if klass is not None else float(robot.config["demo"]["payload"]))
    ep = simulate_episode(robot, payload, method, obstacles,
                          seed=seed, config=EpisodeConfig(
                              noise_tau=noise, n_trajectories=n_traj, max_cycles=2 * n_traj,
                              planner_overrides={"objective": objective,
                                                 **(planner_overrides or {})}))
    if ep.ident_window is None:
        return {"method": method, "executed": 0}
    a, b = ep.ident_window
    run = ep.run
    sel = np.flatnonzero((run.t >= a) & (run.t <= b + 0.5))[::decimate]
    cfg = load_identification_config(base, prior=_payload_prior(base), friction="config",
                                      torque_noise_abs=noise, torque_noise_rel=0.0)
    res = identify(base, cfg, run.t[sel], run.q[sel], run.dq[sel], run.tau_measured[sel], "lp",
                   point_estimate=False)
    out = {"method": method, "payload_kg": ep.payload_kg, "executed": len(ep.executed),
           "status": res.status,
           "cond": identification_cond(robot, ep), "seconds_of_data": float(b + 0.5 - a),
           "rate_hz": float(1.0 / np.median(np.diff(run.t[sel]))),
           "theta_r_unknowns": cfg.theta_r_unknowns}
    if res.lower is not None and res.upper is not None and run.truth is not None:
        width = res.upper - res.lower
        out.update(mass_width=float(width[0]), first_moment_widths=width[1:4].tolist(),
                   contains_truth=bool(res.contains(run.truth)))
    if diagnosis:
        out["diagnosis"] = diagnose(base, cfg, run, sel, noise, calibration_ee_rel)
    if calibration and run.truth is not None:
        cal = calibrate_unloaded(base, noise, calibration_trajectories or n_traj, seed, decimate,
                                 calibration_ee_rel)
        if cal is None:
            out["calibration"] = {"calibration": "no trajectory executed"}
        else:
            out["calibration"] = {"calibration_seconds_of_data": cal[1],
                                  "calibration_rows": len(cal[0].rows)} | calibration_variants(
                base, cfg, cal[0], (run.t[sel], run.q[sel], run.dq[sel],
                                    run.tau_measured[sel]), run.truth)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="z1", choices=["z1", "gen3"])
    ap.add_argument("--noise", type=float, default=None,
                    help="uniform torque-sensor noise bound, N·m (default: 0.3 on the Z1, 0.1 on "
                         "the Gen3, each robot file's torque_noise_abs)")
    ap.add_argument("--trajectories", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--decimate", type=int, default=1)
    ap.add_argument("--objective", default="cond", choices=["cond", "box", "radius", "width"],
                    help="planner objective of the planned excitation (random ignores it)")
    ap.add_argument("--skip-random", action="store_true", help="planned excitation only")
    ap.add_argument("--diagnose", action="store_true",
                    help="also the mass width under the diagnosis variants (module docstring)")
    ap.add_argument("--calibrate", action="store_true",
                    help="also calibrate from a no-payload episode and identify with its rows "
                         "and overlay (module docstring)")
    ap.add_argument("--calibration-trajectories", type=int, default=None, metavar="N",
                    help="--calibrate: random trajectories of the no-payload calibration episode "
                         "(default: --trajectories)")
    ap.add_argument("--calibration-ee-rel", type=float, default=EE_REL, metavar="REL",
                    help="--calibrate / --diagnose: the unloaded EE body's box during the "
                         "calibration, ± REL of each parameter (default 0.03; 0.01 = a weighed "
                         "gripper and last link)")
    ap.add_argument("--containment", type=int, default=0, metavar="N",
                    help="only: one calibration, then N random-mass dumbbells (random "
                         "excitation) identified with the --calibrate variants; containment "
                         "counts")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    if args.noise is None:
        args.noise = 0.3 if args.robot == "z1" else 0.1
    if not 0.0 <= args.calibration_ee_rel < 1.0:
        ap.error(f"--calibration-ee-rel must be in [0, 1), got {args.calibration_ee_rel}")
    if args.containment and args.robot != "z1":
        ap.error("--containment draws the Z1's 0.5-1.5 kg dumbbells: --robot z1 only")
    if args.containment:
        summary = containment(args.noise, args.trajectories, args.seed, args.decimate,
                              args.containment)
        for v in ("shared", "rows", "overlay", "overlay_rows"):
            if v in summary:
                print(f"{v:14s} {summary[v]}")
        if args.json:
            Path(args.json).write_text(json.dumps(summary, indent=2))
        return 0
    rows = [measure(m, args.noise, args.trajectories, args.seed, args.decimate, args.objective,
                    args.diagnose, calibration=args.calibrate, robot_name=args.robot,
                    calibration_trajectories=args.calibration_trajectories,
                    calibration_ee_rel=args.calibration_ee_rel)
            for m in (("ours",) if args.skip_random else ("ours", "random"))]
    what = ("Z1, a payload of the 1 kg dumbbell class" if args.robot == "z1"
            else "Gen3, 3.63 kg dumbbell")
    print(f"{what}, ±{args.noise} N·m, {args.trajectories} trajectories, "
          f"{_payload_prior(load_robot(args.robot)) or 'robot file'} prior, "
          f"planner objective {args.objective}")
    print(f"{'':40s}" + "".join(f"{r['method']:>14s}" for r in rows))
    keys = ["executed", "status", "cond", "mass_width", "contains_truth", "rate_hz"]
    table = [(k, [r.get(k, "-") for r in rows]) for k in keys]
    if args.diagnose:
        table += [(f"mass width, {k}", [r.get("diagnosis", {}).get(k, "-") for r in rows])
                  for k in rows[0].get("diagnosis", {})]
    if args.calibrate:
        table += [(f"calibration, {k}", [r.get("calibration", {}).get(k, "-") for r in rows])
                  for k in rows[0].get("calibration", {}) if k != "calibration_noise_Nm"]
    for key, values in table:
        cells = [f"{v:14.3f}" if isinstance(v, float) else f"{str(v):>14s}" for v in values]
        print(f"{key:40s}" + "".join(cells))
    if args.json:
        Path(args.json).write_text(json.dumps({r["method"]: r for r in rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
