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
library_over_physics}`` (all at physics dt 0.25 ms), and
``sim_rtf_robot_dt.b1_z1.1000.{physics_dt, physics, library, node_lockstep, library_cpu,
node_lockstep_cpu}``: the B1 + Z1 at 1 kHz with the sim node's default step (the robot file's
``simulation.physics_dt``, 1 ms) — the configuration ``sysid-launch sim.launch.yaml
robot:=b1_z1`` runs (target ≥ 1×); ``*_cpu`` per second of the process's own CPU time, which
other users of a shared machine do not change; and
``sim_realtime.gen3.1000.{rtf, received}``: the node in ``realtime`` mode (Gen3, 1 kHz) — its
sim seconds per wall second (1.0 when the machine keeps up; the pacer never bursts, so less
when it does not) and the fraction of its joint_states a subscriber in the same process
received over DDS (best effort). These are figures of the machine's load, which is why no test
asserts them (test/nodes/test_sim_node.py checks the messages' content instead).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import mujoco

from sysid_ros._src import progress
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec, robot_physics_dt

DT = 2.5e-4


def physics_rtf(robot_name: str, duration: float, dt: float = DT) -> float:
    sim = Simulator(SimulatorSpec(load_robot(robot_name), config=SimConfig(physics_dt=dt)))
    m, d = sim.model, sim.data
    sim.step(None, 1)
    n = int(round(duration / dt))
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(m, d)
    return duration / (time.perf_counter() - t0)


def library_rtf(robot_name: str, rate: float, duration: float, dt: float = DT,
                cpu: bool = False) -> float:
    """``cpu``: simulated seconds per second of this process's CPU time instead of wall time
    (what the simulator itself costs, whatever else the shared machine runs)."""
    clock = time.process_time if cpu else time.perf_counter
    sim = Simulator(SimulatorSpec(load_robot(robot_name), config=SimConfig(physics_dt=dt, noise_tau=0.1),
                                  seed=0))
    per = int(round(1.0 / (rate * dt)))
    n = int(round(duration * rate))
    t0 = clock()
    for _ in range(n):
        sim.step(None, per)
        sim.measure()
    return duration / (clock() - t0)


def node_rtf(robot_name: str, rate: float, duration: float, dt: float | None = DT,
             cpu: bool = False) -> float:
    """``dt`` None: the node's default (``physics_dt`` absent: the robot file's step); ``cpu``:
    per second of this process's CPU time (all its threads: executor, simulation worker, DDS)."""
    clock = time.process_time if cpu else time.perf_counter
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from sysid_ros._src.nodes.sim import SimNode

    step = [] if dt is None else ["-p", f"physics_dt:={dt}"]
    rclpy.init(args=["bench", "--ros-args", "-p", f"robot:={robot_name}", "-p", "mode:=lockstep",
                     "-p", f"rate_hz:={rate}", *step,
                     "-p", f"duration:={duration}", "-p", "noise_tau:=0.1"])
    try:
        t0 = clock()
        node = SimNode()
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        while not node.finished.is_set():
            ex.spin_once(timeout_sec=0.01)
        wall = clock() - t0
        assert node.runtime.time >= duration - 1e-9 and node.exit_code == 0
        node.on_shutdown()
        node.destroy_node()
        ex.shutdown()
    finally:
        rclpy.try_shutdown()
    return duration / wall


def realtime_figures(robot_name: str, rate: float, duration: float) -> dict[str, float]:
    """The ``realtime`` node for ``duration`` sim seconds: sim s per wall s, fraction received."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from sysid_ros._src.nodes.qos import SENSOR_QOS
    from sysid_ros._src.nodes.sim import SimNode

    rclpy.init(args=["bench", "--ros-args", "-p", f"robot:={robot_name}", "-p", "mode:=realtime",
                     "-p", f"rate_hz:={rate}", "-p", f"duration:={duration}",
                     "-p", "wait_subscribers:=1"])
    try:
        probe = rclpy.create_node("bench_sim_probe")
        received: list[int] = []
        probe.create_subscription(JointState, "joint_states", lambda _m: received.append(1),
                                  SENSOR_QOS)
        node = SimNode()
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        ex.add_node(probe)
        while node.runtime.time == 0.0 and not node.finished.is_set():   # until discovery
            ex.spin_once(timeout_sec=0.01)
        t0 = time.perf_counter()
        while not node.finished.is_set():
            ex.spin_once(timeout_sec=0.01)
        wall = time.perf_counter() - t0
        for _ in range(20):            # drain what is still queued
            ex.spin_once(timeout_sec=0.01)
        sent = int(round(node.runtime.time * node.runtime.rate_hz)) + 1
        node.on_shutdown()
        node.destroy_node()
        probe.destroy_node()
        ex.shutdown()
    finally:
        rclpy.try_shutdown()
    return {"rtf": node.runtime.time / wall, "received": len(received) / sent}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=1.0, help="simulated seconds per figure")
    p.add_argument("--json", type=Path, help="write figures to this JSON file")
    a = p.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", "120")
    results: dict[str, dict[str, dict[str, float]]] = {}
    for robot in progress.track(("gen3", "b1_z1"), "robots"):
        base = physics_rtf(robot, a.duration)
        results[robot] = {}
        for rate in (1000.0, 4000.0):
            lib = library_rtf(robot, rate, a.duration)
            node = node_rtf(robot, rate, a.duration)
            results[robot][str(int(rate))] = {
                "physics": base, "library": lib, "node_lockstep": node,
                "library_over_physics": lib / base, "node_over_physics": node / base,
            }
    robot_dt = robot_physics_dt(load_robot("b1_z1"))
    own = {"physics_dt": robot_dt, "physics": physics_rtf("b1_z1", a.duration, robot_dt),
           "library": library_rtf("b1_z1", 1000.0, a.duration, robot_dt),
           "node_lockstep": node_rtf("b1_z1", 1000.0, a.duration, None),
           "library_cpu": library_rtf("b1_z1", 1000.0, a.duration, robot_dt, cpu=True),
           "node_lockstep_cpu": node_rtf("b1_z1", 1000.0, a.duration, None, cpu=True)}
    realtime = realtime_figures("gen3", 1000.0, a.duration)
    print(f"{'robot':<7} {'rate Hz':>7} {'physics RTF':>12} {'library RTF':>12} "
          f"{'node lockstep RTF':>18} {'lib/phys':>9} {'node/phys':>10}")
    for robot, by_rate in results.items():
        for rate, r in by_rate.items():
            print(f"{robot:<7} {rate:>7} {r['physics']:>12.1f} {r['library']:>12.2f} "
                  f"{r['node_lockstep']:>18.2f} {r['library_over_physics']:>9.3f} "
                  f"{r['node_over_physics']:>10.3f}")
    print(f"b1_z1 at 1 kHz, physics dt {robot_dt * 1e3:g} ms (the node's default): physics "
          f"{own['physics']:.1f}, library {own['library']:.2f}, node lockstep "
          f"{own['node_lockstep']:.2f}; per CPU second: library {own['library_cpu']:.2f}, "
          f"node lockstep {own['node_lockstep_cpu']:.2f}")
    print(f"gen3 realtime at 1 kHz: RTF {realtime['rtf']:.2f}, joint_states received by a "
          f"subscriber {100 * realtime['received']:.0f} %")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"sim_rtf": results,
                                      "sim_rtf_robot_dt": {"b1_z1": {"1000": own}},
                                      "sim_realtime": {"gen3": {"1000": realtime}}},
                                     indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
