"""Recorder node: topics → chunked rosbag2 bag (``sysid-record``, ``ros2 run sysid_ros recorder``).

Subscribes with *serialized* (raw CDR) subscriptions, so messages go to the bag untouched, and
writes them with :class:`sysid_ros._src.bagio.BagWriter`, whose chunking keeps every chunk closed before
a ``SIGKILL`` readable. SIGINT/SIGTERM drain queued messages and close the bag (nothing received
is lost). Topics are a fixed list or, with none given, every topic discovered while running.

Subscription QoS adapts to the publishers (like ``ros2 bag record``): best effort if any publisher
is best effort (a reliable subscription would not match it), transient local only if every
publisher is (so latched values such as the payload bounds are recorded), and a deep queue.

Parameters: the table ``PARAMETERS`` below (rendered in docs/reference/parameters.md, visible with
``ros2 param describe``); config/recorder.yaml may override them. A command-line option (``-o``,
``--topics`` …) overrides the parameter of the same name and is checked against the same table
entry.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
from collections.abc import Sequence

from rclpy.node import Node
from rclpy.clock import Clock, ClockType
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from sysid_ros._src.bagio import STORAGES, BagError, BagWriter, default_typestore
from sysid_ros._src.bagio.playback import normalise_topics
from sysid_ros._src.nodes._common import import_msg_type, run_node
from sysid_ros._src.nodes.qos import STREAM_DEPTH
from sysid_ros._src.nodes.cli_overrides import add_options, overlay
from sysid_ros._src.param_table import defaults_of
from sysid_ros._src.nodes.params import Param, declare

__all__ = ["PARAMETERS", "RecorderNode", "main", "parse_args"]

_QUEUE_DEPTH = STREAM_DEPTH     # 10 s at 1 kHz: a busy recorder catches up instead of dropping
# Never record the graph's own bookkeeping topics when recording "everything".
_SKIP_ALWAYS = {"/parameter_events", "/rosout"}

_WRITER = defaults_of(BagWriter)     # the library's defaults: the node's too
PARAMETERS = (
    Param("output", "string", "bag directory to create (absent: rosbag2_<date> inside "
          "output_dir, so a launch can be re-run)"),
    Param("output_dir", "string", "where the time-stamped bag is created when output is absent",
          "."),
    Param("topics", "string[]", "topics to record (absent or empty: every topic discovered "
          "while running, except /parameter_events and /rosout)"),
    Param("storage", "string", "rosbag2 storage plugin", _WRITER["storage"], choices=tuple(sorted(STORAGES))),
    Param("chunk_seconds", "double", "close a chunk (readable after a SIGKILL) once it is this "
          "old (wall clock)", _WRITER["chunk_seconds"], (1e-3, 3600.0), unit="s"),
)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="sysid-record", description="Record topics to a rosbag2 bag.")
    add_options(p, PARAMETERS, ("output", "topics", "storage", "chunk_seconds"), {"output": "-o"})
    return p.parse_args(list(argv))


class RecorderNode(Node):
    """Generic-subscription recorder writing a chunked bag."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("recorder")
        p = overlay(PARAMETERS, declare(self, PARAMETERS), vars(parse_args(argv)))
        output = p["output"] or os.path.join(
            p["output_dir"], _dt.datetime.now().strftime("rosbag2_%Y_%m_%d-%H_%M_%S"))
        self._wanted = normalise_topics(p["topics"] or ())
        self._all = not self._wanted
        storage, chunk = p["storage"], p["chunk_seconds"]
        self._typestore = default_typestore()
        self.writer = BagWriter(output, storage=storage, chunk_seconds=chunk).open()
        self._subs: dict[str, object] = {}
        self._skipped: set[str] = set()
        self.received = 0
        self._last_log_time = 0
        self.get_logger().info(
            f"recording {'all topics' if self._all else sorted(self._wanted)} to {output} "
            f"({storage}, chunks of {chunk} s)"
        )
        self._discover()
        # Discovery and chunk flushing are wall-clock duties: with use_sim_time a ROS-time timer
        # would stand still until /clock runs, and a simulator waiting for subscribers never
        # starts it.
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.25, self._discover, clock=steady)
        # Closes chunks while no message arrives, so an idle recorder's data is still committed.
        self.create_timer(min(chunk / 4.0, 0.25), self.writer.flush_if_due, clock=steady)

    def _qos_for(self, topic: str) -> QoSProfile:
        infos = self.get_publishers_info_by_topic(topic)
        reliable = bool(infos) and all(
            i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos
        )
        latched = bool(infos) and all(
            i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos
        )
        return QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=_QUEUE_DEPTH,
            reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
        )

    def _discover(self) -> None:
        """Subscribe to wanted topics once a publisher (hence their type) is known."""
        for topic, types in self.get_topic_names_and_types():
            if topic in self._subs or topic in self._skipped:
                continue
            if self._all:
                if topic in _SKIP_ALWAYS:
                    continue
            elif topic not in self._wanted:
                continue
            if not self.get_publishers_info_by_topic(topic):
                continue  # only subscribers so far: wait for a publisher to know its QoS
            msgtype = types[0]
            try:
                cls = import_msg_type(msgtype)
                self.writer.add_topic(topic, msgtype)
            except (ImportError, ValueError, BagError) as err:
                self.get_logger().warning(f"not recording {topic} [{msgtype}]: {err}")
                self._skipped.add(topic)
                continue
            self._subs[topic] = self.create_subscription(
                cls, topic, self._make_callback(topic, msgtype), self._qos_for(topic), raw=True
            )
            self.get_logger().info(f"subscribed to {topic} [{msgtype}]")

    def _make_callback(self, topic: str, msgtype: str):
        writer = self.writer

        def callback(data: bytes) -> None:
            # Receive time on the node clock: wall time, or /clock time under use_sim_time
            # (0 until the first /clock). Never mix in another clock, and keep log times
            # monotone, so replay and readers see the order in which messages arrived.
            stamp = max(self.get_clock().now().nanoseconds, self._last_log_time)
            self._last_log_time = stamp
            writer.write_raw(topic, msgtype, data, stamp)
            self.received += 1

        return callback

    def on_shutdown(self) -> None:
        """Close the bag (called by :func:`run_node` after draining queued messages)."""
        self.writer.close()
        self.get_logger().info(
            f"recorded {self.writer.message_count} messages in {self.writer.chunks_closed} "
            f"chunk(s) to {self.writer.path}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point ``sysid-record`` / ``recorder``."""
    return run_node(RecorderNode, argv)


if __name__ == "__main__":
    raise SystemExit(main())
