"""``sysid-demo``: the closed-loop demo on the built-in simulator (README command 1 runs it, with
``--hardware-like`` on a calibrated drawn Gen3, through scripts/demo_hardware_like.sh).

Gen3 carrying the 8 lb (3.63 kg) dumbbell, the obstacle layout of S3's experiment (b); or
``--robot z1`` with the Z1's demo section (a 1 kg dumbbell, a platform and a post). The graph
(``sim``, ``identifier``, ``exciting_planner``, ``robust_controller``, ``recorder``) is started by
the runner from ``launch/sim.launch.yaml`` — the same file ``ros2 launch`` reads. Phases:

1. identification: the planner publishes ``--trajectories`` certified exciting trajectories
   (receding horizon), the identifier updates the bounds after each;
2. move-and-place: this process checks the precomputed minimum-jerk task (two degree-5
   rest-to-rest segments of ``--segment`` seconds, as in the paper) with the planner's sound
   reachability for every θ_e in the controller's box (identified bounds; the prior box for
   ``conservative``), then publishes it on the same topic; it is tracked by the controller;
3. report: the recorded bag is evaluated (``sysid_ros.demo.report``) into ``report.md`` and PNGs.

Progress goes to stderr; the last line on stdout is the path of ``report.md``.

The θ_e prior every node starts from is ``--prior`` (an entry of the robot file's
``identification.priors``; default: ``demo.prior`` for the robust controller, the robot file's
``identification.prior`` for the baselines); the run's robot facts (the robot file with that
prior) are written to the output folder and passed to every node (``sysid_ros.demo.priors``).
Before starting, the robust run checks that the planner can certify holding the start pose for
every θ_e in that prior; if not and the robot file's ``demo.refuse_uncertified_start`` is true
(the Z1: its dry friction makes data at rest uninformative, so the box cannot shrink before a
certified motion), no motion can ever be certified and the demo refuses; otherwise (the Gen3)
the planner waits for the identifier's first box, learnt at rest.

Exit codes: 0 — ``Result: success``; 1 — ``Result: failure`` (report written, reasons in it and
on stderr); 2 — bad input (robot file without a demo task, unknown prior, unreadable
calibration); 3 — refused before starting: the prior cannot be certified at the start pose, or
``--hardware-like`` without ``--calibration`` for the robust controller, or with velocities off by
more than the robot file's ``controller.velocity_error_max`` (nothing ran); 4 — the run
produced no bag to evaluate (a node failed to start; see graph.log).

``--hardware-like --calibration calib.yaml``: the same run on hardware-like data of a robot
drawn off the catalogue (docs/guide/hardware-like-data.md), every node on the calibrated facts; dry
friction makes data at rest uninformative, so the prior must certify the start (a catalogued
payload class such as the Gen3's ``dumbbell_8lb``).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sysid_ros import progress

if TYPE_CHECKING:
    from sysid_ros.demo.task import ReturnPath
    from sysid_ros.model.box import ParameterBox

__all__ = ["main", "EXIT_SUCCESS", "EXIT_FAILURE", "EXIT_BAD_INPUT", "EXIT_REFUSED",
           "EXIT_NO_BAG"]

LEAD = 0.5   # s of sim time between publishing a trajectory and its start
EXIT_SUCCESS, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_REFUSED, EXIT_NO_BAG = 0, 1, 2, 3, 4


def _trajectory(robot, start: float, times, positions):
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
    from sysid_ros.planning.trajectory import QuinticTrajectory

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


def _controller_box(robot, mode: str, bounds: ParameterBox | None) -> ParameterBox | None:
    """The θ_e box the controller tracks the task with (None: PID has no box)."""
    from sysid_ros.control.prior import prior_box
    from sysid_ros.model.box import theta_e_box

    if mode == "robust" and bounds is not None:
        return bounds
    if mode in ("conservative", "robust"):
        return prior_box(robot)
    if mode == "wrong":
        theta = robot.theta_e()          # the unloaded model, taken as exact
        return theta_e_box(theta, theta)
    return None


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="sysid-demo", description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="gen3")
    ap.add_argument("--prior", default=None,
                    help="θ_e prior: an entry of the robot file's identification.priors (default: "
                    "demo.prior for the robust controller, identification.prior for baselines)")
    ap.add_argument("--payload", type=float, default=None,
                    help="dumbbell mass, kg (default: one drawn in a class prior, else "
                    "demo.payload)")
    ap.add_argument("--seed", type=int, default=0,
                    help="the payload drawn in a class prior (docs/guide/simulation.md)")
    ap.add_argument("--trajectories", type=int, default=4, help="exciting trajectories")
    ap.add_argument("--controller", default="robust",
                    choices=["robust", "wrong", "conservative", "pid"],
                    help="controller mode during the whole run (paper baselines)")
    ap.add_argument("--segment", type=float, default=None,
                    help="task segment duration, s (default: config demo.segment, else 1.0)")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default out/demo-<time>)")
    ap.add_argument("--timeout", type=float, default=280.0, help="wall-clock limit, s")
    ap.add_argument("--stall-timeout", type=float, default=15.0,
                    help="sim seconds without a new certified plan before the task starts anyway")
    ap.add_argument("--hardware-like", action="store_true",
                    help="the simulator publishes hardware-like data (the robot file's "
                         "simulation.hardware_like: a robot drawn off the catalogue, offsets, "
                         "dry friction, drops, jitter, noise) and the identifier states that "
                         "profile's bounds (docs/guide/hardware-like-data.md)")
    ap.add_argument("--hardware-seed", type=int, default=0,
                    help="with --hardware-like: which drawn robot (the sim node's hardware_seed; "
                         "calibrate the same one: sysid-sim-record --hardware-seed)")
    ap.add_argument("--calibration", default="",
                    help="sysid-calibrate result (calib.yaml) for the identifier, planner and "
                         "controller, as on hardware (with --hardware-like: of the same drawn "
                         "robot, docs/guide/hardware-like-data.md)")
    ap.add_argument("--sim-mode", default="lockstep", choices=["lockstep", "realtime"],
                    help="lockstep: the simulator waits for each command (exact closed loop)")
    ap.add_argument("--envelope", action="store_true",
                    help="floating base: print the operating envelope (payload classes x V_max "
                    "for the demo's task, the legs' contract, the limiting premise of each) and "
                    "plot it (--out/envelope.png); nothing runs (sysid_ros.demo.envelope)")
    ap.add_argument("--no-progress", action="store_true",
                    help="no progress bar of the phases on stderr (shown on a terminal only)")
    return ap.parse_args(argv)


def _envelope(full_robot, out: Path | None) -> int:
    """``--envelope``: print the envelope of ``demo.envelope``'s grid and plot it."""
    from sysid_ros.demo.envelope import envelope, format_envelope, plot_envelope

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


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    from sysid_ros.demo.report import evaluate, floor_summary, load_run, write_report
    from sysid_ros.demo.task import ReturnPath, TaskCertifier, return_vias
    from sysid_ros.launcher import launch_graph
    from sysid_ros.model.robots import load_robot
    from sysid_ros.nodes.qos import qos_for_topic
    from sysid_ros.nodes.messages import bounds_from_msg
    from sysid_ros.planning.obstacles import obstacles_from_config

    from sysid_ros.demo.errors import DemoConfigError
    from sysid_ros.demo.priors import demo_prior, robot_with_prior, start_refusal

    from sysid_ros.control.arm_view import arm_view
    # the nodes load the calibration too; this process certifies with the same model
    calib = str(Path(args.calibration).resolve()) if args.calibration else None
    from sysid_ros.errors import SysidError
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
    robot_arg = args.robot
    if prior:
        # every node reads the prior from the robot facts: give them one file with this prior
        robot_arg = str(robot_with_prior(full_robot, prior, out))
        full_robot = load_robot(robot_arg, None, calib)
        _log(f"θ_e prior '{prior}' (robot facts for this run: {robot_arg})")
    if not prior and (demo_cfg.get("prior_box") and full_robot.floating_base):
        from sysid_ros.demo.floating import robot_file_with_prior_box
        robot_arg = str(robot_file_with_prior_box(full_robot, out))
        full_robot = load_robot(robot_arg, None, calib)
        _log(f"θ_e prior: demo.prior_box (robot facts for this run: {robot_arg})")
    # B1 + Z1: the arm with the trunk as base (demo/floating.py), built once with the run's prior
    # (its disturbance bound depends on it and takes ~1 s)
    robot = arm_view(full_robot)
    if args.hardware_like and args.controller == "robust":
        # the law holds V <= V_max for the velocities it is fed (demo/velocity_premise.py)
        from sysid_ros.demo.velocity_premise import controller_velocity_refusal
        why = controller_velocity_refusal(full_robot)
        if why:
            _log(f"refused: {why}")
            return EXIT_REFUSED
    if full_robot.floating_base and args.controller == "robust":
        from sysid_ros.demo.floating import envelope_refusal
        outside = envelope_refusal(full_robot, args.payload)
        if outside:
            _log(f"refused: outside the operating envelope (sysid-demo --robot {args.robot} "
                 f"--envelope); limiting premise: {outside[0]}"
                 + (f" (and {len(outside) - 1} more: {'; '.join(outside[1:3])})"
                    if len(outside) > 1 else ""))
            return EXIT_REFUSED
    if args.hardware_like and not calib and args.controller == "robust":
        # the controller's and the planner's friction/offset box is the robot file's, the
        # catalogue robot's; the simulated one is drawn up to 50 % off it, with dry friction and
        # offsets outside it: their guarantees would rest on a premise the run breaks
        _log("refused: --hardware-like without --calibration: the controller's and the "
             "planner's friction box is the catalogue robot's, which the simulated robot lies "
             "outside (simulation.hardware_like.truth), so nothing they certify would hold. "
             "Calibrate it first: sysid-sim-record, sysid-calibrate, then --calibration "
             "calib.yaml (README)")
        return EXIT_REFUSED
    if args.hardware_like:
        # the identifier node would stop at start on a profile it cannot bound: say so here,
        # with the node's own translation of what the launch gives it
        from sysid_ros.nodes.identifier_params import identification_overrides
        from sysid_ros.simulation.errors import SimConfigError
        try:
            identification_overrides(full_robot, {"hardware_like": True, "calibration": calib})
        except SimConfigError as exc:
            _log(f"refused: the identifier cannot state this hardware-like data's bounds: {exc}")
            return EXIT_REFUSED
    if args.controller == "robust" and args.trajectories > 0:
        home = np.asarray(robot.config["simulation"]["home"], float)
        refusal = start_refusal(robot, home)
        # dry friction makes data at rest uninformative (the Z1's reason): hardware-like data
        # have it, so the box cannot shrink before a certified motion
        if refusal and not (demo_cfg.get("refuse_uncertified_start", False)
                            or args.hardware_like):
            # the identifier may still shrink the box from data at rest (the Gen3: no dry
            # friction, so the static torques inform θ_e); the planner waits for that box
            _log(f"note: from the prior '{prior}' the planner cannot certify holding the start "
                 f"pose ({refusal[0]}); it waits for the identifier's first box")
            refusal = []
        if refusal:
            _log(f"refused: from the prior '{prior or 'of the robot file'}' the planner cannot "
                 f"certify even holding the start pose {home.tolist()}, so no motion can be "
                 f"certified ({'; '.join(refusal[:2])}). Choose a payload class that can "
                 f"(--prior, identification.priors in {robot.config_path}; docs/theory/planner.md#sound-reachability)")
            return EXIT_REFUSED
    waypoints = [np.asarray(w, float) for w in demo_cfg["waypoints"]]
    from sysid_ros.demo.class_payload import class_prior, payload_text, write_payload_params
    from sysid_ros.simulation.offcentre import draw_in_class
    klass = class_prior(full_robot)
    payload_desc, payload_params = "", ""
    if klass is not None and args.payload is None:
        # a payload of the class, not its catalogued centre: the final box's centre would
        # equal the truth whether or not anything was learnt
        try:
            draw = draw_in_class(full_robot, klass.lower, klass.upper, args.seed)
        except SysidError as exc:
            _log(f"bad input: {exc}")
            return EXIT_BAD_INPUT
        args.payload = draw.payload.mass
        payload_params = str(write_payload_params(draw.payload, out))
        payload_desc = payload_text(prior or "demo.prior_box", draw)
        _log(f"payload: {payload_desc}")
    if args.payload is None:
        args.payload = float(demo_cfg.get("payload", 3.63))
    task_start = np.asarray(demo_cfg.get("start", robot.config["simulation"]["home"]), float)
    return_duration = float(demo_cfg.get("return_duration", 3.0))
    segment = args.segment if args.segment is not None else float(demo_cfg.get("segment", 1.0))
    certify = TaskCertifier(robot, task_start, waypoints, segment)
    obstacles = obstacles_from_config(robot.config.get("planner", {}).get("obstacles"))
    bag_root = out / "bag"
    out.mkdir(parents=True, exist_ok=True)
    log_file = (out / "graph.log").open("w")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

    launch_args = {
        "robot": robot_arg, "payload": str(args.payload), "record": "true",
        **({"payload_params": payload_params} if payload_params else {}),
        "output_dir": str(bag_root), "max_trajectories": str(args.trajectories),
        "controller_mode": args.controller,
        "enable_planner": "true" if args.trajectories > 0 else "false",
        "sim_mode": args.sim_mode,
        "hardware_like": "true" if args.hardware_like else "false",
        "hardware_seed": str(args.hardware_seed),
        "calibration": calib or "",
        # identifier, controller, recorder, this process (+ planner): all see the first step
        "wait_subscribers": str(4 + (args.trajectories > 0)),
    }
    _log(f"output folder {out}")
    _log(f"starting graph launch/sim.launch.yaml {' '.join(f'{k}:={v}' for k, v in launch_args.items())}")
    rclpy.init()
    node = Node("sysid_demo", parameter_overrides=[Parameter("use_sim_time", value=True)])
    state: dict = {"plans": [], "bounds": None, "n_bounds": 0, "q": None, "t_js": None}

    def on_plan(msg: JointTrajectory) -> None:
        if msg.header.frame_id != "sysid_demo_task":
            start = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            end = msg.points[-1].time_from_start
            p0 = msg.points[0]
            state["plans"].append((start, start + end.sec + end.nanosec * 1e-9,
                                   np.asarray(msg.points[-1].positions),
                                   np.asarray(p0.positions), np.asarray(p0.velocities),
                                   np.asarray(p0.accelerations)))

    def on_bounds(msg: Float64MultiArray) -> None:
        try:
            state["bounds"] = bounds_from_msg(msg)
            state["n_bounds"] += 1
        except ValueError:
            pass

    def on_js(msg: JointState) -> None:
        state["t_js"] = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        index = {n: i for i, n in enumerate(msg.name)}
        if all(n in index for n in robot.joint_names):
            state["q"] = np.array([msg.position[index[n]] for n in robot.joint_names])

    node.create_subscription(JointTrajectory, "/sysid/desired_trajectory", on_plan,
                             qos_for_topic("/sysid/desired_trajectory"))
    node.create_subscription(Float64MultiArray, "/sysid/payload_bounds", on_bounds,
                             qos_for_topic("/sysid/payload_bounds"))
    node.create_subscription(JointState, "/joint_states", on_js, qos_for_topic("/joint_states"))
    task_pub = node.create_publisher(JointTrajectory, "/sysid/desired_trajectory",
                                     qos_for_topic("/sysid/desired_trajectory"))

    def now() -> float:
        # the newest of the node clock and the last joint-state stamp: both come from the sim
        return max(node.get_clock().now().nanoseconds * 1e-9, state["t_js"] or 0.0)

    # Callbacks (1 kHz /clock and joint_states) run on their own thread, so this process's view
    # of sim time does not fall behind while the loop below works; a trajectory stamped from a
    # lagging clock would start in the past and make the controller's reference jump.
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()

    wall0 = time.monotonic()
    task_window: tuple[float, float] | None = None
    reason_no_plan = ""
    certification: list[str] = []
    return_refused: list[str] = []
    return_path: ReturnPath | None = None
    return_end: float | None = None
    last_status = 0.0
    # phases: each exciting trajectory, the return, the task
    bar = progress.bar(args.trajectories + 2, "demo", not args.no_progress, unit="phase",
                       bar_format="{desc}: {n_fmt}/{total_fmt} phases [{elapsed}] {postfix}")
    shown_plans = 0
    with launch_graph("sim", launch_args, output=lambda line: log_file.write(line + "\n")) as graph:
        try:
            while time.monotonic() - wall0 < args.timeout:
                time.sleep(0.02)
                if not graph.running:
                    _log("a required node exited; see graph.log")
                    break
                t = now()
                new_plans = min(len(state["plans"]), args.trajectories) - shown_plans
                if new_plans > 0:
                    bar.update(new_plans)
                    shown_plans += new_plans
                bar.set_postfix_str(f"t_sim {t:.1f} s, "
                                    + ("task" if task_window else "return" if return_end
                                       else "identification"), refresh=False)
                if time.monotonic() - last_status > 3.0 and state["t_js"] is not None:
                    last_status = time.monotonic()
                    b = state["bounds"]
                    mass = f"m ∈ [{b.lower[0]:.3f}, {b.upper[0]:.3f}] kg" if b else "no bounds yet"
                    phase = "task" if task_window else "identification"
                    _log(f"t_sim = {t:6.2f} s  {phase}: {len(state['plans'])}/{args.trajectories}"
                         f" plans, {state['n_bounds']} bound updates, {mass}")
                if return_end is None:
                    plans = state["plans"]
                    done = (len(plans) >= args.trajectories
                            and t > (plans[-1][1] + 0.5 if plans else 2.0))
                    stalled = (state["t_js"] is not None
                               and t > (plans[-1][1] if plans else 0.0) + args.stall_timeout)
                    if (done or stalled) and state["q"] is not None:
                        if stalled and not done:
                            reason_no_plan = (f"the planner published {len(plans)} of "
                                              f"{args.trajectories} trajectories")
                            _log(reason_no_plan)
                            if args.controller == "robust":
                                # the planner may still publish a (late, certified) plan: a
                                # return or task published now would fight it, and neither
                                # is certified from this state; the arm stays on its last
                                # certified trajectory, which ends at rest
                                _log("identification incomplete: no return, no task")
                                break
                        q0 = plans[-1][2] if plans else state["q"]
                        if args.controller == "robust":
                            # the method never runs an uncertified motion: the return too;
                            # if the direct move is refused, back through the plans' starts
                            box = _controller_box(robot, args.controller, state["bounds"])
                            if box is None:
                                return_refused = ["no box to certify it with"]
                            else:
                                return_path = certify.return_path(
                                    box, q0, task_start, return_duration,
                                    vias=return_vias(_executed(plans)))
                                return_refused = return_path.reasons
                            if return_refused:
                                _log(f"return NOT certifiable ({'; '.join(return_refused[:2])});"
                                     " the arm stays where its last certified trajectory ends")
                                break
                            assert return_path is not None
                            if return_path.direct_reasons:
                                _log("return certified"
                                     + _return_detail(return_path, return_duration) + ": "
                                     + "; ".join(return_path.direct_reasons[:2]))
                        if return_path is None:
                            return_path = ReturnPath.direct(q0, task_start, return_duration)
                        start = now() + LEAD      # fresh: sim time moved on while certifying
                        task_pub.publish(_trajectory(robot, start, return_path.times,
                                                     return_path.positions))
                        return_end = start + float(return_path.times[-1]) + 0.5
                        bar.update(args.trajectories - shown_plans + 1)
                        shown_plans = args.trajectories
                        _log(f"identification done at t_sim = {t:.2f} s; returning to the task "
                             "start pose")
                elif task_window is None and t > return_end:
                    # certify with the box the controller holds now (it kept shrinking during
                    # the return), then run the task from rest at the start pose
                    box = _controller_box(robot, args.controller, state["bounds"])
                    if box is None:
                        certification = ["the PID baseline has no model box"]
                    elif args.controller == "robust":
                        # refused at its duration, the same path is tried slower
                        timing = certify.task(box)
                        certification, segment = timing.reasons, timing.segment
                        if timing.asked_reasons and not timing.reasons:
                            _log(f"the task with {certify.segment:.1f}-s segments is refused ("
                                 + "; ".join(timing.asked_reasons[:2])
                                 + f"); certified with {segment:.1f}-s segments")
                    else:
                        certification = certify(box)
                    start = now() + LEAD      # fresh: sim time moved on while certifying
                    times = segment * np.arange(len(waypoints) + 1)
                    task_window = (start, start + times[-1] + 1.0)
                    bar.update(1)
                    if certification and args.controller == "robust":
                        # the method never runs an uncertified motion: the arm holds the start
                        # pose through the task window instead
                        _log(f"task NOT certifiable ({'; '.join(certification[:2])}); not "
                             "executed, the arm holds the start pose")
                    else:
                        _log("task certified for every θ_e in the controller's box"
                             if not certification else
                             f"task NOT certifiable ({'; '.join(certification[:2])}); "
                             "baseline: executing it anyway to show what happens")
                        task_pub.publish(_trajectory(robot, start, times,
                                                     [task_start, *waypoints]))
                        _log(f"move-and-place from t_sim = {start:.2f} s")
                elif task_window is not None and t > task_window[1] + 0.2:
                    break
            else:
                _log(f"wall-clock limit of {args.timeout:.0f} s reached")
        finally:
            bar.close()
            executor.shutdown()
            spinner.join(timeout=5.0)      # the spin thread must be out before destruction
            node.destroy_node()
            rclpy.shutdown()
    log_file.close()

    n_plans = len(state["plans"])
    bags = sorted(p for p in bag_root.glob("*") if p.is_dir()) if bag_root.exists() else []
    if not bags:
        _log("no bag was recorded; see graph.log")
        return EXIT_NO_BAG
    _log(f"evaluating {bags[-1]}")
    run = load_run(bags[-1], robot)
    window = task_window or (float(run.t[-1]), float(run.t[-1]))
    ctrl = robot.config.get("controller", {})
    ev = evaluate(run, robot, obstacles, window, float(ctrl.get("Kr", 5.0)),
                  float(ctrl.get("V_max", 0.02)))
    if reason_no_plan:
        ev.fail(f"identification: {reason_no_plan}")
    if certification:
        ev.fail("task not certifiable for every θ_e in the controller's box: "
                + "; ".join(certification[:3]))
    if return_refused:
        ev.fail("the return to the task's start is not certifiable for every θ_e in the "
                "controller's box (not executed): " + "; ".join(return_refused[:3]))
    header = {"robot": args.robot, "payload": payload_desc or f"dumbbell {args.payload} kg",
              "θ_e prior": prior or "the robot file's inline box",
              "controller": args.controller,
              "certified exciting trajectories": f"{n_plans} of {args.trajectories} requested",
              "return certified before execution": (
                  "no" if return_refused else "not reached" if return_end is None
                  else "yes" + _return_detail(return_path, return_duration)
                  if args.controller == "robust" else "not checked (baseline)"),
              "task certified before execution": (
                  "no" if task_window and certification else "not reached" if not task_window
                  else "yes" + (f" (with {segment:.1f}-s segments: the {certify.segment:.1f}-s "
                                "task was refused)" if segment != certify.segment else "")),
              "bag": str(bags[-1]), "wall time": f"{time.monotonic() - wall0:.0f} s"}
    # the floor's witnesses are fixed-base robots: a moving trunk could tell them apart
    floor = None if full_robot.floating_base else floor_summary(robot, ev)
    if floor is not None:
        header["identifiability floor of the stated boxes"] = floor
    if full_robot.floating_base:
        from sysid_ros.demo.floating import floating_base_findings
        # the closed loop: from the first commanded motion (the landing before it is not)
        starts = ([p[0] for p in state["plans"]] + ([task_window[0]] if task_window else [])
                  + ([return_end - return_duration - 0.5] if return_end is not None else []))
        extra, violations = floating_base_findings(
            full_robot, robot, bags[-1], (min(starts), np.inf) if starts else None)
        header.update(extra)
        for reason in violations:
            ev.fail(reason)
    report = write_report(out, run, ev, robot, header, klass)
    if klass is not None:
        from sysid_ros.demo.class_payload import mass_placement
        _log(f"mass: {mass_placement(klass, ev.truth, ev.final_bounds)}")
    _log(f"result: {'success' if ev.success else 'failure'}"
         + (f" ({'; '.join(ev.reasons)})" if ev.reasons else ""))
    print(report)
    return EXIT_SUCCESS if ev.success else EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
