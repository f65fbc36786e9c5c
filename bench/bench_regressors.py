"""Benchmark of the dynamics core.

Per-sample cost of each regressor for gen3 and b1_z1, as a ratio to one ``pin.rnea`` call measured
in the same run, and the time to build W_m and W_c for 30,000 Gen3 samples (7.5 s at 4 kHz)
against 30,000 rnea calls (target: ≤ 10×).

Usage: python -m bench.bench_regressors [--json PATH] [--samples 30000]
"""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from sysid_ros._src import progress
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import load_robot


def _best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _rnea_loop(robot, q, dq, ddq) -> Callable[[], None]:
    model, data = robot.model, robot.model.createData()

    def run() -> None:
        for k in range(q.shape[0]):
            pin.rnea(model, data, q[k], dq[k], ddq[k])
    return run


def per_sample_costs(name: str, n: int, rng: np.random.Generator) -> dict[str, float]:
    robot = load_robot(name)
    reg = Regressors(robot)
    q = robot.random_configuration(rng, n)
    dq, ddq, dqa = rng.normal(size=(3, n, robot.nv))
    rnea = _best_of(_rnea_loop(robot, q, dq, ddq)) / n
    cases = {
        "Y (pinocchio loop)": lambda: reg.Y(q, dq, ddq),
        "W_m + W_c (batched)": lambda: reg.momentum_pair(q, dq),
        "W_m + W_c, θ_e only": lambda: reg.momentum_pair(
            q, dq, bodies=np.array([robot.ee_joint_id - 1])),
        "Y_p (batched)": lambda: reg.Y_p(q, dq, dqa, ddq),
        "kinetic": lambda: reg.kinetic(q, dq),
        "potential": lambda: reg.potential(q),
        "friction": lambda: reg.friction(dq, ddq),
    }
    out = {"rnea_us": rnea * 1e6}
    for label, fn in progress.track(cases.items(), "regressors", total=len(cases)):
        out[label] = _best_of(fn) / n * 1e6
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=str, default=None, help="write figures to this JSON file")
    ap.add_argument("--samples", type=int, default=30_000)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    results: dict = {"per_sample_us": {}, "batch": {}}

    print("Per-sample cost (µs) and ratio to one pin.rnea call, 2,000-sample batches")
    print(f"{'regressor':<24}{'gen3 µs':>10}{'ratio':>8}{'b1_z1 µs':>11}{'ratio':>8}")
    costs = {name: per_sample_costs(name, 2000, rng) for name in ("gen3", "b1_z1")}
    for label in costs["gen3"]:
        g, b = costs["gen3"][label], costs["b1_z1"][label]
        print(f"{label:<24}{g:>10.2f}{g / costs['gen3']['rnea_us']:>8.2f}"
              f"{b:>11.2f}{b / costs['b1_z1']['rnea_us']:>8.2f}")
    results["per_sample_us"] = costs

    robot = load_robot("gen3")
    reg = Regressors(robot)
    n = args.samples
    q = robot.random_configuration(rng, n)
    dq, ddq = rng.normal(size=(2, n, robot.nv))
    t_rnea = _best_of(_rnea_loop(robot, q, dq, ddq), repeat=2)
    t_full = _best_of(lambda: reg.momentum_pair(q, dq), repeat=2)
    t_ee = _best_of(lambda: reg.momentum_pair(q, dq, bodies=np.array([robot.ee_joint_id - 1])),
                    repeat=2)
    print(f"\nGen3, {n} samples: W_m and W_c vs {n} rnea calls (target ≤ 10×)")
    print(f"{'what':<34}{'seconds':>9}{'ratio':>8}")
    print(f"{'rnea loop (baseline)':<34}{t_rnea:>9.3f}{1.0:>8.2f}")
    print(f"{'W_m + W_c, all 70 columns':<34}{t_full:>9.3f}{t_full / t_rnea:>8.2f}")
    print(f"{'W_m + W_c, θ_e columns only':<34}{t_ee:>9.3f}{t_ee / t_rnea:>8.2f}")
    results["batch"] = {"samples": n, "rnea_s": t_rnea, "momentum_pair_s": t_full,
                        "momentum_pair_ratio": t_full / t_rnea, "momentum_pair_ee_s": t_ee,
                        "momentum_pair_ee_ratio": t_ee / t_rnea}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
