"""Playback schedule (sysid_ros._src.bagio.playback) against the log times and messages written into
the bag, on a simulated wall clock (the real-clock pacing over DDS is in
test/nodes/test_recorder_replay.py)."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src.bagio import (BagNotFoundError, BagWriter, ClockThrottle, PlaybackError,
                             PlaybackOptions, Player)

from .helpers import NAMES, TS, imu, joint_state

T0 = 1_800_000_000 * 10**9


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, int, float]]]:
    """Irregularly spaced joint_states and imu, plus a recorded /clock; returns the bag and the
    (topic, log time, first value) of every message written, in log-time order."""
    rng = np.random.default_rng(7)
    t = T0 + np.cumsum(rng.integers(200_000, 20_000_000, size=120))
    topics = rng.choice(["/joint_states", "/imu", "/clock"], size=t.size, p=[0.6, 0.3, 0.1])
    path = tmp_path_factory.mktemp("play") / "bag"
    written = []
    clock_type = TS.types["rosgraph_msgs/msg/Clock"]
    time_type = TS.types["builtin_interfaces/msg/Time"]
    with BagWriter(path) as w:
        for k, (ti, topic) in enumerate(zip(t.tolist(), topics)):
            v = float(k)
            if topic == "/joint_states":
                msg = joint_state(ti, NAMES, np.full(7, v), np.zeros(7), np.zeros(7))
            elif topic == "/imu":
                msg = imu(ti, [v, 0, 0, 1, 0, 0, 0, 0, 0, 9.81])
            else:
                msg = clock_type(clock=time_type(sec=ti // 10**9, nanosec=ti % 10**9))
            w.write(str(topic), msg, ti)
            written.append((str(topic), ti, v))
    return path, written


class SimClock:
    """A wall clock that only moves when waited on (plus injected delays)."""

    def __init__(self) -> None:
        self.t = 100.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.t

    def wait_until(self, target: float) -> None:
        self.waits.append(target)
        self.t = max(self.t, target)


def _value(topic: str, data: bytes) -> float:
    if topic == "/joint_states":
        return float(TS.deserialize_cdr(data, "sensor_msgs/msg/JointState").position[0])
    if topic == "/imu":
        return float(TS.deserialize_cdr(data, "sensor_msgs/msg/Imu").orientation.x)
    return -1.0


def test_pacing_follows_log_times_from_the_offset(bag) -> None:
    path, written = bag
    opts = PlaybackOptions(rate=2.0, start_offset=0.3)
    player = Player(path, opts, topics=["joint_states", "/imu"])
    assert set(player.topics) == {"/joint_states", "/imu"}
    clock, out = SimClock(), []
    start = player.start_ns
    stats = player.run(lambda topic, data, t: out.append((topic, t, _value(topic, data), clock.t)),
                       threading.Event(), clock.wait_until, now=clock.now)
    first = written[0][1]
    assert start == first + 300_000_000                     # offset from the bag's first message
    want = [w for w in written if w[0] != "/clock" and w[1] >= start]
    assert [(o[0], o[1], o[2]) for o in out] == want         # every message, in order, intact
    wall = np.array([o[3] for o in out]) - 100.0
    np.testing.assert_allclose(wall, (np.array([w[1] for w in want]) - start) * 1e-9 / 2.0,
                               atol=1e-9)
    assert stats.messages == len(want) and stats.passes == 1


def test_lateness_does_not_accumulate(bag) -> None:
    """A 0.5 s stall at the 10th message delays it, not the schedule of the ones after it."""
    path, written = bag
    player = Player(path, PlaybackOptions(), exclude=["/clock"])
    clock, targets = SimClock(), []

    def emit(topic: str, data: bytes, t: int) -> None:
        targets.append(clock.t)
        if len(targets) == 10:
            clock.t += 0.5

    player.run(emit, threading.Event(), clock.wait_until, now=clock.now)
    log = np.array([w[1] for w in written if w[0] != "/clock"])
    due = 100.0 + (log - log[0]) * 1e-9
    sent = np.array(targets)
    np.testing.assert_allclose(sent[:10], due[:10], atol=1e-9)
    late = due[10:] < due[9] + 0.5               # due while the stall lasted: sent at its end
    np.testing.assert_allclose(sent[10:][late], due[9] + 0.5, atol=1e-9)
    np.testing.assert_allclose(sent[10:][~late], due[10:][~late], atol=1e-9)
    assert late.any() and (~late).any()         # the stall mattered, and the schedule resumed


def test_fast_never_waits(bag) -> None:
    path, written = bag
    clock, out = SimClock(), []
    Player(path, PlaybackOptions(fast=True)).run(lambda *m: out.append(m[0]), threading.Event(),
                                                  clock.wait_until, now=clock.now)
    assert clock.waits == [] and out == [w[0] for w in written]


def test_loop_restarts_and_clock_jumps_back_at_once(bag) -> None:
    path, written = bag
    stop, clock, ticks, out = threading.Event(), SimClock(), [], []
    opts = PlaybackOptions(rate=1.0, loop=True, clock_hz=20.0)
    player = Player(path, opts, exclude=["/clock"])
    n = sum(w[0] != "/clock" for w in written)

    def emit(topic: str, data: bytes, t: int) -> None:
        out.append(t)
        if len(out) == 3 * n:
            stop.set()

    stats = player.run(emit, stop, clock.wait_until, emit_clock=ticks.append, now=clock.now)
    assert stats.passes == 3 and stats.messages == 3 * n
    log = [w[1] for w in written if w[0] != "/clock"]
    assert out == log * 3
    ticks_arr = np.array(ticks)
    restarts = np.flatnonzero(np.diff(ticks_arr) < 0) + 1
    assert len(restarts) == 2 and all(ticks_arr[i] == log[0] for i in restarts)
    assert ticks[0] == log[0]
    # Within a pass: the first message at least 50 ms (bag time) after the last tick.
    expect, last = [], None
    for t in log:
        if last is None or t - last >= 50_000_000:
            expect.append(t)
            last = t
    assert ticks == expect * 3


def test_clock_throttle_period_and_jump() -> None:
    c = ClockThrottle(1000.0)
    assert [c.due(t) for t in (0, 500_000, 1_000_000, 1_999_999, 2_000_000, 10, 11)] == \
        [True, False, True, False, True, True, False]


def test_stop_mid_pass(bag) -> None:
    path, _ = bag
    stop, clock, out = threading.Event(), SimClock(), []

    def emit(topic: str, data: bytes, t: int) -> None:
        out.append(t)
        if len(out) == 5:
            stop.set()

    stats = Player(path, PlaybackOptions(loop=True)).run(emit, stop, clock.wait_until,
                                                         now=clock.now)
    assert len(out) == 5 and stats.messages == 5 and stats.passes == 0


def test_nothing_to_play_is_refused_not_spun(bag) -> None:
    path, written = bag
    past_end = (written[-1][1] - written[0][1]) * 1e-9 + 1.0
    player = Player(path, PlaybackOptions(start_offset=past_end, loop=True))
    with pytest.raises(PlaybackError, match="nothing to play from start_offset"):
        player.run(lambda *m: None, threading.Event(), SimClock().wait_until)
    none = Player(path, PlaybackOptions(), topics=["/not_in_bag"])
    assert none.topics == {}
    with pytest.raises(PlaybackError, match="none selected"):
        none.run(lambda *m: None, threading.Event(), SimClock().wait_until)


@pytest.mark.parametrize("kw, field", [({"rate": 0.0}, "rate"), ({"rate": float("nan")}, "rate"),
                                       ({"start_offset": -1.0}, "start_offset"),
                                       ({"clock_hz": 0.0}, "clock_hz")])
def test_bad_options_are_refused_by_name(kw: dict, field: str) -> None:
    with pytest.raises(PlaybackError, match=field):
        PlaybackOptions(**kw)


def test_missing_bag_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(BagNotFoundError):
        Player(tmp_path / "nope", PlaybackOptions())
