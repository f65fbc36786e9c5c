"""Bad samples in a recording: which kinds are skipped (and counted), which refuse the file.

The offline tools (``sysid-identify``, ``sysid-calibrate``) read a bag with a :class:`SkipLog`:
a message of a skipped kind is left out, counted by kind with its index and stamp, and the
reading goes on; the windows treat the hole like a dropped sample (a long one splits the run).
``--strict`` reads without one: the first bad message is an error naming it. The identifier node
applies the same kinds to the messages it receives (docs/guide/recordings.md has the table).

===================  ==========  ==================================================
kind                 offline     why
===================  ==========  ==================================================
non_finite           skip        NaN/inf in a position, velocity or effort
zero_stamp           skip        an unstamped message (header stamp 0)
duplicate_stamp      skip        a logger that wrote a message twice
backward_stamp       skip        one late or corrupt stamp (isolated)
missing_joint        skip        a message without one of the robot's joints
time jump back       refuse      ``PERSISTENT_BACKWARD`` messages in a row behind the last
                                 accepted stamp: two recordings in one file; split it
===================  ==========  ==================================================
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SkipLog", "SKIP_KINDS", "PERSISTENT_BACKWARD", "EXAMPLES"]

SKIP_KINDS = ("non_finite", "zero_stamp", "duplicate_stamp", "backward_stamp", "missing_joint")
#: Consecutive messages behind the last accepted stamp that mean time jumped back for good.
PERSISTENT_BACKWARD = 10
#: First skipped messages kept per kind (index and stamp), for the report.
EXAMPLES = 5


@dataclass
class SkipLog:
    """Skipped messages by kind: counts and the first :data:`EXAMPLES` (message index, stamp s,
    detail) of each."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[tuple[int, float, str]]] = field(default_factory=dict)

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
