"""Starting and stopping node processes in node tests (one copy for every test module).

Each node runs as ``python -m <module>`` in its own session (so SIGINT reaches its whole process
group, like the runner does), with the source tree on PYTHONPATH and unbuffered output that
``stop`` returns for assertion messages.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]


def start(module: str, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    """``python -m module args…`` (args may include ``--ros-args …``); ``env_extra`` adds to
    the inherited environment."""
    # faulthandler: a process that ``finish`` has to abort prints every thread's stack
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1", **(env_extra or {}))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", module, *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def start_node(node: str, *params: str, params_file: str | None = None,
               env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    """A ``sysid_ros._src.nodes.<node>`` process with ``config/<node>.yaml`` and ``-p`` overrides."""
    args = ["--ros-args", "--params-file",
            params_file or str(ROOT / "config" / f"{node}.yaml")]
    for p in params:
        args += ["-p", p]
    return start(f"sysid_ros._src.nodes.{node}", *args, env_extra=env_extra)


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> str:
    """SIGINT the process group, SIGKILL after ``timeout``; returns the process output."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.stdout.read() if proc.stdout else ""


def finish(proc: subprocess.Popen, timeout: float = 30.0) -> str:
    """Wait for the process to exit by itself; returns its output. One still running after
    ``timeout`` gets SIGABRT (faulthandler then prints its threads' stacks) and the test fails
    with that output, instead of leaving the process behind on a bare TimeoutExpired."""
    try:
        return proc.communicate(timeout=timeout)[0] or ""
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            out = proc.communicate(timeout=10)[0] or ""
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out = proc.communicate()[0] or ""
        raise AssertionError(f"{proc.args} did not exit within {timeout} s; its output and "
                             f"stacks:\n{out}") from None


def spin_until(executor, cond: Callable[[], bool] | None, timeout: float) -> bool:
    """Spin ``executor`` until ``cond()`` holds (True) or ``timeout`` seconds pass (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
        if cond is not None and cond():
            return True
    return cond is None
