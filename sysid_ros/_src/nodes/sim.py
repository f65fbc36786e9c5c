"""Simulator node ``sim``: the MuJoCo simulator on ROS 2 topics, a shell that moves messages and
paces time over :class:`sysid_ros._src.simulation.sim_runtime.SimRuntime` (schedule, command hold and
timeout, lock-step decision, reset, hardware-like publication).

Publishes ``joint_states`` (stamp = sim time, effort = measured motor torque), ``imu`` (floating
base), ``/clock``, latched ``/sim/payload_truth`` (true θ_e = EE body + payload, frame_id = EE
joint; evaluation only). Subscribes to ``/effort_controller/commands`` (a torque per robot joint,
or per ``arm_joints`` for B1 + Z1); service ``/sim/reset`` restarts from the initial posture.
Modes: ``realtime`` (a period of physics per period of wall time), ``lockstep`` (as fast as
possible; waits up to ``lockstep_wait`` for a controller's reply to each publication, if one
exists). Parameters: ``PARAMETERS`` below (docs/reference/parameters.md; config/sim.yaml)."""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from geometry_msgs.msg import InertiaStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.nodes._common import run_node
from sysid_ros._src.nodes.threads import sleep_until
from sysid_ros._src.cdr import (CdrError, ClockEncoder, ImuEncoder, JointStateEncoder,
                                 float64_multi_array_data)
from sysid_ros._src.nodes.qos import (CLOCK_QOS, COMMAND_BEST_EFFORT_QOS, LATCHED_QOS,
                                 SENSOR_STREAM_QOS, prefer_async_publication)
from sysid_ros._src.nodes.messages import inertia_from_theta
from sysid_ros._src.nodes.params import declare
from sysid_ros._src.nodes.sim_params import PARAMETERS
from sysid_ros._src.simulation import (CommandError, Publication, RealtimePacer, RuntimeSettings,
                                  SimRuntime, SimulationError)

__all__ = ["PARAMETERS", "SimNode", "main"]

_CMD_TOPIC = "/effort_controller/commands"


class SimNode(Node):
    """Runs the runtime in a worker thread; callbacks hand it commands and resets under a lock."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("sim")
        p = declare(self, PARAMETERS)
        self.robot = load_robot(p["robot"], p["robot_config"])
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in p.items()}
        self.runtime = rt = SimRuntime(self.robot, RuntimeSettings.from_parameters(fields))
        self._lock, self._answer, self._stop, self.finished = (
            threading.Lock(), threading.Event(), threading.Event(), threading.Event())
        self.exit_code, self.rejected_commands, self._commander, self._graph_check_at = 0, 0, False, 0.0
        # deep writer history: samples wait there for the asynchronous delivery thread
        self._js_pub = self.create_publisher(JointState, "joint_states", SENSOR_STREAM_QOS)
        self._imu_pub = (self.create_publisher(Imu, "imu", SENSOR_STREAM_QOS)
                         if self.robot.floating_base else None)
        self._clock_pub = self.create_publisher(Clock, "/clock", CLOCK_QOS) if p["publish_clock"] else None
        truth = InertiaStamped(inertia=inertia_from_theta(rt.sim.true_theta_e()))
        truth.header.frame_id = self.robot.ee_joint
        self.create_publisher(InertiaStamped, "/sim/payload_truth", LATCHED_QOS).publish(truth)
        # best effort matches a controller's writer of either reliability
        self.create_subscription(Float64MultiArray, _CMD_TOPIC, self._on_command,
                                 COMMAND_BEST_EFFORT_QOS, raw=True)
        self.create_service(Trigger, "/sim/reset", self._on_reset)
        # 1 kHz messages in and out as CDR bytes (sysid_ros._src.cdr): cheaper than rclpy's objects
        self._js = JointStateEncoder(self.robot.joint_names)
        # the IMU's URDF frame: the file's imu_body, else the root link (where it then sits)
        self._imu = ImuEncoder(simulation_section(self.robot).imu_body
                               or rt.sim.mj.model.body(1).name)
        payload, truth_r = rt.payload, rt.sim.truth
        self.get_logger().info(
            f"simulating {self.robot.name} ({f'payload {payload.mass:.3f} kg' if payload else 'no payload'}"
            f"), {p['mode']}, joint_states at {rt.rate_hz:g} Hz, physics dt {rt.sim.physics_dt:g} s"
            + (f"; hardware-like {rt.profile}, truth [Fc, Fv, Ia, offset] per joint "
               f"{np.round(truth_r.friction, 3).tolist()}" if rt.profile and truth_r else ""))
        self._thread = threading.Thread(target=self._run, name="sim", daemon=True)
        self._thread.start()

    def _on_command(self, data: bytes) -> None:
        arrived = time.monotonic()   # before the lock: a step in progress would delay it
        try:
            tau = float64_multi_array_data(data)
            with self._lock:
                self.runtime.command(tau, arrived)
                if self.runtime.answered:
                    self._answer.set()
        except (CdrError, CommandError) as err:
            self.rejected_commands += 1
            self.get_logger().warning(str(err), throttle_duration_sec=1.0)

    def _on_reset(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self.runtime.reset()
        resp.success, resp.message = True, "simulation restarted from the initial posture"
        return resp

    def _publish(self, pub: Publication) -> None:
        if self._clock_pub is not None and pub.clock:
            self._clock_pub.publish(ClockEncoder.encode(pub.stamp_ns))
        s = pub.joint_states
        if s is not None:
            self._js_pub.publish(self._js.encode(s.stamp_ns, s.q, s.dq, s.effort))
        if self._imu_pub is not None and pub.imu is not None:
            m = pub.imu
            self._imu_pub.publish(self._imu.encode(pub.stamp_ns, m.orientation_xyzw,
                                                   m.angular_velocity, m.linear_acceleration))

    def _commander_seen(self, now: float) -> bool:
        if now >= self._graph_check_at:   # graph queries cost ~0.1 ms: ask every 0.2 s only
            self._commander = self.count_publishers(_CMD_TOPIC) > 0
            self._graph_check_at = now + 0.2
        return self._commander

    def _run(self) -> None:
        rt = self.runtime
        try:
            while not self._stop.is_set() and not rt.may_start(
                    self._js_pub.get_subscription_count()):
                time.sleep(0.05)
            pacer = RealtimePacer(rt.period, time.monotonic())
            while not self._stop.is_set() and not rt.finished:
                now = time.monotonic()
                if rt.waits_for_command(self._commander_seen(now), now) and not self._answer.wait(
                        rt.settings.lockstep_wait):   # lock-step's pairing assumption broke
                    self.get_logger().warning("no reply within lockstep_wait", throttle_duration_sec=5)
                with self._lock:
                    pub = rt.advance(time.monotonic())
                    self._answer.clear()   # only a reply to this publication releases the next wait
                self._publish(pub)
                if rt.settings.mode == "realtime":
                    slips = pacer.slips
                    sleep_until(pacer.next_deadline(time.monotonic()), self._stop)
                    if pacer.slips != slips:    # not silent: the run is slower than real time
                        self.get_logger().warning(
                            f"fell behind real time {pacer.slips} time(s), {pacer.lost_s:.2f} s "
                            "lost in all (machine busy): sim time runs slower than the clock",
                            throttle_duration_sec=5.0)
        except Exception as err:   # after a stop, only a simulator error is worth reporting
            if isinstance(err, SimulationError) or not self._stop.is_set():
                self.get_logger().error(f"simulation failed: {type(err).__name__}: {err}")
                self.exit_code = 1
        finally:
            self.finished.set()

    def on_shutdown(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


def main(args: Sequence[str] | None = None) -> int:
    prefer_async_publication()       # the pacing thread must not deliver to every reader itself
    return run_node(lambda argv: SimNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
