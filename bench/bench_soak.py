"""Soak benchmark of the full sim graph : does every node keep up at 1 kHz?

Runs ``launch/sim.launch.yaml`` (sim realtime + identifier + exciting planner without a plan
limit + robust controller + recorder) for ``--minutes`` and reports:

- per node: RSS at start (after ``--warmup``) and end, and its maximum (/proc/<pid>/status);
- joint_states received / published by the identifier (its ``received`` diagnostic between two
  of its reports after warm-up, over the span of the stamps of the newest sample it had at each,
  ``last_sample_stamp``: published = span × rate; a backlog still queued is not a loss) and by the
  recorder (distinct header stamps in the bag against the stamps the simulator published over
  their span, which counts exactly the lost messages; and, as before, messages per log-time
  span);
- the controller's commands / published joint_states over the same kind of span, its stale
  events and the worst age of the bounds it used;
- the identifier's update cost (``last_update_latency_s``: median, max);
- the simulator's real-time factor: sim-time span / steady span of the /clock messages the bench
  receives (the identifier's report stamps lag when that node is behind; both are printed).

The bench process listens to /diagnostics and the 100 Hz /clock only (never to the 1 kHz
streams, so it does not compete for the CPU it measures).

Usage: ``python -m bench.bench_soak --minutes 3 [--max-trajectories 4] [--json out/soak.json] [--robot gen3]``.
``--tree DIR`` runs the nodes of another source tree (A/B against a change's base); ``--arg
NAME:=VALUE`` passes a launch argument (e.g. a node's launch prefix).
JSON keys (stable): ``minutes``, ``robot``, ``max_trajectories``, ``tree``, ``launch_args``, ``rate_hz``,
``sim_rtf`` (from /clock), ``sim_rtf_from_reports``, ``sim_slips``, ``sim_lost_s``,
``load_average_start``, ``nodes`` {name:
{rss_start_mb, rss_end_mb, rss_max_mb, cpu_cores}}, ``load_average``, ``identifier`` {received_ratio, update_median_s,
update_max_s}, ``recorder`` {received_ratio, log_time_ratio, missing_runs}, ``controller`` {command_ratio, stale_events,
last_stale, bounds_age_max_s}.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros._src import progress

RATE_HZ = 1000.0


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) the process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


class _Probe:
    """Collects the identifier's and the controller's /diagnostics (values by key, with the
    report's ROS stamp and the steady arrival time), and /clock (100 Hz) with its steady
    arrival time: the simulator's real-time factor from the clock itself, not from a report
    stamped by a node that may be running behind."""

    def __init__(self) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray

        from sysid_ros._src.nodes.qos import DIAGNOSTICS_QOS
        rclpy.init()
        self.node = rclpy.create_node(f"soak_probe_{os.getpid()}")
        self.ident: list[tuple[float, float, dict[str, str]]] = []
        self.ctl: list[tuple[float, float, dict[str, str]]] = []
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag,
                                      DIAGNOSTICS_QOS)
        from rosgraph_msgs.msg import Clock

        from sysid_ros._src.nodes.qos import CLOCK_QOS
        self.clock: list[tuple[float, float]] = []       # (steady arrival, sim time)
        self.node.create_subscription(
            Clock, "/clock", lambda m: self.clock.append(
                (time.monotonic(), m.clock.sec + 1e-9 * m.clock.nanosec)), CLOCK_QOS)
        from rclpy.executors import SingleThreadedExecutor
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.ex.spin_once(timeout_sec=0.1)

    def _on_diag(self, msg: Any) -> None:
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        for st in msg.status:
            values = {kv.key: kv.value for kv in st.values}
            if st.name == "sysid_ros/identifier":
                self.ident.append((time.monotonic(), stamp, values))
            elif st.name.endswith("robust controller") and "commands" in values:
                self.ctl.append((time.monotonic(), stamp, values))

    def close(self) -> None:
        import rclpy
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.node.destroy_node()
        self.ex.shutdown()
        rclpy.try_shutdown()


def _ratio(reports: list[tuple[float, float, dict[str, str]]], key: str,
           after: float, stamp_key: str | None = None) -> tuple[float, float, float]:
    """(Δkey / (Δt × rate), Δsim-time, Δsteady) between the first report after ``after``
    (steady) and the last one. Δt is the span of the reports' stamps, or with ``stamp_key`` the
    span of that value (the stamp of the newest message the node received): then a backlog
    still queued at the last report is not counted as lost."""
    use = [r for r in reports if r[0] >= after and key in r[2]]
    if len(use) < 2:
        return float("nan"), 0.0, 0.0
    (w0, t0, v0), (w1, t1, v1) = use[0], use[-1]
    span = t1 - t0
    if stamp_key is not None and stamp_key in v0 and stamp_key in v1:
        counted = float(v1[stamp_key]) - float(v0[stamp_key])
    else:
        counted = span
    if counted <= 0:
        return float("nan"), span, w1 - w0
    return (float(v1[key]) - float(v0[key])) / (counted * RATE_HZ), span, w1 - w0


def _clock_rtf(clock: list[tuple[float, float]], after: float) -> float:
    """Δ sim time / Δ steady time between the first /clock after ``after`` and the last."""
    use = [c for c in clock if c[0] >= after]
    if len(use) < 2 or use[-1][0] <= use[0][0]:
        return float("nan")
    return (use[-1][1] - use[0][1]) / (use[-1][0] - use[0][0])


def _cores(samples: list[tuple[float, float]]) -> float:
    """Mean CPU use in cores (CPU seconds per steady second) between the first and last sample."""
    if len(samples) < 2 or samples[-1][0] <= samples[0][0]:
        return float("nan")
    return (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])


def _bag_ratios(bag: Path, warmup: float) -> tuple[float, float, int]:
    """The recorder's /joint_states after warm-up: (distinct stamps / stamps published over
    their span, messages / (log-time span × rate), runs of missing stamps)."""
    from sysid_ros._src.bagio.reader import open_bag
    from sysid_ros._src.cdr import joint_state_layout
    reader = open_bag(bag)
    try:
        conns = [c for c in reader.connections if c.topic == "/joint_states"]
        rows = [(t, joint_state_layout(raw).stamp_ns) for _, t, raw in
                reader.messages(connections=conns)]
    finally:
        reader.close()
    if len(rows) < 3:
        return float("nan"), float("nan"), -1
    log = np.array([r[0] for r in rows], dtype=np.int64) * 1e-9
    stamps = np.array([r[1] for r in rows], dtype=np.int64)
    keep = log >= log[0] + warmup * 0.8      # sim time lags wall time a little under load
    log, stamps = log[keep], np.unique(stamps[keep])
    if stamps.size < 3:
        return float("nan"), float("nan"), -1
    period_ns = 1e9 / RATE_HZ
    published = int(round((stamps[-1] - stamps[0]) / period_ns)) + 1
    steps = np.round(np.diff(stamps) / period_ns)
    return (stamps.size / published, (log.size - 1) / ((log[-1] - log[0]) * RATE_HZ),
            int(np.count_nonzero(steps > 1)))


def _sim_slips(log: Path) -> dict[str, float]:
    """The simulator's own count of the times it fell behind real time and the wall time given
    up (its last throttled warning; the count can run up to 5 s ahead of it)."""
    slips, lost = 0, 0.0
    for line in log.read_text().splitlines():
        m = re.search(r"fell behind real time (\d+) time\(s\), ([0-9.]+) s lost", line)
        if m:
            slips, lost = int(m.group(1)), float(m.group(2))
    return {"sim_slips": slips, "sim_lost_s": lost}


def run(minutes: float, robot: str, warmup: float, max_trajectories: int = 0,
        tree: Path | None = None, launch_args: dict[str, str] | None = None) -> dict[str, Any]:
    """``tree``: run the nodes (and the launch file) of this source tree instead, e.g. an
    unpacked ``git archive REV`` to compare a change with its base on the same machine;
    ``launch_args``: further sim.launch.yaml arguments (e.g. a node's launch prefix)."""
    from sysid_ros._src.launcher.graph import launch_graph

    load_start = os.getloadavg()[0]
    out_dir = Path(tempfile.mkdtemp(prefix="soak_"))
    log = (out_dir / "graph.log").open("w")
    probe = _Probe()
    rss: dict[str, list[float]] = {}
    cpu: dict[str, list[tuple[float, float]]] = {}      # name → (steady, CPU s) samples
    try:
        args = {"robot": robot, "record": "true", "output_dir": str(out_dir),
                "max_trajectories": str(max_trajectories), "robot_state_publisher": "false",
                **(launch_args or {})}
        launch = "sim" if tree is None else str(tree / "launch" / "sim.launch.yaml")
        env = None if tree is None else {"PYTHONPATH": str(tree)}   # its sysid_ros first
        with launch_graph(launch, args, env=env,
                          output=lambda line: log.write(line + "\n")) as graph:
            t_start = time.monotonic()
            t_end = t_start + warmup + 60.0 * minutes
            with progress.bar(int(round(t_end - t_start)), "soak", unit="s") as shown:
                while time.monotonic() < t_end and graph.running:
                    for name, pid in graph.pids.items():
                        if time.monotonic() >= t_start + warmup:
                            rss.setdefault(name, []).append(_rss_mb(pid))
                            cpu.setdefault(name, []).append((time.monotonic(), _cpu_s(pid)))
                    time.sleep(2.0)
                    shown.update(min(int(time.monotonic() - t_start), shown.total) - shown.n)
            alive = graph.running
    finally:
        probe.close()
        log.close()
    after = t_start + warmup
    ident_ratio, sim_span, wall_span = _ratio(probe.ident, "received", after,
                                              "last_sample_stamp")
    ctl_ratio, _, _ = _ratio(probe.ctl, "commands", after)
    lat = [float(v["last_update_latency_s"]) for w, _, v in probe.ident
           if w >= after and v.get("last_update_latency_s", "nan") != "nan"]
    ctl_after = [v for w, _, v in probe.ctl if w >= after]
    stale = int(ctl_after[-1]["stale_events"]) if ctl_after else -1
    last_stale = ctl_after[-1].get("last_stale", "") if ctl_after else ""
    bounds_age = max((float(v["bounds_age_s"]) for v in ctl_after), default=float("nan"))
    # recorder: joint_states in the bag after warm-up. Two measures: distinct header stamps
    # against the stamps the simulator published (it stamps every 1/rate of sim time, so the
    # missing stamps ARE the lost messages), and the count per log-time (receive-time) span.
    bag = next((p for p in out_dir.iterdir() if p.is_dir()), None)
    rec_ratio = rec_log_ratio = float("nan")
    rec_gaps = -1
    if bag is not None:
        rec_ratio, rec_log_ratio, rec_gaps = _bag_ratios(bag, warmup)
    return {
        "minutes": minutes, "robot": robot, "max_trajectories": max_trajectories,
        "tree": str(tree or ""), "launch_args": dict(launch_args or {}),
        "load_average_start": load_start, **_sim_slips(out_dir / "graph.log"),
        "rate_hz": RATE_HZ, "graph_alive": alive,
        "sim_rtf": _clock_rtf(probe.clock, after),
        "sim_rtf_from_reports": sim_span / wall_span if wall_span > 0 else float("nan"),
        "nodes": {name: {"rss_start_mb": v[0], "rss_end_mb": v[-1], "rss_max_mb": max(v),
                         "cpu_cores": _cores(cpu.get(name, []))}
                  for name, v in rss.items() if v},
        "load_average": os.getloadavg()[0],
        "identifier": {"received_ratio": ident_ratio,
                       "update_median_s": float(np.median(lat)) if lat else float("nan"),
                       "update_max_s": max(lat) if lat else float("nan")},
        "recorder": {"received_ratio": rec_ratio, "log_time_ratio": rec_log_ratio,
                     "missing_runs": rec_gaps},
        "controller": {"command_ratio": ctl_ratio, "stale_events": stale, "last_stale": last_stale,
                       "bounds_age_max_s": bounds_age},
        "output_dir": str(out_dir),
    }


def table(res: dict[str, Any]) -> str:
    lines = [f"soak: {res['robot']}, {res['minutes']} min, sim real-time factor "
             f"{res['sim_rtf']:.3f} (from the identifier's reports "
             f"{res['sim_rtf_from_reports']:.3f}; fell behind {res['sim_slips']} times, "
             f"{res['sim_lost_s']:.2f} s given up), graph alive at the end: {res['graph_alive']}"
             + (f", nodes of {res['tree']}" if res["tree"] else ""),
             f"1-min load average at the start {res['load_average_start']:.1f}, at the end "
             f"{res['load_average']:.1f} (the graph alone makes ~5; 2 cores: above 2 at the "
             "start the nodes compete with other work)",
             f"{'node':<22}{'RSS start MB':>14}{'RSS end MB':>12}{'RSS max MB':>12}{'CPU cores':>11}"]
    for name, v in sorted(res["nodes"].items()):
        lines.append(f"{name:<22}{v['rss_start_mb']:>14.1f}{v['rss_end_mb']:>12.1f}"
                     f"{v['rss_max_mb']:>12.1f}{v['cpu_cores']:>11.2f}")
    i, r, c = res["identifier"], res["recorder"], res["controller"]
    lines += [f"identifier joint_states received/published  {i['received_ratio']:.4f}",
              f"recorder   joint_states received/published  {r['received_ratio']:.4f} "
              f"(by log time {r['log_time_ratio']:.4f}, {r['missing_runs']} runs missing)",
              f"controller commands/published joint_states   {c['command_ratio']:.4f}",
              f"controller stale events                      {c['stale_events']} "
              f"{('(last: ' + c['last_stale'] + ')') if c['last_stale'] else ''}",
              f"controller worst bounds age (s)              {c['bounds_age_max_s']:.2f}",
              f"identifier update cost median / max (s)      {i['update_median_s']:.4f} / "
              f"{i['update_max_s']:.4f}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=3.0)
    p.add_argument("--robot", default="gen3")
    p.add_argument("--warmup", type=float, default=20.0,
                   help="s of start-up excluded from the ratios (imports, discovery)")
    p.add_argument("--max-trajectories", type=int, default=0,
                   help="planner stops after this many plans (0: plans for the whole run, the "
                        "heaviest case; the sim launch's default is 4)")
    p.add_argument("--json", type=Path, help="write the figures to this JSON file")
    p.add_argument("--tree", type=Path, help="run the nodes of this source tree (e.g. an "
                   "unpacked `git archive REV`: the base of a change, same machine)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME:=VALUE",
                   help="a sim.launch.yaml argument (repeatable), e.g. "
                        "identifier_launch_prefix:='nice -n 10'")
    a = p.parse_args(argv)
    bad = [x for x in a.arg if ":=" not in x]
    if bad:
        p.error(f"--arg needs NAME:=VALUE, got {bad}")
    extra = dict(x.split(":=", 1) for x in a.arg)
    res = run(a.minutes, a.robot, a.warmup, a.max_trajectories, a.tree, extra)
    print(table(res))
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(res, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
