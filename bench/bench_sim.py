"""Simulator real-time factor (RTF = simulated seconds per wall second), same run, same machine.

For each robot (gen3, b1_z1) and publication rate (1 kHz, 4 kHz; physics dt 0.25 ms):

- ``node_lockstep``: the real ``sim`` node in lock-step mode (in-process rclpy, no command
  publisher, so it never waits) stepping, measuring and publishing joint_states (+ imu, /clock)
  until ``--duration`` sim seconds;
- ``library``: ``Simulator.step`` + ``measure`` per publication period, no ROS;
- ``physics`` (baseline): bare ``mujoco.mj_step`` on the same compiled model with constant
  applied forces — the engine's own speed, which every other figure is a ratio to.

Run: ``python -m bench.bench_sim [--duration S] [--json PATH]``. JSON keys:
``sim_rtf.<robot>.<rate_hz>.{node_lockstep, library, physics, node_over_physics,
library_over_physics}``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import mujoco

from sysid_ros.model.robots import load_robot
from sysid_ros.simulation import SimConfig, Simulator

DT = 2.5e-4


def physics_rtf(robot_name: str, duration: float) -> float:
    sim = Simulator(load_robot(robot_name), config=SimConfig(physics_dt=DT))
    m, d = sim.model, sim.data
    sim.step(None, 1)
    n = int(round(duration / DT))
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(m, d)
    return duration / (time.perf_counter() - t0)


def library_rtf(robot_name: str, rate: float, duration: float) -> float:
    sim = Simulator(load_robot(robot_name), config=SimConfig(physics_dt=DT, noise_tau=0.1), seed=0)
    per = int(round(1.0 / (rate * DT)))
    n = int(round(duration * rate))
    t0 = time.perf_counter()
    for _ in range(n):
        sim.step(None, per)
        sim.measure()
    return duration / (time.perf_counter() - t0)


def node_rtf(robot_name: str, rate: float, duration: float) -> float:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from sysid_ros.nodes.sim import SimNode

    rclpy.init(args=["bench", "--ros-args", "-p", f"robot:={robot_name}", "-p", "mode:=lockstep",
                     "-p", f"rate_hz:={rate}", "-p", f"physics_dt:={DT}",
                     "-p", f"duration:={duration}", "-p", "noise_tau:=0.1"])
    try:
        t0 = time.perf_counter()
        node = SimNode()
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        while not node.finished.is_set():
            ex.spin_once(timeout_sec=0.01)
        wall = time.perf_counter() - t0
        assert node.sim.time >= duration - 1e-9 and node.exit_code == 0
        node.on_shutdown()
        node.destroy_node()
        ex.shutdown()
    finally:
        rclpy.try_shutdown()
    return duration / wall


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=1.0, help="simulated seconds per figure")
    p.add_argument("--json", type=Path, help="write figures to this JSON file")
    a = p.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", "120")
    results: dict[str, dict[str, dict[str, float]]] = {}
    for robot in ("gen3", "b1_z1"):
        base = physics_rtf(robot, a.duration)
        results[robot] = {}
        for rate in (1000.0, 4000.0):
            lib = library_rtf(robot, rate, a.duration)
            node = node_rtf(robot, rate, a.duration)
            results[robot][str(int(rate))] = {
                "physics": base, "library": lib, "node_lockstep": node,
                "library_over_physics": lib / base, "node_over_physics": node / base,
            }
    print(f"{'robot':<7} {'rate Hz':>7} {'physics RTF':>12} {'library RTF':>12} "
          f"{'node lockstep RTF':>18} {'lib/phys':>9} {'node/phys':>10}")
    for robot, by_rate in results.items():
        for rate, r in by_rate.items():
            print(f"{robot:<7} {rate:>7} {r['physics']:>12.1f} {r['library']:>12.2f} "
                  f"{r['node_lockstep']:>18.2f} {r['library_over_physics']:>9.3f} "
                  f"{r['node_over_physics']:>10.3f}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"sim_rtf": results}, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
