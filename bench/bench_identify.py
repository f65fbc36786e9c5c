"""Identifier benchmark: containment and width per method, offline and online cost.

    python -m bench.bench_identify [--trials 20] [--duration 7.5] [--json PATH]

Gen3, ≈4 kHz Pinocchio ABA + RK4 data along sum-of-sines motions, 2.5 % torque noise, 5 %
robot-parameter uncertainty, random payloads 0–4 kg. Reports for lp, lp-cuts, lp-lmi and sensitivity the
fraction of trials whose box contains the truth and the median width per parameter relative to
the prior box; the offline time bag → bounds for one recording (targets ≤ 2 s total, ≤ 0.3 s
bounds); the online CPU time per 0.5 s of new data after 60 s of running (targets ≤ 0.25 s
total, ≤ 50 ms bounds), compared with the first updates to show it is flat. Baseline for the
ratios: one pass of ``Regressors.momentum_pair`` over the same samples, measured in this run.

Online is measured as the node runs it: method ``lp-cuts`` with background cuts — every 0.5 s
``update()`` (LP box with the carried cut pool), and every ``--tighten-every`` updates a
``tighten()`` (cut-generating rounds; a second thread in the node), timed separately. The
recording is looped (time-shifted, windows restarted at each seam, box kept) for
``--online-seconds`` of data; "late" = median of the last 10 updates. The online run is done
twice: with the friction/offset coefficients as LP unknowns shared by all windows (the default)
and with them fixed in each row's radius (the earlier formulation), to show their cost.
Same-run baseline for the bound step: after each update the 20 LPs are also solved from scratch
(one fresh HiGHS model, as before the LPs were kept between updates) on the rows just kept.

Real rates (``--rates``): hardware-like Gen3 recordings (:mod:`sysid_ros._src.simulation`: friction
and armature truth up to ±50 % off the catalogue, dry friction, offsets, 10 % dropped samples,
stamp jitter, quantised positions) at each rate, identified uncalibrated (``friction: wide``)
with the sensor's noise bound plus the interpolation allowance of
test/identification/test_real_data.py: containment and median mass width per rate.

B1 + Z1 hardware-like (``--b1-hw-trials``, JSON key ``b1_z1_hardware_like``; ``--only-b1-hw``
runs this section alone): the soundness campaign's B1 + Z1 cases
(:mod:`sysid_ros._src.calibration.campaign`: drawn robot, 500 Hz with drops, current-based torques,
trunk IMU with its datasheet bias and noise, payloads off the class centre), identified with the
data's stated bounds: containment and median mass width, beside the Gen3's hardware-like 500 Hz
row at the same duration.

B1 + Z1 (``--b1-trials``, JSON key ``b1_z1``; ``--only-b1`` runs this section alone): the B1
standing in the MuJoCo simulator (real foot contacts) while the Z1 moves, 1 kHz, random payloads
0–2 kg (CoM and size from the law B₀ was derived for), 2.5 % relative torque noise, trunk-IMU
readings with bias and noise at the bounds of
config/b1_z1.yaml; containment, median mass-interval width against the Gen3's at the same
relative noise and duration, and the online CPU per 0.5 s update (IMU + joint states + LP).
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config, \
    polytope_box
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import load_robot


def _write_bag(path: Path, robot, run) -> None:
    from sysid_ros._src.bagio import BagWriter, default_typestore
    ts = default_typestore()
    JS, Header, Time = (ts.types[k] for k in ("sensor_msgs/msg/JointState",
                                               "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    with BagWriter(path) as w:
        for i in range(len(run.t)):
            ns = int(round((100.0 + run.t[i]) * 1e9))
            w.write("/joint_states", JS(header=Header(stamp=Time(sec=ns // 10**9,
                                                                 nanosec=ns % 10**9), frame_id=""),
                                        name=list(robot.joint_names), position=run.q[i].copy(),
                                        velocity=run.dq[i].copy(), effort=run.tau_meas[i].copy()), ns)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_identify")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--duration", type=float, default=7.5)
    ap.add_argument("--online-seconds", type=float, default=60.0)
    ap.add_argument("--tighten-every", type=int, default=4)
    ap.add_argument("--rates", default="100,500,1000,4000",
                    help="comma list of rates (Hz) for the hardware-like section ('' = skip)")
    ap.add_argument("--rate-trials", type=int, default=5)
    ap.add_argument("--b1-trials", type=int, default=5)
    ap.add_argument("--b1-duration", type=float, default=3.0)
    ap.add_argument("--only-b1", action="store_true", help="run the B1 + Z1 section only")
    ap.add_argument("--b1-hw-trials", type=int, default=10)
    ap.add_argument("--b1-hw-duration", type=float, default=6.0)
    ap.add_argument("--only-b1-hw", action="store_true",
                    help="run the B1 + Z1 hardware-like section only")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.only_b1_hw:
        b1_hw = _b1_z1_hardware_like(a.b1_hw_trials, a.b1_hw_duration)
        if a.json:
            Path(a.json).write_text(json.dumps({"b1_z1_hardware_like": b1_hw}, indent=2))
        return 0
    b1 = _b1_z1(a.b1_trials, a.b1_duration) if a.b1_trials > 0 else None
    if a.only_b1:
        if a.json:
            Path(a.json).write_text(json.dumps({"b1_z1": b1}, indent=2))
        return 0
    robot = load_robot("gen3")
    cfg = load_identification_config(robot, friction="config", torque_noise_abs=0.0, torque_noise_rel=0.025,
                                     robot_uncertainty_rel=0.05)
    prior_w = cfg.prior.width
    # "lp-per-row-theta_r": lp with θ_r in each row's radius (the formulation before θ_r became
    # shared LP unknowns), measured in the same run for the before/after comparison
    methods = ("lp", "lp-cuts", "lp-lmi", "sensitivity", "lp-per-row-theta_r")
    contains = {m: [] for m in methods}
    widths = {m: [] for m in methods}
    secs = {m: [] for m in methods}
    runs = []
    for k in progress.track(range(a.trials), "trials"):
        rng = np.random.default_rng(1000 + k)
        theta = robot.theta_e() + random_payload_theta(rng, 4.0)
        run = simulate(robot, rng, theta_e=theta, duration=a.duration, noise_rel=0.025)
        runs.append(run)
        for m in methods:
            per_row = m == "lp-per-row-theta_r"
            res = identify(robot, cfg.with_overrides(theta_r_unknowns=not per_row), run.t,
                           run.q, run.dq, run.tau_meas, "lp" if per_row else m,
                           point_estimate=(m == "sensitivity"))
            contains[m].append(res.contains(theta))
            widths[m].append((res.upper - res.lower) / prior_w if res.lower is not None
                             else np.full(10, np.nan))
            secs[m].append(res.seconds["bounds"])
        print(f"trial {k + 1}/{a.trials}", flush=True)

    # Offline: bag → bounds (CLI path: read + identify), one recording.
    from sysid_ros._src.bagio import read_joint_states
    with tempfile.TemporaryDirectory() as tmp:
        bag = Path(tmp) / "bag"
        _write_bag(bag, robot, runs[0])
        c0 = time.perf_counter()
        s = read_joint_states(bag, "/joint_states", robot.joint_names)
        t_read = time.perf_counter() - c0
        res = identify(robot, cfg, s.t, s.position, s.velocity, s.effort, "lp")
        offline = {"samples": len(s.t), "read_s": t_read, **{f"{k}_s": v for k, v in
                                                              res.seconds.items()},
                   "total_s": time.perf_counter() - c0}
    reg = Regressors(robot)
    c0 = time.perf_counter()
    reg.momentum_pair(runs[0].q, runs[0].dq)
    baseline = time.perf_counter() - c0

    # Online: loop the first recording's data (shifted in time) for online_seconds.
    onl = _online(robot, cfg, runs[0], a.online_seconds, a.tighten_every)
    onl_fixed = _online(robot, cfg.with_overrides(friction_unknowns=False), runs[0],
                        a.online_seconds, a.tighten_every)
    onl_row_r = _online(robot, cfg.with_overrides(theta_r_unknowns=False), runs[0],
                        a.online_seconds, a.tighten_every)
    rates = _real_rates(robot, [float(r) for r in a.rates.split(",") if r.strip()],
                        a.rate_trials, a.duration)
    b1_hw = (_b1_z1_hardware_like(a.b1_hw_trials, a.b1_hw_duration) if a.b1_hw_trials > 0
             else None)

    table = {m: {"contains_fraction": float(np.mean(contains[m])),
                 "median_rel_width": dict(zip(PARAM_NAMES, np.nanmedian(widths[m], 0).tolist())),
                 "median_bounds_s": float(np.median(secs[m])),
                 "median_mass_width_kg": float(np.nanmedian(np.array(widths[m])[:, 0])
                                               * prior_w[0])} for m in methods}
    print(f"\n{'method':<20}{'contains':>9}{'bounds s':>10}  " + " ".join(f"{n:>6}" for n in PARAM_NAMES))
    for m in methods:
        w = table[m]["median_rel_width"]
        print(f"{m:<20}{table[m]['contains_fraction']:>9.2f}{table[m]['median_bounds_s']:>10.3f}  "
              + " ".join(f"{w[n]:>6.3f}" for n in PARAM_NAMES))
    print(f"\noffline ({offline['samples']} samples): read {offline['read_s']:.2f} s, regressors "
          f"{offline['regressors_s']:.2f} s, bounds {offline['bounds_s']:.3f} s, total "
          f"{offline['total_s']:.2f} s (targets 2 s / 0.3 s); baseline momentum_pair "
          f"{baseline:.2f} s -> total/baseline {offline['total_s'] / baseline:.1f}")
    print(f"online per 0.5 s of data: early {onl['total_cpu_s_early']:.3f} s (bounds "
          f"{onl['bounds_cpu_s_early'] * 1e3:.1f} ms), after {a.online_seconds:.0f} s "
          f"{onl['total_cpu_s_late']:.3f} s (bounds {onl['bounds_cpu_s_late'] * 1e3:.1f} ms); "
          f"late/early {onl['total_cpu_s_late'] / onl['total_cpu_s_early']:.2f} "
          "(targets 0.25 s / 50 ms, flat)")
    print(f"online bounds per update, kept LPs vs the 20 LPs from scratch on the same rows: "
          f"late {onl['bounds_cpu_s_late'] * 1e3:.1f} ms vs "
          f"{onl['bounds_from_scratch_cpu_s_late'] * 1e3:.1f} ms "
          f"({onl['bounds_from_scratch_cpu_s_late'] / onl['bounds_cpu_s_late']:.1f}x)")
    print(f"online lp-cuts tighten (2nd thread, every {a.tighten_every} updates): median "
          f"{onl['tighten_cpu_s_median']:.3f} s; mean bounds per update "
          f"{onl['bounds_cpu_s_mean'] * 1e3:.1f} ms over {onl['data_seconds']:.0f} s of data")
    print(f"online bounds per update, friction/offset unknowns vs fixed in the radius: late "
          f"{onl['bounds_cpu_s_late'] * 1e3:.1f} ms vs {onl_fixed['bounds_cpu_s_late'] * 1e3:.1f} ms "
          f"({onl['bounds_cpu_s_late'] / onl_fixed['bounds_cpu_s_late']:.2f}x; target 50 ms)")
    print(f"online bounds per update, theta_r shared unknowns vs per-row radius: late "
          f"{onl['bounds_cpu_s_late'] * 1e3:.1f} ms vs {onl_row_r['bounds_cpu_s_late'] * 1e3:.1f} ms")
    if rates:
        print(f"\nhardware-like Gen3, 10 % drops, uncalibrated (friction wide), {a.rate_trials} "
              f"trials x {a.duration:.1f} s per rate")
        print(f"{'rate Hz':>8}{'ok':>6}{'contains':>10}{'mass width kg':>15}{'rel width m':>13}"
              f"{'Ixx':>7}{'Izz':>7}{'bounds s':>10}")
        for r in rates:
            print(f"{r['rate_hz']:>8.0f}{r['ok_fraction']:>6.2f}{r['contains_fraction']:>10.2f}"
                  f"{r['median_mass_width_kg']:>15.3f}{r['median_rel_width']['m']:>13.3f}"
                  f"{r['median_rel_width']['Ixx']:>7.3f}{r['median_rel_width']['Izz']:>7.3f}"
                  f"{r['median_bounds_s']:>10.3f}")
    if a.json:
        Path(a.json).write_text(json.dumps({"methods": table, "offline": offline,
                                            "online": onl, "online_fixed_friction": onl_fixed,
                                            "online_per_row_theta_r": onl_row_r,
                                            "real_rates": rates,
                                            "baseline_momentum_pair_s": baseline,
                                            "trials": a.trials, "duration_s": a.duration,
                                            "b1_z1": b1, "b1_z1_hardware_like": b1_hw},
                                           indent=2))
    return 0


def _online(robot, cfg, run, seconds: float, tighten_every: int) -> dict:
    """CPU per 0.5 s update as the node runs it (lp-cuts, background cuts), data looped."""
    online = OnlineIdentifier(robot, cfg, "lp-cuts", point_estimate=False,
                              background_cuts=True)
    tightens = []
    span = run.t[-1] + 1e-3
    per = []
    t_sim, offset, idx = 0.0, 0.0, 0
    chunk = int(0.5 * 4000)
    while t_sim < seconds:
        sl = slice(idx, idx + chunk)
        tt = run.t[sl] + offset
        c0 = time.process_time()
        online.add_samples(tt, run.q[sl], run.dq[sl], run.tau_meas[sl])
        c1 = time.process_time()
        online.update()
        c2 = time.process_time()
        # baseline: the 20 LPs from scratch on the rows just kept (the pre-incremental solve)
        rows = online.rows
        polytope_box(rows.A, rows.c, rows.r, *online.problem.prior(online.box), psd_cuts=True,
                     cuts=online._cuts, cut_rounds=0)
        per.append((tt[-1], c2 - c0, c2 - c1, time.process_time() - c2))
        c2 = time.process_time()
        if len(per) % tighten_every == 0:
            online.tighten()
            tightens.append(time.process_time() - c2)
        idx += chunk
        if idx >= len(run.t):
            idx, offset = 0, offset + span
            online.windows.reset()     # a new pass: no window across the seam; box kept
        t_sim = tt[-1]
    arr = np.array(per)
    early, late = arr[2:12], arr[-10:]
    return {"total_cpu_s_early": float(np.median(early[:, 1])),
            "total_cpu_s_late": float(np.median(late[:, 1])),
            "bounds_cpu_s_early": float(np.median(early[:, 2])),
            "bounds_cpu_s_late": float(np.median(late[:, 2])),
            "bounds_cpu_s_mean": float(np.mean(arr[:, 2])),
            "bounds_from_scratch_cpu_s_late": float(np.median(late[:, 3])),
            "tighten_cpu_s_median": float(np.median(tightens)) if tightens else float("nan"),
            "tighten_every_updates": tighten_every,
            "data_seconds": float(arr[-1, 0]), "updates": len(arr)}


def _b1_z1(trials: int, duration: float) -> dict:
    """The B1 + Z1 row (see the module docstring); prints its summary."""
    from types import SimpleNamespace

    from sysid_ros._src.simulation.synthetic import simulate_standing, z1_payload

    b1, gen3 = load_robot("b1_z1"), load_robot("gen3")
    rel = 0.025
    cfg = load_identification_config(b1, friction="config", torque_noise_abs=0.0,
                                     torque_noise_rel=rel)
    cfg_g = load_identification_config(gen3, friction="config", torque_noise_abs=0.0,
                                       torque_noise_rel=rel, robot_uncertainty_rel=0.05)
    imu_b = cfg.imu
    assert imu_b is not None
    contains, width, width_g, trunk, online_cpu = [], [], [], [], []
    for k in progress.track(range(trials), "trials"):
        rng = np.random.default_rng(3000 + k)
        run = simulate_standing(b1, rng, z1_payload(rng), duration=duration,
                                noise_tau=0.0)
        r = run.run
        tau_meas = r.tau + rng.uniform(-1, 1, r.tau.shape) * rel * np.abs(r.tau)
        n = r.t.size
        imu = SimpleNamespace(
            t=r.t, angular_velocity=run.gyro + rng.choice([-1.0, 1.0], 3) * imu_b.gyro_bias_abs
            + rng.uniform(-1, 1, (n, 3)) * imu_b.gyro_noise_abs,
            linear_acceleration=run.accel + rng.choice([-1.0, 1.0], 3) * imu_b.accel_bias_abs
            + rng.uniform(-1, 1, (n, 3)) * imu_b.accel_noise_abs)
        res = identify(b1, cfg, r.t, r.q, r.dq, tau_meas, "lp", imu=imu, point_estimate=False)
        contains.append(res.status == "ok" and res.contains(r.theta_e))
        width.append(res.upper[0] - res.lower[0] if res.lower is not None else np.nan)
        trunk.append([float(np.ptp(run.trunk_position, 0).max() * 1e3),
                      float(np.ptp(run.trunk_rotation, 0).max() * 1e3)])
        theta_g = gen3.theta_e() + random_payload_theta(rng, 2.0)
        run_g = simulate(gen3, rng, theta_e=theta_g, duration=duration, noise_rel=rel)
        res_g = identify(gen3, cfg_g, run_g.t, run_g.q, run_g.dq, run_g.tau_meas, "lp",
                         point_estimate=False)
        width_g.append(res_g.upper[0] - res_g.lower[0] if res_g.lower is not None else np.nan)
        online = OnlineIdentifier(b1, cfg, "lp", point_estimate=False)
        for s in range(0, n, 500):
            sl = slice(s, s + 500)
            c0 = time.process_time()
            online.add_imu(imu.t[sl], imu.angular_velocity[sl], imu.linear_acceleration[sl])
            online.add_samples(r.t[sl], r.q[sl], r.dq[sl], tau_meas[sl])
            online.update()
            online_cpu.append(time.process_time() - c0)
        print(f"b1_z1 trial {k + 1}/{trials}", flush=True)
    out = {"trials": trials, "duration_s": duration, "rate_hz": 1000.0,
           "torque_noise_rel": rel, "contains_fraction": float(np.mean(contains)),
           "median_mass_width_kg": float(np.nanmedian(width)),
           "gen3_median_mass_width_kg": float(np.nanmedian(width_g)),
           "prior_mass_width_kg": float(cfg.prior.width[0]),
           "trunk_motion_max_mm_mrad": np.max(trunk, axis=0).tolist(),
           "online_cpu_s_per_update_median": float(np.median(online_cpu[1:])),
           "imu_bounds": cfg.assumptions()["imu_bounds"]}
    print(f"\nB1 + Z1 standing, {trials} x {duration:.1f} s at 1 kHz, {rel:.1%} torque noise, "
          f"IMU errors at the bounds: contains {out['contains_fraction']:.2f}, median mass width "
          f"{out['median_mass_width_kg']:.3f} kg (prior {out['prior_mass_width_kg']:.2f} kg; "
          f"Gen3 same noise/duration, 4 kHz: {out['gen3_median_mass_width_kg']:.3f} kg); "
          f"online {out['online_cpu_s_per_update_median']:.3f} s CPU per 0.5 s update; trunk "
          f"motion up to {out['trunk_motion_max_mm_mrad'][0]:.1f} mm / "
          f"{out['trunk_motion_max_mm_mrad'][1]:.1f} mrad")
    return out


def _b1_z1_hardware_like(trials: int, duration: float) -> dict:
    """The B1 + Z1 hardware-like row (module docstring), the Gen3's hardware-like row at the same
    rate and duration beside it; prints both."""
    from sysid_ros._src.calibration.campaign import plan, run_case, tally

    campaign = plan(["b1_z1"], trials, [500.0], 1, seed=0, payload_seconds=duration)
    results = [run_case((c, None)) for c in progress.track(campaign.cases, "b1_z1 cases")]
    group = tally(campaign.cases, results, [None] * len(results))["b1_z1@500Hz"]
    places = [(r["mass_place_in_class"], r.get("mass_place_in_box")) for r in results]
    gen3 = _real_rates(load_robot("gen3"), [500.0], min(trials, 5), duration)[0]
    out = {"trials": trials, "duration_s": duration, "rate_hz": 500.0,
           "contained": group["contained"], "cases": group["cases"], "wrong": group["wrong"],
           "refused": group["refused"], "refusals": group["refusals"],
           "median_mass_width_kg": group["mass_width_kg_median"],
           "max_mass_width_kg": group["mass_width_kg_max"],
           "median_mass_width_of_prior": group["mass_width_of_prior_median"],
           "median_mass_width_kg_exact_imu": float(np.nanmedian(
               [r.get("mass_width_kg_exact_imu", np.nan) for r in results])),
           "mass_place_in_class_and_box": places,
           "gen3_median_mass_width_kg": gen3["median_mass_width_kg"],
           "gen3_contains_fraction": gen3["contains_fraction"], "gen3_trials": gen3["trials"]}
    print(f"\nhardware-like, 500 Hz, {duration:.1f} s, uncalibrated (friction wide)")
    print(f"{'robot':<34}{'contained':>10}{'mass width kg':>15}{'of prior':>10}")
    print(f"{'B1 + Z1 (5 % current torque, IMU)':<34}"
          f"{group['contained']:>5}/{group['cases']:<4}"
          f"{out['median_mass_width_kg'] or float('nan'):>15.3f}"
          f"{100 * (out['median_mass_width_of_prior'] or float('nan')):>9.0f}%")
    print(f"{'  same data, exact IMU (reference)':<34}{'':>10}"
          f"{out['median_mass_width_kg_exact_imu']:>15.3f}")
    print(f"{'Gen3 (joint torque sensors)':<34}"
          f"{round(gen3['contains_fraction'] * gen3['trials']):>5}/{gen3['trials']:<4}"
          f"{gen3['median_mass_width_kg'] or float('nan'):>15.3f}")
    return out


# Interpolation allowance added to the sensor's noise bound (fraction of it), per rate: see
# test/identification/test_real_data.py for the measurement behind it.
INTERPOLATION = {100.0: 1.0, 500.0: 0.5, 1000.0: 0.5, 4000.0: 0.0}


def _real_rates(robot, rates: list[float], trials: int, duration: float) -> list[dict]:
    from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
        record_hardware_like
    from sysid_ros._src.simulation.assumptions import identifier_assumptions

    out = []
    for rate in rates:
        ok, contains, mass_w, widths, secs = [], [], [], [], []
        for k in progress.track(range(trials), "trials"):
            rng = np.random.default_rng(7000 + k)
            prof = HardwareProfile.from_robot(robot, rate_hz=rate, drop_prob=0.1,
                                              velocity="exact", physics_dt=None)
            truth = random_hardware_truth(robot, rng, friction_rel=0.5)
            payload = dumbbell_for(robot, float(rng.choice([1.81, 2.27, 2.72, 3.18, 3.63])))
            rec = record_hardware_like(robot, rng, payload, duration, prof, truth=truth)
            scale = 1.0 + INTERPOLATION.get(rate, 1.0)
            # the profile's other assumptions (its torque lag, friction wide) as the node states
            # them; the noise bound with this table's allowance
            cfg = load_identification_config(robot, **(identifier_assumptions(robot, prof) | {
                "torque_noise_abs": scale * np.broadcast_to(prof.torque_noise, (robot.nj,)),
                "torque_noise_rel": scale * prof.torque_noise_rel}))
            res = identify(robot, cfg, rec.t, rec.q, rec.dq, rec.tau_meas, "lp",
                           point_estimate=False)
            ok.append(res.status == "ok")
            contains.append(res.contains(rec.truth.theta_e))
            if res.lower is not None:
                mass_w.append(res.upper[0] - res.lower[0])
                widths.append((res.upper - res.lower) / cfg.prior.width)
            secs.append(res.seconds.get("bounds", float("nan")))
        med = np.nanmedian(widths, 0) if widths else np.full(10, np.nan)
        out.append({"rate_hz": rate, "trials": trials, "ok_fraction": float(np.mean(ok)),
                    "contains_fraction": float(np.mean(contains)),
                    "median_mass_width_kg": float(np.median(mass_w)) if mass_w else None,
                    "median_rel_width": dict(zip(PARAM_NAMES, med.tolist())),
                    "median_bounds_s": float(np.nanmedian(secs))})
        print(f"rate {rate:.0f} Hz done", flush=True)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
