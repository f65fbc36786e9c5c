"""Stamp policy of the online identifier: which message stamps to use, which to drop, and when
time has really jumped back (a bag replayed in a loop, a simulator restarted).

A stamp is

- **accepted** when it is after the last accepted one;
- **rejected and counted** when it is zero (an unstamped publisher), equal to the last accepted
  one (a duplicate) or before it (one late or corrupt message) — the windows in progress are
  kept, so one bad message costs nothing but itself;
- a **restart** when ``restart_after`` consecutive messages are all behind the last accepted
  stamp and strictly increasing among themselves: a persistent jump back, i.e. a replay
  started over. The caller then restarts its runs of samples (no window spans the jump) and
  this message is accepted as the new last stamp; the earlier ``restart_after`` − 1 messages
  of the new run are lost (a few ms of data).

An isolated bad stamp can never cause a restart: a restart needs ``restart_after`` consistent
messages behind the last accepted stamp, and any accepted message in between clears the count.
"""
from __future__ import annotations

from collections import Counter

from sysid_ros.identification.errors import IdentificationConfigError

__all__ = ["StampFilter", "ACCEPT", "REJECT", "RESTART"]

ACCEPT, REJECT, RESTART = "accept", "reject", "restart"

ZERO = "zero stamp (unstamped message)"
DUPLICATE = "duplicate stamp"
BACKWARD = "stamp before the last accepted one (isolated; dropped)"
RESTARTS = "time jumped back persistently (windows restarted, box kept)"


class StampFilter:
    """Applies the policy of the module docstring, message by message; ``counts`` holds the
    rejections by reason and the restarts (``RESTARTS``)."""

    def __init__(self, restart_after: int = 10) -> None:
        if restart_after < 2:
            raise IdentificationConfigError(
                f"stamp restart_after={restart_after}: needs >= 2 (one message behind is an "
                "isolated bad stamp, not a restart)")
        self.restart_after = restart_after
        self.counts: Counter[str] = Counter()
        self.reset()

    def reset(self) -> None:
        """Forget the last stamp (an explicit reset: the next stamp is accepted whatever it is)."""
        self.last: float | None = None
        self._behind: list[float] = []

    def check(self, t: float) -> str:
        """ACCEPT, REJECT (counted by reason) or RESTART for a message stamped ``t`` (s)."""
        if not t > 0.0:
            self.counts[ZERO] += 1
            return REJECT
        if self.last is None or t > self.last:
            self.last = t
            self._behind = []
            return ACCEPT
        if t == self.last:
            self.counts[DUPLICATE] += 1
            return REJECT
        if self._behind and t <= self._behind[-1]:
            self._behind = []             # not a consistent new run: start counting again
        self._behind.append(t)
        if len(self._behind) >= self.restart_after:
            self.counts[RESTARTS] += 1
            # the earlier messages of the new run were counted as rejected; they are not
            # rejections of bad stamps after all
            self.counts[BACKWARD] -= len(self._behind) - 1
            if self.counts[BACKWARD] <= 0:
                del self.counts[BACKWARD]
            self.last = t
            self._behind = []
            return RESTART
        self.counts[BACKWARD] += 1
        return REJECT
