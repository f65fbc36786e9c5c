"""The phases of ``sysid-demo`` (:mod:`sysid_ros._src.demo.demo_cli`): resolve the run, refuse what
cannot be certified, launch the graph, follow identification and the task, evaluate the bag."""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.control.arm_view import arm_view
from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.demo.class_payload import class_prior, mass_placement, payload_text, write_payload_params
from sysid_ros._src.demo.envelope import envelope, format_envelope, plot_envelope
from sysid_ros._src.demo.errors import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_NO_BAG, EXIT_REFUSED, \
    EXIT_SUCCESS, DemoConfigError
from sysid_ros._src.demo.floating import envelope_refusal, floating_base_findings, robot_file_with_prior_box
from sysid_ros._src.demo.plant_premise import simulated_friction_violations
from sysid_ros._src.demo.priors import demo_prior, robot_with_prior, start_refusal
from sysid_ros._src.demo.report import Evaluation, evaluate, floor_summary, load_run, write_report
from sysid_ros._src.demo.task import ReturnPath, TaskCertifier, return_vias
from sysid_ros._src.demo.velocity_premise import controller_velocity_refusal
from sysid_ros._src.errors import SysidError
from sysid_ros._src.launcher import launch_graph
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.robots import Robot, load_robot
from sysid_ros._src.model.simulation_section import home_posture
from sysid_ros._src.nodes.identifier_params import identification_overrides
from sysid_ros._src.planning.obstacles import BoxObstacle, obstacles_from_config
from sysid_ros._src.planning.trajectory import QuinticTrajectory
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.offcentre import draw_in_class

# ROS 2 itself (rclpy, its messages, sysid_ros._src.nodes' helpers built on rclpy) is imported only
# where this process joins the graph (_Link, _trajectory): the refusals, bad input and --envelope
# answer without starting a ROS 2 client, and importing this module does not load one.

__all__ = ["run_demo"]

LEAD = 0.5   # s of sim time between publishing a trajectory and its start


def _trajectory(robot: Robot, start: float, times: Any, positions: Any) -> Any:
    """A rest-to-rest JointTrajectory through ``positions`` at ``times``, starting at ``start``.

    Every point has zero velocity and acceleration, so each segment is the degree-5 polynomial
    q0 + (q1 − q0)(10s³ − 15s⁴ + 6s⁵) (minimum jerk): exactly what quintic interpolation of
    such points reproduces. The frame_id marks it as the demo's, not the planner's.
    """
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory()
    msg.header.stamp.sec = int(start)
    msg.header.stamp.nanosec = int(round((start - int(start)) * 1e9))
    msg.header.frame_id = "sysid_demo_task"
    msg.joint_names = list(robot.joint_names)
    for tk, pk in zip(times, positions):
        p = JointTrajectoryPoint()
        p.positions = np.asarray(pk, float).tolist()
        p.velocities = [0.0] * robot.nj
        p.accelerations = [0.0] * robot.nj
        p.time_from_start.sec = int(tk)
        p.time_from_start.nanosec = int(round((tk - int(tk)) * 1e9))
        msg.points.append(p)
    return msg


def _executed(plans: list[tuple]) -> list[tuple]:
    """(trajectory, k, seconds it ran) of each published plan (``on_plan``'s tuples): each ran
    until the next one's start, the last one to its end."""
    out = []
    for i, (start, end, q_end, q0, dq0, ddq0) in enumerate(plans):
        ran = (plans[i + 1][0] if i + 1 < len(plans) else end) - start
        out.append((QuinticTrajectory(q0, dq0, ddq0, end - start), q_end - q0,
                    min(max(ran, 0.0), end - start)))
    return out


def _return_detail(path: ReturnPath | None, duration: float) -> str:
    """What the report adds to "return certified: yes" when the direct move was refused."""
    if path is None or not path.direct_reasons:
        return ""
    how = (f"back through {len(path.times) - 2} poses of the exciting motion" if path.via
           else "slower")
    return (f" ({how}, {path.times[-1]:.1f} s: the direct {duration:.1f}-s move was "
            "refused)")


def _controller_box(robot: Robot, mode: str, bounds: ParameterBox | None) -> ParameterBox | None:
    """The θ_e box the controller tracks the task with (None: PID has no box)."""
    if mode == "robust" and bounds is not None:
        return bounds
    if mode in ("conservative", "robust"):
        return prior_box(robot)
    if mode == "wrong":
        theta = robot.theta_e()          # the unloaded model, taken as exact
        return theta_e_box(theta, theta)
    return None


def _envelope(full_robot: Robot, out: Path | None) -> int:
    """``--envelope``: print the envelope of ``demo.envelope``'s grid and plot it."""
    if not full_robot.floating_base:
        _log(f"bad input: --envelope is for a floating-base robot ({full_robot.name} is not)")
        return EXIT_BAD_INPUT
    grid = (full_robot.config.get("demo") or {}).get("envelope") or {}
    try:
        masses = [float(x) for x in grid["payload_kg"]]
        levels = [float(x) for x in grid["V_max"]]
        rel = float(grid.get("class_rel", 0.03))
    except (KeyError, TypeError, ValueError):
        _log(f"bad input: {full_robot.config_path}: demo.envelope needs payload_kg and V_max "
             "lists")
        return EXIT_BAD_INPUT
    points = envelope(full_robot, masses, levels, rel)
    for line in format_envelope(full_robot, points, rel):
        print(line)
    path = plot_envelope(points, (out or Path("out")).resolve() / "envelope.png")
    print(f"plot: {path}")
    return EXIT_SUCCESS


def _log(msg: str) -> None:
    progress.write(f"[demo] {msg}")      # above the phase bar, when one is drawn
    sys.stderr.flush()


@dataclass
class RunSettings:
    """The run as resolved from the command line and the robot file, before anything starts."""

    args: argparse.Namespace
    calib: str | None         # --calibration, absolute (the nodes load it too)
    full_robot: Robot         # the robot file with the run's prior (the B1 + Z1: with its trunk)
    robot: Robot              # its arm view: what this process certifies and evaluates with
    robot_arg: str            # the launch's robot:= (a name, or this run's facts file)
    prior: str                # the θ_e prior's name ('' : the robot file's inline box)
    demo_cfg: dict[str, Any]  # the robot file's demo section
    out: Path


@dataclass
class TaskPlan:
    """The payload the simulator carries and the task this process certifies and publishes."""

    payload: float
    payload_desc: str         # '' unless drawn in a class
    payload_params: str       # the sim node's parameters file of a drawn payload ('' : none)
    klass: ParameterBox | None
    waypoints: list[np.ndarray]
    start: np.ndarray
    return_duration: float
    certify: TaskCertifier
    obstacles: tuple[BoxObstacle, ...]


@dataclass
class Outcome:
    """What happened in the graph, as the report states it."""

    wall0: float                               # time.monotonic() when the graph was started
    segment: float                             # the task's segment duration as certified
    plans: list[tuple] = field(default_factory=list)   # _Link.plans
    task_window: tuple[float, float] | None = None
    reason_no_plan: str = ""
    certification: list[str] = field(default_factory=list)
    return_refused: list[str] = field(default_factory=list)
    return_path: ReturnPath | None = None
    return_end: float | None = None


def run_demo(args: argparse.Namespace) -> int:
    """``sysid-demo`` after its flags are parsed: resolve, refuse or launch, then evaluate
    (exit codes: :mod:`sysid_ros._src.demo.demo_cli`)."""
    run = _resolve(args)
    if isinstance(run, int):      # bad input, or --envelope answered
        return run
    why = _refusal(run)
    if why:
        _log(f"refused: {why}")
        return EXIT_REFUSED
    task = _task_plan(run)
    if isinstance(task, int):
        return task
    return _evaluate(run, task, _run_graph(run, task))


def _resolve(args: argparse.Namespace) -> RunSettings | int:
    """The run's robot, prior and output folder; an exit code on bad input or after
    ``--envelope``."""
    # the nodes load the calibration too; this process certifies with the same model
    calib = str(Path(args.calibration).resolve()) if args.calibration else None
    try:
        full_robot = load_robot(args.robot, None, calib)
    except (SysidError, OSError, ValueError) as exc:
        _log(f"bad input: {exc}")
        return EXIT_BAD_INPUT
    demo_cfg = full_robot.config.get("demo", {})      # (the arm view reads it as it is)
    if args.envelope:
        return _envelope(full_robot, args.out)
    if "waypoints" not in demo_cfg:
        _log(f"config/{args.robot}.yaml has no demo.waypoints: the demo needs a task")
        return EXIT_BAD_INPUT
    out = args.out or Path("out") / time.strftime("demo-%Y%m%d-%H%M%S")
    out = out.resolve()
    try:
        prior = demo_prior(full_robot, args.prior, args.controller)
    except DemoConfigError as exc:
        _log(str(exc))
        return EXIT_BAD_INPUT
    robot_arg, full_robot = _run_facts(args.robot, full_robot, prior, calib, out)
    # B1 + Z1: the arm with the trunk as base (demo/floating.py), built once with the run's prior
    # (its disturbance bound depends on it and takes ~1 s)
    return RunSettings(args, calib, full_robot, arm_view(full_robot), robot_arg, prior, demo_cfg,
                       out)


def _run_facts(robot_arg: str, full_robot: Robot, prior: str, calib: str | None,
               out: Path) -> tuple[str, Robot]:
    """(robot:= argument, robot) of the run: the robot file itself, or its copy in ``out``
    with the run's prior."""
    if prior:
        # every node reads the prior from the robot facts: give them one file with this prior
        robot_arg = str(robot_with_prior(full_robot, prior, out))
        full_robot = load_robot(robot_arg, None, calib)
        _log(f"θ_e prior '{prior}' (robot facts for this run: {robot_arg})")
    if not prior and ((full_robot.config.get("demo") or {}).get("prior_box")
                      and full_robot.floating_base):
        robot_arg = str(robot_file_with_prior_box(full_robot, out))
        full_robot = load_robot(robot_arg, None, calib)
        _log(f"θ_e prior: demo.prior_box (robot facts for this run: {robot_arg})")
    return robot_arg, full_robot


def _refusal(run: RunSettings) -> str:
    """Why the run must not start, the first premise it breaks ('' : it may start)."""
    for check in (_velocity_refusal, _envelope_refusal, _calibration_refusal,
                  _identifier_refusal, _start_pose_refusal):
        why = check(run)
        if why:
            return why
    return ""


def _velocity_refusal(run: RunSettings) -> str:
    if not (run.args.hardware_like and run.args.controller == "robust"):
        return ""
    # the law holds V <= V_max for the velocities it is fed (demo/velocity_premise.py)
    return controller_velocity_refusal(run.full_robot)


def _envelope_refusal(run: RunSettings) -> str:
    if not (run.full_robot.floating_base and run.args.controller == "robust"):
        return ""
    outside = envelope_refusal(run.full_robot, run.args.payload)
    if not outside:
        return ""
    return (f"outside the operating envelope (sysid-demo --robot {run.args.robot} "
            f"--envelope); limiting premise: {outside[0]}"
            + (f" (and {len(outside) - 1} more: {'; '.join(outside[1:3])})"
               if len(outside) > 1 else ""))


def _calibration_refusal(run: RunSettings) -> str:
    if not (run.args.hardware_like and not run.calib and run.args.controller == "robust"):
        return ""
    # the controller's and the planner's friction/offset box is the robot file's, the
    # catalogue robot's; the simulated one is drawn up to 50 % off it, with dry friction and
    # offsets outside it: their guarantees would rest on a premise the run breaks
    return ("--hardware-like without --calibration: the controller's and the "
            "planner's friction box is the catalogue robot's, which the simulated robot lies "
            "outside (simulation.hardware_like.truth), so nothing they certify would hold. "
            "Calibrate it first: sysid-sim-record, sysid-calibrate, then --calibration "
            "calib.yaml (README)")


def _identifier_refusal(run: RunSettings) -> str:
    if not run.args.hardware_like:
        return ""
    # the identifier node would stop at start on a profile it cannot bound: say so here,
    # with the node's own translation of what the launch gives it
    try:
        identification_overrides(run.full_robot, {"hardware_like": True, "calibration": run.calib})
    except SimConfigError as exc:
        return f"the identifier cannot state this hardware-like data's bounds: {exc}"
    return ""


def _start_pose_refusal(run: RunSettings) -> str:
    args, robot, prior = run.args, run.robot, run.prior
    if not (args.controller == "robust" and args.trajectories > 0):
        return ""
    home = home_posture(robot)
    refusal = start_refusal(robot, home)
    # dry friction makes data at rest uninformative (the Z1's reason): hardware-like data
    # have it, so the box cannot shrink before a certified motion
    if refusal and not (run.demo_cfg.get("refuse_uncertified_start", False)
                        or args.hardware_like):
        # the identifier may still shrink the box from data at rest (the Gen3: no dry
        # friction, so the static torques inform θ_e); the planner waits for that box
        _log(f"note: from the prior '{prior}' the planner cannot certify holding the start "
             f"pose ({refusal[0]}); it waits for the identifier's first box")
        return ""
    if not refusal:
        return ""
    return (f"from the prior '{prior or 'of the robot file'}' the planner cannot "
            f"certify even holding the start pose {home.tolist()}, so no motion can be "
            f"certified ({'; '.join(refusal[:2])}). Choose a payload class that can "
            f"(--prior, identification.priors in {robot.config_path}; docs/theory/planner.md#sound-reachability)")


def _task_plan(run: RunSettings) -> TaskPlan | int:
    """The payload (drawn in the prior's class unless ``--payload``) and the task; an exit
    code on bad input."""
    args, demo_cfg, robot = run.args, run.demo_cfg, run.robot
    waypoints = [np.asarray(w, float) for w in demo_cfg["waypoints"]]
    klass = class_prior(run.full_robot)
    payload, payload_desc, payload_params = args.payload, "", ""
    if klass is not None and payload is None:
        # a payload of the class, not its catalogued centre: the final box's centre would
        # equal the truth whether or not anything was learnt
        try:
            draw = draw_in_class(run.full_robot, klass.lower, klass.upper, args.seed)
        except SysidError as exc:
            _log(f"bad input: {exc}")
            return EXIT_BAD_INPUT
        payload = draw.payload.mass
        payload_params = str(write_payload_params(draw.payload, run.out))
        payload_desc = payload_text(run.prior or "demo.prior_box", draw)
        _log(f"payload: {payload_desc}")
    if payload is None:
        payload = float(demo_cfg.get("payload", 3.63))
    task_start = np.asarray(demo_cfg.get("start", home_posture(robot)), float)
    segment = args.segment if args.segment is not None else float(demo_cfg.get("segment", 1.0))
    return TaskPlan(payload, payload_desc, payload_params, klass, waypoints, task_start,
                    float(demo_cfg.get("return_duration", 3.0)),
                    TaskCertifier(robot, task_start, waypoints, segment),
                    obstacles_from_config(robot.config.get("planner", {}).get("obstacles")))


def _launch_args(run: RunSettings, task: TaskPlan) -> dict[str, str]:
    """The arguments of launch/sim.launch.yaml for this run."""
    args = run.args
    return {
        "robot": run.robot_arg, "payload": str(task.payload), "record": "true",
        **({"payload_params": task.payload_params} if task.payload_params else {}),
        "output_dir": str(run.out / "bag"), "max_trajectories": str(args.trajectories),
        "controller_mode": args.controller,
        "enable_planner": "true" if args.trajectories > 0 else "false",
        "sim_mode": args.sim_mode,
        "hardware_like": "true" if args.hardware_like else "false",
        "hardware_seed": str(args.hardware_seed),
        "calibration": run.calib or "",
        # identifier, controller, recorder, this process (+ planner): all see the first step
        "wait_subscribers": str(4 + (args.trajectories > 0)),
    }


class _Link:
    """This process's node in the graph: the planner's plans, the identifier's boxes and the
    joint states it hears (written by the executor's thread), and the topic it publishes the
    return and the task on."""

    def __init__(self, robot: Robot) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from sysid_ros._src.nodes.messages import bounds_from_msg
        from sysid_ros._src.nodes.qos import qos_for_topic

        self.robot = robot
        self.plans: list[tuple] = []      # (start, end, q_end, q0, dq0, ddq0) of each plan
        self.bounds: ParameterBox | None = None
        self.n_bounds = 0
        self.q: np.ndarray | None = None
        self.t_js: float | None = None
        self._bounds_from_msg = bounds_from_msg
        rclpy.init()
        self.node = Node("sysid_demo", parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.node.create_subscription(JointTrajectory, "/sysid/desired_trajectory", self._on_plan,
                                      qos_for_topic("/sysid/desired_trajectory"))
        self.node.create_subscription(Float64MultiArray, "/sysid/payload_bounds", self._on_bounds,
                                      qos_for_topic("/sysid/payload_bounds"))
        self.node.create_subscription(JointState, "/joint_states", self._on_js,
                                      qos_for_topic("/joint_states"))
        self._publisher = self.node.create_publisher(JointTrajectory, "/sysid/desired_trajectory",
                                                     qos_for_topic("/sysid/desired_trajectory"))
        # Callbacks (1 kHz /clock and joint_states) run on their own thread, so this process's view
        # of sim time does not fall behind while the loop below works; a trajectory stamped from a
        # lagging clock would start in the past and make the controller's reference jump.
        self._executor = SingleThreadedExecutor()
        self._executor.add_node(self.node)
        self._spinner = threading.Thread(target=self._executor.spin, daemon=True)
        self._spinner.start()

    def _on_plan(self, msg: Any) -> None:
        if msg.header.frame_id != "sysid_demo_task":
            start = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            end = msg.points[-1].time_from_start
            p0 = msg.points[0]
            self.plans.append((start, start + end.sec + end.nanosec * 1e-9,
                               np.asarray(msg.points[-1].positions),
                               np.asarray(p0.positions), np.asarray(p0.velocities),
                               np.asarray(p0.accelerations)))

    def _on_bounds(self, msg: Any) -> None:
        try:
            self.bounds = self._bounds_from_msg(msg)
            self.n_bounds += 1
        except ValueError:
            pass

    def _on_js(self, msg: Any) -> None:
        self.t_js = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        index = {n: i for i, n in enumerate(msg.name)}
        if all(n in index for n in self.robot.joint_names):
            self.q = np.array([msg.position[index[n]] for n in self.robot.joint_names])

    def now(self) -> float:
        # the newest of the node clock and the last joint-state stamp: both come from the sim
        return max(self.node.get_clock().now().nanoseconds * 1e-9, self.t_js or 0.0)

    def publish(self, start: float, times: Any, positions: Any) -> None:
        self._publisher.publish(_trajectory(self.robot, start, times, positions))

    def close(self) -> None:
        import rclpy

        self._executor.shutdown()
        self._spinner.join(timeout=5.0)      # the spin thread must be out before destruction
        self.node.destroy_node()
        rclpy.shutdown()


class _Display:
    """The phase bar (each exciting trajectory, the return, the task) and the status lines."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.n = args.trajectories
        self.bar = progress.bar(self.n + 2, "demo", not args.no_progress, unit="phase",
                                bar_format="{desc}: {n_fmt}/{total_fmt} phases [{elapsed}] {postfix}")
        self.shown_plans = 0
        self.last_status = 0.0

    def show(self, t: float, link: _Link, outcome: Outcome) -> None:
        new_plans = min(len(link.plans), self.n) - self.shown_plans
        if new_plans > 0:
            self.bar.update(new_plans)
            self.shown_plans += new_plans
        self.bar.set_postfix_str(f"t_sim {t:.1f} s, "
                                 + ("task" if outcome.task_window else "return" if outcome.return_end
                                    else "identification"), refresh=False)
        if time.monotonic() - self.last_status > 3.0 and link.t_js is not None:
            self.last_status = time.monotonic()
            b = link.bounds
            mass = f"m ∈ [{b.lower[0]:.3f}, {b.upper[0]:.3f}] kg" if b else "no bounds yet"
            phase = "task" if outcome.task_window else "identification"
            _log(f"t_sim = {t:6.2f} s  {phase}: {len(link.plans)}/{self.n}"
                 f" plans, {link.n_bounds} bound updates, {mass}")

    def identification_done(self) -> None:
        self.bar.update(self.n - self.shown_plans + 1)
        self.shown_plans = self.n


def _run_graph(run: RunSettings, task: TaskPlan) -> Outcome:
    """Start the graph, follow the run until the task window has passed (or it cannot go on),
    stop the graph."""
    run.out.mkdir(parents=True, exist_ok=True)
    log_file = (run.out / "graph.log").open("w")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    launch_args = _launch_args(run, task)
    _log(f"output folder {run.out}")
    _log(f"starting graph launch/sim.launch.yaml {' '.join(f'{k}:={v}' for k, v in launch_args.items())}")
    link = _Link(run.robot)
    outcome = Outcome(time.monotonic(), task.certify.segment, link.plans)
    display = _Display(run.args)
    with launch_graph("sim", launch_args, output=lambda line: log_file.write(line + "\n")) as graph:
        try:
            _follow(run, task, link, graph, outcome, display)
        finally:
            display.bar.close()
            link.close()
    log_file.close()
    return outcome


def _follow(run: RunSettings, task: TaskPlan, link: _Link, graph: Any, outcome: Outcome,
            display: _Display) -> None:
    """Identification (the planner's trajectories), the certified return to the task's start,
    the task; until its window has passed, a node exits or the wall-clock limit."""
    args = run.args
    while time.monotonic() - outcome.wall0 < args.timeout:
        time.sleep(0.02)
        if not graph.running:
            _log("a required node exited; see graph.log")
            break
        t = link.now()
        display.show(t, link, outcome)
        if outcome.return_end is None:
            if _end_identification(run, task, link, outcome, display, t):
                break
        elif outcome.task_window is None and t > outcome.return_end:
            _start_task(run, task, link, outcome, display)
        elif outcome.task_window is not None and t > outcome.task_window[1] + 0.2:
            break
    else:
        _log(f"wall-clock limit of {args.timeout:.0f} s reached")


def _end_identification(run: RunSettings, task: TaskPlan, link: _Link, outcome: Outcome,
                        display: _Display, t: float) -> bool:
    """Once every plan has run (or the planner stalls), publish the return to the task's
    start; True: the run cannot go on."""
    args, plans = run.args, link.plans
    done = (len(plans) >= args.trajectories
            and t > (plans[-1][1] + 0.5 if plans else 2.0))
    stalled = (link.t_js is not None
               and t > (plans[-1][1] if plans else 0.0) + args.stall_timeout)
    if not ((done or stalled) and link.q is not None):
        return False
    if stalled and not done:
        outcome.reason_no_plan = (f"the planner published {len(plans)} of "
                                  f"{args.trajectories} trajectories")
        _log(outcome.reason_no_plan)
        if args.controller == "robust":
            # the planner may still publish a (late, certified) plan: a return or task
            # published now would fight it, and neither is certified from this state; the
            # arm stays on its last certified trajectory, which ends at rest
            _log("identification incomplete: no return, no task")
            return True
    q0 = plans[-1][2] if plans else link.q
    if args.controller == "robust" and not _certify_return(run, task, link, outcome, q0):
        return True
    if outcome.return_path is None:
        outcome.return_path = ReturnPath.direct(q0, task.start, task.return_duration)
    start = link.now() + LEAD      # fresh: sim time moved on while certifying
    link.publish(start, outcome.return_path.times, outcome.return_path.positions)
    outcome.return_end = start + float(outcome.return_path.times[-1]) + 0.5
    display.identification_done()
    _log(f"identification done at t_sim = {t:.2f} s; returning to the task start pose")
    return False


def _certify_return(run: RunSettings, task: TaskPlan, link: _Link, outcome: Outcome,
                    q0: np.ndarray) -> bool:
    """Certify the return from ``q0`` into ``outcome``; False: refused."""
    # the method never runs an uncertified motion: the return too; if the direct move is
    # refused, back through the plans' starts
    box = _controller_box(run.robot, run.args.controller, link.bounds)
    if box is None:
        outcome.return_refused = ["no box to certify it with"]
    else:
        outcome.return_path = task.certify.return_path(
            box, q0, task.start, task.return_duration, vias=return_vias(_executed(link.plans)))
        outcome.return_refused = outcome.return_path.reasons
    if outcome.return_refused:
        _log(f"return NOT certifiable ({'; '.join(outcome.return_refused[:2])});"
             " the arm stays where its last certified trajectory ends")
        return False
    path = outcome.return_path
    assert path is not None
    if path.direct_reasons:
        _log("return certified" + _return_detail(path, task.return_duration) + ": "
             + "; ".join(path.direct_reasons[:2]))
    return True


def _start_task(run: RunSettings, task: TaskPlan, link: _Link, outcome: Outcome,
                display: _Display) -> None:
    """Certify the task and publish it (the robust controller: only if certified)."""
    args, certify = run.args, task.certify
    # certify with the box the controller holds now (it kept shrinking during the return),
    # then run the task from rest at the start pose
    box = _controller_box(run.robot, args.controller, link.bounds)
    if box is None:
        outcome.certification = ["the PID baseline has no model box"]
    elif args.controller == "robust":
        # refused at its duration, the same path is tried slower
        timing = certify.task(box)
        outcome.certification, outcome.segment = timing.reasons, timing.segment
        if timing.asked_reasons and not timing.reasons:
            _log(f"the task with {certify.segment:.1f}-s segments is refused ("
                 + "; ".join(timing.asked_reasons[:2])
                 + f"); certified with {outcome.segment:.1f}-s segments")
    else:
        outcome.certification = certify(box)
    start = link.now() + LEAD      # fresh: sim time moved on while certifying
    times = outcome.segment * np.arange(len(task.waypoints) + 1)
    outcome.task_window = (start, start + times[-1] + 1.0)
    display.bar.update(1)
    certification = outcome.certification
    if certification and args.controller == "robust":
        # the method never runs an uncertified motion: the arm holds the start pose through
        # the task window instead
        _log(f"task NOT certifiable ({'; '.join(certification[:2])}); not "
             "executed, the arm holds the start pose")
        return
    _log("task certified for every θ_e in the controller's box"
         if not certification else
         f"task NOT certifiable ({'; '.join(certification[:2])}); "
         "baseline: executing it anyway to show what happens")
    link.publish(start, times, [task.start, *task.waypoints])
    _log(f"move-and-place from t_sim = {start:.2f} s")


def _evaluate(run: RunSettings, task: TaskPlan, outcome: Outcome) -> int:
    """Evaluate the recorded bag into the report; the exit code."""
    bag_root = run.out / "bag"
    bags = sorted(p for p in bag_root.glob("*") if p.is_dir()) if bag_root.exists() else []
    if not bags:
        _log("no bag was recorded; see graph.log")
        return EXIT_NO_BAG
    _log(f"evaluating {bags[-1]}")
    data = load_run(bags[-1], run.robot)
    window = outcome.task_window or (float(data.t[-1]), float(data.t[-1]))
    ctrl = run.robot.config.get("controller", {})
    ev = evaluate(data, run.robot, task.obstacles, window, float(ctrl.get("Kr", 5.0)),
                  float(ctrl.get("V_max", 0.02)))
    if outcome.reason_no_plan:
        ev.fail(f"identification: {outcome.reason_no_plan}")
    if outcome.certification:
        ev.fail("task not certifiable for every θ_e in the controller's box: "
                + "; ".join(outcome.certification[:3]))
    if outcome.return_refused:
        ev.fail("the return to the task's start is not certifiable for every θ_e in the "
                "controller's box (not executed): " + "; ".join(outcome.return_refused[:3]))
    header = _header(run, task, outcome, bags[-1])
    _add_findings(run, task, outcome, bags[-1], ev, header)
    report = write_report(run.out, data, ev, run.robot, header, task.klass)
    if task.klass is not None:
        _log(f"mass: {mass_placement(task.klass, ev.truth, ev.final_bounds)}")
    _log(f"result: {'success' if ev.success else 'failure'}"
         + (f" ({'; '.join(ev.reasons)})" if ev.reasons else ""))
    print(report)
    return EXIT_SUCCESS if ev.success else EXIT_FAILURE


def _header(run: RunSettings, task: TaskPlan, outcome: Outcome, bag: Path) -> dict[str, Any]:
    """The report's header: what ran and what was certified before it ran."""
    args, o = run.args, outcome
    return {"robot": args.robot, "payload": task.payload_desc or f"dumbbell {task.payload} kg",
            "θ_e prior": run.prior or "the robot file's inline box",
            "controller": args.controller,
            "certified exciting trajectories": f"{len(o.plans)} of {args.trajectories} requested",
            "return certified before execution": (
                "no" if o.return_refused else "not reached" if o.return_end is None
                else "yes" + _return_detail(o.return_path, task.return_duration)
                if args.controller == "robust" else "not checked (baseline)"),
            "task certified before execution": (
                "no" if o.task_window and o.certification else "not reached" if not o.task_window
                else "yes" + (f" (with {o.segment:.1f}-s segments: the {task.certify.segment:.1f}-s "
                              "task was refused)" if o.segment != task.certify.segment else "")),
            "bag": str(bag), "wall time": f"{time.monotonic() - o.wall0:.0f} s"}


def _add_findings(run: RunSettings, task: TaskPlan, outcome: Outcome, bag: Path,
                  ev: Evaluation, header: dict[str, Any]) -> None:
    """The identifiability floor (fixed base) or the floating base's findings, into the
    header and the verdict."""
    # a floating base: the full robot (its arm rows see the trunk), the task's motions
    floor = floor_summary(run.full_robot if run.full_robot.floating_base else run.robot, ev)
    if floor is not None:
        header["identifiability floor of the stated boxes"] = floor
    if not run.full_robot.floating_base:
        _plant_findings(run, ev, header)
        return
    # the closed loop: from the first commanded motion (the landing before it is not)
    task_window, return_end = outcome.task_window, outcome.return_end
    starts = ([p[0] for p in outcome.plans] + ([task_window[0]] if task_window else [])
              + ([return_end - task.return_duration - 0.5] if return_end is not None else []))
    extra, violations = floating_base_findings(
        run.full_robot, run.robot, bag, (min(starts), np.inf) if starts else None)
    header.update(extra)
    for reason in violations:
        ev.fail(reason)



def _plant_findings(run: RunSettings, ev: Evaluation, header: dict[str, Any]) -> None:
    """Hardware-like, robust controller: the drawn arm's friction against the controller's box
    (demo/plant_premise.py), into the header and the verdict."""
    if not (run.args.hardware_like and run.args.controller == "robust"):
        return
    outside = simulated_friction_violations(load_robot(run.robot_arg), run.robot,
                                            run.args.hardware_seed)
    header["simulated arm's friction in the controller's box"] = (
        "yes" if not outside else f"no ({len(outside)}: {'; '.join(outside[:3])})")
    for reason in outside:
        ev.fail(f"premise: the arm's friction {reason} (controller.torque_offset, "
                "control/offset.py)")
