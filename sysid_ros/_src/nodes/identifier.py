"""``identifier`` node: joint_states → sound payload bounds (docs/theory/identification.md, "
"docs/theory/ros-interfaces.md#ros-2-interfaces).

Subscribes ``joint_states`` (and for a floating base such as ``b1_z1`` the trunk IMU on ``imu``,
docs/theory/identification.md#floating-base-the-standing-b1--z1); every ``update_period`` a
worker thread updates the box from the buffered
samples (:class:`~sysid_ros._src.identification.identifier_runtime.IdentifierRuntime`), so callbacks never wait
for an LP. Publishes ``/sysid/payload_bounds`` and ``/sysid/payload_inertia`` (latched, only
while ok: an inconsistent update keeps the last sound box and raises an ERROR diagnostic) and
``/diagnostics``. ``~/reset`` (std_srvs/Trigger) starts over for a new payload. A message that
cannot be used is counted and reported, never fatal.

Bad samples X
too): NaN/inf values, zero, duplicate, isolated backward and far-future stamps and messages
without one of the robot's joints are dropped and counted by kind on ``/diagnostics``; only
``stamp_restart_samples`` consecutive stamps behind the last accepted one (a replay loop, a
simulator restart) restart the windows — the box is kept; a joint set that changed for good is
an ERROR diagnostic until the robot's joints come back.

Windows follow the stream's rate (``window_s``, split at gaps > ``max_sample_gap``). The
diagnostic (``IdentifierRuntime.report``) says why there is no box (insufficient data;
inconsistent: the noise scale needed, per joint, the worst spans) and WARNs for a box pinned to
the prior's face. ``lp-cuts`` with ``tighten_period`` > 0: a second thread runs the cut rounds
on a snapshot and publishes the intersected box. Both workers run ``worker_nice`` lower.
Parameters: ``PARAMETERS`` (docs/reference/parameters.md); optional ones left out take the robot file's
``identification`` section (docs/theory/identification.md)."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from sysid_ros._src.identification import OnlineIdentifier, load_identification_config
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.nodes._common import run_node
from sysid_ros._src.nodes.threads import lower_thread_priority
from sysid_ros._src.nodes.qos import DIAGNOSTICS_QOS, LATCHED_QOS, SENSOR_STREAM_QOS
from sysid_ros._src.cdr import (JointStateDecoder, MessageError, MissingJointsError, imu_reading,
                           joint_state_layout)
from sysid_ros._src.nodes.messages import bounds_to_msg, diagnostics_msg, inertia_from_theta
from sysid_ros._src.nodes.identifier_params import PARAMETERS, identification_overrides
from sysid_ros._src.nodes.params import declare

__all__ = ["IdentifierNode", "main"]
DIAG_NAME = "sysid_ros/identifier"


class IdentifierNode(Node):
    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("identifier")
        p = declare(self, PARAMETERS)
        self.robot = load_robot(p["robot"], p["robot_config"], p["calibration"])
        # parameters left out keep the robot file's identification section (or, with
        # hardware_like, the simulated driver's profile)
        self.config = load_identification_config(self.robot,
                                                 **identification_overrides(self.robot, p))
        method = p["method"]
        self.period, self.tighten_period = p["update_period"], p["tighten_period"]
        background = method == "lp-cuts" and self.tighten_period > 0
        self.ident = OnlineIdentifier(self.robot, self.config, method=method,
                                      point_estimate=p["point_estimate"],
                                      background_cuts=background,
                                      restart_after=p["stamp_restart_samples"])
        self.rt = IdentifierRuntime(self.ident, self.config)
        self._publish_lock = threading.Lock()
        self.frame = self.robot.ee_joint
        pub = self.create_publisher
        self.bounds_pub = pub(Float64MultiArray, "/sysid/payload_bounds", LATCHED_QOS)
        self.inertia_pub = pub(InertiaStamped, "/sysid/payload_inertia", LATCHED_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        # raw CDR in (no rclpy msgs); NaN/inf reach the runtime's screen, which counts them
        self._decoder = JointStateDecoder(self.robot.joint_names, finite=False)
        self.create_subscription(JointState, "joint_states", self._on_joint_state,
                                 SENSOR_STREAM_QOS, raw=True)
        if self.robot.floating_base:
            self.create_subscription(Imu, "imu", self._on_imu, SENSOR_STREAM_QOS, raw=True)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self._stop, self._worker_nice = threading.Event(), p["worker_nice"]
        loops = [(self._update, self.period)] + [(self._tighten, self.tighten_period)] * background
        self._threads = [threading.Thread(target=self._loop, args=loop, daemon=True)
                         for loop in loops]
        for thread in self._threads:
            thread.start()

    # -- callbacks: cheap, never block on the solver -------------------------------------------
    def _on_joint_state(self, data: bytes) -> None:
        try:
            js = self._decoder.decode(data)
        except MissingJointsError as err:
            try:
                layout = joint_state_layout(data)
            except MessageError:
                self.rt.joint_state_rejected(str(err))
                return
            names = tuple(n.decode(errors="replace") for n in layout.names)
            self.rt.joint_state_missing(layout.stamp_ns * 1e-9, str(err), names)
            return
        except MessageError as err:
            self.rt.joint_state_rejected(str(err))
            return
        self.rt.joint_state(js.stamp_ns * 1e-9, js.q, js.dq, js.tau)

    def _on_imu(self, data: bytes) -> None:
        try:
            stamp_ns, gyro, specific_force = imu_reading(data)
        except MessageError as err:
            self.rt.reject(f"imu: {err}")
            return
        self.rt.imu(stamp_ns * 1e-9, gyro, specific_force)

    def _on_reset(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        self.rt.request_reset()
        resp.success, resp.message = True, "identifier reset to the prior box"
        return resp

    # -- workers: box updates, and cut rounds with lp-cuts ------------------------------------
    def _loop(self, step: Callable[[], None], period: float) -> None:
        # A box update is worth less than a sample: the old box stays sound, a lost sample is
        # lost (HiGHS solves release the GIL: the intake thread is not held up by them).
        if why := lower_thread_priority(self._worker_nice):
            self.get_logger().warning(f"worker_nice not applied: {why}")
        while not self._stop.wait(period):
            try:
                step()
            except Exception as err:   # keep the node alive; report instead
                self.rt.reject(f"internal error: {type(err).__name__}: {err}")

    def _update(self) -> None:
        out = self.rt.update()
        if out.publish:
            self._publish_bounds()
        if out.became_inconsistent:
            self.get_logger().error("data inconsistent with the noise/model bounds; keeping the "
                                    "last sound box (call ~/reset)")
        self._publish_diagnostics()

    def _tighten(self) -> None:
        if self.rt.tighten():
            self._publish_bounds()

    def _publish_bounds(self) -> None:
        with self._publish_lock:        # worker and tightener both publish
            box = self.rt.box()
            if box is None:
                return
            self.bounds_pub.publish(bounds_to_msg(box))
            msg = InertiaStamped()
            msg.header.stamp = self.get_clock().now().to_msg()
            msg.header.frame_id = self.frame
            msg.inertia = inertia_from_theta(box.nominal)
            self.inertia_pub.publish(msg)

    def _publish_diagnostics(self) -> None:
        r = self.rt.report()
        self.diag_pub.publish(diagnostics_msg(DIAG_NAME, self.robot.name, r.level, r.message,
                                              r.values, self.get_clock().now().to_msg()))

    def on_shutdown(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5.0)


def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: IdentifierNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
