"""Exceptions raised by :mod:`sysid_ros._src.bagio`.

Every problem with a bag gets its own subclass of :class:`BagError` so callers (CLIs, tests) can
react to the kind of problem, and every message is a single line that names the bag and what is
wrong with it, so it can be printed to a terminal as-is.
"""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = [
    "BagError",
    "BagNotFoundError",
    "BagCorruptError",
    "BagWriteError",
    "TopicNotFoundError",
    "EmptyTopicError",
    "MissingJointError",
    "NonFiniteValueError",
    "StampOrderError",
    "DuplicateStampError",
    "NonMonotonicStampError",
    "TopicTypeError",
    "ArrayLengthError",
    "PlaybackError",
]


class BagError(SysidError):
    """Base class of every bag problem; ``str(err)`` is one line."""

    def __init__(self, message: str) -> None:
        # One line, whatever the underlying library put in its message.
        super().__init__(" ".join(str(message).split()))


class BagNotFoundError(BagError, FileNotFoundError):
    """The bag path does not exist (also a ``FileNotFoundError``)."""


class BagCorruptError(BagError):
    """The bag exists but cannot be opened or decoded (bad metadata, truncated or garbled file)."""


class BagWriteError(BagError):
    """A bag cannot be written (target exists, unknown message type, writer closed...)."""


class TopicNotFoundError(BagError, KeyError):
    """The requested topic is not in the bag; the message lists the topics that are."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class EmptyTopicError(BagError):
    """The topic exists but holds no message."""


class MissingJointError(BagError):
    """A requested joint name is absent from a JointState message; ``names`` are the message's
    joint names (empty when not known)."""

    names: tuple[str, ...] = ()


class NonFiniteValueError(BagError, ValueError):
    """A NaN or infinite value; the message names the message index, field and joint."""


class StampOrderError(BagError, ValueError):
    """Header stamps are not strictly increasing (duplicate or going backwards)."""


class DuplicateStampError(StampOrderError):
    """Two consecutive messages carry the same header stamp."""


class NonMonotonicStampError(StampOrderError):
    """A header stamp is earlier than the one before it."""


class TopicTypeError(BagError, TypeError):
    """The topic exists but has another message type than the reader expects."""


class ArrayLengthError(BagError, ValueError):
    """An array field's length disagrees with the number of names (or is otherwise wrong)."""


class PlaybackError(BagError):
    """Playback options out of range, or a playback pass with nothing to publish."""
