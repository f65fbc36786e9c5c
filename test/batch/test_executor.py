"""The batch executor: results in the items' order, one item's failure (an exception, or its
worker process dying) is that item's alone, and worker processes give the same bytes as
running in this process."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src import progress
from sysid_ros._src.batch import BatchError, check_executor, local_ray_head, run_tasks
from sysid_ros._src.batch.batch_mode import batch_exit_code, item_code, item_ok
from sysid_ros._src.batch.executor import JOIN_TIMEOUT_S


def _solve(seed: int) -> bytes:
    """A least-squares solve whose bytes depend on every floating-point step."""
    if seed == 3:
        raise ValueError("item three is refused")
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(200, 40)), rng.normal(size=200)
    return np.linalg.lstsq(a, b, rcond=None)[0].tobytes()


def _dies(seed: int) -> int:
    if seed == 2:
        os._exit(9)          # a crash in native code, as far as the pool can tell
    return seed * seed


def test_order_errors_and_workers_match_in_process():
    serial = run_tasks(_solve, list(range(6)), jobs=1, show_progress=False)
    pooled = run_tasks(_solve, list(range(6)), jobs=2, show_progress=False)
    for outs in (serial, pooled):
        assert [o.index for o in outs] == list(range(6))
        assert [o.ok for o in outs] == [True, True, True, False, True, True]
        assert outs[3].value is None and "ValueError: item three is refused" in outs[3].error
    assert [o.value for o in serial] == [o.value for o in pooled]
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(200, 40)), rng.normal(size=200)
    assert np.allclose(np.frombuffer(pooled[5].value), np.linalg.lstsq(a, b, rcond=None)[0])


def test_a_dead_worker_fails_only_its_item():
    outs = run_tasks(_dies, list(range(5)), jobs=2, show_progress=False)
    assert [o.value for o in outs] == [0, 1, None, 9, 16]
    assert "worker process died" in outs[2].error


def _started(seconds: float) -> float:
    """When this item started (a clock every process shares), after working ``seconds``."""
    start = time.monotonic()
    time.sleep(seconds)
    return start


def test_the_costliest_items_start_first_and_results_keep_their_order():
    costs = [0.1, 0.5, 0.3, 0.6]
    outs = run_tasks(_started, costs, jobs=2, show_progress=False, cost=lambda c: c)
    assert [o.index for o in outs] == [0, 1, 2, 3]
    start = {c: o.value for c, o in zip(costs, outs)}
    assert max(start[0.6], start[0.5]) < min(start[0.3], start[0.1])


_warmed: list[str] = []


def _warm() -> None:
    _warmed.append("loaded before the fork")


def _sees_warm(seed: int) -> list[str]:
    return list(_warmed)


def _warm_fails() -> None:
    raise RuntimeError("cannot load")


def test_warm_up_runs_once_here_before_the_workers_fork_and_a_failing_one_is_left_to_items():
    _warmed.clear()
    outs = run_tasks(_sees_warm, [1, 2, 3], jobs=2, show_progress=False, warm=_warm)
    assert [o.value for o in outs] == [["loaded before the fork"]] * 3
    assert _warmed == ["loaded before the fork"]
    outs = run_tasks(_dies, [1, 3], jobs=2, show_progress=False, warm=_warm_fails)
    assert [o.value for o in outs] == [1, 9]


_FORK_AFTER_SOLVE = """
import cvxpy as cp
import numpy as np
from sysid_ros._src.batch import run_tasks
from sysid_ros._src.calibration.map_estimate import _solve

def _map_solve(seed):
    # a calibration MAP solve (Clarabel) big enough for its solver to go parallel
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(800, 400)), rng.normal(size=800)
    x, s = cp.Variable(400), cp.Variable((8, 8), PSD=True)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(a @ x - b) + cp.trace(s)),
                      [x >= -1, s >> 0.1 * np.eye(8)])
    assert _solve(prob) == "optimal"
    return float(prob.value)

here = run_tasks(_map_solve, [0], show_progress=False)
pooled = run_tasks(_map_solve, [0, 1], jobs=2, show_progress=False)
assert pooled[0].value == here[0].value and pooled[1].ok, pooled
print("finished")
"""


@pytest.mark.slow   # two conic solves of a few seconds
def test_workers_forked_after_a_solve_here_do_not_hang():
    """Clarabel runs on one thread: a worker forked from a process whose solver had started a
    thread pool would wait for threads that do not exist in it (a hang: bounded here by a
    timeout, after which the whole process group is killed)."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", _FORK_AFTER_SOLVE], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("workers forked after a solve hung") from None
    assert proc.returncode == 0 and "finished" in out, out


def test_on_done_sees_every_item_once():
    seen: list[int] = []
    run_tasks(_dies, [0, 1, 3, 4], jobs=2, show_progress=False,
              on_done=lambda o: seen.append(o.index))
    assert sorted(seen) == [0, 1, 2, 3]


def _exits(code: int) -> dict[str, int]:
    """An item that finishes with exit code ``code`` (a negative one: it crashes)."""
    if code < 0:
        raise RuntimeError("crashed")
    return {"code": code}


def test_the_bar_counts_the_items_not_ok_as_the_summary_and_exit_code_do(monkeypatch):
    """Items that finish with a non-zero exit code (bad input, inconsistent) count as not ok
    on the bar, as crashed ones do: the bar's count is the summary's and sets the exit code."""
    bars = []

    def recorded(*args, **kwargs):
        bars.append(progress_bar(*args, **kwargs))
        return bars[-1]

    progress_bar = progress.bar
    monkeypatch.setattr(progress, "enabled", lambda requested=True: bool(requested))
    monkeypatch.setattr(progress, "bar", recorded)
    codes = [0, 2, 0, 3, -1, 0, 4]
    outs = run_tasks(_exits, codes, desc="recordings", is_ok=item_ok)
    crashes_only = run_tasks(_exits, codes, desc="recordings")
    assert [item_code(o) for o in outs] == [0, 2, 0, 3, None, 0, 4]
    assert batch_exit_code([item_code(o) for o in outs]) == 6
    assert sum(not item_ok(o) for o in outs) == 4 and sum(not o.ok for o in crashes_only) == 1
    shown = [str(b) for b in bars]              # the bar's last line, as a terminal shows it
    assert "7/7" in shown[0] and shown[0].endswith(", not ok=4]"), shown
    assert "7/7" in shown[1] and shown[1].endswith(", not ok=1]"), shown
    all_ok = run_tasks(_exits, [0, 0], is_ok=item_ok)
    assert batch_exit_code([item_code(o) for o in all_ok]) == 0
    assert str(bars[2]).endswith(", not ok=0]")


def test_an_address_where_no_cluster_listens_is_refused_at_once():
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    clock = time.perf_counter()
    for address, words in ((f"127.0.0.1:{port}", "no Ray cluster there (connection refused)"),
                           (f"ray://localhost:{port}", "no Ray cluster there"),
                           ("127.0.0.1", "expected auto, local or HOST:PORT")):
        with pytest.raises(BatchError, match=re.escape(f"--ray-address {address}: {words}")):
            run_tasks(_dies, [1], ray_address=address, show_progress=False)
    assert time.perf_counter() - clock < JOIN_TIMEOUT_S


@pytest.mark.parametrize("jobs, address, words", [
    (0, None, "--jobs"), (-2, None, "--jobs"), (1, " ", "--ray-address")])
def test_bad_executor_is_refused(jobs, address, words):
    with pytest.raises(BatchError, match=words):
        check_executor(jobs, address)
    with pytest.raises(BatchError, match=words):
        run_tasks(_dies, [1], jobs=jobs, ray_address=address, show_progress=False)


def _listening(port: int) -> list[str]:
    """The local addresses of the sockets listening on TCP ``port`` (IPv4 and IPv6), read
    from the kernel's tables."""
    found = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port and len(address) == width:
                    found.append(address)
    return found


def _loopback(address: str) -> bool:
    """A /proc/net address (little-endian words) that is 127.x.x.x, ::1 or ::ffff:127.x.x.x."""
    ipv4 = address[-2:]                       # the first byte of the last word
    return (ipv4 == "7F" and (len(address) == 8 or address[:24] == "0000000000000000FFFF0000")
            or address == "00000000000000000000000001000000")


@pytest.mark.slow   # a Ray head takes seconds to start
def test_a_local_ray_head_listens_on_loopback_only_and_runs_the_tasks():
    import math

    import ray

    with local_ray_head(1) as address:
        host, port = address.rsplit(":", 1)
        node = ray.nodes()[0]
        ports = [int(port), node["NodeManagerPort"], node["ObjectManagerPort"]]
        sockets = {p: _listening(p) for p in ports}
        # a function its workers can import (this test module is not on their path)
        on_ray = run_tasks(math.factorial, [20, 30, -1], ray_address="local",
                           show_progress=False)
    assert host == "127.0.0.1" and node["NodeManagerAddress"] == "127.0.0.1"
    assert all(sockets.values()), sockets          # each server was found listening
    assert all(_loopback(a) for found in sockets.values() for a in found), sockets
    assert not ray.is_initialized()
    assert [o.value for o in on_ray] == [math.factorial(20), math.factorial(30), None]
    assert "ValueError" in str(on_ray[2].error)


_HEAD = """
import os, sys
from sysid_ros._src.batch import local_ray_head
with local_ray_head(1) as address:
    print(address, os.environ.get("RAY_AUTH_MODE", ""), flush=True)
    sys.stdin.readline()
"""

_JOIN = """
import math, sys
from sysid_ros._src.batch import run_tasks
print([o.value for o in run_tasks(math.factorial, [10, 12], ray_address=sys.argv[1],
                                  show_progress=False)])
"""


@pytest.mark.slow   # a Ray head takes seconds to start
def test_a_running_loopback_head_is_joined_at_its_address():
    """A head that another process started on 127.0.0.1 is joined at ``127.0.0.1:PORT`` by a
    process that knows nothing else of it (Ray would go to the machine's network address
    instead, where a loopback-only head does not listen, and wait there: bounded by a
    timeout)."""
    root = Path(__file__).resolve().parents[2]
    head = subprocess.Popen([sys.executable, "-c", _HEAD], cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert head.stdout is not None and head.stdin is not None
        address, *auth = head.stdout.readline().split()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        # the head's own authentication mode (Ray turns token authentication on for a head
        # it starts), as a user joining it sets it
        env |= {"RAY_AUTH_MODE": auth[0]} if auth else {}
        try:
            out = subprocess.run([sys.executable, "-c", _JOIN, address], cwd=root, env=env,
                                 capture_output=True, text=True, timeout=120,
                                 start_new_session=True)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"joining {address} did not connect") from None
    finally:
        if head.stdin is not None:
            head.stdin.close()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
    assert address.startswith("127.0.0.1:")
    assert out.returncode == 0 and out.stdout.split("\n")[0] == "[3628800, 479001600]", out
