"""Replay node: publish a bag's topics (``sysid-replay``, ``ros2 run sysid_ros replay``).

A shell over :class:`sysid_ros._src.bagio.Player`, which owns the schedule (bag receive times divided
by ``rate``, or back to back with ``fast``; ``start_offset``; ``loop``; which bag times go out as
``/clock``) and states its assumptions. This node creates the publishers, sends the stored
serialized CDR as is, and with ``clock`` publishes ``/clock`` (rosgraph_msgs/Clock) from the bag
times so ``use_sim_time`` nodes follow the bag — at each loop that time jumps back to the bag
start (intended; downstream nodes handle the jump). When not looping the node exits once the bag
is done; a bad bag or a pass with nothing to play exits with code 1.

Publishing runs in a worker thread with its own sleep schedule (rclpy timers are too coarse for
kHz data); the main thread only spins the node. Publisher QoS is reliable (it matches both
reliable and best-effort subscribers) with the durability of
docs/theory/ros-interfaces.md#topics-types-and-qos per topic.

Parameters: the table ``PARAMETERS`` below (rendered in docs/reference/parameters.md, visible with
``ros2 param describe``); config/replay.yaml may override them. A command-line option (``--rate`` …)
overrides the parameter of the same name and is checked against the same table entry.
"""
from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Sequence

from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from sysid_ros._src.bagio import BagError, PlaybackOptions, Player
from sysid_ros._src.nodes._common import import_msg_type, ns_to_stamp_fields, run_node
from sysid_ros._src.nodes.threads import sleep_until
from sysid_ros._src.nodes.qos import CLOCK_QOS, qos_for_topic
from sysid_ros._src.nodes.cli_overrides import add_options, overlay
from sysid_ros._src.param_table import defaults_of
from sysid_ros._src.nodes.params import Param, ParameterError, declare

__all__ = ["PARAMETERS", "ReplayNode", "main", "parse_args"]

_PUB_DEPTH = 100
_SUBSCRIBER_WAIT = 10.0  # s: wait_subscribers gives up after this, then publishes anyway

_PLAYBACK = defaults_of(PlaybackOptions)     # the library's defaults: the node's too
PARAMETERS = (
    Param("bag", "string", "bag directory or .mcap/.db3 file to publish (required, here or as "
          "the positional argument)"),
    Param("rate", "double", "time scale of the recorded spacing (2.0 = twice as fast)", _PLAYBACK["rate"],
          (1e-3, 1e3)),
    Param("loop", "bool", "replay forever; bag (and /clock) time jumps back at each pass", _PLAYBACK["loop"]),
    Param("start_offset", "double", "bag time skipped at the start of every pass", _PLAYBACK["start_offset"],
          (0.0, float("inf")), unit="s"),
    Param("clock", "bool", "publish /clock from the bag times (a recorded /clock is then not "
          "replayed)", False),
    Param("clock_hz", "double", "maximum /clock rate, in bag time", 1000.0, (1e-3, 1e6),
          unit="Hz"),
    Param("fast", "bool", "publish back to back, ignoring the recorded spacing", _PLAYBACK["fast"]),
    Param("topics", "string[]", "topics to publish (absent or empty: every topic of the bag)"),
    Param("delay", "double", "wall time to wait before publishing (discovery)", 0.0,
          (0.0, 3600.0), unit="s"),
    Param("wait_subscribers", "int", "before publishing, wait (up to 10 s) until every topic has "
          "this many subscribers (0: do not wait)", 0, (0, 1000)),
)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="sysid-replay", description="Publish a rosbag2 bag's topics.")
    p.add_argument("bag", nargs="?", help="bag directory or .mcap/.db3 file")
    add_options(p, PARAMETERS, ("rate", "loop", "start_offset", "clock", "clock_hz", "fast",
                                "topics", "delay", "wait_subscribers"))
    return p.parse_args(list(argv))


class ReplayNode(Node):
    """Publishes a bag; sets :attr:`finished` when done (not looping) so :func:`run_node` exits."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("replay")
        p = overlay(PARAMETERS, declare(self, PARAMETERS), vars(parse_args(argv)))
        if p["bag"] is None:
            raise ParameterError("node replay: no bag given (positional BAG or parameter 'bag')")
        self.bag: str = p["bag"]
        self.options = PlaybackOptions(rate=p["rate"], start_offset=p["start_offset"],
                                       fast=p["fast"], loop=p["loop"],
                                       clock_hz=p["clock_hz"] if p["clock"] else None)
        self.delay: float = p["delay"]
        self.wait_subscribers: int = p["wait_subscribers"]
        # Opens the bag now, so a bad bag fails at start-up (BagError).
        self.player = Player(self.bag, self.options, p["topics"],
                             exclude=["/clock"] if p["clock"] else ())
        self._pubs: dict[str, Publisher] = {}
        for topic, msgtype in self.player.topics.items():
            try:
                cls = import_msg_type(msgtype)
            except (ImportError, ValueError) as err:
                self.get_logger().warning(f"not replaying {topic} [{msgtype}]: {err}")
                continue
            self._pubs[topic] = self.create_publisher(cls, topic, self._qos(topic))
        self.player.restrict(self._pubs)
        self._clock_pub = self.create_publisher(Clock, "/clock", CLOCK_QOS) if p["clock"] else None

        self.finished = threading.Event()
        self.exit_code = 0
        self.published = 0
        self.loops = 0
        self._stop = threading.Event()
        o = self.options
        self.get_logger().info(
            f"replaying {sorted(self._pubs)} from {self.bag} "
            f"({'as fast as possible' if o.fast else f'rate {o.rate}'}"
            f"{', loop' if o.loop else ''}{', /clock' if p['clock'] else ''})"
        )
        self._thread = threading.Thread(target=self._run, name="replay", daemon=True)
        self._thread.start()

    @staticmethod
    def _qos(topic: str) -> QoSProfile:
        design = qos_for_topic(topic)
        return QoSProfile(
            depth=max(design.depth, 1) if design.durability == DurabilityPolicy.TRANSIENT_LOCAL
            else _PUB_DEPTH,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=design.durability,
        )

    # -- worker ---------------------------------------------------------------------------
    def _wait_for_subscribers(self) -> None:
        deadline = time.monotonic() + _SUBSCRIBER_WAIT
        while not self._stop.is_set() and time.monotonic() < deadline:
            if all(p.get_subscription_count() >= self.wait_subscribers
                   for p in self._pubs.values()):
                return
            self._stop.wait(0.02)
        self.get_logger().warning("not every topic has its subscribers; publishing anyway")

    def _emit(self, topic: str, data: bytes, _t_ns: int) -> None:
        self._pubs[topic].publish(data)
        self.published += 1

    def _emit_clock(self, t_ns: int) -> None:
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = ns_to_stamp_fields(t_ns)
        assert self._clock_pub is not None
        self._clock_pub.publish(msg)

    def _run(self) -> None:
        try:
            if self.wait_subscribers > 0:
                self._wait_for_subscribers()
            if self.delay > 0:
                self._stop.wait(self.delay)
            stats = self.player.run(self._emit, self._stop,
                                    lambda t: sleep_until(t, self._stop),
                                    emit_clock=self._emit_clock if self._clock_pub else None)
            self.loops = stats.passes
        except BagError as err:
            self.get_logger().error(str(err))
            self.exit_code = 1
        except Exception as err:  # a publish after shutdown, etc.
            if not self._stop.is_set():
                self.get_logger().error(f"replay failed: {type(err).__name__}: {err}")
                self.exit_code = 1
        finally:
            if not self._stop.is_set():
                self.get_logger().info(f"replay done: {self.published} messages")
            self.finished.set()

    def on_shutdown(self) -> None:
        """Stop the worker before the node (and its publishers) are destroyed."""
        self._stop.set()
        self._thread.join(timeout=2.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point ``sysid-replay`` / ``replay``."""
    return run_node(ReplayNode, argv)


if __name__ == "__main__":
    raise SystemExit(main())
