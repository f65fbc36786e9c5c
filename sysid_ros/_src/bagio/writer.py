"""Crash-tolerant rosbag2 writer (:class:`BagWriter`).

Design (why a bag survives ``SIGKILL``)
---------------------------------------
A rosbag2 storage file (MCAP or sqlite3) written by ``rosbags`` is only complete once it is
closed: MCAP writes its summary/index at the end, and the bag's ``metadata.yaml`` is written last.
A process killed mid-recording would therefore leave nothing readable. :class:`BagWriter` instead
records a *split bag*, the same layout ``ros2 bag record --max-bag-duration`` produces:

* messages go to a **chunk**: a complete rosbag2 bag written by ``rosbags.rosbag2.Writer`` into a
  hidden-by-convention staging directory ``<bag>/_partial_<k>/``;
* a chunk is closed when it is ``chunk_seconds`` old (wall clock, checked on every write and by
  :meth:`BagWriter.flush_if_due`, which an idle recorder calls from a timer) or holds
  ``chunk_messages`` messages;
* on close its storage file is fsync'ed and renamed to ``<bag>/<name>_<k>.mcap`` (or ``.db3``),
  then the bag's ``metadata.yaml`` is rewritten to list every closed chunk: written to a temporary
  file, fsync'ed and ``os.replace``d, so at every instant ``metadata.yaml`` is either the old or
  the new complete version.

After a ``SIGKILL`` the directory therefore holds a valid multi-file rosbag2 bag made of all chunks
closed before the kill (the staging directory of the open chunk is left over and ignored by
readers, which only open the files ``metadata.yaml`` lists). A normal :meth:`BagWriter.close`
closes the last chunk too, so nothing written is lost.

QoS profiles are not stored (the ``offered_qos_profiles`` lists are empty): replay derives QoS
from the topic (see :mod:`sysid_ros._src.nodes._common`), which keeps metadata and storage files
trivially consistent for every reader.
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import numpy as np
import yaml
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.errors import WriterError
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from .errors import BagWriteError

__all__ = ["BagWriter", "STORAGES", "default_typestore", "write_joint_state_arrays"]

#: Storage identifiers accepted by :class:`BagWriter` and their file suffixes.
STORAGES: dict[str, tuple[StoragePlugin, str]] = {
    "mcap": (StoragePlugin.MCAP, ".mcap"),
    "sqlite3": (StoragePlugin.SQLITE3, ".db3"),
}
# rosbag2 metadata version written by ROS 2 Jazzy.
_BAG_VERSION: Literal[9] = 9
# libyaml's loader/dumper where PyYAML was built with it (~6x the pure-Python ones)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _yaml_items(items: list[Any], indent: str) -> str:
    """``items`` as the entries of a block sequence nested at ``indent`` (each dumped once)."""
    text = yaml.dump(items, Dumper=_YAML_DUMPER, sort_keys=False, default_flow_style=False)
    return "".join(indent + line + "\n" for line in text.splitlines())

_TYPESTORE: Typestore | None = None


def default_typestore() -> Typestore:
    """The ROS 2 Jazzy message definitions shipped with ``rosbags`` (built once, shared)."""
    global _TYPESTORE
    if _TYPESTORE is None:
        _TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
    return _TYPESTORE


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class BagWriter:
    """Write a chunked rosbag2 bag (a directory readable by rosbag2 and ``rosbags``).

    Use as a context manager. Messages are given either deserialised (``rosbags`` typestore
    objects, :meth:`write`) or as CDR bytes with their type name (:meth:`write_raw`, what a
    recorder receives). Timestamps are rosbag2 receive times in integer nanoseconds.

    Args:
        path: bag directory to create (must not exist).
        storage: ``"mcap"`` (default, the rosbag2 default since Iron) or ``"sqlite3"``.
        chunk_seconds: close the current chunk once it is this old (wall clock); ``None``
            disables the age limit.
        chunk_messages: close the current chunk once it holds this many messages; ``None``
            disables the count limit.
        typestore: message definitions; defaults to ROS 2 Jazzy's.
        fsync: fsync chunk files and metadata so a power cut, not only a killed process, keeps
            the closed chunks.
        clock: monotonic clock in seconds (tests may inject one).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        storage: str = "mcap",
        chunk_seconds: float | None = 1.0,
        chunk_messages: int | None = None,
        typestore: Typestore | None = None,
        fsync: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if storage not in STORAGES:
            raise BagWriteError(f"unknown storage {storage!r}; expected one of {sorted(STORAGES)}")
        if chunk_seconds is not None and chunk_seconds <= 0:
            raise BagWriteError(f"chunk_seconds must be > 0, got {chunk_seconds}")
        if chunk_messages is not None and chunk_messages <= 0:
            raise BagWriteError(f"chunk_messages must be > 0, got {chunk_messages}")
        self.path = Path(path)
        self.storage = storage
        self.chunk_seconds = chunk_seconds
        self.chunk_messages = chunk_messages
        self.typestore = typestore or default_typestore()
        self.fsync = fsync
        self._clock = clock
        self._plugin, self._suffix = STORAGES[storage]
        # topic -> msgtype, in registration order (every chunk declares all known topics).
        self._topics: dict[str, str] = {}
        self._writer: Writer | None = None
        self._conns: dict[str, Any] = {}
        self._chunk_index = 0
        self._chunk_opened_at = 0.0
        self._chunk_count = 0
        self._closed_files: list[dict[str, Any]] = []
        # metadata.yaml's two per-chunk lists, each entry rendered once when its chunk closed:
        # rewriting every entry at every close made a long recording's closes O(chunks) in YAML
        # (0.59 s per close with pure-Python PyYAML at 600 chunks, i.e. after 10 min of 1-s
        # chunks) and the recorder fell behind its 1 kHz inflow
        self._paths_yaml: list[str] = []
        self._files_yaml: list[str] = []
        self._topic_counts: dict[str, int] = {}
        self._lock = threading.RLock()
        self._open = False
        self._finished = False
        self.message_count = 0

    # -- lifecycle -----------------------------------------------------------------------------
    def open(self) -> BagWriter:
        """Create the bag directory (fails if it exists, rosbag2 never overwrites)."""
        with self._lock:
            if self._open or self._finished:
                raise BagWriteError(f"bag {self.path} was already opened")
            try:
                self.path.mkdir(parents=True)
            except FileExistsError:
                raise BagWriteError(f"bag {self.path} exists already, not overwriting") from None
            self._open = True
            return self

    def __enter__(self) -> BagWriter:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Close even on error: whatever was written before the error is still worth keeping.
        self.close()

    @property
    def chunks_closed(self) -> int:
        """Number of chunk files listed in ``metadata.yaml``."""
        return len(self._closed_files)

    # -- writing -------------------------------------------------------------------------------
    def add_topic(self, topic: str, msgtype: str) -> None:
        """Declare a topic (optional: :meth:`write` declares topics on first use)."""
        with self._lock:
            known = self._topics.get(topic)
            if known is not None:
                if known != msgtype:
                    raise BagWriteError(
                        f"topic {topic} already recorded as {known}, cannot add it as {msgtype}"
                    )
                return
            if msgtype not in self.typestore.types:
                raise BagWriteError(f"message type {msgtype} of topic {topic} is unknown to the typestore")
            self._topics[topic] = msgtype
            self._topic_counts.setdefault(topic, 0)
            if self._writer is not None:
                self._add_connection(topic)

    def write(self, topic: str, msg: Any, timestamp_ns: int) -> None:
        """Serialise a typestore message (``msg.__msgtype__`` gives its type) and write it."""
        msgtype = getattr(msg, "__msgtype__", None)
        if msgtype is None:
            raise BagWriteError(f"cannot infer the message type of {type(msg).__name__} for {topic}")
        data = self.typestore.serialize_cdr(msg, msgtype)
        self.write_raw(topic, msgtype, bytes(data), timestamp_ns)

    def write_raw(self, topic: str, msgtype: str, data: bytes, timestamp_ns: int) -> None:
        """Write one CDR-serialised message received at ``timestamp_ns``."""
        with self._lock:
            if not self._open:
                raise BagWriteError(f"bag {self.path} is not open for writing")
            self.add_topic(topic, msgtype)
            if self._writer is None:
                self._open_chunk()
            assert self._writer is not None
            self._writer.write(self._conns[topic], int(timestamp_ns), data)
            self._chunk_count += 1
            self._topic_counts[topic] += 1
            self.message_count += 1
            if self._due():
                self.close_chunk()

    def flush_if_due(self) -> bool:
        """Close the current chunk if it reached its age/size limit; True if one was closed."""
        with self._lock:
            if self._writer is not None and self._due():
                self.close_chunk()
                return True
            return False

    def _due(self) -> bool:
        if self.chunk_messages is not None and self._chunk_count >= self.chunk_messages:
            return True
        return (
            self.chunk_seconds is not None
            and self._clock() - self._chunk_opened_at >= self.chunk_seconds
        )

    # -- chunks --------------------------------------------------------------------------------
    def _staging_dir(self, index: int) -> Path:
        return self.path / f"_partial_{index}"

    def _open_chunk(self) -> None:
        staging = self._staging_dir(self._chunk_index)
        if staging.exists():  # left over from an earlier crashed attempt with this index
            shutil.rmtree(staging)
        writer = Writer(staging, version=_BAG_VERSION, storage_plugin=self._plugin)
        try:
            writer.open()
        except WriterError as err:
            raise BagWriteError(f"cannot open chunk {staging}: {err}") from None
        self._writer = writer
        self._conns = {}
        for topic in self._topics:
            self._add_connection(topic)
        self._chunk_count = 0
        self._chunk_opened_at = self._clock()

    def _add_connection(self, topic: str) -> None:
        assert self._writer is not None
        self._conns[topic] = self._writer.add_connection(
            topic, self._topics[topic], typestore=self.typestore
        )

    def close_chunk(self) -> None:
        """Close the current chunk, move it into the bag and rewrite ``metadata.yaml``."""
        with self._lock:
            writer, self._writer = self._writer, None
            if writer is None:
                return
            index = self._chunk_index
            self._chunk_index += 1
            staging = self._staging_dir(index)
            writer.close()
            chunk_meta = yaml.load((staging / "metadata.yaml").read_text(),
                                   Loader=_YAML_LOADER)["rosbag2_bagfile_information"]
            src = staging / chunk_meta["relative_file_paths"][0]
            dst_name = f"{self.path.name}_{index}{self._suffix}"
            dst = self.path / dst_name
            if self.fsync:
                _fsync_path(src)
            os.replace(src, dst)
            shutil.rmtree(staging, ignore_errors=True)
            file_info = dict(chunk_meta["files"][0])
            file_info["path"] = dst_name
            self._closed_files.append(file_info)
            self._paths_yaml.append(_yaml_items([dst_name], "  "))
            self._files_yaml.append(_yaml_items([file_info], "  "))
            self._write_metadata(chunk_meta)

    def _write_metadata(self, chunk_meta: dict[str, Any]) -> None:
        """Atomically rewrite the bag's metadata.yaml to list every closed chunk."""
        files = self._closed_files
        nonempty = [f for f in files if f["message_count"] > 0]
        if nonempty:
            start = min(f["starting_time"]["nanoseconds_since_epoch"] for f in nonempty)
            end = max(
                f["starting_time"]["nanoseconds_since_epoch"] + f["duration"]["nanoseconds"]
                for f in nonempty
            )
        else:
            start = end = 0
        topics_meta = {
            t["topic_metadata"]["name"]: t["topic_metadata"]
            for t in chunk_meta["topics_with_message_count"]
        }
        closed_counts = self._closed_topic_counts()
        info = {
            "version": chunk_meta["version"],
            "storage_identifier": chunk_meta["storage_identifier"],
            "duration": {"nanoseconds": end - start},
            "starting_time": {"nanoseconds_since_epoch": start},
            "message_count": sum(f["message_count"] for f in files),
            "topics_with_message_count": [
                {"topic_metadata": topics_meta[name], "message_count": closed_counts[name]}
                for name in self._topics
                if name in topics_meta
            ],
            "compression_format": "",
            "compression_mode": "",
            "custom_data": None,
            "ros_distro": "jazzy",
        }
        # the fixed part dumped now, the two growing lists appended from their fragments
        text = (yaml.dump({"rosbag2_bagfile_information": info}, Dumper=_YAML_DUMPER,
                          sort_keys=False)
                + "  relative_file_paths:\n" + "".join(self._paths_yaml)
                + "  files:\n" + "".join(self._files_yaml))
        tmp = self.path / "metadata.yaml.tmp"
        with open(tmp, "w", encoding="utf8") as fh:
            fh.write(text)
            fh.flush()
            if self.fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, self.path / "metadata.yaml")

    def _closed_topic_counts(self) -> dict[str, int]:
        # Counts of every message written so far; only valid right after a chunk closed, when
        # nothing is pending in an open chunk (the only place this is called).
        return dict(self._topic_counts)

    def close(self) -> None:
        """Close the last chunk; a bag with no message still gets one (empty) chunk."""
        with self._lock:
            if not self._open:
                return
            if self._writer is None and not self._closed_files:
                self._open_chunk()
            self.close_chunk()
            self._open = False
            self._finished = True


def write_joint_state_arrays(path: str | os.PathLike[str], t: np.ndarray, q: np.ndarray,
                             dq: np.ndarray | None, tau: np.ndarray | None,
                             joint_names: list[str] | tuple[str, ...],
                             topic: str = "/joint_states", storage: str = "mcap",
                             progress: Callable[[int, int], None] | None = None) -> Path:
    """Samples (t (N,) s; q, q̇, τ (N, nj), q̇ and τ optional) as ``sensor_msgs/JointState``
    messages into a new rosbag2 directory ``path`` (header stamp = bag receive time = t; an
    empty array for an absent field); returns it. ``progress(done, total)`` is called every
    10,000 messages and at the end."""
    store = default_typestore()
    joint_state = store.types["sensor_msgs/msg/JointState"]
    header, stamp = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    names = list(joint_names)
    c = np.ascontiguousarray      # the CDR serialiser needs contiguous rows
    empty = np.empty(0)
    rows = [None if x is None else c(np.asarray(x, float)) for x in (q, dq, tau)]
    stamps = np.rint(np.asarray(t, float) * 1e9).astype(np.int64)
    with BagWriter(path, storage=storage, chunk_seconds=None) as writer:
        for i, ns in enumerate(stamps.tolist()):
            pos, vel, eff = (empty if r is None or r.shape[1] == 0 else r[i] for r in rows)
            writer.write(topic, joint_state(
                header=header(stamp=stamp(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000),
                              frame_id=""),
                name=names, position=pos, velocity=vel, effort=eff), ns)
            if progress is not None and (i + 1) % 10_000 == 0:
                progress(i + 1, stamps.size)
    if progress is not None:
        progress(stamps.size, stamps.size)
    return Path(path)
