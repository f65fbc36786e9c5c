"""``robust_controller``: lifecycle shell over ``control.runtime.ControllerRuntime`` (states,
steady-clock watchdogs, self-deactivation on stale input, diagnostics; law: ``control.controller``;
admission and certificates: ``control.admission``). It only translates messages, parameters
(``PARAMETERS`` → ``ControllerSettings``; config/robust_controller.yaml, docs/parameters.md)
and timers (all on the STEADY clock: a dead /clock cannot silence them). Sub ``joint_states``,
``/sysid/payload_bounds``, ``/sysid/desired_trajectory``; pub ``/effort_controller/commands``, ``/diagnostics``,
``~/tracking_error`` [e, ė], ``~/state`` (``STATE_LABELS``). Lifecycle: ``~/change_state``."""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from sysid_ros.control.controller import MODES
from sysid_ros.control.errors import ControlError, TrajectoryError
from sysid_ros.control.runtime import (ERROR, STATE_LABELS, WARN, ControllerRuntime,
                                       ControllerSettings, Status, build_runtime)
from sysid_ros.model.errors import ModelError
from sysid_ros.nodes._common import (COMMAND_QOS, CONTROL_SENSOR_QOS, DIAGNOSTICS_QOS,
                                     LATCHED_QOS, TRAJECTORY_QOS, run_node, stamp_to_ns)
from sysid_ros.nodes.messages import (MessageError, bounds_from_msg, joint_state_arrays,
                                      labelled_array, trajectory_from_msg)
from sysid_ros.nodes.params import Param, declare

__all__ = ["PARAMETERS", "RobustControllerNode", "STATE_LABELS", "trajectory_from_msg", "main"]

_S = (1e-4, 3600.0)       # a duration in seconds
_TOL = (1e-9, 1e3)
#: The node's parameters (docs/parameters.md); the optional gains override the robot file's
#: ``controller:`` section, absent = that section's value.
PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1, b1_z1) or robot-facts file path; "
          "b1_z1 is controlled as its arm view (trunk as base)", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("calibration", "string", "sysid-calibrate result (calib.yaml): calibrated friction and "
          "link facts"),
    Param("mode", "string", "law: robust (identifier's box), conservative (prior box), wrong "
          "(no payload, taken as exact), pid (gravity compensation + PID)", "robust",
          choices=MODES),
    Param("Kr", "double", "composite-error gain K_r, all joints (absent: controller.Kr)", None,
          (1e-6, 1e4), unit="1/s"),
    Param("alpha", "double", "robust-input decay rate α (absent: controller.alpha)", None,
          (1e-6, 1e6), unit="1/s"),
    Param("V_max", "double", "Lyapunov level the law keeps V below (absent: controller.V_max; "
          "the planner's tracking box assumes the robot file's)", None, (1e-12, 1e6), unit="J"),
    Param("r_norm_threshold", "double", "‖r‖ below which the robust input is 0 (absent: "
          "controller.r_norm_threshold)", None, (0.0, 1.0), unit="rad/s"),
    Param("boundary_layer", "double", "robust-input boundary layer η, a fraction of V_max "
          "(absent: controller.boundary_layer; 0 = none; docs/design.md §5.1)", None, (0.0, 1.0)),
    Param("torque_limit_scale", "double", "fraction of the torque limits the command is clipped "
          "to (clipping voids the guarantee and is flagged)", 1.0, (1e-6, 1.0)),
    Param("theta_r_uncertainty", "bool", "carry the θ_r and friction boxes in the torque "
          "interval (false: nominal θ_r and friction taken as exact, unsound)", True),
    Param("publish_on", "string", "command on every joint_states message, or on a timer",
          "joint_states", choices=("joint_states", "timer")),
    Param("timer_rate", "double", "command rate when publish_on = timer", 1000.0, (1e-3, 1e5),
          unit="Hz"),
    Param("stale_timeout", "double", "steady-clock age of joint_states after which commands "
          "stop and the node deactivates (ERROR)", 0.02, _S, unit="s"),
    Param("clock_timeout", "double", "ROS time frozen this long under use_sim_time counts as "
          "stale input (/clock died)", 0.1, _S, unit="s"),
    Param("bounds_warn_after", "double", "no payload bounds for this long: WARN (commanding "
          "continues)", 5.0, _S, unit="s"),
    Param("watchdog_period", "double", "steady-clock watchdog period, at most stale_timeout",
          0.005, _S, unit="s"),
    Param("auto_reactivate", "bool", "re-activate by itself when inputs are fresh after a stale "
          "stop (simulation); false: the operator activates (hardware)", False),
    Param("accept_uncertified", "bool", "run trajectories without a valid planner certificate",
          False),
    Param("check_torque", "bool", "refuse trajectories no θ in the box can follow within the "
          "torque limits (sampled; control/admission.py)", True),
    Param("takeover_position_tolerance", "double", "first point vs the current reference at "
          "take-over", 0.02, _TOL, unit="rad"),
    Param("takeover_velocity_tolerance", "double", "take-over velocity tolerance, also the "
          "'ends at rest' one", 0.05, _TOL, unit="rad/s"),
    Param("takeover_acceleration_tolerance", "double", "take-over acceleration tolerance", 0.5,
          _TOL, unit="rad/s²"),
    Param("pid_kp", "double", "PID baseline (mode pid) proportional gain, all joints", 100.0,
          (0.0, 1e6), unit="N·m/rad"),
    Param("pid_ki", "double", "PID baseline integral gain", 20.0, (0.0, 1e6), unit="N·m/(rad·s)"),
    Param("pid_kd", "double", "PID baseline derivative gain", 20.0, (0.0, 1e6),
          unit="N·m·s/rad"),
    Param("pid_i_clamp", "double", "PID anti-windup: |∫e| clamp", 0.2, (0.0, 1e3), unit="rad·s"),
    Param("debug_decimation", "int", "~/tracking_error and ~/state every n-th command", 10,
          (1, 10**6)),
    Param("diagnostics_period", "double", "/diagnostics period", 1.0, _S, unit="s"),
    Param("autostart", "bool", "configure and activate at start (simulation launches)", False),
    Param("joint_states_topic", "string", "measured joint states", "joint_states"),
    Param("bounds_topic", "string", "the identifier's θ_e box", "/sysid/payload_bounds"),
    Param("trajectory_topic", "string", "desired trajectories", "/sysid/desired_trajectory"),
    Param("command_topic", "string", "effort commands", "/effort_controller/commands"),
)



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
        self._n = 0
        pub, sub = self.create_publisher, self.create_subscription
        self.cmd_pub = pub(Float64MultiArray, s.command_topic, COMMAND_QOS)
        self.err_pub = pub(Float64MultiArray, "~/tracking_error", 10)
        self.state_pub = pub(Float64MultiArray, "~/state", 10)
        timers = [(s.watchdog_period, self._on_watchdog), (s.diagnostics_period, self._on_period)]
        if s.publish_on == "timer":
            timers.append((1.0 / s.timer_rate, self._on_timer))
        self._io = [("pub", self.cmd_pub), ("pub", self.err_pub), ("pub", self.state_pub),
                    ("sub", sub(JointState, s.joint_states_topic, self._on_joint_states,
                                CONTROL_SENSOR_QOS)),
                    ("sub", sub(Float64MultiArray, s.bounds_topic, self._on_bounds, LATCHED_QOS)),
                    ("sub", sub(JointTrajectory, s.trajectory_topic, self._on_trajectory,
                                TRAJECTORY_QOS))]
        self._io += [("timer", self.create_timer(period, cb, clock=self._steady))
                     for period, cb in timers]
        self.get_logger().info(f"configured: {self.rt.robot.name}, {s}")
        self._publish_status()
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        why = self.rt.activate(time.monotonic()) if self.rt else "not configured"
        if why:
            self.get_logger().error(why)
            self._publish_status()
            return TransitionCallbackReturn.FAILURE
        self._publish_status()
        return super().on_activate(state)

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

    def _on_joint_states(self, msg: JointState) -> None:
        try:
            q, dq, _ = joint_state_arrays(msg, self._rt.robot.joint_names, need_effort=False)
        except MessageError as exc:
            self._rt.joint_state_rejected(str(exc))
            return self._flush()
        stamp = stamp_to_ns(msg.header.stamp) * 1e-9 or self._ros_now()
        self._send(self._rt.joint_state(time.monotonic(), stamp, q, dq))

    def _on_timer(self) -> None:
        self._send(self._rt.command(time.monotonic()))

    def _on_bounds(self, msg: Float64MultiArray) -> None:
        try:
            b = bounds_from_msg(msg)
        except MessageError as exc:
            self._rt.bounds_rejected(str(exc))
        else:
            self._rt.bounds(time.monotonic(), b.lower, b.nominal, b.upper)
        self._flush()

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            traj, error = trajectory_from_msg(msg, self._rt.robot.joint_names), ""
        except TrajectoryError as exc:
            traj, error = None, str(exc)
        self._rt.trajectory(self._ros_now(), traj, msg.header.frame_id, error)
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
        self.cmd_pub.publish(Float64MultiArray(data=out.tau.tolist()))
        self._n += 1
        if self._n % self._rt.settings.debug_decimation == 0 or out.clipped:
            self.err_pub.publish(labelled_array(np.concatenate([out.e, out.de]), "e,de"))
            self.state_pub.publish(labelled_array(self._rt.state_vector(
                out, time.perf_counter() - t0), ",".join(STATE_LABELS)))

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
        status = DiagnosticStatus(level=bytes([st.level]), message=st.message,
                                  name=f"{self.get_name()}: robust controller",
                                  hardware_id=rt.robot.name if rt is not None else "",
                                  values=[KeyValue(key=k, value=v) for k, v in st.values.items()])
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(arr)


def main(args: list[str] | None = None) -> int:
    return run_node(lambda _argv: RobustControllerNode(), args)


if __name__ == "__main__":
    raise SystemExit(main())
