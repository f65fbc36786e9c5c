"""Offline readers: a bag's JointState / Imu topic as validated numpy arrays.

:func:`read_joint_states` returns a :class:`JointStateSeries` (time from the *header stamps*, not
the bag receive times, because the identifier integrates over the sensor's time base). Columns
follow the requested joint order, matched by ``JointState.name`` in every message, so messages
whose names come in another order are reordered. Everything the identifier relies on is checked
and each violation raises its own :class:`~sysid_ros._src.bagio.errors.BagError` subclass.

JointState messages are deserialised by the ``rosbags`` typestore. A hand-written CDR walk reads
them faster, but reading is a small share of ``sysid-identify``'s time, so end to end it does
not pay for itself (``python -m bench.bench_decoder`` measures both in one run).
"""
from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
from rosbags.rosbag2 import Reader

from sysid_ros._src.sample_screen import (JOINT_SET_CHANGED, PERSISTENT, RESTART, RETRACT, SKIP,
                                     SampleScreen, SkipLog)

from .errors import (
    ArrayLengthError,
    BagCorruptError,
    BagError,
    BagNotFoundError,
    DuplicateStampError,
    EmptyTopicError,
    MissingJointError,
    NonFiniteValueError,
    NonMonotonicStampError,
    StampOrderError,
    TopicNotFoundError,
    TopicTypeError,
)
from .writer import default_typestore

if TYPE_CHECKING:
    from rosbags.typesys.stores.ros2_jazzy import sensor_msgs__msg__Imu as ImuMsg
    from rosbags.typesys.stores.ros2_jazzy import sensor_msgs__msg__JointState as JointStateMsg

__all__ = [
    "JointStateSeries",
    "ImuSamples",
    "ImuSeries",
    "ProgressCallback",
    "read_joint_states",
    "iter_joint_states",
    "read_imu",
    "list_topics",
    "open_bag",
]

#: ``progress(done, total)`` with message counts of the topic being read.
ProgressCallback = Callable[[int, int], None]

JOINT_STATE = "sensor_msgs/msg/JointState"
IMU = "sensor_msgs/msg/Imu"
_FIELDS = ("position", "velocity", "effort")


@dataclass(frozen=True)
class JointStateSeries:
    """Joint measurements of one topic, rows = messages, columns = ``names``.

    Attributes:
        t: (N,) header stamps in seconds (float64), strictly increasing.
        stamps_ns: (N,) the same stamps as exact integer nanoseconds.
        names: joint names, the column order of the arrays.
        position, velocity, effort: (N, nj) float64 arrays; ``effort`` is the measured joint
            torque (docs/theory/ros-interfaces.md#topics-types-and-qos). A field that is empty in every message and not
            required is None.
    """

    t: np.ndarray
    stamps_ns: np.ndarray
    names: tuple[str, ...]
    position: np.ndarray | None
    velocity: np.ndarray | None
    effort: np.ndarray | None

    def __len__(self) -> int:
        return int(self.t.shape[0])


class ImuSamples(Protocol):
    """What the identifier reads from an IMU stream (e.g. :class:`ImuSeries`, a simulated run's
    IMU): stamps t (M,) s, angular_velocity (M, 3) rad/s and linear_acceleration (M, 3) m/s²,
    IMU frame."""

    @property
    def t(self) -> np.ndarray: ...

    @property
    def angular_velocity(self) -> np.ndarray: ...

    @property
    def linear_acceleration(self) -> np.ndarray: ...


@dataclass(frozen=True)
class ImuSeries:
    """Imu samples: ``t`` (N,) s from header stamps, ``orientation`` (N, 4) as x, y, z, w,
    ``angular_velocity`` (N, 3) rad/s, ``linear_acceleration`` (N, 3) m/s²."""

    t: np.ndarray
    stamps_ns: np.ndarray
    orientation: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray

    def __len__(self) -> int:
        return int(self.t.shape[0])


# -- opening ---------------------------------------------------------------------------------
def _norm_topic(topic: str) -> str:
    return topic if topic.startswith("/") else "/" + topic


def open_bag(bag_path: str | os.PathLike[str]) -> Reader:
    """Open a bag directory (or a single ``.mcap``/``.db3`` file) with ``rosbags``.

    Raises:
        BagNotFoundError: the path does not exist.
        BagCorruptError: metadata or storage cannot be read.
    """
    path = Path(bag_path)
    if not path.exists():
        raise BagNotFoundError(f"bag {path} does not exist")
    try:
        reader = Reader(path)
        reader.open()
    except BagError:
        raise
    except FileNotFoundError as err:  # directory without metadata.yaml
        raise BagCorruptError(f"bag {path} is not a rosbag2 bag: {err}") from None
    except Exception as err:  # rosbags raises many types for garbled files
        raise BagCorruptError(f"bag {path} is unreadable: {type(err).__name__}: {err}") from None
    try:
        for db in [path] if path.suffix == ".db3" else sorted(path.glob("*.db3")):
            _check_sqlite_complete(db)
    except BagError:
        reader.close()
        raise
    return reader


def _check_sqlite_complete(path: Path) -> None:
    """Refuse a truncated sqlite3 storage file: SQLite zero-fills pages missing at the end of a
    short file, so the last messages would read back as silently wrong numbers (found by the
    bag fuzz test). The header (https://www.sqlite.org/fileformat.html) gives the page size
    (bytes 16-17, 1 = 65536) and, when valid (bytes 92-95 equal the change counter at 24-27),
    the page count (bytes 28-31)."""
    with path.open("rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        raise BagCorruptError(f"bag {path} is corrupt: not a complete sqlite3 header")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    size = path.stat().st_size
    pages = int.from_bytes(head[28:32], "big")
    if size % page or (head[92:96] == head[24:28] and size < pages * page):
        raise BagCorruptError(f"bag {path} is corrupt (truncated): {size} bytes, the sqlite3 "
                              f"header says {pages} pages of {page} bytes")


def list_topics(bag_path: str | os.PathLike[str]) -> dict[str, tuple[str, int]]:
    """``{topic: (msgtype, message_count)}`` of a bag."""
    reader = open_bag(bag_path)
    try:
        return {c.topic: (c.msgtype, c.msgcount) for c in reader.connections}
    finally:
        reader.close()


def _connections(reader: Reader, bag: Path, topic: str, msgtype: str) -> tuple[list[Any], int]:
    conns = [c for c in reader.connections if c.topic == topic]
    if not conns:
        available = ", ".join(f"{c.topic} [{c.msgtype}]" for c in reader.connections) or "none"
        raise TopicNotFoundError(f"topic {topic} not in bag {bag}; available topics: {available}")
    wrong = sorted({c.msgtype for c in conns if c.msgtype != msgtype})
    if wrong:
        raise TopicTypeError(f"topic {topic} in bag {bag} has type {', '.join(wrong)}, expected {msgtype}")
    total = sum(c.msgcount for c in conns)
    return conns, total


def _raw_messages(
    reader: Reader, bag: Path, conns: list[Any]
) -> Iterator[tuple[int, bytes]]:
    """Yield (index, data) of the topic, turning storage failures into BagCorruptError."""
    index = 0
    it = reader.messages(connections=conns)
    while True:
        try:
            item = next(it)
        except StopIteration:
            return
        except BagError:
            raise
        except Exception as err:
            raise BagCorruptError(
                f"bag {bag} is corrupt after message {index}: {type(err).__name__}: {err}"
            ) from None
        yield index, item[2]
        index += 1


def iter_messages(bag_path: str | os.PathLike[str], topic: str,
                  msgtype: str) -> Iterator[tuple[int, Any]]:
    """Yield (log time ns, deserialised message) of one topic of any type, in bag order.

    Raises TopicNotFoundError / TopicTypeError / BagCorruptError like the typed readers (and
    never falls into rosbags' "no connections means every topic" behaviour).
    """
    bag = Path(bag_path)
    reader = open_bag(bag)
    try:
        conns, _ = _connections(reader, bag, _norm_topic(topic), msgtype)
        typestore = default_typestore()
        it = reader.messages(connections=conns)
        index = 0
        while True:
            try:
                _, stamp, data = next(it)
            except StopIteration:
                return
            except Exception as err:
                raise BagCorruptError(f"bag {bag} is corrupt after message {index} of {topic}: "
                                      f"{type(err).__name__}: {err}") from None
            yield stamp, typestore.deserialize_cdr(data, msgtype)
            index += 1
    finally:
        reader.close()


# -- JointState decoding ----------------------------------------------------------------------
class _JointStateDecoder:
    """Decodes messages into name-ordered arrays, caching the name→column mapping."""

    def __init__(self, bag: Path, topic: str, joint_names: Sequence[str] | None) -> None:
        self.bag, self.topic = bag, topic
        self.joint_names: list[str] | None = list(joint_names) if joint_names is not None else None
        self._last_names: list[str] | None = None
        self._cols: np.ndarray | None = None
        self._identity = False
        self._typestore = default_typestore()

    def forget_layout(self) -> None:
        """Drop the cached name mapping: after a message that could not be mapped (a joint
        missing), the next one must be mapped afresh, never read with stale columns."""
        self._last_names = None

    def _mapping(self, names: list[str], index: int) -> None:
        if len(set(names)) != len(names):
            raise ArrayLengthError(
                f"bag {self.bag} topic {self.topic} message {index}: duplicate joint names {names}"
            )
        if self.joint_names is None:
            self.joint_names = list(names)
        where = {n: i for i, n in enumerate(names)}
        missing = [j for j in self.joint_names if j not in where]
        if missing:
            err = MissingJointError(
                f"bag {self.bag} topic {self.topic} message {index}: joints {missing} missing "
                f"(message has {names})"
            )
            err.names = tuple(names)
            raise err
        self._cols = np.array([where[j] for j in self.joint_names], dtype=np.intp)
        self._identity = len(names) == len(self.joint_names) and bool(
            np.all(self._cols == np.arange(len(names)))
        )
        self._last_names = names

    def decode(self, index: int, data: bytes) -> tuple[int, list[np.ndarray]]:
        """Return (stamp_ns, [position, velocity, effort]) reordered to ``joint_names``."""
        stamp, names, values = self._deserialize(index, data)
        if names != self._last_names:
            self._mapping(names, index)
        return stamp, self._reorder(index, values)

    def _reorder(self, index: int, values: list[np.ndarray]) -> list[np.ndarray]:
        nn = len(self._last_names or ())
        out = []
        for field, arr in zip(_FIELDS, values):
            if arr.shape[0] == 0:
                out.append(arr)
                continue
            if arr.shape[0] != nn:
                raise ArrayLengthError(
                    f"bag {self.bag} topic {self.topic} message {index}: {field} has "
                    f"{arr.shape[0]} values for {nn} names"
                )
            out.append(arr if self._identity else arr[self._cols])
        return out

    def _deserialize(self, index: int, data: bytes) -> tuple[int, list[str], list[np.ndarray]]:
        try:
            # deserialize_cdr is typed ``object``; the type name fixes the class.
            msg = cast("JointStateMsg", self._typestore.deserialize_cdr(data, JOINT_STATE))
        except Exception as err:
            raise BagCorruptError(
                f"bag {self.bag} topic {self.topic} message {index} cannot be decoded: "
                f"{type(err).__name__}: {err}"
            ) from None
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        vals = [np.asarray(getattr(msg, f), dtype=np.float64) for f in _FIELDS]
        return stamp, list(msg.name), vals


def _check_stamps(
    stamps: np.ndarray, first_index: int, prev: int | None, bag: Path, topic: str
) -> None:
    full = stamps if prev is None else np.concatenate(([prev], stamps))
    offset = first_index if prev is None else first_index - 1
    diffs = np.diff(full)
    bad = np.flatnonzero(diffs <= 0)
    if bad.size:
        i = int(bad[0])
        a, b = int(full[i]), int(full[i + 1])
        where = f"bag {bag} topic {topic} messages {offset + i} and {offset + i + 1}"
        if a == b:
            raise DuplicateStampError(f"{where} have the same header stamp {a} ns")
        raise NonMonotonicStampError(f"{where}: header stamp goes back from {a} to {b} ns")


def _check_finite(
    fields: Sequence[tuple[str, np.ndarray]],
    names: Sequence[str],
    first_index: int,
    bag: Path,
    topic: str,
) -> None:
    """Raise on the earliest message holding a NaN/inf (any field), naming field and joint."""
    worst: tuple[int, int, str, int] | None = None
    for order, (field, arr) in enumerate(fields):
        bad = ~np.isfinite(arr)
        if bad.any():
            row, col = (int(x) for x in np.argwhere(bad)[0])
            if worst is None or (row, order) < (worst[0], worst[1]):
                worst = (row, order, field, col)
    if worst is not None:
        row, _, field, col = worst
        value = dict(fields)[field][row, col]
        raise NonFiniteValueError(
            f"bag {bag} topic {topic} message {first_index + row}: {field} of joint "
            f"{names[col]} is {value}"
        )


#: a CDR message's header stamp (sec, nanosec) right after its 4-byte encapsulation header
_STAMP = struct.Struct("<iI")

_REFUSAL: dict[str, type[BagError]] = {
    "non_finite": NonFiniteValueError, "zero_stamp": NonMonotonicStampError,
    "duplicate_stamp": DuplicateStampError, "backward_stamp": NonMonotonicStampError,
    "far_future_stamp": StampOrderError, "missing_joint": MissingJointError}


class _Screen:
    """The shared :class:`~sysid_ros._src.sample_screen.SampleScreen` applied to a bag: a skipped
    message is logged (or, with a refusing log, refused naming it); a persistent jump back and
    a changed joint set refuse the file."""

    def __init__(self, log: SkipLog, bag: Path, topic: str, entry: str = "joint") -> None:
        self.log, self.where = log, f"bag {bag} topic {topic}"
        self.screen = SampleScreen(log, entry=entry)

    def _refuse(self, index: int) -> None:
        if self.log.refuse:
            kind, detail = self.screen.kind, self.screen.detail
            raise _REFUSAL[kind](f"{self.where} message {index}: {kind.replace('_', ' ')}"
                                 + (f", {detail}" if detail else "") + " (--strict)")

    def missing_joint(self, index: int, data: bytes, err: MissingJointError) -> None:
        try:
            sec, nsec = _STAMP.unpack_from(data, 4)
            stamp = sec * 1_000_000_000 + nsec
        except struct.error:
            stamp = 0
        detail = str(err).split(": ", 1)[-1]
        if self.screen.missing_joint(stamp, detail, err.names, index) == JOINT_SET_CHANGED:
            raise MissingJointError(
                f"{self.where} message {index}: the joint set changed for good ({PERSISTENT} "
                f"messages in a row: {detail}): another robot's stream or a cut recording; "
                "split it or name the topic of this robot")
        self._refuse(index)

    def accept(self, index: int, stamp: int, fields: Sequence[tuple[str, np.ndarray]],
               names: Sequence[str], kept: list[int]) -> bool:
        """Whether to keep the message; ``kept`` (the stamps kept and not yet handed on) loses
        its last one when the screen finds it out of line."""
        verdict = self.screen.check(stamp, fields, names, index)
        if verdict == RETRACT and kept:
            kept.pop()
            return True
        if verdict in (RESTART, RETRACT):
            raise NonMonotonicStampError(
                f"{self.where} message {index}: time jumped back persistently ({PERSISTENT} "
                "messages in a row behind the last accepted stamp): two recordings in one "
                "file? split it")
        if verdict == SKIP:
            self._refuse(index)
            return False
        return True


class _Chunk:
    """The rows of the chunk being read, and what carries across chunk boundaries (the last
    stamp, the first message's index, the fields present, the messages kept so far)."""

    def __init__(self, bag: Path, topic: str, decoder: _JointStateDecoder) -> None:
        self.bag, self.topic, self.decoder = bag, topic, decoder
        # Fields whose presence is decided by the first message: empty there = absent throughout.
        self.present: list[bool] | None = None
        self.prev_stamp: int | None = None
        self.rows: list[list[np.ndarray]] = [[], [], []]
        self.stamps: list[int] = []
        self.first = 0
        self.done = 0

    def decide_fields(self, index: int, values: Sequence[np.ndarray],
                      require: Sequence[str]) -> list[bool]:
        """The first message decides which fields are present; a required one must be."""
        self.present = [v.shape[0] > 0 for v in values]
        for field, ok in zip(_FIELDS, self.present):
            if field in require and not ok:
                raise ArrayLengthError(
                    f"bag {self.bag} topic {self.topic} message {index}: {field} is empty"
                )
        return self.present

    def screened(self, screen: _Screen, index: int, stamp: int,
                 values: Sequence[np.ndarray]) -> bool:
        """Whether the screen keeps this message; a kept one it finds out of line is taken
        back out of the chunk."""
        assert self.present is not None
        n_kept = len(self.stamps)
        if not screen.accept(
                index, stamp, [(f, v) for f, v, ok in zip(_FIELDS, values, self.present) if ok],
                self.decoder.joint_names or [], self.stamps):
            return False
        if len(self.stamps) < n_kept:        # the last kept message was out of line
            for k in range(len(_FIELDS)):
                if self.present[k]:
                    self.rows[k].pop()
            self.done -= 1
        return True

    def add(self, index: int, stamp: int, values: Sequence[np.ndarray]) -> None:
        assert self.present is not None
        for k, v in enumerate(values):
            if self.present[k] != (v.shape[0] > 0):
                raise ArrayLengthError(
                    f"bag {self.bag} topic {self.topic} message {index}: {_FIELDS[k]} has "
                    f"{v.shape[0]} values, expected {len(self.decoder.joint_names or ())}"
                )
            if self.present[k]:
                self.rows[k].append(v)
        self.stamps.append(stamp)
        self.done += 1

    def flush(self) -> JointStateSeries:
        """The chunk as a validated series; the next chunk starts empty."""
        assert self.decoder.joint_names is not None and self.present is not None
        names = tuple(self.decoder.joint_names)
        st = np.asarray(self.stamps, dtype=np.int64)
        _check_stamps(st, self.first, self.prev_stamp, self.bag, self.topic)
        fields: list[np.ndarray | None] = [
            (np.vstack(self.rows[k]) if self.rows[k] else np.empty((0, len(names))))
            if self.present[k] else None
            for k in range(len(_FIELDS))
        ]
        _check_finite(
            [(f, a) for f, a in zip(_FIELDS, fields) if a is not None], names, self.first,
            self.bag, self.topic
        )
        series = JointStateSeries(st * 1e-9, st, names, *fields)
        self.prev_stamp = int(st[-1])
        self.first += len(self.stamps)
        self.rows, self.stamps = [[], [], []], []
        return series


def iter_joint_states(
    bag_path: str | os.PathLike[str],
    topic: str = "/joint_states",
    joint_names: Sequence[str] | None = None,
    *,
    chunk_size: int = 50_000,
    require: Sequence[str] = _FIELDS,
    progress: ProgressCallback | None = None,
    skip: SkipLog | None = None,
) -> Iterator[JointStateSeries]:
    """Yield a bag's JointStates as consecutive validated :class:`JointStateSeries` chunks.

    Memory stays bounded by ``chunk_size`` rows; stamps are checked across chunk boundaries too.
    Arguments are those of :func:`read_joint_states`.
    """
    bag = Path(bag_path)
    topic = _norm_topic(topic)
    unknown = set(require) - set(_FIELDS)
    if unknown:
        raise ValueError(f"require must name fields of {_FIELDS}, got {sorted(unknown)}")
    reader = open_bag(bag)
    try:
        conns, total = _connections(reader, bag, topic, JOINT_STATE)
        if total == 0:
            raise EmptyTopicError(f"topic {topic} in bag {bag} has no messages")
        decoder = _JointStateDecoder(bag, topic, joint_names)
        chunk = _Chunk(bag, topic, decoder)
        screen = None if skip is None else _Screen(skip, bag, topic)
        for index, data in _raw_messages(reader, bag, conns):
            if screen is None:
                stamp, values = decoder.decode(index, data)
            else:
                try:
                    stamp, values = decoder.decode(index, data)
                except MissingJointError as err:
                    decoder.forget_layout()
                    screen.missing_joint(index, data, err)
                    continue
            if chunk.present is None:
                chunk.decide_fields(index, values, require)
            if screen is not None and not chunk.screened(screen, index, stamp, values):
                continue
            chunk.add(index, stamp, values)
            if len(chunk.stamps) >= chunk_size:
                yield chunk.flush()
                if progress is not None:
                    progress(chunk.done, total)
        if chunk.stamps:
            yield chunk.flush()
        if progress is not None:
            progress(chunk.done, total)
        if chunk.done == 0:
            if skip is not None and skip.total:
                raise EmptyTopicError(f"topic {topic} in bag {bag}: every message was skipped "
                                      f"({skip.describe()})")
            raise EmptyTopicError(f"topic {topic} in bag {bag} has no messages")
    finally:
        reader.close()


def read_joint_states(
    bag_path: str | os.PathLike[str],
    topic: str = "/joint_states",
    joint_names: Sequence[str] | None = None,
    *,
    require: Sequence[str] = _FIELDS,
    progress: ProgressCallback | None = None,
    chunk_size: int = 50_000,
    skip: SkipLog | None = None,
) -> JointStateSeries:
    """Read a bag's ``sensor_msgs/JointState`` topic into arrays ordered by ``joint_names``.

    Args:
        bag_path: rosbag2 directory (MCAP or sqlite3, single or split) or a storage file.
        topic: topic name (leading ``/`` optional).
        joint_names: column order; default = the names of the first message.
        require: fields that must be present (non-empty) in every message.
        progress: called as ``progress(done, total)`` every ``chunk_size`` messages and at end.
        chunk_size: validation/progress granularity in messages.
        skip: when given, bad messages of the kinds in :mod:`~sysid_ros._src.sample_screen` are left
            out and counted there instead of raising (a persistent jump back still raises).

    Raises:
        BagNotFoundError, BagCorruptError, TopicNotFoundError, TopicTypeError, EmptyTopicError,
        MissingJointError, NonFiniteValueError, DuplicateStampError, NonMonotonicStampError,
        ArrayLengthError: all subclasses of :class:`~sysid_ros._src.bagio.errors.BagError`.
    """
    parts = list(
        iter_joint_states(
            bag_path, topic, joint_names, chunk_size=chunk_size, require=require, progress=progress,
            skip=skip,
        )
    )
    if len(parts) == 1:
        return parts[0]

    def cat(name: str) -> np.ndarray | None:
        arrs = [getattr(p, name) for p in parts]
        return None if arrs[0] is None else np.concatenate(arrs)

    return JointStateSeries(
        np.concatenate([p.t for p in parts]), np.concatenate([p.stamps_ns for p in parts]),
        parts[0].names, cat("position"), cat("velocity"), cat("effort"),
    )


def read_imu(
    bag_path: str | os.PathLike[str],
    topic: str = "/imu",
    *,
    progress: ProgressCallback | None = None,
    skip: SkipLog | None = None,
) -> ImuSeries:
    """Read a ``sensor_msgs/Imu`` topic; same checks as :func:`read_joint_states`, and with
    ``skip`` the same bad-message policy (the IMU's values are its orientation, angular
    velocity and linear acceleration)."""
    bag = Path(bag_path)
    topic = _norm_topic(topic)
    reader = open_bag(bag)
    typestore = default_typestore()
    screen = None if skip is None else _Screen(skip, bag, topic, entry="axis")
    try:
        conns, total = _connections(reader, bag, topic, IMU)
        stamps: list[int] = []
        rows: list[list[float]] = []
        for index, data in _raw_messages(reader, bag, conns):
            try:
                # deserialize_cdr is typed ``object``; the type name fixes the class.
                m = cast("ImuMsg", typestore.deserialize_cdr(data, IMU))
            except Exception as err:
                raise BagCorruptError(
                    f"bag {bag} topic {topic} message {index} cannot be decoded: {err}"
                ) from None
            stamp = m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
            o, w, a = m.orientation, m.angular_velocity, m.linear_acceleration
            row = [o.x, o.y, o.z, o.w, w.x, w.y, w.z, a.x, a.y, a.z]
            if screen is not None:
                v = np.asarray(row, dtype=np.float64)
                fields = [("orientation", v[0:4]), ("angular_velocity", v[4:7]),
                          ("linear_acceleration", v[7:10])]
                n_kept = len(stamps)
                if not screen.accept(index, stamp, fields, "xyzw", stamps):
                    continue
                if len(stamps) < n_kept:        # the last kept message was out of line
                    rows.pop()
            stamps.append(stamp)
            rows.append(row)
            if progress is not None and (index + 1) % 10_000 == 0:
                progress(index + 1, total)
        if not stamps:
            detail = f": every message was skipped ({skip.describe()})" if skip and skip.total \
                else " has no messages"
            raise EmptyTopicError(f"topic {topic} in bag {bag}{detail}")
        if progress is not None:
            progress(len(stamps), total)
    finally:
        reader.close()
    st = np.asarray(stamps, dtype=np.int64)
    _check_stamps(st, 0, None, bag, topic)
    arr = np.asarray(rows, dtype=np.float64)
    labels = ["orientation.x", "orientation.y", "orientation.z", "orientation.w",
              "angular_velocity.x", "angular_velocity.y", "angular_velocity.z",
              "linear_acceleration.x", "linear_acceleration.y", "linear_acceleration.z"]
    bad = ~np.isfinite(arr)
    if bad.any():
        at, col = (int(x) for x in np.argwhere(bad)[0])
        raise NonFiniteValueError(f"bag {bag} topic {topic} message {at}: {labels[col]} is "
                                  f"{arr[at, col]}")
    return ImuSeries(st * 1e-9, st, arr[:, 0:4].copy(), arr[:, 4:7].copy(), arr[:, 7:10].copy())

