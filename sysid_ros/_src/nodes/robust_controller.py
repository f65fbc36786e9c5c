"""``robust_controller``: lifecycle shell over ``control.controller_runtime.ControllerRuntime`` (states,
steady-clock watchdogs, self-deactivation on stale input, diagnostics; law: ``control.controller``;
admission and certificates: ``control.admission``). It only translates messages, parameters
(``PARAMETERS`` → ``ControllerSettings``; config/robust_controller.yaml, docs/reference/parameters.md) and
timers (all on the STEADY clock: a dead /clock cannot silence them). Sub ``joint_states``, bounds,
trajectories; pub commands, /diagnostics, ~/tracking_error, ~/state, ~/admitted_trajectory."""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from sysid_ros._src.control.errors import ControlError, TrajectoryError
from sysid_ros._src.control.controller_runtime import (ERROR, STATE_LABELS, WARN, ControllerRuntime,
                                       ControllerSettings, Status, build_runtime)
from sysid_ros._src.model.errors import ModelError
from sysid_ros._src.nodes._common import run_node
from sysid_ros._src.nodes.threads import realtime_loop
from sysid_ros._src.cdr import Float64ArrayEncoder, JointStateDecoder
from sysid_ros._src.nodes.qos import (CONTROL_SENSOR_QOS, DIAGNOSTICS_QOS, LATCHED_QOS, TRAJECTORY_QOS,
                                 command_qos)
from sysid_ros._src.nodes.messages import (MessageError, bounds_from_msg, diagnostics_msg,
                                      trajectory_from_msg)
from sysid_ros._src.nodes.params import declare
from sysid_ros._src.nodes.robust_controller_params import PARAMETERS

__all__ = ["PARAMETERS", "RobustControllerNode", "STATE_LABELS", "trajectory_from_msg", "main"]


class RobustControllerNode(LifecycleNode):
    """Lifecycle node wrapping ``ControllerRuntime`` (module doc)."""

    def __init__(self, argv: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__("robust_controller", **kwargs)
        self._params = declare(self, PARAMETERS)
        self.rt: ControllerRuntime | None = None
        self._io: list[tuple[str, Any]] = []
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._unconfigured = (WARN, "unconfigured")
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        if self._params["autostart"]:
            if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                self.trigger_activate()

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            s = ControllerSettings.from_mapping(self._params)
            self.rt = build_runtime(s, bool(self.get_parameter("use_sim_time").value),
                                    time.monotonic())
        except (ModelError, ControlError) as exc:
            self._unconfigured = (ERROR, f"configure failed: {exc}")
            self.get_logger().error(self._unconfigured[1])
            self._publish_status()
            return TransitionCallbackReturn.FAILURE
        # joint_states in, commands out as CDR bytes: rclpy's message objects cost ~4x the law
        self._n, self._decoder = 0, JointStateDecoder(self.rt.robot.joint_names, need_effort=False)
        self._encoder, self._err_enc, self._state_enc = (
            Float64ArrayEncoder(), Float64ArrayEncoder("e,de"), Float64ArrayEncoder(",".join(STATE_LABELS)))
        pub, sub = self.create_publisher, self.create_subscription
        self.cmd_pub = pub(Float64MultiArray, s.command_topic, command_qos(s.command_reliability))
        self.err_pub, self.state_pub, self.adm_pub = (
            pub(Float64MultiArray, "~/tracking_error", 10), pub(Float64MultiArray, "~/state", 10),
            pub(JointTrajectory, "~/admitted_trajectory", TRAJECTORY_QOS))
        timers = [(s.watchdog_period, self._on_watchdog), (s.diagnostics_period, self._on_period),
                  *([(1.0 / s.timer_rate, self._on_timer)] if s.publish_on == "timer" else [])]
        self._io = [("pub", p) for p in (self.cmd_pub, self.err_pub, self.state_pub, self.adm_pub)]
        self._io += [("sub", sub(JointState, s.joint_states_topic, self._on_joint_states,
                                 CONTROL_SENSOR_QOS, raw=True)),
                     ("sub", sub(Float64MultiArray, s.bounds_topic, self._on_bounds, LATCHED_QOS)),
                     ("sub", sub(JointTrajectory, s.trajectory_topic, self._on_trajectory,
                                 TRAJECTORY_QOS))]
        self._io += [("timer", self.create_timer(period, cb, clock=self._steady))
                     for period, cb in timers]
        self.get_logger().info(f"configured: {self.rt.robot.name}, {s}")
        self.rt.scheduling, refusals = realtime_loop(s.realtime_priority)  # runs each callback
        for why in refusals:
            self.get_logger().warning(f"realtime_priority: {why}; normal priority")
        self._publish_status()
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        why = self.rt.activate(time.monotonic()) if self.rt else "not configured"
        if why:
            self.get_logger().error(why)
        self._publish_status()
        return TransitionCallbackReturn.FAILURE if why else super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self.rt is not None:
            self.rt.deactivate()
        self._publish_status()
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState | None = None) -> TransitionCallbackReturn:
        destroy: dict[str, Any] = {"pub": self.destroy_publisher, "timer": self.destroy_timer,
                                   "sub": self.destroy_subscription}
        for kind, handle in self._io:
            destroy[kind](handle)
        self._io, self.rt, self._unconfigured = [], None, (WARN, "unconfigured")
        return TransitionCallbackReturn.SUCCESS

    on_shutdown = on_cleanup

    # -- inputs -----------------------------------------------------------------------------
    @property
    def _rt(self) -> ControllerRuntime:
        assert self.rt is not None, "callback of an unconfigured node"   # only then wired
        return self.rt

    def _ros_now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_joint_states(self, data: bytes) -> None:
        try:
            js = self._decoder.decode(data)
        except MessageError as exc:
            self._rt.joint_state_rejected(str(exc))
            return self._flush()
        stamp = js.stamp_ns * 1e-9 or self._ros_now()
        self._send(self._rt.joint_state(time.monotonic(), stamp, js.q, js.dq))

    def _on_timer(self) -> None:
        self._send(self._rt.command(time.monotonic()))

    def _on_bounds(self, msg: Float64MultiArray) -> None:
        try:
            self._rt.bounds(time.monotonic(), bounds_from_msg(msg, self._rt.robot.ee_joint))
        except MessageError as exc:
            self._rt.bounds_rejected(str(exc))
        self._flush()

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            traj, error = trajectory_from_msg(msg, self._rt.robot.joint_names), ""
        except TrajectoryError as exc:
            traj, error = None, str(exc)
        if self._rt.trajectory(self._ros_now(), traj, msg.header.frame_id, error).accepted:
            self.adm_pub.publish(msg)     # what it tracks (a rejected one leaves no trace here)
        self._flush()

    def _on_watchdog(self) -> None:
        action = self._rt.tick(time.monotonic(), self._ros_now())
        self._flush()
        if action is not None:
            (self.trigger_deactivate if action.kind == "deactivate" else self.trigger_activate)()

    def _on_period(self) -> None:
        self._publish_status()
        self._rt.end_period()

    # -- output -----------------------------------------------------------------------------
    def _send(self, out: Any) -> None:
        if out is None:
            return
        t0 = time.perf_counter()
        self.cmd_pub.publish(self._encoder.encode(out.tau))
        self._n += 1
        if self._n % self._rt.settings.debug_decimation == 0 or out.clipped:
            self.err_pub.publish(self._err_enc.encode(np.concatenate([out.e, out.de])))
            self.state_pub.publish(self._state_enc.encode(self._rt.state_vector(
                out, time.perf_counter() - t0)))

    def _flush(self) -> None:
        """Log the runtime's events and, if there were any, report the status at once."""
        events = self.rt.pop_log() if self.rt is not None else []
        log = self.get_logger()
        for level, message in events:
            # rclpy binds one severity per call site, hence three calls
            if level == ERROR:
                log.error(message)
            elif level == WARN:
                log.warning(message)
            else:
                log.info(message)
        if events:
            self._publish_status()

    def _publish_status(self) -> None:
        rt = self.rt
        st = rt.status(time.monotonic()) if rt is not None else Status(*self._unconfigured, {})
        self._diag_pub.publish(diagnostics_msg(
            f"{self.get_name()}: robust controller", rt.robot.name if rt is not None else "",
            ("ok", "warn", "error")[st.level], st.message, st.values,
            self.get_clock().now().to_msg()))


def main(args: list[str] | None = None) -> int:
    return run_node(lambda _argv: RobustControllerNode(), args)


if __name__ == "__main__":
    raise SystemExit(main())
