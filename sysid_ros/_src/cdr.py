"""Raw CDR codec of the 1 kHz messages (``sensor_msgs/JointState``, ``Imu`` and the
``Float64MultiArray`` commands in; commands, ``JointState``/``Clock``/``Imu`` out), so the
control loop's nodes skip rclpy's Python message objects: a raw subscription hands over the
serialized bytes and ``Publisher.publish`` sends ``bytes`` as they are. bench.bench_controller
measures both paths per message: a JointState decoded here costs a third to a half of rclpy's
deserialisation + ``messages.joint_state_arrays``, a command encoded here about a tenth of
rclpy's. No rclpy import: the codec is tested against rclpy's own serialisation and fuzzed alone.

Wire format (OMG XCDR1, what ROS 2 Jazzy's Fast DDS and rmw_serialize write): a 4-byte
encapsulation header (``00 01`` little-endian, ``00 00`` big-endian; two option bytes, ignored)
then the body, whose alignment is counted from the end of the header: primitives aligned to their
size (float64 to 8), a string = uint32 length including the NUL + bytes + NUL, a sequence = uint32
count + elements (an empty sequence is not padded to its element alignment). Padding bytes may
hold anything, and trailing bytes after the message are allowed (rmw_serialize over-allocates).

Errors: :class:`CdrError` (bytes that are not the message), :class:`JointStateError` (a valid
message the controller cannot use), both :class:`MessageError`; the checks and their messages are
the ones of ``messages.joint_state_arrays``, which shares them.
"""
from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from sysid_ros._src.errors import SysidError

__all__ = ["CdrError", "ClockEncoder", "Float64ArrayEncoder", "ImuEncoder", "JointStateDecoder",
           "JointStateEncoder", "JointStateError", "JointStateLayout", "JointStateSample",
           "MessageError", "MissingJointsError", "check_lengths", "float64_multi_array_data",
           "imu_reading", "joint_state_layout", "name_order", "ordered_arrays"]


class MessageError(SysidError, ValueError):
    """A ROS message that cannot be used (malformed bounds array, joint state, …)."""


class JointStateError(MessageError):
    """A JointState that cannot be used: missing joints, wrong array lengths, NaN/inf."""


class MissingJointsError(JointStateError):
    """A valid JointState without one of the expected joints (a gripper's own stream, another
    robot's): the nodes count it as a ``missing_joint`` sample (``sysid_ros._src.sample_screen``)."""


class CdrError(MessageError):
    """Serialized bytes that are not a valid CDR encoding of the expected message type."""


# -- validation shared with the rclpy-message path (messages.joint_state_arrays) ----------------
def check_lengths(n: int, n_pos: int, n_vel: int, n_eff: int, need_effort: bool) -> None:
    """Array lengths of a JointState with ``n`` names. Raises JointStateError."""
    if n and n_vel == 0:
        raise JointStateError("no velocities (empty velocity array); they are never assumed "
                              "zero — publish them or estimate them upstream")
    if n_pos != n or n_vel != n or (need_effort and n_eff != n):
        raise JointStateError(f"array lengths name={n} position={n_pos} velocity={n_vel} "
                              f"effort={n_eff} disagree")


def name_order(names: Sequence[str], joint_names: Sequence[str]) -> np.ndarray:
    """Indices of ``joint_names`` in the message's ``names``. Raises JointStateError."""
    index = {name: i for i, name in enumerate(names)}
    if len(index) != len(names):
        raise JointStateError("duplicate joint names")
    missing = [j for j in joint_names if j not in index]
    if missing:
        raise MissingJointsError(f"missing joints {missing}")
    return np.array([index[j] for j in joint_names], dtype=np.intp)


def ordered_arrays(order: np.ndarray, pos: np.ndarray, vel: np.ndarray, eff: np.ndarray,
                   joint_names: Sequence[str], need_effort: bool,
                   finite: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q̇, τ) in ``joint_names`` order (τ zeros unless ``need_effort``), all finite unless
    ``finite`` is False (a caller that screens samples itself); native float64 copies. Raises
    JointStateError naming the joints of a NaN/inf."""
    q = pos[order].astype(np.float64, copy=False)
    dq = vel[order].astype(np.float64, copy=False)
    tau = eff[order].astype(np.float64, copy=False) if need_effort else np.zeros(len(order))
    if not finite:
        return q, dq, tau
    for label, arr in (("position", q), ("velocity", dq), ("effort", tau)):
        bad = ~np.isfinite(arr)
        if bad.any():
            raise JointStateError(
                f"non-finite {label} for {[joint_names[int(i)] for i in np.flatnonzero(bad)]}")
    return q, dq, tau


# -- reading ----------------------------------------------------------------------------------
_HEADER = 4
_LE_HEADER = b"\x00\x01\x00\x00"
_U32 = {"<": struct.Struct("<I"), ">": struct.Struct(">I")}
_STAMP = {"<": struct.Struct("<iI"), ">": struct.Struct(">iI")}
_F64 = {"<": np.dtype("<f8"), ">": np.dtype(">f8")}


def _byte_order(data: bytes) -> str:
    """'<' or '>' from the encapsulation header; CdrError for anything but plain CDR."""
    if len(data) < _HEADER:
        raise CdrError(f"{len(data)} bytes: shorter than the 4-byte CDR encapsulation header")
    if data[0] != 0 or data[1] > 1:
        raise CdrError(f"unsupported CDR encapsulation 0x{data[0]:02x}{data[1]:02x}: only plain "
                       "CDR (XCDR1, 0x0000 big-endian / 0x0001 little-endian) is decoded")
    return "<" if data[1] else ">"


def _u32(data: bytes, off: int, order: str, what: str) -> int:
    """uint32 at body offset ``off`` (already aligned); CdrError if the bytes end first."""
    if off + 4 > len(data) - _HEADER:
        raise CdrError(f"truncated: {len(data)} bytes end inside the {what}")
    value: int = _U32[order].unpack_from(data, _HEADER + off)[0]
    return value


def _string(data: bytes, off: int, order: str, what: str) -> tuple[bytes, int]:
    """(bytes without the NUL, body offset after it) of the string whose length is at ``off``.
    Length 0 reads as the empty string (Fast CDR writes it so)."""
    length = _u32(data, off, order, f"{what} length")
    start = off + 4
    end = start + length
    if end > len(data) - _HEADER:
        raise CdrError(f"truncated: {what} of {length} bytes runs past the end ({len(data)} "
                       "bytes)")
    if length == 0:
        return b"", end
    raw = data[_HEADER + start:_HEADER + end - 1]
    if data[_HEADER + end - 1] != 0 or b"\0" in raw:
        raise CdrError(f"{what} is not a NUL-terminated string")
    return raw, end


def _float64s(data: bytes, off: int, order: str, what: str) -> tuple[np.ndarray, int]:
    """(float64 sequence as a read-only view of ``data``, body offset after it); ``off`` is where
    its count may start (aligned to 4 here, the elements to 8)."""
    off = (off + 3) & ~3
    count = _u32(data, off, order, f"{what} count")
    off += 4
    if count == 0:
        return np.empty(0), off
    off = (off + 7) & ~7
    if off + 8 * count > len(data) - _HEADER:
        raise CdrError(f"truncated: {what} of {count} float64 runs past the end ({len(data)} "
                       "bytes)")
    return np.frombuffer(data, _F64[order], count, _HEADER + off), off + 8 * count


def float64_multi_array_data(data: bytes) -> np.ndarray:
    """``std_msgs/Float64MultiArray`` bytes → its ``data`` (native float64 copy; the layout is
    checked for well-formedness, not interpreted). Raises CdrError."""
    order = _byte_order(data)
    off = 0
    n_dims = _u32(data, off, order, "layout.dim count")
    if n_dims > (len(data) - _HEADER) // 12:     # a dim takes ≥ 12 bytes: a bound before looping
        raise CdrError(f"layout.dim count {n_dims} exceeds the {len(data)} bytes")
    off += 4
    for k in range(n_dims):
        _, off = _string(data, (off + 3) & ~3, order, f"layout.dim[{k}].label")
        off = ((off + 3) & ~3) + 8               # size, stride
    off = ((off + 3) & ~3)
    _u32(data, off, order, "layout.data_offset")
    values, _ = _float64s(data, off + 4, order, "data")
    return values.astype(np.float64)


def imu_reading(data: bytes) -> tuple[int, np.ndarray, np.ndarray]:
    """``sensor_msgs/Imu`` bytes → (stamp ns, angular velocity, linear acceleration), native
    float64 copies (orientation and covariances are not read). Raises CdrError."""
    order = _byte_order(data)
    if len(data) < _HEADER + 12:
        raise CdrError(f"truncated: {len(data)} bytes end inside the header")
    sec, nanosec = _STAMP[order].unpack_from(data, _HEADER)
    _, off = _string(data, 8, order, "header.frame_id")
    off = (off + 7) & ~7        # orientation 4, covariance 9, angular velocity 3, covariance 9,
    if off + 8 * 37 > len(data) - _HEADER:      # linear acceleration 3, covariance 9 float64
        raise CdrError(f"truncated: {len(data)} bytes end inside the Imu's vectors")
    values = np.frombuffer(data, _F64[order], 37, _HEADER + off).astype(np.float64)
    return sec * 1_000_000_000 + nanosec, values[13:16], values[25:28]


class JointStateLayout(NamedTuple):
    """Where the parts of one ``sensor_msgs/JointState`` lie in its bytes (offsets absolute in
    ``data``): what a reader of many messages with one layout (a bag) caches and reuses."""
    stamp_ns: int
    names: tuple[bytes, ...]                  # raw names, without their NULs
    arrays: tuple[tuple[int, int], ...]       # (elements' offset, count): position, velocity, effort
    counts_at: tuple[int, ...]                # offset of each array's count


def joint_state_layout(data: bytes) -> JointStateLayout:
    """Walk a JointState's bytes once (either byte order; the stamp in it). Raises CdrError
    for bytes that are not a JointState."""
    order = _byte_order(data)
    if len(data) < _HEADER + 12:
        raise CdrError(f"truncated: {len(data)} bytes end inside the header")
    sec, nanosec = _STAMP[order].unpack_from(data, _HEADER)
    _, off = _string(data, 8, order, "header.frame_id")
    off = (off + 3) & ~3
    count = _u32(data, off, order, "name count")
    if count > (len(data) - _HEADER - off) // 4:         # ≥ 4 bytes each: bound the loop
        raise CdrError(f"name count {count} exceeds the {len(data)} bytes")
    off += 4
    names = []
    for k in range(count):
        name, off = _string(data, (off + 3) & ~3, order, f"name[{k}]")
        names.append(name)
    arrays, counts_at = [], []
    for what in ("position", "velocity", "effort"):
        counts_at.append(_HEADER + ((off + 3) & ~3))
        values, off = _float64s(data, off, order, what)
        arrays.append((_HEADER + off - 8 * values.size, values.size))
    return JointStateLayout(sec * 1_000_000_000 + nanosec, tuple(names), tuple(arrays),
                            tuple(counts_at))


class JointStateSample(NamedTuple):
    """A decoded JointState in the robot's joint order (τ zeros unless the effort was needed)."""
    stamp_ns: int
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray


#: a name block's error, kept as (class, message)
_NameError = tuple[type[JointStateError], str]
#: distinct name blocks remembered per decoder (a publisher normally sends one forever)
_NAME_CACHE = 16


class JointStateDecoder:
    """``sensor_msgs/JointState`` CDR bytes → :class:`JointStateSample` with the checks of
    ``messages.joint_state_arrays`` (same errors, same messages) plus CdrError for bytes that
    are not a JointState. The name → index mapping is cached by the raw name bytes; the last
    name block is compared in place first (padding bytes excluded: publishers leave them
    uninitialised), so a steady stream builds no strings."""

    def __init__(self, joint_names: Sequence[str], need_effort: bool = True,
                 finite: bool = True) -> None:
        self.joint_names = tuple(joint_names)
        self.need_effort, self.finite = need_effort, finite
        # (body offset of the name block, raw names) → order, or the names' error
        self._cache: dict[tuple[int, tuple[bytes, ...]], np.ndarray | _NameError] = {}
        # the last block: (start, [(absolute offset, bytes)] without padding, end, count, order)
        self._last: tuple[int, list[tuple[int, bytes]], int, int,
                          np.ndarray | _NameError] | None = None

    def decode(self, data: bytes) -> JointStateSample:
        order = _byte_order(data)
        if len(data) < _HEADER + 12:
            raise CdrError(f"truncated: {len(data)} bytes end inside the header")
        sec, nanosec = _STAMP[order].unpack_from(data, _HEADER)
        _, off = _string(data, 8, order, "header.frame_id")
        n, names, off = self._names(data, (off + 3) & ~3, order)
        pos, off = _float64s(data, off, order, "position")
        vel, off = _float64s(data, off, order, "velocity")
        eff, off = _float64s(data, off, order, "effort")
        check_lengths(n, len(pos), len(vel), len(eff), self.need_effort)
        if isinstance(names, tuple):    # a fresh error each time: a raised one keeps its frames
            raise names[0](names[1])
        q, dq, tau = ordered_arrays(names, pos, vel, eff, self.joint_names, self.need_effort,
                                    self.finite)
        return JointStateSample(sec * 1_000_000_000 + nanosec, q, dq, tau)

    def _names(self, data: bytes, start: int,
               order: str) -> tuple[int, np.ndarray | _NameError, int]:
        """(count, order or the names' error, body offset after the block)."""
        last = self._last
        if last is not None and last[0] == start:
            for at, part in last[1]:
                if not data.startswith(part, at):
                    break
            else:
                return last[3], last[4], last[2]
        count = _u32(data, start, order, "name count")
        if count > (len(data) - _HEADER - start) // 4:   # ≥ 4 bytes each: bound the loop
            raise CdrError(f"name count {count} exceeds the {len(data)} bytes")
        off, raw, parts = start + 4, [], [[_HEADER + start, _HEADER + start + 4]]
        for k in range(count):
            at = (off + 3) & ~3
            name, off = _string(data, at, order, f"name[{k}]")
            raw.append(name)
            if parts[-1][1] == _HEADER + at:       # no padding before it: one run
                parts[-1][1] = _HEADER + off
            else:
                parts.append([_HEADER + at, _HEADER + off])
        key = (start, tuple(raw))
        result = self._cache.get(key)
        if result is None:
            try:
                names = [r.decode() for r in raw]
            except UnicodeDecodeError as exc:
                raise CdrError(f"a joint name is not UTF-8: {exc}") from None
            try:
                result = name_order(names, self.joint_names)
            except JointStateError as exc:
                result = (type(exc), str(exc))
            if len(self._cache) >= _NAME_CACHE:
                self._cache.clear()
            self._cache[key] = result
        self._last = (start, [(a, bytes(data[a:b])) for a, b in parts], off, count, result)
        return count, result, off


# -- writing (little-endian, as every ROS 2 publisher) -----------------------------------------
def _pad(off: int, align: int) -> bytes:
    return b"\0" * (-off % align)


def _string_bytes(text: str, off: int) -> bytes:
    """Aligned CDR string at body offset ``off``."""
    raw = text.encode() + b"\0"
    return _pad(off, 4) + struct.pack("<I", len(raw)) + raw


def _f64_bytes(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values, dtype="<f8").tobytes()


class Float64ArrayEncoder:
    """``std_msgs/Float64MultiArray`` bytes with a fixed layout (none by default, as the effort
    commands; or one labelled dimension); the prefix is built once per length."""

    def __init__(self, label: str | None = None) -> None:
        self.label = label
        self._prefix: dict[int, bytes] = {}

    def encode(self, values: np.ndarray) -> bytes:
        n = len(values)
        prefix = self._prefix.get(n)
        if prefix is None:
            body = struct.pack("<I", 0 if self.label is None else 1)
            if self.label is not None:
                body += _string_bytes(self.label, len(body))
                body += _pad(len(body), 4) + struct.pack("<II", n, n)
            body += _pad(len(body), 4) + struct.pack("<II", 0, n)    # data_offset, count
            if n:
                body += _pad(len(body), 8)
            prefix = self._prefix[n] = _LE_HEADER + body
        return prefix + _f64_bytes(values)


def _stamped_header(frame_id: str) -> tuple[bytes, int]:
    """(encapsulation + std_msgs/Header bytes after the stamp, body offset after them)."""
    tail = _string_bytes(frame_id, 8)
    return tail, 8 + len(tail)


_LE_STAMP = struct.Struct("<4siI")


def _stamp(stamp_ns: int) -> bytes:
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return _LE_STAMP.pack(_LE_HEADER, sec, nanosec)


class ClockEncoder:
    """``rosgraph_msgs/Clock`` bytes."""

    @staticmethod
    def encode(stamp_ns: int) -> bytes:
        return _stamp(stamp_ns)


class JointStateEncoder:
    """``sensor_msgs/JointState`` bytes for fixed names (the name block is built once)."""

    def __init__(self, names: Sequence[str], frame_id: str = "") -> None:
        frame, off = _stamped_header(frame_id)
        block = _pad(off, 4) + struct.pack("<I", len(names))
        off += len(block)
        for name in names:
            part = _string_bytes(name, off)
            block += part
            off += len(part)
        self._fixed, self._off = frame + block, off

    def encode(self, stamp_ns: int, position: np.ndarray, velocity: np.ndarray | None,
               effort: np.ndarray) -> bytes:
        """``velocity`` None → an empty velocity sequence (a robot that does not publish it)."""
        parts, off = [_stamp(stamp_ns), self._fixed], self._off
        for values in (position, np.empty(0) if velocity is None else velocity, effort):
            head = _pad(off, 4) + struct.pack("<I", len(values))
            off += len(head)
            if len(values):
                head += _pad(off, 8)
                off += -off % 8 + 8 * len(values)
            parts += (head, _f64_bytes(values))
        return b"".join(parts)


class ImuEncoder:
    """``sensor_msgs/Imu`` bytes with zero covariances (what the simulator publishes)."""

    def __init__(self, frame_id: str) -> None:
        frame, off = _stamped_header(frame_id)
        self._fixed = frame + _pad(off, 8)
        self._zeros9 = bytes(72)

    def encode(self, stamp_ns: int, orientation_xyzw: np.ndarray, angular_velocity: np.ndarray,
               linear_acceleration: np.ndarray) -> bytes:
        z = self._zeros9
        return b"".join((_stamp(stamp_ns), self._fixed, _f64_bytes(orientation_xyzw), z,
                         _f64_bytes(angular_velocity), z, _f64_bytes(linear_acceleration), z))
