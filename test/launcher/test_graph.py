"""The runner starts a real graph (replay + recorder), and stopping it leaves no process."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from sysid_ros._src.bagio import BagWriter, default_typestore, list_topics
from sysid_ros._src.launcher import Graph, launch_graph

pytestmark = pytest.mark.ros
HERE = Path(__file__).parent
ROOT = HERE.parents[1]
NAMES = ["a", "b", "c"]


def _make_bag(path: Path, n: int = 100) -> None:
    T = default_typestore().types
    with BagWriter(path) as w:
        for k in range(n):
            t = 10**9 + k * 10_000_000
            stamp = T["builtin_interfaces/msg/Time"](sec=t // 10**9, nanosec=t % 10**9)
            w.write("/joint_states", T["sensor_msgs/msg/JointState"](
                header=T["std_msgs/msg/Header"](stamp=stamp, frame_id=""), name=NAMES,
                position=np.full(3, k, float), velocity=np.zeros(3), effort=np.ones(3)), t)


def _alive(pid: int) -> bool:
    # A reaped child is gone from /proc; a zombie would still be listed, so check its state too.
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _group_members(pgid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(d.name))
    return out


@pytest.mark.slow
def test_graph_runs_and_stops_cleanly(tmp_path):
    import rclpy
    from sensor_msgs.msg import JointState

    bag, out = tmp_path / "in", tmp_path / "out"
    _make_bag(bag)
    lines: list[str] = []
    rclpy.init()
    node = rclpy.create_node("graph_test_listener")
    got: list[float] = []
    node.create_subscription(JointState, "/joint_states", lambda m: got.append(m.position[0]), 50)
    try:
        with launch_graph(HERE / "replay_record.launch.yaml", {"bag": str(bag), "out": str(out)},
                          output=lines.append) as g:
            pids = dict(g.pids)
            assert set(pids) == {"player", "rec"}
            end = time.monotonic() + 20
            while len(got) < 20 and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.05)
            assert len(got) >= 20, "\n".join(lines)
            time.sleep(1.0)  # let the recorder commit a chunk
        assert g.exit_code == 0
        for name, pid in pids.items():
            assert not _alive(pid), name
            assert _group_members(pid) == [], name
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    assert any(line.startswith("[player] ") and "replaying" in line for line in lines), lines
    assert any(line.startswith("[rec] ") for line in lines)
    # The recorder closed its bag on SIGINT. (read_joint_states would rightly reject it: the
    # looping replay makes header stamps jump back.)
    assert list_topics(out)["/joint_states"][1] > 10


def test_required_failure_makes_nonzero_exit(tmp_path):
    f = tmp_path / "fail.launch.yaml"
    f.write_text(yaml.safe_dump({"launch": [
        {"executable": {"cmd": "sleep 30", "name": "sleeper"}},
        {"executable": {"cmd": shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"]),
                        "name": "boom", "on_exit": "shutdown"}},
    ]}))
    g = Graph(f, output=lambda line: None).start()
    pids = dict(g.pids)
    assert g.wait(timeout=15) == 1
    assert g.exit_codes["boom"] == 3
    assert not any(_alive(p) for p in pids.values())


def test_launch_prefix_runs_the_process_under_it(tmp_path):
    """``launch-prefix: nice -n 7`` (as the sim graph starts the planner): the process itself,
    not a wrapper, runs 7 niceness steps below the launcher, so the graph's signals reach it."""
    f = tmp_path / "nice.launch.yaml"
    probe = "import os; print('nice', os.nice(0), os.getpid(), flush=True)"
    f.write_text(yaml.safe_dump({"launch": [
        {"executable": {"cmd": shlex.join([sys.executable, "-c", probe]), "name": "probe",
                        "launch-prefix": "nice -n 7", "on_exit": "shutdown"}}]}))
    lines: list[str] = []
    g = Graph(f, output=lines.append).start()
    pid = g.pids["probe"]
    assert g.wait(timeout=15) == 0
    words = next(line for line in lines if line.startswith("[probe] nice")).split()
    assert int(words[2]) == min(os.nice(0) + 7, 19)
    assert int(words[3]) == pid


def test_cli_forwards_sigint_and_escalates(tmp_path):
    # A child ignoring SIGINT and SIGTERM must still be gone (SIGKILL) after the timeouts.
    f = tmp_path / "stubborn.launch.yaml"
    code = ("import signal,time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)")
    f.write_text(yaml.safe_dump({"launch": [{"executable": {
        "cmd": shlex.join([sys.executable, "-c", code]), "name": "stubborn"}}]}))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sysid_ros._src.launcher.launch_cli", str(f), "--sigint-timeout", "0.5",
         "--sigterm-timeout", "0.5"], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    child = None
    for line in proc.stdout:
        if "started stubborn (pid" in line:
            child = int(line.split("pid ")[1].rstrip(")\n"))
        if "[stubborn] ready" in line:
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=15)[0]
    assert proc.returncode == 0
    assert "SIGKILL" in rest
    assert child is not None and not _alive(child)


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_runner_starts_sim_and_identifier_for_real():
    """The shipped simulation graph (sim + identifier; planner, controller, recorder off) started
    by the runner: a separate subscriber receives joint states and payload bounds, and nothing
    is left running afterwards."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from sysid_ros._src.nodes.qos import qos_for_topic

    got: dict[str, list] = {"js": [], "bounds": []}
    rclpy.init()
    node = rclpy.create_node(f"runner_probe_{os.getpid()}")
    node.create_subscription(JointState, "/joint_states", got["js"].append,
                             qos_for_topic("/joint_states"))
    node.create_subscription(Float64MultiArray, "/sysid/payload_bounds", got["bounds"].append,
                             qos_for_topic("/sysid/payload_bounds"))
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    args = {"enable_planner": "false", "enable_controller": "false", "record": "false",
            "payload": "2.27", "wait_subscribers": "2"}
    try:
        with launch_graph("sim", args, output=lambda line: None) as graph:
            pids = list(graph.pids.values())
            end = time.monotonic() + 60.0
            while time.monotonic() < end and not (got["bounds"] and len(got["js"]) > 100):
                ex.spin_once(timeout_sec=0.05)
            assert graph.running, "a required node died"
    finally:
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown()
    assert len(got["js"]) > 100, "no joint states from the sim node"
    assert got["bounds"], "no payload bounds from the identifier node"
    names = [d.label for d in got["bounds"][-1].layout.dim]
    assert names[1].startswith("parameter:m,mcx")
    assert len(pids) == 2
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), "the runner left a node process behind"
