"""Faults in the running sim graph: each node is killed with SIGKILL in turn and the
others must do what docs/guide/hardware.md says — real processes, real DDS.

- planner dies → the controller keeps commanding (the current trajectory ends at rest and is
  held);
- identifier dies → the controller keeps commanding on the last box (sound) and WARNs
  "identifier silent" with the bounds' age;
- simulator dies (/clock and joint_states stop) → the controller stops commanding, reports
  ERROR ("/clock stopped" or "joint_states stale") and deactivates itself;
- controller dies → the simulator keeps running (its hold controller takes over after its
  command timeout) and the identifier keeps receiving joint states.

The graph is ``launch/sim.launch.yaml`` with every node made non-required (otherwise the
launcher's ``on_exit: shutdown`` would end the graph at the first kill).
"""
from __future__ import annotations

import dataclasses
import os
import signal
import time

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]   # ~25 s: in CI's slow run

CTL = "robust_controller: robust controller"


class Probe:
    """Listens to /diagnostics and the controller's ~/state (every 10th command)."""

    def __init__(self, node, ex) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from std_msgs.msg import Float64MultiArray

        from sysid_ros._src.nodes.qos import DIAGNOSTICS_QOS
        self.node, self.ex = node, ex
        self.diags: list[tuple[float, str, int, str, dict[str, str]]] = []
        self.states: list[float] = []
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, DIAGNOSTICS_QOS)
        node.create_subscription(Float64MultiArray, "/robust_controller/state",
                                 lambda _m: self.states.append(time.monotonic()), 50)

    def _on_diag(self, msg) -> None:
        for s in msg.status:
            level = s.level[0] if isinstance(s.level, bytes) else int(s.level)
            self.diags.append((time.monotonic(), s.name, level, s.message,
                               {kv.key: kv.value for kv in s.values}))

    def spin_until(self, cond, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.01)
            if cond():
                return True
        return cond()

    def diag(self, after: float, name: str, pred) -> bool:
        return any(t > after and n == name and pred(lvl, m, v)
                   for t, n, lvl, m, v in self.diags)

    def lifecycle_state(self) -> str:
        from lifecycle_msgs.srv import GetState
        cli = self.node.create_client(GetState, "/robust_controller/get_state")
        try:
            assert self.spin_until(cli.service_is_ready, 10.0)
            fut = cli.call_async(GetState.Request())
            assert self.spin_until(fut.done, 10.0)
            return fut.result().current_state.label
        finally:
            self.node.destroy_client(cli)


def _graph(log: list[str]):
    from sysid_ros._src.launcher.graph import Graph
    from sysid_ros._src.launcher.parse import load_launch
    desc = load_launch("sim", {"robot": "gen3", "robot_state_publisher": "false",
                               "max_trajectories": "0"})
    procs = []
    for spec in desc.processes:
        cmd = spec.cmd
        if spec.name == "robust_controller":
            cmd = (*cmd, "-p", "bounds_warn_after:=2.0")
        procs.append(dataclasses.replace(spec, required=False, cmd=cmd))
    return Graph(dataclasses.replace(desc, processes=tuple(procs)), output=log.append)


def _kill(graph, name: str) -> None:
    os.killpg(graph.pids[name], signal.SIGKILL)


def _wait_running(probe: Probe) -> None:
    assert probe.spin_until(lambda: len(probe.states) > 20, 60.0), "controller never commanded"


def test_kill_planner_identifier_then_simulator(ros_node):
    probe = Probe(*ros_node)
    log: list[str] = []
    graph = _graph(log).start()
    try:
        _wait_running(probe)
        # planner dies: commanding goes on
        _kill(graph, "exciting_planner")
        t = time.monotonic()
        assert probe.spin_until(lambda: sum(s > t + 1.0 for s in probe.states) > 20, 10.0), \
            "controller stopped when the planner died"
        # identifier dies: commanding goes on, WARN "identifier silent" with the bounds' age
        _kill(graph, "identifier")
        t = time.monotonic()
        assert probe.spin_until(lambda: probe.diag(
            t, CTL, lambda lvl, m, v: lvl == 1 and "identifier silent" in m
            and float(v["bounds_age_s"]) > 2.0), 10.0), probe.diags[-3:]
        assert probe.spin_until(lambda: any(s > t + 2.5 for s in probe.states), 10.0), \
            "controller stopped with the identifier"
        # simulator dies: commands stop, ERROR says why, lifecycle inactive
        _kill(graph, "sim")
        t = time.monotonic()
        assert probe.spin_until(lambda: probe.diag(
            t, CTL, lambda lvl, m, v: lvl == 2 and ("/clock stopped" in m or "stale" in m)),
            10.0), probe.diags[-3:]
        assert probe.lifecycle_state() == "inactive"
        t_quiet = time.monotonic()
        probe.spin_until(lambda: False, 1.0)
        assert not [s for s in probe.states if s > t_quiet]
    finally:
        graph.stop()
    text = "\n".join(log)
    assert "Traceback" not in text, text[-3000:]


def test_kill_controller_simulator_and_identifier_go_on(ros_node):
    probe = Probe(*ros_node)
    log: list[str] = []
    graph = _graph(log).start()
    try:
        _wait_running(probe)
        _kill(graph, "robust_controller")
        t = time.monotonic()

        def received_after(t0: float) -> list[int]:
            return [int(v["received"]) for tt, n, _, _, v in probe.diags
                    if tt > t0 and n == "sysid_ros/identifier" and "received" in v]
        # Judged over a window, not between two consecutive reports: a report can follow the
        # previous one closely after a long box update (the count then has had no time to grow).
        def grew() -> bool:
            counts = received_after(t + 1.0)
            return len(counts) >= 2 and counts[-1] >= counts[0] + 100   # 0.1 s of samples
        assert probe.spin_until(grew, 20.0), \
            f"joint_states stopped when the controller died: {received_after(t + 1.0)}"
        assert graph.processes["sim"].poll() is None
    finally:
        graph.stop()
    text = "\n".join(log)
    assert "Traceback" not in text, text[-3000:]
