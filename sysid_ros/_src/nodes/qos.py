"""QoS profiles of the suite's topics (docs/theory/ros-interfaces.md#topics-types-and-qos), "
"defined once and looked up by a topic's
last name segment (:func:`qos_for_topic`), so remapped names keep them."""
from __future__ import annotations

import os

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

__all__ = ["SENSOR_QOS", "SENSOR_STREAM_QOS", "STREAM_DEPTH", "CONTROL_SENSOR_QOS", "LATCHED_QOS",
           "TRAJECTORY_QOS", "COMMAND_QOS", "COMMAND_BEST_EFFORT_QOS", "command_qos", "DIAGNOSTICS_QOS",
           "CLOCK_QOS", "qos_for_topic", "PUBLICATION_MODE_ENV", "prefer_async_publication"]

#: joint_states, imu for nodes that only need a recent value (planner, markers): best effort,
#: keep last 5 (rclpy's sensor-data profile).
SENSOR_QOS: QoSProfile = qos_profile_sensor_data
#: joint_states, imu for nodes that need EVERY sample (identifier, recorder): best effort (a
#: reliable reader would not match the sensor publishers), keep last 10000 = 10 s at 1 kHz
#: (≈ 3 MB), so a reader whose callbacks are held up — the process descheduled on a busy
#: machine, or a worker thread holding the GIL through a multi-second LP update — catches up
#: instead of losing samples. Measured on the loaded 2-core machine, a bare 1 kHz subscriber
#: with use_sim_time received 65 % at depth 5, 98-99 % at depth 1000 and 100 % at depth 10000.
STREAM_DEPTH = 10000
SENSOR_STREAM_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=STREAM_DEPTH,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)
#: joint_states for the controller: only the newest state may produce a command (a backlog of
#: older states would produce commands from stale measurements).
CONTROL_SENSOR_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)
#: /sysid/payload_bounds, /sysid/payload_inertia: late joiners get the last value.
LATCHED_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
#: /sysid/desired_trajectory.
TRAJECTORY_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: /effort_controller/commands: only the newest command matters. Reliable by default because
#: ros2_control's forward controllers subscribe reliable (a best-effort writer would not match).
COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: the same topic where no reliable reader must be served (the controller's
#: ``command_reliability: best_effort``; the simulator subscribes with it, which matches writers
#: of either kind): a publish to two readers over shared memory took 57-63 µs median against
#: 94-118 µs reliable (same machine, alternating runs).
COMMAND_BEST_EFFORT_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)


def command_qos(reliability: str) -> QoSProfile:
    """The commands' QoS for the controller's ``command_reliability`` (reliable/best_effort)."""
    return COMMAND_QOS if reliability == "reliable" else COMMAND_BEST_EFFORT_QOS
#: /diagnostics (ROS default profile).
DIAGNOSTICS_QOS = QoSProfile(depth=10)
#: /clock: reliable publishers match both rclpy's best-effort time source and reliable users.
CLOCK_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

_BY_BASENAME: dict[str, QoSProfile] = {
    "joint_states": SENSOR_QOS,
    "imu": SENSOR_QOS,
    "payload_bounds": LATCHED_QOS,
    "payload_inertia": LATCHED_QOS,
    "desired_trajectory": TRAJECTORY_QOS,
    "commands": COMMAND_QOS,
    "diagnostics": DIAGNOSTICS_QOS,
    "clock": CLOCK_QOS,
}


def qos_for_topic(topic: str, default: QoSProfile | None = None) -> QoSProfile:
    """The docs/theory/ros-interfaces.md#topics-types-and-qos QoS of a topic, by its last name "
    "segment (remapped names keep
    working)."""
    return _BY_BASENAME.get(topic.rstrip("/").rsplit("/", 1)[-1], default or QoSProfile(depth=10))


#: rmw_fastrtps's switch between synchronous and asynchronous writers (process-wide, read once
#: when the process creates its participant).
PUBLICATION_MODE_ENV = "RMW_FASTRTPS_PUBLICATION_MODE"


def prefer_async_publication() -> str:
    """Make this process's writers asynchronous unless the user set the mode; call before
    ``rclpy.init``. Returns the mode in force.

    Why, for the 1 kHz simulator: a synchronous write delivers to every reader in the writer's
    thread, and each reader it wakes preempts that thread on a busy machine. A joint_states
    publish to the sim graph's four readers took 558-621 µs median (p99 1.2-1.7 ms) on the
    2-core machine, half of the 1 ms period, in the thread that paces the physics and with the
    GIL held; asynchronous, 37 µs median (p99 4 ms: the writer waits for Fast DDS's delivery
    thread now and then). The delivery still happens, on Fast DDS's thread, outside Python; the
    samples wait in the writer's history meanwhile, so an asynchronous writer needs a deep one
    (``SENSOR_STREAM_QOS``: keep last 5 lost 7.5 % of joint_states for every reader).
    rmw_fastrtps's default (synchronous, the lower latency) stays for every other node.
    """
    return os.environ.setdefault(PUBLICATION_MODE_ENV, "ASYNCHRONOUS")
