"""The shared-memory sweep removes what a SIGKILLed Fast DDS process left in /dev/shm and nothing
a live one uses: the live pair's files (read from /proc/<pid>/maps and fd, independently of the
kernel leases the sweep relies on) survive and its messages keep flowing."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sysid_ros._src.launcher.shm import SHM_DIR, main, sweep_stale_fastdds_files
from sysid_ros._src.paths import FASTDDS_PROFILE_ENV

pytestmark = pytest.mark.ros

# A 1 kHz-ish talker or a listener printing its count every 0.2 s (shared memory between them).
_PEER = """
import sys, time, rclpy
from std_msgs.msg import Int64
rclpy.init()
node = rclpy.create_node(sys.argv[1])
got = [0]
if sys.argv[1] == 'talker':
    pub = node.create_publisher(Int64, '/shm_sweep_probe', 10)
    node.create_timer(0.002, lambda: pub.publish(Int64(data=1)))
else:
    node.create_subscription(Int64, '/shm_sweep_probe', lambda m: got.__setitem__(0, got[0] + 1), 10)
    node.create_timer(0.2, lambda: print('count', got[0], flush=True))
print('ready', flush=True)
try:
    rclpy.spin(node)
except KeyboardInterrupt:
    pass
node.destroy_node()
rclpy.try_shutdown()
"""


def _peer(role: str, profile: bool) -> subprocess.Popen:
    env = dict(os.environ)
    if not profile:
        env.pop(FASTDDS_PROFILE_ENV, None)
    proc = subprocess.Popen([sys.executable, "-c", _PEER, role], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _count(listener: subprocess.Popen) -> int:
    assert listener.stdout is not None
    while True:
        line = listener.stdout.readline()
        assert line, "listener exited"
        if line.startswith("count"):
            return int(line.split()[1])


def _used_by(pid: int) -> set[str]:
    prefix = f"{SHM_DIR}/"
    maps = Path(f"/proc/{pid}/maps").read_text().split()
    fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    return {p[len(prefix):] for p in [*maps, *fds] if p.startswith(prefix + "fastrtps")}


def _files() -> set[str]:
    return {n for n in os.listdir(SHM_DIR) if "fastrtps" in n}


def _kill(*procs: subprocess.Popen) -> None:
    for p in procs:
        p.kill()
        p.wait()


def _port_sizes(names: set[str]) -> dict[str, int]:
    return {n: (SHM_DIR / n).stat().st_size for n in names if n.startswith("fastrtps_port")
            and not n.endswith(("_el", "_sl"))}


def test_sweep_removes_a_killed_process_files_and_keeps_a_live_graph_talking() -> None:
    sweep_stale_fastdds_files()
    before = _files()
    # A reader that exits cleanly while a writer still maps its port, then the writer killed:
    # the port file stays, without the lock file that would mark it dead (Fast DDS's defaults).
    reader = _peer("listener", profile=False)
    writer = _peer("talker", profile=False)
    _count(reader)
    time.sleep(0.5)
    reader.send_signal(signal.SIGINT)
    reader.wait(timeout=10)
    _kill(writer)
    left = _files() - before
    small = _port_sizes(left)
    assert small, f"no port left behind: {left}"

    # Why the sweep exists: a new process with the profile reopens the dead one's port as is.
    reuser = _peer("listener", profile=True)
    reused = _port_sizes(_used_by(reuser.pid)).items() & small.items()
    _kill(reuser)
    assert reused, "the new participant did not reopen the dead one's port (the reason for the sweep)"

    swept = sweep_stale_fastdds_files()
    left = _files() - before
    assert not left, f"left after the sweep: {left}"
    assert swept.removed

    talker, listener = _peer("talker", profile=True), _peer("listener", profile=True)
    try:
        deadline = time.monotonic() + 10.0
        while _count(listener) == 0:
            assert time.monotonic() < deadline, "the live pair never talked"
        live = _used_by(talker.pid) | _used_by(listener.pid)
        fresh = _port_sizes(live)
        assert min(fresh.values()) > max(small.values()), (fresh, small)   # the profile's queues
        swept = sweep_stale_fastdds_files()
        assert not live & set(swept.removed), live & set(swept.removed)
        assert live <= _files()
        n0 = _count(listener)
        n1 = [_count(listener) for _ in range(5)][-1]               # 1 s of the listener's time
        assert n1 > n0 + 100, f"the live pair stopped talking after the sweep ({n0} -> {n1})"
    finally:
        _kill(talker, listener)
    sweep_stale_fastdds_files()                                     # their files too


def test_cli_reports_and_rejects_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "stale Fast DDS shared-memory files" in capsys.readouterr().out
    assert main(["--now"]) == 2
    assert "usage: sysid-shm-clean" in capsys.readouterr().err
