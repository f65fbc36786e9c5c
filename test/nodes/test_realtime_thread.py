"""``nodes.threads.realtime_thread``: the command thread's preparation (SCHED_FIFO for that thread
only, the startup heap frozen), checked through the kernel's own view of the thread."""
from __future__ import annotations

import gc
import os
import threading

import pytest

from sysid_ros._src.nodes.threads import realtime_receive_threads, realtime_thread

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setscheduler"), reason="Linux only")


def _in_thread(priority: int) -> tuple[str, int, int, int]:
    """(why FIFO was refused, policy and priority of that thread after realtime_thread, policy of
    the main thread meanwhile) — run in a fresh thread so the test process keeps its policy."""
    out: list[tuple[str, str, int, int, int]] = []

    def body() -> None:
        label, why = realtime_thread(priority)
        out.append((label, why, os.sched_getscheduler(0), os.sched_getparam(0).sched_priority,
                    os.sched_getscheduler(os.getpid())))
    t = threading.Thread(target=body)
    t.start()
    t.join()
    label, why, *rest = out[0]
    # the diagnostics value names what the thread got
    assert label == (f"normal ({why})" if why else f"SCHED_FIFO {priority}" if priority
                     else "normal")
    return (why, *rest)


def test_fifo_for_the_calling_thread_only_or_a_stated_refusal():
    try:
        why, policy, prio, main_policy = _in_thread(5)
        assert main_policy == os.SCHED_OTHER                # the process's other threads keep theirs
        if why:                                             # no CAP_SYS_NICE / rtprio limit here
            assert "refused" in why and "rtprio" in why
            assert policy == os.SCHED_OTHER
        else:
            assert (policy, prio) == (os.SCHED_FIFO, 5)
        assert gc.get_freeze_count() > 0                    # the startup heap left the collector
    finally:
        gc.unfreeze()


def test_a_second_call_collects_what_the_first_froze():
    """configure → cleanup → configure: the first runtime's cycles, frozen by the first call and
    dropped by the cleanup, are collected by the second call instead of leaking."""
    import weakref

    class Node:
        pass
    try:
        a = Node()
        a.self = a                                          # a cycle: only the collector frees it
        alive = weakref.ref(a)
        _in_thread(0)
        del a
        gc.collect()
        assert alive() is not None                          # frozen: out of the collector's reach
        _in_thread(0)
        assert alive() is None
    finally:
        gc.unfreeze()


def test_priority_zero_leaves_the_policy():
    try:
        why, policy, prio, _ = _in_thread(0)
        assert (why, policy, prio) == ("", os.SCHED_OTHER, 0)
    finally:
        gc.unfreeze()


def test_settings_refuse_an_out_of_range_priority():
    from sysid_ros._src.control.errors import ControllerConfigError
    from sysid_ros._src.control.controller_runtime import ControllerSettings

    with pytest.raises(ControllerConfigError, match="realtime_priority"):
        ControllerSettings.from_mapping({"realtime_priority": 100})
    assert ControllerSettings.from_mapping({"realtime_priority": 80}).realtime_priority == 80


def test_receive_threads_priority_zero_does_nothing_and_a_missing_middleware_is_stated():
    """The node test (test_robust_controller_node) checks the raised threads of a real node;
    here the two answers that raise nothing: priority 0, and a process without such threads
    (this one has no thread named so; nothing is changed)."""
    assert realtime_receive_threads(0) == ([], "")
    before = os.sched_getscheduler(os.getpid())
    raised, why = realtime_receive_threads(5, prefixes=("no.such.thread.",))
    assert raised == [] and "no middleware receive threads named no.such.thread.*" in why
    assert os.sched_getscheduler(os.getpid()) == before
