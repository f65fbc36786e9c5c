"""Benchmark of the sound mass-matrix bounds (control.tracking_bounds, enclosures.mass_matrix).

Per robot (gen3, z1), measured in the same run:

1. the sound workspace bound of λ_min(H + diag I_a) (``mass_matrix_eigen_bounds``, cache off):
   wall time, boxes, value;
2. the baseline it replaces: sampling (the code before: per-configuration Weyl bound over the
   θ_r and I_a boxes at random configurations — an estimate, not a bound): wall time and value;
3. the reference: dense sampling of the true λ_min (Pinocchio CRBA at random configurations with
   random parameters in the boxes the bound covers), and the ratio bound / reference;
4. the planner's local use: one enclosure of the lower mass model over 128 sub-interval boxes
   (q ± the tracking box) with its λ_min and (M⁻¹)_ii bounds — wall time and the ratio of the
   local λ_min bound to the exact λ_min at the boxes' centres.

Usage: python -m bench.bench_eigen_bound [--json PATH] [--samples 3000]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from sysid_ros._src import progress
from sysid_ros._src.control.tracking_bounds import (lower_mass_model, mass_matrix_eigen_bounds,
                                      mass_matrix_extremes)
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.planning import controller_model
from sysid_ros._src.enclosures.chain import SerialChain
from sysid_ros._src.enclosures.mass_matrix import enclose_mass_matrix


def _sampling_baseline(robot, n: int, rng: np.random.Generator) -> float:
    """The previous estimate: min over random q of λ_min(H(θ_c) + I_a,lo) − ‖Σ|D_k| rad_k‖₂ (the
    EE body's nominal kept, θ_r and I_a boxes by Weyl)."""
    model = robot.model.copy()
    model.gravity.setZero()
    data = model.createData()
    theta = robot.theta()
    rad = robot.links_rel_uncertainty * np.abs(theta)
    ia_lo = np.maximum(robot.friction.lower[:, 2], 0.0)
    eye, zero = np.eye(robot.nv), np.zeros(robot.nv)
    best = np.inf
    for q in robot.random_configuration(rng, n):
        d = np.stack([pin.computeJointTorqueRegressor(model, data, q, zero, eye[j])
                      for j in range(robot.nv)], axis=1)
        h = d @ theta + np.diag(ia_lo)
        best = min(best, np.linalg.eigvalsh(h)[0] - np.linalg.norm(np.abs(d) @ rad, 2))
    return float(best)


def _sampled_truth(robot, n: int, rng: np.random.Generator) -> float:
    """min over random q and random θ in the boxes (no payload: the light end) of the exact
    λ_min of H + diag I_a."""
    theta = robot.theta()
    rel = robot.links_rel_uncertainty
    lo = np.inf
    for _ in range(n):
        th = theta + np.sign(rng.uniform(-1, 1, theta.size)) * rel * np.abs(theta)
        ia = rng.uniform(np.maximum(robot.friction.lower[:, 2], 0.0), robot.friction.upper[:, 2])
        lo = min(lo, mass_matrix_extremes(robot, robot.random_configuration(rng), th, ia)[0])
    return float(lo)


def _local(robot, rng: np.random.Generator) -> dict[str, float]:
    """One planner-sized enclosure of the lower model: 128 boxes q ± tracking box."""
    chain = SerialChain.from_robot(robot)
    low = lower_mass_model(robot)
    ctrl = controller_model(robot)
    bodies = [tuple(float(x) for x in low.theta[10 * i:10 * i + 10]) for i in range(chain.nb)]
    home = np.asarray(robot.config["simulation"]["home"], float)
    q = np.clip(home + rng.uniform(-0.5, 0.5, (128, robot.nj)), robot.limits.q_lower,
                robot.limits.q_upper)
    t0 = time.perf_counter()
    enc = enclose_mass_matrix(chain, q - ctrl.e_max, q + ctrl.e_max, bodies, low.armature,
                              fold="lower")
    lam, mu = enc.lambda_min_lower(), enc.inverse_diagonal_upper()
    seconds = time.perf_counter() - t0
    model = robot.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = pin.Inertia.FromDynamicParameters(low.theta[10 * (i - 1):10 * i])
    exact = np.array([mass_matrix_extremes(robot, qk, low.theta, low.armature)[0] for qk in q])
    return {"seconds": seconds, "ratio_median": float(np.median(lam / exact)),
            "ratio_min": float(np.min(lam / exact)), "certified": float(np.mean(np.isfinite(mu)
                                                                                 .all(axis=1)))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--samples", type=int, default=3000)
    args = ap.parse_args(argv)
    rows = {}
    for name in progress.track(("gen3", "z1"), "robots"):
        robot = load_robot(name)
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        eb = mass_matrix_eigen_bounds(robot, cache=False)
        t_sound = time.perf_counter() - t0
        t0 = time.perf_counter()
        est = _sampling_baseline(robot, 400, rng)
        t_est = time.perf_counter() - t0
        truth = _sampled_truth(robot, args.samples, rng)
        rows[name] = {"sound_lambda_min": eb.lambda_min, "sound_seconds": t_sound,
                      "boxes": eb.boxes, "converged": eb.converged,
                      "sampling_estimate": est, "sampling_seconds": t_est,
                      "sampled_true_min": truth, "ratio_sound_to_sampled": eb.lambda_min / truth,
                      "lambda_max_bound": eb.lambda_max, "local": _local(robot, rng)}
    print(f"{'robot':6s} {'sound λ_min':>12s} {'s':>6s} {'boxes':>6s} {'sampling est.':>14s} "
          f"{'s':>6s} {'x time':>7s} {'sampled min':>12s} {'sound/sampled':>13s}")
    for name, r in rows.items():
        print(f"{name:6s} {r['sound_lambda_min']:12.4g} {r['sound_seconds']:6.2f} "
              f"{r['boxes']:6d} {r['sampling_estimate']:14.4g} {r['sampling_seconds']:6.2f} "
              f"{r['sound_seconds'] / r['sampling_seconds']:7.2f} {r['sampled_true_min']:12.4g} "
              f"{r['ratio_sound_to_sampled']:13.3f}")
    print(f"\n{'robot':6s} {'local: 128 boxes s':>19s} {'λ bound / exact (median, min)':>30s} "
          f"{'(M⁻¹)_ii certified':>19s}")
    for name, r in rows.items():
        loc = r["local"]
        print(f"{name:6s} {loc['seconds']:19.3f} {loc['ratio_median']:20.3f} "
              f"{loc['ratio_min']:9.3f} {100 * loc['certified']:18.0f} %")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
