"""Helpers shared by the node modules: stamps, message-type import, and :func:`run_node`, the
``main()`` wrapper that stops nodes cleanly on SIGINT/SIGTERM (QoS profiles: :mod:`.qos`;
thread priorities and pacing: :mod:`.threads`)."""
from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import rclpy
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args

__all__ = ["stamp_to_ns", "ns_to_stamp_fields", "import_msg_type", "run_node", "make_executor"]

def stamp_to_ns(stamp: Any) -> int:
    """``builtin_interfaces/Time`` (rclpy or rosbags object) → integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def ns_to_stamp_fields(ns: int) -> tuple[int, int]:
    """Integer nanoseconds → ``(sec, nanosec)`` for a ``builtin_interfaces/Time``."""
    return int(ns // 1_000_000_000), int(ns % 1_000_000_000)


def import_msg_type(msgtype: str) -> type:
    """``"sensor_msgs/msg/JointState"`` → the rclpy message class (ImportError if unknown)."""
    pkg, kind, name = msgtype.split("/")
    module = importlib.import_module(f"{pkg}.{kind}")
    try:
        return getattr(module, name)
    except AttributeError:
        raise ImportError(f"no message type {msgtype}") from None


#: s to wait at shutdown for callbacks still running (longer than any planning budget)
_SHUTDOWN_WAIT = 10.0


class Spinner(Protocol):
    """What ``run_node`` needs of an executor (rclpy's Executor classes and the pybind11
    EventsExecutor, which is not an ``Executor`` subclass)."""

    def add_node(self, node: Node) -> Any: ...
    def remove_node(self, node: Node) -> Any: ...
    def spin_once(self, timeout_sec: float | None = None) -> Any: ...
    def shutdown(self, timeout_sec: float | None = None) -> Any: ...


def _settle(executor: Spinner, node: Node | None) -> None:
    """Stop dispatching and let callbacks still running on executor threads finish (a planning
    cycle lasts up to its solve budget). rclpy's ``Executor.shutdown`` (Jazzy) does not wait
    for them — it sets its shutdown flag before testing it — and destroys its guard condition,
    so a callback finishing afterwards failed inside a task nobody awaits: "The following
    exception was never retrieved: cannot use Destroyable because destruction was requested".
    Reads MultiThreadedExecutor's in-flight list ``_futures`` (absent elsewhere: nothing to
    wait for)."""
    if node is not None:
        with contextlib.suppress(Exception):     # already removed or never added
            executor.remove_node(node)
    futures = list(getattr(executor, "_futures", []) or [])
    end = time.monotonic() + _SHUTDOWN_WAIT
    while any(not f.done() for f in futures) and time.monotonic() < end:
        time.sleep(0.01)
    for f in futures:
        if f.done():
            try:
                f.result()        # retrieve: an error of the last callback is reported here
            except Exception as err:
                print(f"[{node.get_name() if node else 'node'}] callback failed at shutdown: "
                      f"{err}", file=sys.stderr)


def _destroy_half_built(err: BaseException) -> str | None:
    """Destroy the node whose constructor raised ``err`` (a parameter refused after
    ``Node.__init__`` created the rcl node). The factory never returned it, so ``run_node``
    cannot; left to the garbage collector it would be finalised after ``rclpy.try_shutdown``,
    at interpreter exit. The traceback's frames are the only reference: the innermost frame
    whose ``self`` is a Node. Returns its name (None: no node was built)."""
    tb = err.__traceback__
    half: Node | None = None
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("self")
        if isinstance(candidate, Node):
            half = candidate
        tb = tb.tb_next
    if half is None:
        return None
    name = None
    with contextlib.suppress(Exception):       # a node half-way through Node.__init__
        name = half.get_name()
        half.destroy_node()
    return name


def make_executor(threads: int = 1) -> Spinner:
    """The executor of a node process: ``threads`` > 1 → MultiThreadedExecutor; otherwise
    rclpy's EventsExecutor (C++ event queue: about half the CPU per message of the
    SingleThreadedExecutor, which rebuilds a wait set per callback — measured 1.5 vs 3.6-4.9 s
    of CPU for 10 s of 1 kHz joint_states + /clock), unless ``SYSID_EXECUTOR=single`` asks for
    the SingleThreadedExecutor or EventsExecutor is unavailable."""
    if threads > 1:
        return MultiThreadedExecutor(num_threads=threads)
    if os.environ.get("SYSID_EXECUTOR", "events") != "single":
        try:
            from rclpy.experimental import EventsExecutor
            spinner: Spinner = EventsExecutor()
            return spinner
        except ImportError:
            pass
    return SingleThreadedExecutor()


def run_node(
    factory: Callable[[list[str]], Node],
    argv: Sequence[str] | None = None,
    *,
    drain_seconds: float = 0.2,
    threads: int = 1,
) -> int:
    """Run one node until SIGINT/SIGTERM (or until the node sets ``node.finished``).

    rclpy's own signal handler would shut the context down at once, dropping messages still
    queued in DDS; here the signal only sets a flag, then the executor keeps spinning for
    ``drain_seconds`` so queued callbacks run, then ``node.on_shutdown()`` (if defined, e.g. to
    close a bag) runs before the node is destroyed. A second signal aborts the drain.

    Args:
        factory: builds the node from the command-line arguments left after ``--ros-args``.
        argv: full argument vector (default ``sys.argv``).
        threads: executor threads; > 1 lets callbacks in other callback groups (e.g. the /clock
            time source) run while a long callback (a planning cycle) is busy.

    Returns:
        the process exit code (0, or 1 if the node raised).
    """
    argv = list(sys.argv if argv is None else argv)
    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    hurry = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        if stop.is_set():
            hurry.set()
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    node: Node | None = None
    name = "node"             # for messages until the node exists
    code = 0
    executor: Spinner | None = None
    try:
        try:
            node = factory(remove_ros_args(argv)[1:])
        except Exception as err:
            name = _destroy_half_built(err) or name
            raise
        executor = make_executor(threads)   # only for a node that exists (none to shut down)
        executor.add_node(node)
        finished: threading.Event | None = getattr(node, "finished", None)
        while not stop.is_set() and not (finished is not None and finished.is_set()):
            executor.spin_once(timeout_sec=0.05)
        end = time.monotonic() + drain_seconds
        while time.monotonic() < end and not hurry.is_set():
            executor.spin_once(timeout_sec=0.01)
    except Exception as err:  # report, still close what the node holds
        print(f"[{node.get_name() if node is not None else name}] error: {err}", file=sys.stderr)
        code = 1
    finally:
        if executor is not None:
            _settle(executor, node)
            executor.shutdown(timeout_sec=_SHUTDOWN_WAIT)
        if node is not None:
            hook = getattr(node, "on_shutdown", None)
            if hook is not None:
                try:
                    hook()
                except Exception as err:
                    print(f"[{node.get_name()}] shutdown error: {err}", file=sys.stderr)
                    code = 1
            node.destroy_node()
        rclpy.try_shutdown()
        for s, h in previous.items():
            signal.signal(s, h)
    if getattr(node, "exit_code", 0):
        code = code or int(getattr(node, "exit_code", 0))
    return code
