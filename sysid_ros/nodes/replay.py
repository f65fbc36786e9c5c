"""Replay node: publish a bag's topics (``sysid-replay``, ``ros2 run sysid_ros replay``).

Messages are published as stored (serialized CDR) with their original spacing of bag receive
times divided by ``rate``, or back to back with ``fast``. ``start_offset`` skips the first seconds.
``loop`` replays forever; with ``clock`` the node also publishes ``/clock`` (rosgraph_msgs/Clock)
from the bag times, so ``use_sim_time`` nodes follow the bag — and at each loop that time jumps
back to the bag start (intended; downstream nodes handle the jump). When not looping the node
exits once the bag is done.

Publishing runs in a worker thread with its own sleep schedule (rclpy timers are too coarse for
kHz data); the main thread only spins the node. Publisher QoS is reliable (it matches both
reliable and best-effort subscribers) with the durability of docs/design.md §7.1 per topic.

ROS parameters (CLI options override them): ``bag``, ``rate``, ``loop``, ``start_offset``,
``clock``, ``fast``, ``topics``, ``clock_hz``, ``delay``, ``wait_subscribers``.
"""
from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Sequence

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from sysid_ros.bagio import BagError, open_bag
from sysid_ros.nodes._common import (
    CLOCK_QOS,
    declare_string_list,
    import_msg_type,
    ns_to_stamp_fields,
    qos_for_topic,
    run_node,
    sleep_until,
)

__all__ = ["ReplayNode", "main", "parse_args"]

_PUB_DEPTH = 100


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="sysid-replay", description="Publish a rosbag2 bag's topics.")
    p.add_argument("bag", nargs="?", help="bag directory or .mcap/.db3 file")
    p.add_argument("--rate", type=float, help="time scale (default 1.0 = original timing)")
    p.add_argument("--loop", action="store_true", default=None, help="replay forever")
    p.add_argument("--start-offset", type=float, help="skip the first S seconds of the bag")
    p.add_argument("--clock", action="store_true", default=None, help="publish /clock from bag time")
    p.add_argument("--clock-hz", type=float, help="max /clock publish rate (default 1000)")
    p.add_argument("--fast", action="store_true", default=None, help="publish as fast as possible")
    p.add_argument("--topics", nargs="*", help="topics to publish (default all)")
    p.add_argument("--delay", type=float, help="wait S seconds before publishing (discovery)")
    p.add_argument("--wait-subscribers", type=int,
                   help="before publishing, wait (up to 10 s) until every topic has N subscribers")
    return p.parse_args(list(argv))


class ReplayNode(Node):
    """Publishes a bag; sets :attr:`finished` when done (not looping) so :func:`run_node` exits."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("replay")
        a = parse_args(argv)
        decl = {
            "bag": "", "rate": 1.0, "loop": False, "start_offset": 0.0, "clock": False,
            "clock_hz": 1000.0, "fast": False, "delay": 0.0, "wait_subscribers": 0,
        }
        for name, default in decl.items():
            self.declare_parameter(name, default)
        param_topics = declare_string_list(self, "topics")

        def pick(cli: object, name: str) -> object:
            return cli if cli is not None else self.get_parameter(name).value

        self.bag = str(pick(a.bag, "bag"))
        if not self.bag:
            raise ValueError("no bag given (positional BAG or parameter 'bag')")
        self.rate = float(pick(a.rate, "rate"))
        if self.rate <= 0:
            raise ValueError(f"rate must be > 0, got {self.rate}")
        self.loop = bool(pick(a.loop, "loop"))
        self.start_offset = float(pick(a.start_offset, "start_offset"))
        self.clock = bool(pick(a.clock, "clock"))
        self.clock_period_ns = int(1e9 / float(pick(a.clock_hz, "clock_hz")))
        self.fast = bool(pick(a.fast, "fast"))
        self.delay = float(pick(a.delay, "delay"))
        self.wait_subscribers = int(pick(a.wait_subscribers, "wait_subscribers"))
        topics = a.topics if a.topics else param_topics
        wanted = {t if t.startswith("/") else "/" + t for t in topics}

        self.finished = threading.Event()
        self.exit_code = 0
        self.published = 0
        self.loops = 0
        self._stop = threading.Event()
        reader = open_bag(self.bag)  # fail early (BagError) on a bad bag
        self._conns = [
            c for c in reader.connections
            if (not wanted or c.topic in wanted) and not (self.clock and c.topic == "/clock")
        ]
        reader.close()
        self._pubs: dict[str, object] = {}
        for c in self._conns:
            if c.topic in self._pubs:
                continue
            try:
                cls = import_msg_type(c.msgtype)
            except (ImportError, ValueError) as err:
                self.get_logger().warning(f"not replaying {c.topic} [{c.msgtype}]: {err}")
                continue
            self._pubs[c.topic] = self.create_publisher(cls, c.topic, self._qos(c.topic))
        self._clock_pub = self.create_publisher(Clock, "/clock", CLOCK_QOS) if self.clock else None
        self._conns = [c for c in self._conns if c.topic in self._pubs]
        self.get_logger().info(
            f"replaying {sorted(self._pubs)} from {self.bag} "
            f"({'as fast as possible' if self.fast else f'rate {self.rate}'}"
            f"{', loop' if self.loop else ''}{', /clock' if self.clock else ''})"
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
        deadline = time.monotonic() + 10.0
        while not self._stop.is_set() and time.monotonic() < deadline:
            if all(p.get_subscription_count() >= self.wait_subscribers for p in self._pubs.values()):
                return
            self._stop.wait(0.02)
        self.get_logger().warning("not every topic has its subscribers; publishing anyway")

    def _run(self) -> None:
        try:
            if self.wait_subscribers > 0:
                self._wait_for_subscribers()
            if self.delay > 0:
                self._stop.wait(self.delay)
            while not self._stop.is_set():
                self._play_once()
                self.loops += 1
                if not self.loop:
                    break
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

    def _play_once(self) -> None:
        reader = open_bag(self.bag)
        try:
            start_ns = reader.start_time + int(self.start_offset * 1e9)
            wall0 = time.monotonic()
            last_clock = None
            for conn, ts, data in reader.messages(connections=self._conns, start=start_ns):
                if self._stop.is_set():
                    return
                if not self.fast:
                    sleep_until(wall0 + (ts - start_ns) * 1e-9 / self.rate, self._stop)
                if self._clock_pub is not None and (
                    last_clock is None or ts - last_clock >= self.clock_period_ns or ts < last_clock
                ):
                    sec, nsec = ns_to_stamp_fields(ts)
                    msg = Clock()
                    msg.clock.sec, msg.clock.nanosec = sec, nsec
                    self._clock_pub.publish(msg)
                    last_clock = ts
                self._pubs[conn.topic].publish(bytes(data))
                self.published += 1
        finally:
            reader.close()

    def on_shutdown(self) -> None:
        """Stop the worker before the node (and its publishers) are destroyed."""
        self._stop.set()
        self._thread.join(timeout=2.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point ``sysid-replay`` / ``replay``."""
    return run_node(ReplayNode, argv)


if __name__ == "__main__":
    raise SystemExit(main())
