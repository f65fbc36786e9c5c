"""Threads of the node processes: their scheduling (a worker lowered, the controller's command
thread raised to real time) and pacing to the wall clock. No rclpy: plain OS calls."""
from __future__ import annotations

import gc
import os
import threading
import time

__all__ = ["RECEIVE_THREAD_PREFIXES", "lower_thread_priority", "realtime_loop",
           "realtime_receive_threads", "realtime_thread", "sleep_until"]

#: Fast DDS names each transport's receive thread after its transport and port (dds.shm.7411,
#: dds.udp.7410, dds.tcp.…); dds.shm.wdog is the shared-memory watchdog, not a receiver
RECEIVE_THREAD_PREFIXES = ("dds.shm.", "dds.udp.", "dds.tcp.")


def lower_thread_priority(nice: int) -> str:
    """Add ``nice`` to the calling thread's niceness (Linux: a thread id is a schedulable task,
    so only this thread is lowered; raising niceness needs no privilege). Returns why it could
    not be done, or "" (also for ``nice`` = 0)."""
    if nice <= 0:
        return ""
    if not hasattr(os, "setpriority"):
        return "no per-thread priorities on this platform"
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError as err:
        return str(err)
    return ""


def realtime_thread(priority: int) -> tuple[str, str]:
    """Put the calling thread under SCHED_FIFO at ``priority`` (1–99; 0: leave it as it is), and
    move every object alive now out of the cyclic garbage collector's reach (``gc.freeze``,
    after handing back what an earlier call froze, so configure → cleanup → configure does not
    leak the first runtime's reference cycles):
    the preparation of a thread that answers each message of a hard-periodic loop (the robust
    controller's executor thread). FIFO lets it preempt every normal task at once (measured on a
    2-core machine with the sim graph running, bench_controller); the frozen heap keeps the
    collections that do run short: a full traversal of the startup heap (pinocchio, rclpy) took
    0.9–1.4 ms inside a command callback. Only this thread is raised: the middleware's receive
    threads and numerical libraries' worker pools keep their policy (a spinning FIFO worker
    could starve the machine). Returns (the thread's scheduling as a diagnostics value, why
    FIFO was refused — no CAP_SYS_NICE / rtprio limit, not Linux — or ""): the caller reports
    a refusal; the loop then runs at normal priority."""
    gc.unfreeze()      # what an earlier configure froze and a cleanup dropped is collected now
    gc.collect()
    gc.freeze()
    if priority <= 0:
        return "normal", ""
    if not hasattr(os, "sched_setscheduler"):
        why = "SCHED_FIFO is not available on this platform"
        return f"normal ({why})", why
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as err:
        why = (f"SCHED_FIFO priority {priority} refused ({err.strerror}): grant an rtprio limit "
               "(limits.conf '@realtime - rtprio 99') or CAP_SYS_NICE")
        return f"normal ({why})", why
    return f"SCHED_FIFO {priority}", ""


def _receive_threads(prefixes: tuple[str, ...]) -> list[tuple[int, str]]:
    """(thread id, name) of this process's middleware receive threads, from /proc."""
    found: list[tuple[int, str]] = []
    for entry in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{entry}/comm") as f:
                name = f.read().strip()
        except OSError:           # the thread ended between listing and reading
            continue
        if name.startswith(prefixes) and not name.endswith(".wdog"):
            found.append((int(entry), name))
    return sorted(found)


def realtime_receive_threads(priority: int,
                             prefixes: tuple[str, ...] = RECEIVE_THREAD_PREFIXES
                             ) -> tuple[list[str], str]:
    """Put this process's middleware receive threads (``prefixes``: Fast DDS's names) under
    SCHED_FIFO at ``priority`` (0: leave them). Why: with the command thread at FIFO the round
    trip's tail under load was the way *in* — the receive thread that takes a joint state off
    the shared-memory port and wakes the executor waited for a core
    (docs/theory/controller.md#the-command-path-at-1-khz).
    These threads block on their port between messages and only copy and notify when one
    arrives, so FIFO costs the machine nothing while the loop is idle. Call it after the node
    exists (its participant starts the threads). Returns (the names raised, why it was refused
    or found nothing — not Linux, no CAP_SYS_NICE / rtprio limit, no such threads — or "")."""
    if priority <= 0:
        return [], ""
    if not (hasattr(os, "sched_setscheduler") and os.path.isdir("/proc/self/task")):
        return [], "per-thread SCHED_FIFO needs Linux"
    threads = _receive_threads(prefixes)
    if not threads:
        return [], f"no middleware receive threads named {'|'.join(prefixes)}* in this process"
    raised: list[str] = []
    for tid, name in threads:
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
        except ProcessLookupError:
            continue
        except OSError as err:
            return raised, (f"SCHED_FIFO priority {priority} for {name} refused "
                            f"({err.strerror}): grant an rtprio limit or CAP_SYS_NICE")
        raised.append(name)
    return raised, ""


def realtime_loop(priority: int) -> tuple[str, list[str]]:
    """Prepare the calling thread to answer a hard-periodic loop (:func:`realtime_thread`, at
    ``priority``) and raise the receive threads that wake it (:func:`realtime_receive_threads`,
    one below; at priority 1 equal, FIFO having no lower level). Returns (the scheduling as a
    diagnostics value, the refusals to report)."""
    scheduling, refused = realtime_thread(priority)
    # one below: the command thread they wake preempts them at once when both share a core
    receivers, refused_rx = realtime_receive_threads(max(priority - 1, 1) if priority else 0)
    if receivers:
        scheduling += f"; receive threads {','.join(receivers)} one below"
    return scheduling, [why for why in (refused, refused_rx) if why]


def sleep_until(target: float, stop: threading.Event) -> None:
    """Sleep until ``time.monotonic() >= target`` or ``stop`` is set (worker threads pacing
    to the wall clock). Long waits watch ``stop``; the last 2 ms are one ``time.sleep``
    (clock_nanosleep: ~0.07 ms late median on the loaded 2-core machine). Not a sleep(0)
    spin: at a 1 ms period every wait is that short, and spinning made the 1 kHz simulator
    burn 0.4 of a core doing nothing while the graph it paces starved (profiled with py-spy)."""
    while not stop.is_set():
        remaining = target - time.monotonic()
        if remaining <= 0:
            return
        if remaining > 0.002:
            stop.wait(remaining - 0.001)
        else:
            time.sleep(remaining)
