"""Simulator node ``sim``: the MuJoCo simulator (``sysid_ros.simulation``) on ROS 2 topics.

Publishes ``joint_states`` (names = robot.joint_names, stamp = sim time, effort = measured motor
torque), ``imu`` (floating-base robots), ``/clock`` (so ``use_sim_time`` nodes follow the
simulation) and, latched, ``/sim/payload_truth`` (geometry_msgs/InertiaStamped: the true θ_e =
EE body + payload, frame_id = the EE joint; for evaluation only). Subscribes to
``/effort_controller/commands`` (Float64MultiArray: one torque per robot joint in
robot.joint_names order, or per ``arm_joints`` for B1 + Z1). A command older than
``command_timeout`` (sim seconds) is dropped and the hold controller takes over (see
``sysid_ros.simulation.simulator`` for its PD law and gains). ``/sim/reset`` (std_srvs/Trigger)
restarts from the initial posture, keeping the clock monotonic.

Modes (parameter ``mode``):

- ``realtime``: a worker thread advances one publication period (1/rate_hz) of physics per
  period of wall time, applying the newest command.
- ``lockstep``: as fast as possible but closed-loop: after each publication the worker waits
  (up to ``lockstep_wait`` wall seconds) for a command received after that publication, then
  steps. With no publisher on the command topic it does not wait at all.

ROS parameters (config/sim.yaml; ``physics_dt`` 0 = the robot file's ``simulation.physics_dt``,
0.25 ms if absent, B1 + Z1 1 ms, shortened to 1/(n·rate_hz) when it does not divide the
period): robot, robot_config, payload_mass (0 = none; otherwise a
dumbbell of that mass, see ``Payload.dumbbell``), payload_com / payload_inertia (optional custom
payload: CoM (3) and inertia about the CoM [ixx, ixy, ixz, iyy, iyz, izz] in the EE frame),
rate_hz, physics_dt, integrator, mode, lockstep_wait, noise_tau, noise_dq, quantize,
command_timeout, publish_clock, seed, initial_q, duration (sim seconds, 0 = run forever),
wait_subscribers (hold sim time at 0 until that many joint_states subscribers), and:

- ``hardware_like`` (bool, default false): simulate a robot that looks like hardware
  (``sysid_ros.simulation.hardware_like``) with the robot file's ``simulation.hardware_like``
  section: a truth drawn around the facts file (friction, armature, link inertias, torque-sensor
  offsets), MuJoCo's dry friction, and joint_states published as its ``profile`` says
  (rate, stamp jitter, drops, stalls, torque noise, quantisation, velocity exact / noisy /
  finite_difference / missing = empty velocity array). The profile's ``rate_hz`` and
  ``physics_dt`` replace the parameters ``rate_hz``/``physics_dt``; ``noise_tau``,
  ``noise_dq`` and ``quantize`` are not used. ``/clock`` and ``imu`` keep every period (only
  joint_states are dropped). The controller's commands act as before (zero-order hold).
- ``hardware_seed`` (int ≥ 0, default 0): seed of the truth draw and of the publication
  model's randomness (drops, stamps, noise); the same seed gives the same robot.
"""
from __future__ import annotations

import array
import threading
import time
from collections.abc import Sequence

import numpy as np
from geometry_msgs.msg import InertiaStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from sysid_ros.model.robots import load_robot
from sysid_ros.nodes._common import (
    CLOCK_QOS, COMMAND_QOS, LATCHED_QOS, SENSOR_QOS, ns_to_stamp_fields, run_node,
    sleep_until,
)
from sysid_ros.nodes.messages import inertia_from_theta
from sysid_ros.simulation import (
    HardwareProfile, HardwareSensor, Payload, SimConfig, SimConfigError, SimulationError,
    Simulator, dumbbell_for, hardware_simulator, hardware_truth_settings, random_hardware_truth,
    robot_physics_dt,
)

__all__ = ["SimNode", "main", "payload_from_params"]

_MODES = ("realtime", "lockstep")


def payload_from_params(robot, mass: float, com: Sequence[float],
                        inertia: Sequence[float]) -> Payload | None:
    """Node parameters → Payload (None for mass 0). Raises PayloadError/SimConfigError."""
    if mass == 0.0:
        return None
    if len(com) == 0 and len(inertia) == 0:
        return dumbbell_for(robot, mass)
    if len(com) != 3 or len(inertia) != 6:
        raise SimConfigError("payload_com needs 3 values and payload_inertia 6 "
                             "[ixx, ixy, ixz, iyy, iyz, izz] (about the CoM, EE frame)")
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return Payload(mass, np.asarray(com, float),
                   np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], float))


def _doubles(values: np.ndarray) -> array.array:
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


class SimNode(Node):
    """Runs the simulator in a worker thread; callbacks only exchange commands under a lock."""

    def __init__(self, argv: Sequence[str] = ()) -> None:
        super().__init__("sim")
        p = {
            "robot": "gen3", "robot_config": "", "payload_mass": 0.0,
            "rate_hz": 1000.0, "physics_dt": 0.0, "integrator": "Euler",
            "mode": "realtime", "lockstep_wait": 0.05, "noise_tau": 0.1, "noise_dq": 0.0,
            "quantize": True, "command_timeout": 0.1, "publish_clock": True, "seed": 0,
            "duration": 0.0, "wait_subscribers": 0, "hardware_like": False, "hardware_seed": 0,
        }
        for name, default in p.items():
            self.declare_parameter(name, default)
        for name in ("payload_com", "payload_inertia", "initial_q"):
            self.declare_parameter(name, Parameter.Type.DOUBLE_ARRAY)
        g = lambda n: self.get_parameter(n).value  # noqa: E731

        def arr(name: str) -> list[float]:
            try:
                return list(g(name) or [])
            except Exception:  # uninitialised (no default) → empty
                return []

        self.robot = load_robot(g("robot"), g("robot_config") or None)
        self.hardware_like = bool(g("hardware_like"))
        self.profile = HardwareProfile.from_robot(self.robot) if self.hardware_like else None
        rate = self.profile.rate_hz if self.profile else float(g("rate_hz"))
        if not 0.0 < rate <= 10000.0:
            raise SimConfigError(f"rate_hz must be in (0, 10000], got {rate}")
        raw_dt = self.profile.physics_dt if self.profile else g("physics_dt")
        dt = float(raw_dt or 0.0)
        if dt == 0.0:   # the robot's step, shortened to a whole fraction of the period
            dt = 1.0 / (rate * np.ceil(1.0 / (rate * robot_physics_dt(self.robot)) - 1e-9))
        steps = 1.0 / (rate * dt)
        if self.profile is None and (abs(steps - round(steps)) > 1e-6 or round(steps) < 1):
            raise SimConfigError(f"1/rate_hz = {1 / rate} s must be a whole number of "
                                 f"physics_dt = {dt} s steps")
        self.steps_per_pub = int(round(steps))
        self.period = 1.0 / rate
        self.mode = str(g("mode"))
        if self.mode not in _MODES:
            raise SimConfigError(f"mode must be one of {_MODES}, got {self.mode!r}")
        self.lockstep_wait = float(g("lockstep_wait"))
        self.command_timeout = float(g("command_timeout"))
        self.duration = float(g("duration"))
        payload = payload_from_params(self.robot, float(g("payload_mass")), arr("payload_com"),
                                      arr("payload_inertia"))
        self._sensor: HardwareSensor | None = None
        if self.profile is not None:
            hw_seed = int(g("hardware_seed"))
            if hw_seed < 0:
                raise SimConfigError(f"hardware_seed must be >= 0, got {hw_seed}")
            truth = random_hardware_truth(self.robot, np.random.default_rng([hw_seed, 0]),
                                          **hardware_truth_settings(self.robot), payload=payload)
            self.sim = hardware_simulator(self.robot, payload, self.profile, truth,
                                          seed=int(g("seed")), integrator=str(g("integrator")))
            self._sensor = HardwareSensor(self.robot, self.profile, truth,
                                          np.random.default_rng([hw_seed, 1]))
        else:
            cfg = SimConfig(physics_dt=dt, integrator=str(g("integrator")),
                            noise_tau=float(g("noise_tau")), noise_dq=float(g("noise_dq")),
                            quantize=bool(g("quantize")))
            self.sim = Simulator(self.robot, payload, cfg, seed=int(g("seed")))
        q0 = arr("initial_q")
        self.q0 = np.asarray(q0, float) if q0 else self.sim.home.copy()
        self.sim.reset(self.q0)

        self._lock = threading.Lock()
        self._cmd: np.ndarray | None = None
        self._cmd_time = -np.inf        # sim time at which the newest command arrived
        self._cmd_event = threading.Event()
        self._reset_requested = False
        self.rejected_commands = 0
        self._has_commander = False
        self._graph_check_at = 0.0
        self._last_cmd_wall = -np.inf

        self._js_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self._imu_pub = (self.create_publisher(Imu, "imu", SENSOR_QOS)
                         if self.robot.floating_base else None)
        self._clock_pub = (self.create_publisher(Clock, "/clock", CLOCK_QOS)
                           if bool(g("publish_clock")) else None)
        self._truth_pub = self.create_publisher(InertiaStamped, "/sim/payload_truth", LATCHED_QOS)
        self._cmd_topic = "/effort_controller/commands"
        self.create_subscription(Float64MultiArray, self._cmd_topic, self._on_command,
                                 COMMAND_QOS)
        self.create_service(Trigger, "/sim/reset", self._on_reset)

        truth = InertiaStamped()
        truth.header.frame_id = self.robot.ee_joint
        truth.inertia = inertia_from_theta(self.sim.true_theta_e())
        self._truth_pub.publish(truth)

        # messages reused every period (publish serialises them at once)
        self._js = JointState()
        self._js.name = list(self.robot.joint_names)
        self._clock = Clock()
        self._imu = Imu()
        self._imu.header.frame_id = str(
            (self.robot.config.get("simulation", {}) or {}).get("imu_body", "imu_link"))
        self.finished = threading.Event()
        self.exit_code = 0
        self._stop = threading.Event()
        self.get_logger().info(
            f"simulating {self.robot.name} ({'payload %.3f kg' % payload.mass if payload else 'no payload'}"
            f"), {self.mode}, joint_states at {rate:g} Hz, physics dt {dt:g} s")
        if self.sim.truth is not None and self.profile is not None:
            fc, fv, ia, beta = np.round(self.sim.truth.friction.T, 3)
            self.get_logger().info(
                f"hardware-like: {self.profile}; truth Fc {fc.tolist()}, Fv {fv.tolist()}, "
                f"Ia {ia.tolist()}, sensor offsets {beta.tolist()}")
        self._thread = threading.Thread(target=self._run, name="sim", daemon=True)
        self._thread.start()

    # -- callbacks (executor thread) -------------------------------------------------------
    def _on_command(self, msg: Float64MultiArray) -> None:
        tau = np.asarray(msg.data, dtype=float)
        ok = tau.size in (self.robot.nj, len(self.sim.command_joints)) and np.all(np.isfinite(tau))
        if not ok:
            self.rejected_commands += 1
            self.get_logger().warning(
                f"ignoring command with {tau.size} entries (need {self.robot.nj} or "
                f"{len(self.sim.command_joints)} finite torques)", throttle_duration_sec=1.0)
            return
        with self._lock:
            self._cmd = tau
            self._cmd_time = self.sim.time
        self._last_cmd_wall = time.monotonic()
        self._cmd_event.set()

    def _on_reset(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self._reset_requested = True
        resp.success, resp.message = True, "simulation will restart from the initial posture"
        return resp

    # -- worker thread ---------------------------------------------------------------------
    def _command(self) -> np.ndarray | None:
        with self._lock:
            if self._reset_requested:
                self.sim.reset(self.q0, t0=self.sim.time)
                self._reset_requested = False
                self._cmd, self._cmd_time = None, -np.inf
            fresh = self._cmd is not None and self.sim.time - self._cmd_time <= self.command_timeout
            return self._cmd if fresh else None

    def _steps_to_next(self, k: int) -> int:
        """Physics steps from the k-th publication instant to the next (the profile's sample
        instants are the steps nearest k/rate_hz)."""
        if self.profile is None:
            return self.steps_per_pub
        return int(self.profile.sample_step(k + 1) - self.profile.sample_step(k))

    def _publish(self) -> None:
        m = self.sim.measure()
        sec, nsec = ns_to_stamp_fields(int(round(m.t * 1e9)))
        if self._clock_pub is not None:
            clock = self._clock
            clock.clock.sec, clock.clock.nanosec = sec, nsec
            self._clock_pub.publish(clock)
        js = self._js
        if self._sensor is None:
            js.header.stamp.sec, js.header.stamp.nanosec = sec, nsec
            # array('d') skips the message setters' per-element type checks (rclpy's fast path)
            js.position, js.velocity = _doubles(m.q), _doubles(m.dq)
            js.effort = _doubles(m.tau_measured)
            self._js_pub.publish(js)
        else:
            # the same publication model as recorded data: drops, stalls, late stamps, noise
            out = self._sensor.read(m.t, self.sim.q, self.sim.dq, self.sim.tau_applied)
            if out.index.size:
                js.header.stamp.sec, js.header.stamp.nanosec = ns_to_stamp_fields(
                    int(round(out.t[0] * 1e9)))
                js.position, js.effort = out.q[0].tolist(), out.tau_meas[0].tolist()
                js.velocity = [] if out.dq is None else out.dq[0].tolist()
                self._js_pub.publish(js)
        if self._imu_pub is not None and m.imu is not None:
            imu = self._imu
            imu.header.stamp.sec, imu.header.stamp.nanosec = sec, nsec
            o = m.imu.orientation_xyzw
            imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = map(float, o)
            (imu.angular_velocity.x, imu.angular_velocity.y,
             imu.angular_velocity.z) = map(float, m.imu.angular_velocity)
            (imu.linear_acceleration.x, imu.linear_acceleration.y,
             imu.linear_acceleration.z) = map(float, m.imu.linear_acceleration)
            self._imu_pub.publish(imu)

    def _wait_for_subscribers(self) -> None:
        """Hold sim time at its start until ``wait_subscribers`` nodes listen to joint_states,
        so that a graph started together (recorder included) sees the run from its first step."""
        want = int(self.get_parameter("wait_subscribers").value)
        if want <= 0:
            return
        while not self._stop.is_set():
            have = self._js_pub.get_subscription_count()
            if have >= want:
                self.get_logger().info(f"{have} joint_states subscribers: starting")
                return
            time.sleep(0.05)

    def _run(self) -> None:
        try:
            self._wait_for_subscribers()
            self._publish()
            wall0 = time.monotonic()
            k = 0
            while not self._stop.is_set():
                if self.duration > 0 and self.sim.time >= self.duration - 1e-12:
                    break
                if self.mode == "lockstep":
                    self._wait_for_command()
                cmd = self._command()
                with self._lock:
                    self.sim.step(cmd, self._steps_to_next(k))
                # only a reply to this publication may release the next lock-step wait
                self._cmd_event.clear()
                self._publish()
                k += 1
                if self.mode == "realtime":
                    target = wall0 + k * self.period
                    lag = time.monotonic() - target
                    if lag > 0.1:   # fell far behind (e.g. machine busy): do not burst
                        wall0 += lag
                    else:
                        sleep_until(target, self._stop)
        except SimulationError as err:
            self.get_logger().error(f"simulation failed: {err}")
            self.exit_code = 1
        except Exception as err:
            if not self._stop.is_set():
                self.get_logger().error(f"simulation failed: {type(err).__name__}: {err}")
                self.exit_code = 1
        finally:
            self.finished.set()

    def _wait_for_command(self) -> None:
        """Lock-step: wait for a command newer than the last publication (if anyone sends)."""
        now = time.monotonic()
        if now >= self._graph_check_at:   # graph queries cost ~0.1 ms: ask every 0.2 s only
            self._has_commander = self.count_publishers(self._cmd_topic) > 0
            self._graph_check_at = now + 0.2
        # A graph query can transiently miss a publisher on a loaded machine: a controller
        # that sent commands within the last second is waited for regardless.
        if not self._has_commander and now - self._last_cmd_wall > 1.0:
            return
        self._cmd_event.wait(self.lockstep_wait)

    def on_shutdown(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


def main(args: Sequence[str] | None = None) -> int:
    return run_node(lambda argv: SimNode(argv), args)


if __name__ == "__main__":
    raise SystemExit(main())
