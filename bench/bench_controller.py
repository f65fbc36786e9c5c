"""Benchmark of the robust controller.

1. Compute time per command for gen3 (median, p99) of the robust law (interval torque, V_sup,
   robust input, clipping) and of the "wrong"-mode law, as ratios to the nominal computed-torque
   baseline measured in the same run (one ``pin.rnea`` + friction). Target: robust p99 ≤ 0.5 ms.
   Also the Z1's law with its robot file's gains (mass metric: one CRBA, a 6×6 solve and the
   2^6 sign vertices more per command) against the Z1's own baseline.
2. End-to-end latency joint_states → /effort_controller/commands through DDS on this machine:
   the real node as a subprocess (autostart), lock-step round trips from an in-process publisher;
   idle, and with ``--loaded`` also while the shipped realtime simulation graph
   (``sysid-launch sim.launch.yaml``: simulator, identifier, planner planning all run,
   controller, recorder) runs on the same machine in another ROS domain (its CPU and memory
   load, not its topics). Targets: p99 ≤ 0.5 ms idle, ≤ 1 ms loaded. The
   machine is shared: the load average is printed with each figure. Two ends per round trip:
   when the bench's command callback ran (its own rclpy dispatch included: the figure of
   earlier runs) and when its DDS reader received the command (``received_timestamp``, system
   clock, as the publish time: what a C++ drive loop would see). ``--realtime-priority N``
   runs the node with ``realtime_priority:=N``; ``--client-priority N`` puts the bench's
   thread at SCHED_FIFO N (a drive's loop would be; this Python client's busy executor then
   competes with the node's middleware threads for the two cores: idle median 0.21 → 0.32 ms
   measured, so it is off by default).
3. The node's message handling per command, in process: ``joint_states`` decode (rclpy's
   deserialisation into a JointState + ``messages.joint_state_arrays``, against the raw-CDR
   ``sysid_ros._src.cdr.JointStateDecoder`` the node uses) and command encode (a Float64MultiArray
   serialised by rclpy, against ``sysid_ros._src.cdr.Float64ArrayEncoder``), on gen3 messages whose
   joint order is not the robot's; ratio = message path / raw path, same run.
4. Trajectory admission cost (``control.admission`` through ``ControllerRuntime.trajectory``:
   exact limit ranges, continuity, sampled torque intervals) for a planner-like two-point plan
   and the demo's six-segment task: the time one admission holds the controller's callback.

Usage: python -m bench.bench_controller [--json PATH] [--samples 3000] [--round-trips 500]
       [--loaded] [--client message|raw] [--command-reliability reliable|best_effort]
       [--baseline-tree DIR --repeats N] [--realtime-priority N] [--client-priority N]

JSON keys (stable): compute, compute_ratio_p99_robust_over_baseline, target_p99_ms, target_met,
z1_mass_metric, codec {decode, encode: {message_path, raw_cdr: {median_ms, p99_ms}, ratio_median,
ratio_p99}}, admission, dds_latency and dds_latency_baseline ({median_ms, p99_ms, round_trips,
runs, client, load_avg_1min, realtime_priority, at_dds_receipt {median_ms, p99_ms}}: medians
over the runs; null without a baseline tree),
dds_latency_runs (each run, with its command_reliability, client_priority and
client_receive_threads {raised, refused}),
dds_latency_loaded and dds_latency_loaded_baseline (the same medians over the runs under the
graph, + graph_running_throughout; the trees alternate under one graph; null without
``--loaded`` / a baseline tree), dds_latency_loaded_runs (each run under the graph).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from sysid_ros._src import progress
from sysid_ros._src.control.controller import ControllerGains, RobustController, gains_from_config
from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.model.robots import load_robot

ROOT = Path(__file__).resolve().parents[1]


def _stats(samples: list[float]) -> dict[str, float]:
    a = np.asarray(samples)
    return {"median_ms": float(np.median(a) * 1e3), "p99_ms": float(np.percentile(a, 99) * 1e3)}


def _time_calls(fn: Callable[[int], object], n: int, warmup: int) -> dict[str, float]:
    """Median / p99 of ``fn(k)`` for k < n, after ``warmup`` untimed calls."""
    for k in range(warmup):
        fn(k)
    times = []
    for k in range(n):
        t0 = time.perf_counter()
        fn(k)
        times.append(time.perf_counter() - t0)
    return _stats(times)


def compute_times(n: int, rng: np.random.Generator, name: str = "gen3",
                  gains: ControllerGains | None = None,
                  modes: tuple[str, ...] = ("robust", "wrong")) -> dict[str, dict[str, float]]:
    robot = load_robot(name)
    gains = gains or ControllerGains(5.0, 20.0, 0.02)
    prior = prior_box(robot)
    q = robot.random_configuration(rng, n)
    dq, qd_off, dqd, ddqd = rng.normal(scale=0.2, size=(4, n, robot.nv))
    model, data = robot.model, robot.model.createData()
    fric = robot.friction.nominal

    def baseline(k: int) -> np.ndarray:
        tau = pin.rnea(model, data, q[k], dqd[k], ddqd[k])
        return tau + fric[:, 1] * dqd[k] + fric[:, 2] * ddqd[k] + fric[:, 3]

    out = {}
    cases = {"nominal computed torque (rnea)": baseline}
    for mode in modes:
        ctl = RobustController(robot, gains, mode=mode, prior=prior)
        cases[f"{mode} law"] = (lambda c: lambda k: c.compute(0.0, q[k], dq[k], q[k] + 0.01 *
                                                              qd_off[k], dqd[k], ddqd[k]))(ctl)
    for name, fn in progress.track(cases.items(), "control laws", total=len(cases)):
        out[name] = _time_calls(fn, n, warmup=min(n, 200))
    return out


def codec_times(n: int, rng: np.random.Generator) -> dict[str, dict[str, Any]]:
    """Per-message decode / encode time of the rclpy message path and of the raw-CDR path."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from sysid_ros._src.cdr import Float64ArrayEncoder, JointStateDecoder
    from sysid_ros._src.nodes.messages import joint_state_arrays
    robot = load_robot("gen3")
    names = list(robot.joint_names)
    msgs, order = [], list(rng.permutation(names))   # one publisher: one (shuffled) order
    for _ in range(16):
        msg = JointState(name=order)
        msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 345
        msg.position, msg.velocity, msg.effort = rng.normal(size=(3, robot.nj)).tolist()
        msgs.append(serialize_message(msg))
    decoder, encoder = JointStateDecoder(names, need_effort=False), Float64ArrayEncoder()
    taus = rng.normal(size=(16, robot.nj))
    cases: dict[str, dict[str, Callable[[int], object]]] = {
        "decode": {"message_path": lambda k: joint_state_arrays(
                       deserialize_message(msgs[k % 16], JointState), names, need_effort=False),
                   "raw_cdr": lambda k: decoder.decode(msgs[k % 16])},
        "encode": {"message_path": lambda k: serialize_message(
                       Float64MultiArray(data=taus[k % 16].tolist())),
                   "raw_cdr": lambda k: encoder.encode(taus[k % 16])},
    }
    out: dict[str, dict[str, Any]] = {}
    for what, paths in cases.items():
        res: dict[str, Any] = {}
        for path, fn in paths.items():
            res[path] = _time_calls(fn, n, warmup=200)   # warm-up fills the name cache too
        msg_s, raw_s = res["message_path"], res["raw_cdr"]
        res["ratio_median"] = msg_s["median_ms"] / raw_s["median_ms"]
        res["ratio_p99"] = msg_s["p99_ms"] / raw_s["p99_ms"]
        out[what] = res
    return out


def dds_latency(round_trips: int, root: Path = ROOT, client: str = "message",
                reliability: str = "reliable", priority: int = 0,
                client_priority: int = 0) -> dict[str, Any]:
    """Round trips against the controller node of the source tree ``root`` (its
    ``sysid_ros`` and config). ``client``: "message" publishes a JointState object and takes
    the commands as Float64MultiArray objects (the figure of earlier runs); "raw" publishes
    the same message pre-serialized and takes the commands as bytes, so less of the figure is
    the bench's own rclpy work. ``priority`` > 0: the node's ``realtime_priority``;
    ``client_priority`` > 0: the bench's thread and its middleware receive threads at
    SCHED_FIFO, raised after the node was started (which keeps its own policy); the thread is
    lowered again at the end, the receive threads end with the bench's rclpy context."""
    import rclpy
    from rclpy.serialization import serialize_message
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from sysid_ros._src.nodes.qos import SENSOR_QOS, command_qos

    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env.setdefault("ROS_DOMAIN_ID", str(130 + os.getpid() % 10))
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID")})
    proc = subprocess.Popen(
        [sys.executable, "-m", "sysid_ros._src.nodes.robust_controller", "--ros-args", "--params-file",
         str(root / "config" / "robust_controller.yaml"), "-p", "autostart:=true",
         "-p", "stale_timeout:=5.0", "-p", "debug_decimation:=1000000",
         # only when asked: a baseline tree older than the parameter would refuse it
         *(["-p", f"command_reliability:={reliability}"] if reliability != "reliable" else []),
         *(["-p", f"realtime_priority:={priority}"] if priority else [])],
        env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    if client_priority:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(client_priority))
    rclpy.init()
    node = rclpy.create_node("bench_controller_latency")
    client_receivers: tuple[list[str], str] = ([], "")
    if client_priority:   # a drive's receive threads would be real-time too (as the node's)
        from sysid_ros._src.nodes.threads import realtime_receive_threads
        client_receivers = realtime_receive_threads(client_priority)
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    got: list[float] = []
    received: list[int] = []                 # the DDS reader's receipt, ns, system clock

    def on_command(_msg: object, info: dict[str, int]) -> None:
        got.append(time.perf_counter())
        received.append(info["received_timestamp"])

    node.create_subscription(Float64MultiArray, "/effort_controller/commands", on_command,
                             command_qos(reliability), raw=client == "raw")
    pub = node.create_publisher(JointState, "joint_states", SENSOR_QOS)
    robot = load_robot("gen3")
    msg = JointState()
    msg.name = list(robot.joint_names)
    msg.position = list(map(float, robot.config["simulation"]["home"]))
    msg.velocity = [0.0] * robot.nj
    msg.effort = [0.0] * robot.nj
    out: JointState | bytes = serialize_message(msg) if client == "raw" else msg
    lat: list[float] = []
    lat_dds: list[float] = []
    try:
        end = time.monotonic() + 30.0
        while not got and time.monotonic() < end:       # discovery + configure
            pub.publish(out)
            ex.spin_once(timeout_sec=0.05)
        if not got:
            raise RuntimeError("controller node never answered")
        for _ in range(round_trips + 20):
            n = len(got)
            sent_ns = time.time_ns()
            t0 = time.perf_counter()
            pub.publish(out)
            deadline = t0 + 1.0
            while len(got) == n and time.perf_counter() < deadline:
                ex.spin_once(timeout_sec=0.0005)
            if len(got) > n:
                lat.append(got[-1] - t0)
                lat_dds.append((received[-1] - sent_ns) * 1e-9)
    finally:
        node.destroy_node()
        ex.shutdown()
        rclpy.try_shutdown()
        if client_priority:   # back to normal: the loaded graph is started from this thread
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    return {**_stats(lat[20:]), "round_trips": len(lat[20:]), "client": client,
            "load_avg_1min": os.getloadavg()[0], "realtime_priority": priority,
            "client_priority": client_priority,
            # which of the bench's receive threads were raised, or why none
            "client_receive_threads": {"raised": client_receivers[0],
                                       "refused": client_receivers[1]},
            "at_dds_receipt": _stats(lat_dds[20:])}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Median over runs of the median and of the p99 (None without runs)."""
    if not runs:
        return None
    def med(key: str, part: str | None = None) -> float:
        return float(np.median([(r[part] if part else r)[key] for r in runs]))

    return {"median_ms": med("median_ms"), "p99_ms": med("p99_ms"),
            "at_dds_receipt": {k: med(k, "at_dds_receipt") for k in ("median_ms", "p99_ms")},
            "realtime_priority": runs[0]["realtime_priority"],
            "round_trips": sum(r["round_trips"] for r in runs), "runs": len(runs),
            "client": runs[0]["client"], "load_avg_1min": max(r["load_avg_1min"] for r in runs),
            **({"graph_running_throughout": all(r["graph_running_throughout"] for r in runs)}
               if "graph_running_throughout" in runs[0] else {})}


def _latency_report(where: str, runs: list[dict[str, Any]], detail: Callable[[dict], str],
                    target_ms: float) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Print each round-trip run (``detail``: what else its line says) and the median over
    each tree's runs against ``target_ms``; returns (this tree's, the baseline's) summary."""
    for run in runs:
        print(f"DDS joint_states -> command latency, {where}, {run['tree']} "
              f"({run['round_trips']} round trips, {detail(run)}): median "
              f"{run['median_ms']:.3f} ms, p99 {run['p99_ms']:.3f} ms{_receipt(run)}")
    this, base = (_summary([r for r in runs if r["tree"] == t]) for t in ("this tree", "baseline"))
    for label, summ in (("this tree", this), ("baseline", base)):
        if summ is not None:
            print(f"DDS latency, {where}, {label}, median over {summ['runs']} run(s): median "
                  f"{summ['median_ms']:.3f} ms, p99 {summ['p99_ms']:.3f} ms{_receipt(summ)} "
                  f"(target p99 <= {target_ms:g} ms: "
                  f"{'met' if summ['p99_ms'] <= target_ms else 'MISSED'})")
    return this, base


def _receipt(run: dict[str, Any]) -> str:
    rec = run["at_dds_receipt"]
    prio = f", SCHED_FIFO {run['realtime_priority']}" if run["realtime_priority"] else ""
    return f" (at DDS receipt: median {rec['median_ms']:.3f} ms, p99 {rec['p99_ms']:.3f} ms{prio})"


def start_graph(out: Path) -> subprocess.Popen:
    """The shipped realtime simulation graph in its own ROS domain and session, as load for the
    loaded latency figure. It runs until stopped (the planner plans all run): the lock-step demo
    used before could finish inside the warm-up and leave an idle machine."""
    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
           "ROS_DOMAIN_ID": str(150 + os.getpid() % 20)}
    exe = Path(sys.executable).with_name("sysid-launch")
    return subprocess.Popen([str(exe), "sim.launch.yaml", "robot:=gen3", "record:=true",
                             f"output_dir:={out}", "max_trajectories:=0",
                             "robot_state_publisher:=false"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop_graph(proc: subprocess.Popen) -> None:
    """SIGINT the graph's process group (SIGKILL after 20 s); a graph that already ended is
    left as it is (the figure then says it was not running throughout)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(20)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def admission_times(n: int = 50) -> dict[str, dict[str, float]]:
    """Admission of a 2-point plan and of the gen3 demo's 6-segment rest-to-rest task."""
    from sysid_ros._src.control.controller_runtime import ControllerSettings, build_runtime
    from sysid_ros._src.control.trajectory import JointTrajectoryArrays
    rt = build_runtime(ControllerSettings(accept_uncertified=True), use_sim_time=False,
                       steady=0.0)
    robot = rt.robot
    q0 = np.array(robot.config["demo"]["start"])
    rt.joint_state(0.0, 1.0, q0, np.zeros(robot.nj))
    rt.activate(0.0)
    way = [q0, *map(np.array, robot.config["demo"]["waypoints"])]
    cases = {"2-point plan": (np.array([0.0, 3.0]), [q0, q0 + 0.1]),
             f"{len(way) - 1}-segment task": (np.arange(len(way)) * 1.0, way)}
    out = {}
    for name, (times, pos) in cases.items():
        z = np.zeros((len(times), robot.nj))
        traj = JointTrajectoryArrays.from_arrays(times, np.stack(pos), z, z, robot.joint_names,
                                                 robot.joint_names, 0.0)
        samples = []
        for _ in range(n):
            rt.queue.clear()
            rt.queue.hold(q0)
            t0 = time.perf_counter()
            adm = rt.trajectory(1.0, traj, "")
            samples.append(time.perf_counter() - t0)
        out[name] = {**_stats(samples), "accepted": float(adm.accepted)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--samples", type=int, default=3000)
    ap.add_argument("--round-trips", type=int, default=500)
    ap.add_argument("--loaded", action="store_true",
                    help="also measure the latency with the full simulation graph running")
    ap.add_argument("--graph-warmup", type=float, default=40.0,
                    help="s to let the graph start before the loaded measurement")
    ap.add_argument("--client", choices=("message", "raw"), default="message",
                    help="the latency client's rclpy path (dds_latency's docstring)")
    ap.add_argument("--command-reliability", choices=("reliable", "best_effort"), default="reliable",
                    help="the controller's command_reliability (and the client's QoS) in the DDS "
                         "round trips: reliable as on hardware, best_effort as the sim launch")
    ap.add_argument("--baseline-tree", type=Path,
                    help="also measure the controller node of this source tree (e.g. an unpacked "
                         "`git archive REV`), alternating with this tree's, same client")
    ap.add_argument("--realtime-priority", type=int, default=0,
                    help="the node's realtime_priority: SCHED_FIFO priority of its command thread "
                         "(0: normal scheduling; needs CAP_SYS_NICE or an rtprio limit)")
    ap.add_argument("--client-priority", type=int, default=0,
                    help="SCHED_FIFO priority of the bench's own thread (0: normal)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="idle latency runs per tree (the machine is shared: alternate, repeat)")
    args = ap.parse_args(argv)
    comp = compute_times(args.samples, np.random.default_rng(0))
    base = comp["nominal computed torque (rnea)"]
    print(f"{'gen3 compute per command':34s} {'median ms':>10s} {'p99 ms':>8s} {'x base med':>10s}"
          f" {'x base p99':>10s}")
    for name, s in comp.items():
        print(f"{name:34s} {s['median_ms']:10.4f} {s['p99_ms']:8.4f} "
              f"{s['median_ms'] / base['median_ms']:10.1f} {s['p99_ms'] / base['p99_ms']:10.1f}")
    robust_p99 = comp["robust law"]["p99_ms"]
    print(f"target robust p99 <= 0.5 ms: {'met' if robust_p99 <= 0.5 else 'MISSED'}")
    z1 = load_robot("z1")
    comp_z1 = compute_times(args.samples, np.random.default_rng(1), "z1", gains_from_config(z1),
                            ("robust",))
    base_z1 = comp_z1["nominal computed torque (rnea)"]
    zr = comp_z1["robust law"]
    print(f"{'z1 robust law (mass metric)':34s} {zr['median_ms']:10.4f} {zr['p99_ms']:8.4f} "
          f"{zr['median_ms'] / base_z1['median_ms']:10.1f} {zr['p99_ms'] / base_z1['p99_ms']:10.1f}"
          f"  (x the z1 rnea baseline; p99 target {'met' if zr['p99_ms'] <= 0.5 else 'MISSED'})")
    codec = codec_times(args.samples, np.random.default_rng(2))
    print(f"{'gen3 message handling':34s} {'median us':>10s} {'p99 us':>8s} {'x raw med':>10s}"
          f" {'x raw p99':>10s}")
    for what, res in codec.items():
        for path in ("message_path", "raw_cdr"):
            st = res[path]
            ratio = (res["ratio_median"], res["ratio_p99"]) if path == "message_path" else (1, 1)
            print(f"{what + ' ' + path.replace('_', ' '):34s} {st['median_ms'] * 1e3:10.2f} "
                  f"{st['p99_ms'] * 1e3:8.2f} {ratio[0]:10.1f} {ratio[1]:10.1f}")
    adm = admission_times()
    for name, st in adm.items():
        print(f"{'admission ' + name:34s} {st['median_ms']:10.4f} {st['p99_ms']:8.4f}")
    trees = {"this tree": ROOT, **({"baseline": args.baseline_tree} if args.baseline_tree else {})}
    runs = [{"tree": tree, "command_reliability": args.command_reliability,
             **dds_latency(args.round_trips, root, args.client, args.command_reliability,
                           args.realtime_priority, args.client_priority)}
            for _ in range(args.repeats) for tree, root in trees.items()]
    lat, lat_base = _latency_report(
        "idle", runs, lambda r: f"{args.client} client, {args.command_reliability} commands, "
        f"load {r['load_avg_1min']:.1f}", 0.5)
    loaded = loaded_base = None
    loaded_runs: list[dict[str, Any]] = []
    if args.loaded:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            graph = start_graph(Path(tmp) / "demo")
            try:
                time.sleep(args.graph_warmup)
                for _ in range(args.repeats):     # the trees alternate under the same graph
                    for tree, root in trees.items():
                        alive = graph.poll() is None
                        run = dds_latency(args.round_trips, root, args.client,
                                          args.command_reliability, args.realtime_priority,
                                          args.client_priority)
                        loaded_runs.append({"tree": tree, **run,
                                            "graph_running_throughout": alive
                                            and graph.poll() is None})
            finally:
                stop_graph(graph)
        loaded, loaded_base = _latency_report(
            "full graph running", loaded_runs, lambda r: f"load {r['load_avg_1min']:.1f}, graph "
            f"alive throughout: {r['graph_running_throughout']}", 1.0)
    if args.json:
        args.json.write_text(json.dumps({
            "compute": {k.split(" ")[0] if k != "nominal computed torque (rnea)" else "baseline": v
                        for k, v in comp.items()},
            "compute_ratio_p99_robust_over_baseline": robust_p99 / base["p99_ms"],
            "target_p99_ms": 0.5, "target_met": robust_p99 <= 0.5,
            "z1_mass_metric": {"robust": zr, "baseline": base_z1,
                               "ratio_p99": zr["p99_ms"] / base_z1["p99_ms"]},
            "codec": codec, "admission": adm, "dds_latency": lat,
            "dds_latency_baseline": lat_base, "dds_latency_runs": runs,
            "dds_latency_loaded": loaded, "dds_latency_loaded_baseline": loaded_base,
            "dds_latency_loaded_runs": loaded_runs}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
