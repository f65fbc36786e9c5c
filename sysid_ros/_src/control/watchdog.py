"""Input watchdogs judged on a clock that cannot stall (the caller passes steady time).

Under ``use_sim_time`` ROS timers run on /clock: if the simulator dies, ROS time freezes and a
ROS-time watchdog never fires. These watchdogs take the steady (monotonic) time of every
arrival and of every check from the caller, so a frozen /clock is itself detectable
(``ClockWatch``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Freshness", "ClockWatch"]


@dataclass
class Freshness:
    """Age of one input stream on the steady clock; stale when older than ``timeout`` (s).

    Never received = not stale (nothing to judge yet) but ``age`` is infinite."""

    timeout: float
    last: float | None = None

    def feed(self, steady: float) -> None:
        self.last = steady

    def age(self, steady: float) -> float:
        return math.inf if self.last is None else max(0.0, steady - self.last)

    def stale(self, steady: float) -> bool:
        return self.last is not None and self.age(steady) > self.timeout


@dataclass
class ClockWatch:
    """Detects a ROS clock that stopped advancing while steady time runs (a dead /clock
    publisher under ``use_sim_time``): stalled when ROS time has not changed for ``timeout``
    steady seconds. Disabled (never stalled) when ``enabled`` is false (wall-clock time)."""

    timeout: float
    enabled: bool = True
    _ros: float | None = None
    _changed: float | None = None

    def observe(self, steady: float, ros_now: float) -> None:
        if ros_now != self._ros:
            self._ros, self._changed = ros_now, steady

    def stalled(self, steady: float) -> bool:
        return (self.enabled and self._changed is not None and self._ros is not None
                and self._ros > 0.0 and steady - self._changed > self.timeout)

    def age(self, steady: float) -> float:
        return math.inf if self._changed is None else max(0.0, steady - self._changed)
