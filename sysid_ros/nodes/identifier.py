"""``identifier`` node: joint_states → sound payload bounds (docs/design.md §4, §7).

Subscribes ``joint_states`` (and, for a floating-base robot such as ``b1_z1``, the trunk IMU on
``imu``, sensor_msgs/Imu: the arm rows need the trunk's angular velocity and specific force,
docs/design.md §4.6); every ``update_period`` seconds a worker thread turns the buffered
samples into momentum windows and updates the box (:class:`OnlineIdentifier`), so callbacks
never wait for an LP. Publishes ``/sysid/payload_bounds`` and ``/sysid/payload_inertia``
(transient_local, only while the status is ok — an inconsistent update keeps the last sound box
published and raises an ERROR diagnostic) and ``/diagnostics`` (status, samples, windows, last
update latency, rejected messages by reason). ``~/reset`` (std_srvs/Trigger) starts over for a
new payload. A JointState that cannot be used is counted and reported, never fatal.

Stamp policy (:mod:`sysid_ros.identification.stamps`, the same for the IMU): a zero stamp (an
unstamped publisher), a duplicate stamp or an isolated stamp before the last accepted one is
dropped and counted (``rejected: …`` in the diagnostics) — the windows in progress are kept,
so one bad message costs only itself. The windows restart (no window spans the jump; the box is
kept: it stays sound for the same payload, and a changed payload makes the next update
inconsistent) only when ``stamp_restart_samples`` consecutive messages are all behind the last
accepted stamp and increasing among themselves: a persistent jump back, such as a bag replayed
in a loop or a simulator restarted (counted as ``time jumped back persistently``).

The window plan follows the stream's own rate (measured from its first samples): windows of
``window_s`` seconds, split at gaps longer than ``max_sample_gap`` (0 = 2.5 × the median step).
``/diagnostics`` carries the status with its reason: ``insufficient_data`` says why no window
has formed (gaps, rate), ``inconsistent`` names the noise scale the data need, per joint, and
the worst time spans, and an ``ok`` box pinned to the prior's face or with the least-squares
estimate outside it is reported as WARN with the warning text.

Parameters (besides those in config/identifier.yaml): ``calibration`` (string, path of a
``sysid-calibrate`` result, "" = none), ``prior`` (string, a prior name of the robot file or a
YAML file, "" = the robot file's), ``friction`` (config | wide | none, "" = the robot file's),
``window_s`` / ``stride_s`` / ``max_sample_gap`` (double, s; ≤ 0 = robot file), ``torque_noise_abs``
(double, or a string of per-joint values "0.1,0.2,…"), ``stamp_restart_samples`` (int ≥ 2,
default 10: consecutive consistent stamps behind the last one that mean a restart).

Method ``lp-cuts`` (default in config/identifier.yaml) with ``tighten_period`` > 0: the 0.5 s
updates re-use the pseudo-inertia cut pool (LP cost only) and a second thread runs the
cut-generating rounds every ``tighten_period`` seconds on a snapshot, intersecting its box with
the current one and publishing it (:meth:`OnlineIdentifier.tighten`): the slow tightening never
delays an LP update. ``tighten_period`` 0 runs the rounds inline in every update instead.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import InertiaStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from sysid_ros.identification import OnlineIdentifier, SampleError, load_identification_config
from sysid_ros.identification.stamps import RESTARTS
from sysid_ros.model.robots import load_robot
from sysid_ros.nodes._common import DIAGNOSTICS_QOS, LATCHED_QOS, SENSOR_STREAM_QOS, run_node, \
    stamp_to_ns
from sysid_ros.nodes.messages import JointStateError, ParameterBounds, bounds_to_msg, \
    inertia_from_theta, joint_state_arrays

__all__ = ["IdentifierNode", "main"]

DIAG_NAME = "sysid_ros/identifier"


class IdentifierNode(Node):
    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("identifier")
        p = self.declare_parameter
        robot_name = p("robot", "gen3").value
        robot_config = p("robot_config", "").value or None
        calibration = p("calibration", "").value or None
        self.robot = load_robot(robot_name, robot_config, calibration)
        # a number, a per-joint list or a comma string: typed at run time
        noise = p("torque_noise_abs", "", ParameterDescriptor(dynamic_typing=True)).value
        if isinstance(noise, (list, tuple)) or hasattr(noise, "tolist"):
            noise = list(noise)
        overrides = {
            "torque_noise_abs": None if isinstance(noise, (int, float, str))
            and str(noise) in ("", "-1.0", "-1") else noise,
            "torque_noise_rel": p("torque_noise_rel", -1.0).value,
            "robot_uncertainty_rel": p("robot_uncertainty_rel", -1.0).value,
            "window": p("window", 0).value,
            "stride": p("stride", 0).value,
            "window_s": p("window_s", 0.0).value,
            "stride_s": p("stride_s", 0.0).value,
            "max_sample_gap": p("max_sample_gap", -1.0).value,
            "friction": p("friction", "").value,
            "prior": p("prior", "").value,
            "online_max_rows": p("online_max_rows", 0).value,
        }
        # Unset (negative / zero / empty) parameters keep the robot file's identification section.
        overrides = {k: v for k, v in overrides.items()
                     if v is not None and v not in (-1.0, 0, 0.0, "")}
        self.config = load_identification_config(self.robot, **overrides)
        method = p("method", "lp").value
        self.period = float(p("update_period", 0.5).value)
        self.tighten_period = float(p("tighten_period", 2.0).value)
        background = method == "lp-cuts" and self.tighten_period > 0
        self.ident = OnlineIdentifier(self.robot, self.config, method=method,
                                      point_estimate=bool(p("point_estimate", True).value),
                                      background_cuts=background,
                                      restart_after=int(p("stamp_restart_samples", 10).value))
        self.tighten_latency = float("nan")
        self._publish_lock = threading.Lock()
        self.frame = self.robot.ee_joint
        self._lock = threading.Lock()
        self._buffer: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]] = []
        self._imu_buffer: list[tuple[float, np.ndarray, np.ndarray]] = []
        self._reset_requested = False
        self.rejected: Counter[str] = Counter()
        self.received = 0
        self.imu_received = 0
        self.resets = 0
        self.latency = float("nan")
        self.bounds_pub = self.create_publisher(Float64MultiArray, "/sysid/payload_bounds",
                                                LATCHED_QOS)
        self.inertia_pub = self.create_publisher(InertiaStamped, "/sysid/payload_inertia",
                                                 LATCHED_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DIAGNOSTICS_QOS)
        self.create_subscription(JointState, "joint_states", self._on_joint_state,
                                 SENSOR_STREAM_QOS)
        if self.robot.floating_base:
            self.create_subscription(Imu, "imu", self._on_imu, SENSOR_STREAM_QOS)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._work, name="identifier-worker", daemon=True)
        self._worker.start()
        self._tightener = None
        if background:
            self._tightener = threading.Thread(target=self._tighten_loop,
                                               name="identifier-tighten", daemon=True)
            self._tightener.start()

    # -- callbacks: cheap, never block on the solver -------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        self.received += 1
        try:
            q, dq, tau = joint_state_arrays(msg, self.robot.joint_names)
        except JointStateError as err:
            self._reject(str(err))
            return
        # stamps (zero, duplicate, backward, restart) are judged by the library's stamp policy
        # when the worker hands the batch over (OnlineIdentifier.add_messages)
        t = stamp_to_ns(msg.header.stamp) * 1e-9
        with self._lock:
            self._buffer.append((t, q, dq, tau))

    def _on_imu(self, msg: Imu) -> None:
        self.imu_received += 1
        w, a = msg.angular_velocity, msg.linear_acceleration
        gyro, acc = np.array([w.x, w.y, w.z]), np.array([a.x, a.y, a.z])
        if not (np.all(np.isfinite(gyro)) and np.all(np.isfinite(acc))):
            self._reject("imu: non-finite angular velocity / linear acceleration")
            return
        with self._lock:
            self._imu_buffer.append((stamp_to_ns(msg.header.stamp) * 1e-9, gyro, acc))

    def _reject(self, reason: str) -> None:
        with self._lock:
            self.rejected[reason.split(" for ")[0][:80]] += 1

    def _on_reset(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self._buffer.clear()
            self._imu_buffer.clear()
            self._reset_requested = True
        resp.success, resp.message = True, "identifier reset to the prior box"
        return resp

    # -- worker ------------------------------------------------------------------------------
    def _work(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self._update_once()
            except Exception as err:   # keep the node alive; report instead
                self._reject(f"internal error: {type(err).__name__}: {err}")

    def _tighten_loop(self) -> None:
        while not self._stop.wait(self.tighten_period):
            try:
                start = time.perf_counter()
                if self.ident.tighten():
                    self.tighten_latency = time.perf_counter() - start
                    self._publish_bounds()
            except Exception as err:   # keep the node alive; report instead
                self._reject(f"internal error (tighten): {type(err).__name__}: {err}")

    def _update_once(self) -> None:
        with self._lock:
            batch, self._buffer = self._buffer, []
            imu_batch, self._imu_buffer = self._imu_buffer, []
            reset, self._reset_requested = self._reset_requested, False
        start = time.perf_counter()
        if reset:
            self.ident.reset()
            self.resets += 1
        if imu_batch:
            self.ident.add_imu(np.array([b[0] for b in imu_batch]),
                               np.array([b[1] for b in imu_batch]),
                               np.array([b[2] for b in imu_batch]))
        if batch:
            t = np.array([b[0] for b in batch])
            arrays = [np.array([b[k] for b in batch]) for k in (1, 2, 3)]
            try:
                self.ident.add_messages(t, *arrays)
            except SampleError as err:
                self._reject(f"batch rejected: {err}")
            else:
                before = self.ident.status
                status = self.ident.update()
                self.latency = time.perf_counter() - start
                if status == "ok":
                    self._publish_bounds()
                elif status == "inconsistent" and before != "inconsistent":
                    self.get_logger().error("data inconsistent with the noise/model bounds; "
                                            "keeping the last sound box (call ~/reset)")
        self._publish_diagnostics()

    def _publish_bounds(self) -> None:
        with self._publish_lock:        # worker and tightener both publish
            lower, upper = self.ident.lower, self.ident.upper
            nominal = np.clip(self.ident.nominal, lower, upper)
            if self.ident.status != "ok":
                return
            self.bounds_pub.publish(bounds_to_msg(ParameterBounds(lower, nominal, upper)))
            msg = InertiaStamped()
            msg.header.stamp = self.get_clock().now().to_msg()
            msg.header.frame_id = self.frame
            msg.inertia = inertia_from_theta(nominal)
            self.inertia_pub.publish(msg)

    def _publish_diagnostics(self) -> None:
        st = DiagnosticStatus()
        st.name, st.hardware_id = DIAG_NAME, self.robot.name
        status = self.ident.status
        st.level = {"ok": DiagnosticStatus.OK, "insufficient_data": DiagnosticStatus.WARN,
                    "inconsistent": DiagnosticStatus.ERROR}[status]
        warnings = list(self.ident.warnings) if status == "ok" else []
        rejected = self._rejected()
        if status == "ok" and (rejected or warnings):
            st.level = DiagnosticStatus.WARN
        reason = {"insufficient_data": self.ident.insufficient_reason(),
                  "inconsistent": self.ident.reason}.get(status, "")
        st.message = status + (f": {reason}" if reason else "") + \
            (f"; WARNING: {' | '.join(warnings)}" if warnings else "")
        values = {"status": status, "samples": self.ident.samples,
                  "windows": self.ident.windows_used, "received": self.received,
                  "gaps": self.ident.windows.n_gaps,
                  "resets": self.resets, "window_restarts": self.ident.n_restarts,
                  "last_update_latency_s": f"{self.latency:.6f}",
                  "method": self.ident.method,
                  "last_tighten_latency_s": f"{self.tighten_latency:.6f}",
                  "rejected_total": sum(rejected.values()),
                  "prior": self.config.prior_name, "friction": self.config.friction,
                  "sources": ", ".join(self.config.sources)}
        if self.ident.imu is not None:
            values["imu_received"] = self.imu_received
            values["imu_samples"] = self.ident.imu.n_samples
        plan = self.ident.windows.plan
        if plan is not None:
            values["sampling"] = plan.describe()
        if self.ident.diagnosis is not None and status == "inconsistent":
            values["noise_scale_needed"] = f"{self.ident.diagnosis.noise_scale:.3f}"
        for k, w in enumerate(warnings):
            values[f"warning {k + 1}"] = w
        values.update({f"rejected: {k}": v for k, v in rejected.items()})
        st.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        arr.status = [st]
        self.diag_pub.publish(arr)

    def _rejected(self) -> dict[str, int]:
        """Rejected messages by reason: the node's (undecodable messages) and the stamp
        policy's, joint states and IMU (restarts are reported as ``window_restarts``)."""
        with self._lock:
            rejected = dict(self.rejected)
        counts = [("", self.ident.stamps.counts)]
        if self.ident.imu is not None:
            counts.append(("imu: ", self.ident.imu.stamps.counts))
        for prefix, c in counts:
            rejected.update({prefix + k: v for k, v in c.items() if k != RESTARTS and v > 0})
        return rejected

    def on_shutdown(self) -> None:
        self._stop.set()
        self._worker.join(timeout=5.0)
        if self._tightener is not None:
            self._tightener.join(timeout=5.0)


def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: IdentifierNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
