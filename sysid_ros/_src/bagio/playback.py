"""Bag playback without rclpy: which messages go out, when, and which also set ``/clock``.

The ``replay`` node (:mod:`sysid_ros._src.nodes.replay`) is a shell over :class:`Player`: it supplies
the publishers (``emit``/``emit_clock``) and a stop-aware sleep; everything about the schedule
lives here, so it is tested without a ROS graph (test/bagio/test_playback.py).

Schedule (assumptions stated, since downstream timing depends on them):

- a message's *bag time* is its rosbag2 log (receive) time, not its header stamp;
- a pass starts at ``bag start + start_offset`` and publishes each message at wall time
  ``t0 + (bag time − pass start) / rate``, ``t0`` the (monotonic) wall time the pass began; with
  ``fast`` messages go out back to back (no sleeping), in bag order either way;
- lateness does not accumulate: every target is relative to ``t0``, so a message published late
  (a descheduled process) does not delay the ones after it;
- with ``loop`` each pass restarts ``t0`` and the bag time jumps back to the pass start; the
  ``/clock`` throttle lets that jump out at once so ``use_sim_time`` nodes see the restart;
- ``/clock`` carries the bag time of the first message of a pass, then of the first message at
  least one clock period (bag time) after the last one published.

A pass that would publish nothing (``start_offset`` past the last selected message, or no topic
selected) is refused with :class:`PlaybackError` instead of finishing silently or, looping,
spinning forever.
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from .errors import PlaybackError
from .reader import open_bag

__all__ = ["ClockThrottle", "PlaybackOptions", "PlaybackStats", "Player", "normalise_topics"]

#: emit(topic, serialized CDR bytes, bag time ns)
Emit = Callable[[str, bytes, int], None]


def normalise_topics(topics: Iterable[str]) -> frozenset[str]:
    """Topic names with a leading ``/`` (``joint_states`` and ``/joint_states`` are one topic)."""
    return frozenset(t if t.startswith("/") else "/" + t for t in topics)


@dataclass(frozen=True)
class PlaybackOptions:
    """How to play a bag.

    Attributes:
        rate: time scale (> 0): 2.0 plays twice as fast as recorded.
        start_offset: seconds of bag time skipped at the start of every pass (≥ 0).
        fast: publish back to back, ignoring the recorded spacing (``rate`` unused).
        loop: start again at the end, forever (until stopped).
        clock_hz: maximum ``/clock`` rate in bag time (> 0); ``None``: no ``/clock``.
    """

    rate: float = 1.0
    start_offset: float = 0.0
    fast: bool = False
    loop: bool = False
    clock_hz: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise PlaybackError(f"playback rate must be finite and > 0, got {self.rate}")
        if not (math.isfinite(self.start_offset) and self.start_offset >= 0):
            raise PlaybackError(f"playback start_offset must be finite and ≥ 0 s, "
                                f"got {self.start_offset}")
        if self.clock_hz is not None and not (math.isfinite(self.clock_hz) and self.clock_hz > 0):
            raise PlaybackError(f"playback clock_hz must be finite and > 0, got {self.clock_hz}")


class ClockThrottle:
    """Which bag times are also published as ``/clock``: the first, then the first at least one
    period after the last published, and at once any time earlier than the last (a loop
    restart: the jump back must not wait a period)."""

    def __init__(self, hz: float) -> None:
        self.period_ns = max(1, round(1e9 / hz))
        self._last: int | None = None

    def due(self, t_ns: int) -> bool:
        """``True`` (and remember ``t_ns``) if ``t_ns`` goes out as ``/clock``."""
        last = self._last
        if last is None or t_ns - last >= self.period_ns or t_ns < last:
            self._last = t_ns
            return True
        return False


@dataclass
class PlaybackStats:
    """Counts of a :meth:`Player.run`: messages emitted, passes completed (a pass cut short by
    ``stop`` is not a completed pass; its messages are counted)."""

    messages: int = 0
    passes: int = 0


class Player:
    """Plays the selected topics of one bag; see the module docstring for the schedule.

    Args:
        bag: bag directory or ``.mcap``/``.db3`` file (opened now, so a bad bag fails here with a
            :class:`~sysid_ros._src.bagio.BagError`).
        options: :class:`PlaybackOptions`.
        topics: topics to play (``None`` or empty: every topic of the bag).
        exclude: topics never played (e.g. a recorded ``/clock`` when the player makes its own).
    """

    def __init__(self, bag: str | os.PathLike[str], options: PlaybackOptions,
                 topics: Iterable[str] | None = None, exclude: Iterable[str] = ()) -> None:
        self.bag, self.options = bag, options
        wanted, dropped = normalise_topics(topics or ()), normalise_topics(exclude)
        reader = open_bag(bag)
        try:
            #: topic → message type of every selected topic, in bag order
            self.topics: dict[str, str] = {
                c.topic: c.msgtype for c in reader.connections
                if (not wanted or c.topic in wanted) and c.topic not in dropped}
            self.start_ns = int(reader.start_time) + round(options.start_offset * 1e9)
        finally:
            reader.close()

    def restrict(self, topics: Collection[str]) -> None:
        """Play only these of the selected topics (those the caller can publish)."""
        self.topics = {t: m for t, m in self.topics.items() if t in topics}

    def run(self, emit: Emit, stop: threading.Event, wait_until: Callable[[float], None],
            emit_clock: Callable[[int], None] | None = None,
            now: Callable[[], float] = time.monotonic) -> PlaybackStats:
        """Play until done (one pass, or forever with ``loop``) or until ``stop`` is set.

        ``wait_until(t)`` must return at wall time ``t`` of the ``now`` clock or once ``stop``
        is set, whichever is first; ``emit_clock(t_ns)`` is called (before the message of that
        bag time) only when ``options.clock_hz`` is set. Raises :class:`PlaybackError` if a pass
        has nothing to play, :class:`~sysid_ros._src.bagio.BagError` if the bag cannot be read.
        """
        opts, stats = self.options, PlaybackStats()
        clock = ClockThrottle(opts.clock_hz) if opts.clock_hz is not None and emit_clock else None
        while not stop.is_set():
            count, complete = self._pass(emit, stop, wait_until, now, clock, emit_clock)
            stats.messages += count
            stats.passes += int(complete)
            if not complete:
                break
            if count == 0:
                raise PlaybackError(
                    f"bag {self.bag}: nothing to play from start_offset {opts.start_offset} s "
                    f"on topics {sorted(self.topics) or '(none selected)'}")
            if not opts.loop:
                break
        return stats

    def _pass(self, emit: Emit, stop: threading.Event, wait_until: Callable[[float], None],
              now: Callable[[], float], clock: ClockThrottle | None,
              emit_clock: Callable[[int], None] | None) -> tuple[int, bool]:
        """One pass: (messages emitted, whether it reached the end rather than ``stop``)."""
        opts, count = self.options, 0
        if not self.topics:
            return 0, True
        reader = open_bag(self.bag)
        try:
            conns = [c for c in reader.connections if c.topic in self.topics]
            t0 = now()
            for conn, t_ns, data in reader.messages(connections=conns, start=self.start_ns):
                if not opts.fast:
                    wait_until(t0 + (t_ns - self.start_ns) * 1e-9 / opts.rate)
                if stop.is_set():
                    return count, False
                if clock is not None and emit_clock is not None and clock.due(t_ns):
                    emit_clock(t_ns)
                emit(conn.topic, bytes(data), t_ns)
                count += 1
        finally:
            reader.close()
        return count, True
