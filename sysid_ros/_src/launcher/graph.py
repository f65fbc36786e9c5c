"""Start, supervise and stop the processes of a launch description (:class:`Graph`).

Each process gets its own process group (so a terminal Ctrl-C reaches only the runner, which then
stops the children in order) and its output prefixed with ``[name]``. Stopping escalates per
process group: SIGINT, then SIGTERM after ``sigint_timeout``, then SIGKILL after
``sigterm_timeout`` — the same ladder as ``ros2 launch``. When a *required* process
(``on_exit: shutdown``) exits, the whole graph stops; the graph's exit code is non-zero if a
required process failed (non-zero exit or killed by a signal not sent by the graph).
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

import sysid_ros
from sysid_ros._src.launcher.shm import sweep_stale_fastdds_files
from sysid_ros._src.paths import FASTDDS_PROFILE_ENV, fastdds_profile

from .parse import LaunchDescription, LaunchError, ProcessSpec, load_launch

__all__ = ["Graph", "launch_graph"]

OutputSink = Callable[[str], None]


def _default_sink(stream: TextIO) -> OutputSink:
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            stream.write(line + "\n")
            stream.flush()

    return write


class Graph:
    """A running (or startable) graph of processes.

    Args:
        launch: a launch file path/name, or an already loaded :class:`LaunchDescription`.
        args: launch arguments (``{"robot": "gen3"}``), only with a path.
        env: extra environment for the children (the runner's own environment is inherited,
            including ``ROS_DOMAIN_ID`` / ``ROS_AUTOMATIC_DISCOVERY_RANGE``).
        output: callable receiving each prefixed output line (default: write to stdout).
        sigint_timeout, sigterm_timeout: escalation delays when stopping, seconds.
    """

    def __init__(
        self,
        launch: str | os.PathLike[str] | LaunchDescription,
        args: Mapping[str, str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        output: OutputSink | None = None,
        sigint_timeout: float = 5.0,
        sigterm_timeout: float = 3.0,
    ) -> None:
        self.description = (
            launch if isinstance(launch, LaunchDescription) else load_launch(launch, args)
        )
        self.env = dict(os.environ)
        # Source-tree runs: children importing sysid_ros must find the same package.
        root = str(Path(sysid_ros.__file__).resolve().parents[1])
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (root, self.env.get("PYTHONPATH", "")) if p
        )
        self.env["PYTHONUNBUFFERED"] = "1"
        # A graph kept on this machine gets the suite's DDS profile (deep shared-memory queues:
        # a descheduled 1 kHz reader catches up instead of losing messages; UDP on loopback
        # only) unless the user chose a profile; one on the user's network keeps theirs.
        if self.env.get("ROS_AUTOMATIC_DISCOVERY_RANGE") == "LOCALHOST":
            self.env.setdefault(FASTDDS_PROFILE_ENV, str(fastdds_profile()))
        self.env.update(env or {})
        self.output = output or _default_sink(sys.stdout)
        self.sigint_timeout = sigint_timeout
        self.sigterm_timeout = sigterm_timeout
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.exit_codes: dict[str, int] = {}
        self.failed: list[str] = []
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()

    # -- starting --------------------------------------------------------------------------
    def start(self) -> Graph:
        """Start every process (in file order). Raises LaunchError if a param file is missing."""
        for spec in self.description.processes:
            for f in spec.param_files:
                if not Path(f).is_file():
                    raise LaunchError(
                        f"{self.description.path.name}: node {spec.name}: parameter file {f} does not exist"
                    )
        for notice in self.description.notices:
            self.output(f"[launch] notice: {notice}")
        # Shared-memory files of dead processes would hand this graph's DDS ports their old
        # (smaller) queues: gone before the first participant starts (launcher/shm.py).
        swept = sweep_stale_fastdds_files()
        if swept.removed:
            self.output(f"[launch] {swept.summary()}")
        try:
            for spec in self.description.processes:
                self._spawn(spec)
        except Exception:
            self.stop()
            raise
        watcher = threading.Thread(target=self._watch, name="graph-watch", daemon=True)
        watcher.start()
        self._threads.append(watcher)
        return self

    def _spawn(self, spec: ProcessSpec) -> None:
        proc = subprocess.Popen(
            list(spec.cmd),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: signals are ours to send
        )
        self.processes[spec.name] = proc
        self.output(f"[launch] started {spec.name} (pid {proc.pid})")
        t = threading.Thread(target=self._pump, args=(spec.name, proc), daemon=True)
        t.start()
        self._threads.append(t)

    def _pump(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            self.output(f"[{name}] {raw.decode(errors='replace').rstrip()}")
        proc.stdout.close()

    # -- supervision -----------------------------------------------------------------------
    def _watch(self) -> None:
        specs = {s.name: s for s in self.description.processes}
        while not self._stopping.is_set():
            for name, proc in list(self.processes.items()):
                if name in self.exit_codes:
                    continue
                code = proc.poll()
                if code is None:
                    continue
                self.exit_codes[name] = code
                self.output(f"[launch] {name} exited with code {code}")
                if specs[name].required:
                    if code != 0:
                        self.failed.append(name)
                    self.output(f"[launch] required process {name} exited: stopping the graph")
                    threading.Thread(target=self.stop, daemon=True).start()
                    return
            if len(self.exit_codes) == len(self.processes):
                self._done.set()
                return
            time.sleep(0.05)

    @property
    def pids(self) -> dict[str, int]:
        """Process id of each process (its process-group id too)."""
        return {n: p.pid for n, p in self.processes.items()}

    @property
    def running(self) -> bool:
        return any(p.poll() is None for p in self.processes.values())

    def wait(self, timeout: float | None = None) -> int | None:
        """Block until the graph stopped or every process exited; exit code or None on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        while self.running:
            if end is not None and time.monotonic() >= end:
                return None
            time.sleep(0.05)
        self._stopping.wait(timeout=0)  # nothing else to do; keep API symmetrical
        return self.exit_code

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    # -- stopping --------------------------------------------------------------------------
    def _signal_group(self, proc: subprocess.Popen[bytes], sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def stop(self) -> int:
        """Stop every process (SIGINT → SIGTERM → SIGKILL per group) and return the exit code.

        Safe to call several times and from several threads.
        """
        with self._lock:
            self._stopping.set()
            ladder = ((signal.SIGINT, self.sigint_timeout), (signal.SIGTERM, self.sigterm_timeout),
                      (signal.SIGKILL, 5.0))
            for sig, timeout in ladder:
                alive = [p for p in self.processes.values() if p.poll() is None]
                if not alive:
                    break
                if sig != signal.SIGINT:
                    names = [n for n, p in self.processes.items() if p in alive]
                    self.output(f"[launch] sending {signal.Signals(sig).name} to {names}")
                for p in alive:
                    self._signal_group(p, sig)
                end = time.monotonic() + timeout
                while time.monotonic() < end and any(p.poll() is None for p in alive):
                    time.sleep(0.02)
            # The group may still hold grandchildren after its leader exited.
            for p in self.processes.values():
                self._signal_group(p, signal.SIGKILL)
            for name, p in self.processes.items():
                code = p.wait()
                self.exit_codes.setdefault(name, code)
            for t in self._threads:
                if t is not threading.current_thread():
                    t.join(timeout=2.0)
            self._done.set()
            return self.exit_code

    def __enter__(self) -> Graph:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def launch_graph(
    launch: str | os.PathLike[str] | LaunchDescription,
    args: Mapping[str, str] | None = None,
    **kwargs: object,
) -> Iterator[Graph]:
    """``with launch_graph("sim", {"robot": "gen3"}) as g: ...`` — started on entry, every
    process (and its process group) gone on exit, whatever happens inside."""
    graph = Graph(launch, args, **kwargs)  # type: ignore[arg-type]
    graph.start()
    try:
        yield graph
    finally:
        graph.stop()
