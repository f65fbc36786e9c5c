"""Bad samples in a recording or a stream: one classifier for the offline tools and the nodes.

:class:`SampleScreen` decides, message by message, whether a joint-state (or IMU) message is
used, skipped under a kind, or marks a persistent change of the stream. The offline reader
(``sysid_ros._src.bagio.reader``, behind ``sysid-identify`` and ``sysid-calibrate``) and the online
identifier (``sysid_ros._src.identification.payload_identifier``, behind the identifier node) both call it;
they differ only in what they do with a persistent jump back (refuse the file / restart the
windows) and a changed joint set (refuse the file / drop and report). docs/guide/recordings.md has the
table.

=====================  ===================================================================
kind                   a message ...
=====================  ===================================================================
zero_stamp             stamped 0 (an unstamped publisher)
duplicate_stamp        stamped like the last accepted one (a logger that wrote it twice)
backward_stamp         stamped before the last accepted one (one late or corrupt stamp)
far_future_stamp       stamped more than :data:`FAR_FUTURE_S` after the last accepted one
non_finite             holding a NaN/inf position, velocity or effort
missing_joint          without one of the robot's joints
joint_set_changed      online only: one of :data:`PERSISTENT` or more consecutive messages
                       with the same joint set lacking a robot joint (offline: refused)
=====================  ===================================================================

Runs: :data:`PERSISTENT` consecutive messages behind the last accepted stamp, strictly
increasing among themselves, are a jump back in time (:data:`RESTART`: a replay loop, a
simulator restart, two recordings in one file); as many consecutive messages more than
:data:`FAR_FUTURE_S` ahead, increasing and each within :data:`FAR_FUTURE_S` of the one before,
are a jump forward (a paused logger, a clock step): the last of them is accepted and the
stream goes on from there (the time gap splits the windows). Until a run completes, its
messages are skipped and counted under their kind; any accepted message ends the run. So an
isolated bad stamp never moves the time base, and nothing is dropped without being counted. A
run behind the last accepted stamp that follows on from the stamp accepted before it shows the
last accepted message to have been stamped ahead by less than :data:`FAR_FUTURE_S` (one corrupt
stamp): :data:`RETRACT`, the caller takes it back (counted as ``far_future_stamp``) instead of
seeing a jump back.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["SkipLog", "SampleScreen", "SKIP_KINDS", "PERSISTENT", "FAR_FUTURE_S", "EXAMPLES",
           "ACCEPT", "SKIP", "RESTART", "RETRACT", "JOINT_SET_CHANGED"]

SKIP_KINDS = ("non_finite", "zero_stamp", "duplicate_stamp", "backward_stamp",
              "far_future_stamp", "missing_joint", "joint_set_changed")
#: Consecutive messages that make a jump in time (or a changed joint set) persistent.
PERSISTENT = 10
#: A stamp this far (s) after the last accepted one is "far future": skipped unless persistent.
FAR_FUTURE_S = 1.0
#: First skipped messages kept per kind (index and stamp), for the report.
EXAMPLES = 5

#: :meth:`SampleScreen.check` verdicts (a skip is logged under its kind).
ACCEPT, SKIP, RESTART, RETRACT = "accept", "skip", "restart", "retract"
#: :meth:`SampleScreen.missing_joint` verdict once the joint set changed for good.
JOINT_SET_CHANGED = "joint_set_changed"


@dataclass
class SkipLog:
    """Skipped messages by kind: counts and the first :data:`EXAMPLES` (message index, stamp s,
    detail) of each."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[tuple[int, float, str]]] = field(default_factory=dict)
    #: ``--strict``: the reader refuses the first message a screen would skip
    refuse: bool = False

    def add(self, kind: str, index: int, stamp_ns: int, detail: str = "") -> None:
        if kind not in SKIP_KINDS:
            raise ValueError(f"unknown skip kind {kind!r}")
        self.counts[kind] += 1
        first = self.examples.setdefault(kind, [])
        if len(first) < EXAMPLES:
            first.append((index, stamp_ns * 1e-9, detail))

    @property
    def total(self) -> int:
        return int(sum(self.counts.values()))

    def describe(self) -> str:
        """One line: ``skipped N messages: kind n (first at t = ... s), ...``."""
        if not self.total:
            return "skipped no message"
        parts = [f"{kind} {self.counts[kind]} (first: message {ex[0][0]} at t = {ex[0][1]:.6f} s"
                 + (f", {ex[0][2]}" if ex[0][2] else "") + ")"
                 for kind in SKIP_KINDS if self.counts[kind]
                 for ex in [self.examples[kind]]]
        return f"skipped {self.total} message(s): " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: total, counts by kind, and the first messages of each kind."""
        return {"total": self.total,
                "by_kind": {k: int(self.counts[k]) for k in SKIP_KINDS if self.counts[k]},
                "first": {k: [{"message": i, "t": t, "detail": d} for i, t, d in v]
                          for k, v in self.examples.items()}}


def _non_finite(fields: Sequence[tuple[str, np.ndarray | None]], names: Sequence[str],
                entry: str) -> str:
    """Detail of the first NaN/inf in ``fields`` ((label, values per joint)), else ''."""
    for label, arr in fields:
        # a NaN/inf makes the sum non-finite: one reduction per field in the common case
        if arr is None or not arr.size or math.isfinite(arr.sum()):
            continue
        bad = ~np.isfinite(arr)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            name = names[j] if j < len(names) else str(j)
            return f"{label} of {entry} {name} is {arr.reshape(-1)[j]}"
    return ""


class SampleScreen:
    """The policy of the module docstring, message by message; skips go to ``log``.

    ``index`` arguments number the messages for the log (a bag's message index; online, the
    screen numbers them itself when None); ``entry`` names what the values are per (joint, axis)
    in the log's details."""

    def __init__(self, log: SkipLog | None = None, persistent: int = PERSISTENT,
                 far_future_s: float = FAR_FUTURE_S, entry: str = "joint") -> None:
        if persistent < 2:
            raise ValueError(f"persistent={persistent}: needs >= 2 (one message out of line is "
                             "an isolated bad stamp, not a jump)")
        if not far_future_s > 0:
            raise ValueError(f"far_future_s={far_future_s}: needs > 0")
        self.log = SkipLog() if log is None else log
        self.persistent, self.entry = persistent, entry
        self.far_ns = int(round(far_future_s * 1e9))
        self.seen = 0           # messages screened (the online index)
        self.restarts = 0       # persistent jumps back
        self.jumps = 0          # persistent jumps forward
        self.retracted = 0      # accepted messages found out of line afterwards
        self.reset()

    def reset(self) -> None:
        """Forget the last stamp and the runs (the next stamp is accepted whatever it is)."""
        self.last: int | None = None
        self._prev: int | None = None       # the accepted stamp before ``last``
        self._last_index = 0
        self._behind: list[int] = []
        self._ahead: list[int] = []
        self._missing: tuple[tuple[str, ...], int] = ((), 0)
        self.kind, self.detail = "", ""     # of the last message screened

    def _index(self, index: int | None) -> int:
        self.seen += 1
        return self.seen - 1 if index is None else index

    def _extend(self, run: list[int], stamp: int) -> bool:
        """Append ``stamp`` to a run (restarting it unless it follows on); True when complete."""
        if run and not (run[-1] < stamp <= run[-1] + self.far_ns):
            run.clear()
        run.append(stamp)
        return len(run) >= self.persistent

    def check(self, stamp_ns: int, fields: Sequence[tuple[str, np.ndarray | None]],
              names: Sequence[str] = (), index: int | None = None) -> str:
        """ACCEPT, SKIP (logged under its kind), RESTART (a persistent jump back, accepted as
        the new time base) or RETRACT (accepted, and the message accepted before it was out of
        line: the run behind it follows on from the stamp before that one; the caller takes
        that message back, logged as ``far_future_stamp``) for a message with all the robot's
        joints. ``fields``: (label, values) pairs checked for NaN/inf, ``names`` label their
        entries."""
        index = self._index(index)
        self._missing = ((), 0)
        last, kind, detail, restart = self.last, "", "", False
        if stamp_ns <= 0:
            kind = "zero_stamp"
        elif last is not None and stamp_ns == last:
            kind = "duplicate_stamp"
        elif last is not None and stamp_ns < last:
            self._ahead.clear()
            restart = self._extend(self._behind, stamp_ns)
            if not restart:
                kind, detail = "backward_stamp", f"{(last - stamp_ns) * 1e-9:.6f} s behind"
        elif last is not None and stamp_ns - last > self.far_ns:
            self._behind.clear()
            if not self._extend(self._ahead, stamp_ns):
                kind, detail = "far_future_stamp", f"{(stamp_ns - last) * 1e-9:.6f} s ahead"
            else:
                self.jumps += 1
        if not kind:
            detail = _non_finite(fields, names, self.entry)
            kind = "non_finite" if detail else ""
        self.kind, self.detail = kind, detail
        if kind:
            self.log.add(kind, index, stamp_ns, detail)
            return SKIP
        outlier = restart and self._prev is not None and \
            self._prev < self._behind[0] <= self._prev + self.far_ns
        if outlier:     # the run follows on from the stamp before the last: that one was ahead
            assert last is not None
            self.log.add("far_future_stamp", self._last_index, last,
                         f"{(last - self._behind[0]) * 1e-9:.6f} s ahead of the "
                         f"{self.persistent} messages after it (taken back)")
            self.retracted += 1
        else:
            self._prev = None if restart else self.last
        self.last, self._last_index = stamp_ns, index
        self._behind.clear()
        self._ahead.clear()
        if outlier:
            return RETRACT
        if restart:
            self.restarts += 1
            return RESTART
        return ACCEPT

    @property
    def joint_set_changed(self) -> bool:
        """The last :data:`PERSISTENT` or more messages all lacked a joint, with the same set."""
        return self._missing[1] >= self.persistent

    def missing_joint(self, stamp_ns: int, detail: str, names: Sequence[str],
                      index: int | None = None) -> str:
        """SKIP (logged as ``missing_joint``) for a message lacking a robot joint, or
        JOINT_SET_CHANGED from the :data:`PERSISTENT`-th consecutive one with the same names
        (logged as such: the caller refuses offline, or goes on dropping them online)."""
        index = self._index(index)
        key = tuple(names)
        run = self._missing[1] + 1 if self._missing[0] == key else 1
        self._missing = (key, run)
        self.detail = detail
        if run >= self.persistent:
            self.kind = JOINT_SET_CHANGED
            self.log.add(JOINT_SET_CHANGED, index, stamp_ns, f"messages now carry {list(key)}")
            return JOINT_SET_CHANGED
        self.kind = "missing_joint"
        self.log.add("missing_joint", index, stamp_ns, detail)
        return SKIP
