"""In-process, lock-step closed loop of the whole method (no DDS): the paper's experiments.

One *episode* = the graph of ``launch/sim.launch.yaml`` (lock-step simulator, identifier,
exciting planner, robust controller; parameters read from that launch file and its config files
by :func:`graph_parameters`, with ``sim_mode:=lockstep``) run in one process: the node *runtimes*
— the objects the nodes are thin shells over — driven by plain calls in sim time, with the
messages between them passed as arrays:

- ``sim``: :class:`~sysid_ros._src.simulation.sim_runtime.SimRuntime` (the Gen3 in MuJoCo carrying a
  dumbbell, one publication per ``control_dt``, zero-order hold of the newest command, the
  measured ``joint_states`` — torque noise, encoder quantisation — the other nodes read);
- ``robust_controller``: :class:`~sysid_ros._src.control.controller_runtime.ControllerRuntime` built by
  :func:`~sysid_ros._src.control.controller_runtime.build_runtime` from the node's settings (config file + the
  launch's ``stale_timeout``, ``clock_timeout``, ``accept_uncertified``, ``auto_reactivate``,
  autostart): a command per joint state, every box through ``bounds``, every trajectory through
  ``trajectory`` — *admission* (limits, continuity at take-over, torque; the planner's
  certificate in ``frame_id``, exactly as over DDS) — and ``tick``/``status`` on its periods;
- ``identifier``: :class:`~sysid_ros._src.identification.identifier_runtime.IdentifierRuntime` (the node's
  method, prior, friction and stamp policy) fed every measured joint state, updated every
  ``update_period`` and, with ``lp-cuts``, tightened every ``tighten_period``; each sound box
  goes to the controller and the planner (``/sysid/payload_bounds``);
- ``exciting_planner`` (methods ``ours`` and ``random`` only): every ``t_p`` (its timer: first
  cycle at t = t_p) one cycle of :class:`~sysid_ros._src.planning.receding.RecedingHorizon` with the
  node's stop rule (``max_trajectories`` = ``n_trajectories``), start rule (a plan starts one
  solve budget after its cycle, continuous with the current one) and lateness rule:
  ``ours``: its certified cycle; a certified plan is published with its certificate;
  ``random``: k uniform in 𝒦 ∩ the joint-limit box (``ExcitingPlanner.k_box``), published
  without certificate whether or not it would pass the sound check (the check is run and
  recorded only; the controller admits it because the launch sets ``accept_uncertified``).
  Only trajectories the controller admits are executed (``Episode.executed``).

Then the move-and-place task of the demo (``sysid_ros._src.demo.task.task_points`` with the robot
config's ``demo:`` section: slow return to ``demo.start``, two minimum-jerk segments), published
like ``sysid-demo`` publishes it (frame_id ``sysid_demo_task``, no planner certificate) and
admitted by the controller; the identifier keeps updating meanwhile, as in the graph. For
``ours`` the return is first certified as ``sysid-demo`` certifies it
(``TaskCertifier.return_path``: for the last published box, directly or back through the
executed plans' start poses); a return that cannot be certified is not sent and the episode
fails in phase ``return``. Evaluation:
:func:`sysid_ros._src.demo.report.evaluate` on the in-memory arrays (the verdict of ``sysid-demo``),
separately for the identification phase and the task (:func:`evaluate_episode`).

Time: sim time is both ROS time and the steady clock. Each step is one publication of ``sim``:
the controller answers it at once (the lock-step simulator waits for that answer), then the
identifier, planner and task are served at their sim-time periods. The controller's watchdog
(``tick`` every ``watchdog_period``) cannot trip in lock-step: a joint state arrives every
``control_dt`` = 1 ms of the steady clock (< ``stale_timeout``) and ROS time moves with every one
(so /clock never looks frozen); it is still run, and any stale event would show in the recorded
status. What remains different from the nodes of ``sysid-demo``:

- Lock-step compute: sim time stops while the planner or the identifier computes, so both answer
  in zero sim time; the nodes compute beside the loop (a plan must be certified within
  ``max_solve_time`` of *wall* time, enforced here by the planner itself, late cycles are
  counted; a box arrives one LP later). The identifier's update and cut periods are sim time
  here, wall time in the node.
- The task is one message (return + task); ``sysid-demo`` sends the return first and the task
  once its ``TaskCertifier`` has certified it for the controller's box (the pipeline certifies
  the return only and reports what certifying the task would demand instead:
  ``worst_torque_ratio``).
- The baselines (``wrong``, ``conservative``, ``grav-pid``) run without identifier and planner
  (the methods identify nothing); ``sim.launch.yaml`` starts the identifier for every mode, and
  ``pid`` would then take its point estimate as nominal.
- ``point_estimate`` (:class:`EpisodeConfig`) saves wall time where the estimate cannot act.

Methods (S3 Table III; controller modes of ``sysid_ros._src.control.controller``):
``ours`` (certified plans + robust controller with the identified box), ``random`` (random
uncertified excitation, then the same), ``wrong`` (no identification; controller model without
payload taken as exact), ``conservative`` (no identification; robust controller with the prior
box B₀), ``grav-pid`` (no identification; gravity compensation at the prior box centre + PID).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import yaml

from sysid_ros._src.control import JointTrajectoryArrays, prior_box
from sysid_ros._src.control.admission import KNOWN_CHECKS, Certificate, box_digest
from sysid_ros._src.control.controller_runtime import (Admission, ControllerRuntime, ControllerSettings, Status,
                                       build_runtime)
from sysid_ros._src.demo.task import ReturnPath, TaskCertifier, return_vias, task_points
from sysid_ros._src.demo.report import Evaluation, IdentifierStatus, RunData, evaluate
from sysid_ros._src.errors import SysidError
from sysid_ros._src.identification import OnlineIdentifier, load_identification_config
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.launcher.parse import load_launch
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import home_posture
# the identifier node's parameter table and its translation (no rclpy in either)
from sysid_ros._src.nodes import exciting_planner_params, identifier_params, sim_params
from sysid_ros._src.nodes.identifier_params import identification_overrides
from sysid_ros._src.nodes.params import Param
from sysid_ros._src.param_table import defaults_of
from sysid_ros._src.nodes.robust_controller_params import PARAMETERS as CONTROLLER_PARAMETERS
from sysid_ros._src.paths import package_share
from sysid_ros._src.planning import (BoxObstacle, ExcitingPlanner, PlannerConfig, QuinticTrajectory,
                                controller_model)
from sysid_ros._src.planning.receding import PublishedPlan, RecedingHorizon
from sysid_ros._src.simulation.payload import Payload
from sysid_ros._src.simulation.sim_runtime import RuntimeSettings, SimRuntime, payload_parameters

__all__ = ["METHODS", "TASK_FRAME_ID", "EpisodeError", "EpisodeConfig", "Episode", "EpisodeResult",
           "EpisodeSpec", "simulate_episode_task",
           "simulate_episode", "evaluate_episode", "run_episode", "identification_cond",
           "node_params", "graph_parameters"]

#: method → (controller mode, identification excitation or None)
METHODS: dict[str, tuple[str, str | None]] = {
    "ours": ("robust", "planned"),
    "random": ("robust", "random"),
    "wrong": ("wrong", None),
    "conservative": ("conservative", None),
    "grav-pid": ("pid", None),
}


class EpisodeError(SysidError, ValueError):
    """An episode that cannot be run as asked (the message names the argument)."""


#: ``header.frame_id`` of the demo's task (``sysid_ros._src.demo.demo_cli``): no planner certificate
TASK_FRAME_ID = "sysid_demo_task"


#: The parameter tables of the nodes the episode runs in process: their defaults come first.
_TABLES: dict[str, tuple[Param, ...]] = {
    "sim": sim_params.PARAMETERS, "robust_controller": CONTROLLER_PARAMETERS,
    "identifier": identifier_params.PARAMETERS,
    "exciting_planner": exciting_planner_params.PARAMETERS}


def _defaults(node: str) -> dict[str, Any]:
    return {p.name: p.default for p in _TABLES.get(node, ()) if p.default is not None}


def node_params(node: str) -> dict[str, Any]:
    """A node's parameters as it starts from config/<node>.yaml: its table's defaults, then the
    file's ``/**: ros__parameters``."""
    data = yaml.safe_load((package_share() / "config" / f"{node}.yaml").read_text()) or {}
    return {**_defaults(node), **((data.get("/**") or {}).get("ros__parameters") or {})}


def graph_parameters(robot: Robot, payload_kg: float, mode: str,
                     n_trajectories: int) -> dict[str, dict[str, Any]]:
    """Node name → its parameters as ``launch/sim.launch.yaml`` starts the graph of one episode
    (lock-step simulator): its table's defaults, its parameter files, then the launch file's
    ``name: value`` entries (read by ``sysid_ros._src.launcher``, the parser ``sysid-launch`` uses)."""
    desc = load_launch("sim", {"robot": robot.name, "payload": repr(float(payload_kg)),
                               "controller_mode": mode, "sim_mode": "lockstep",
                               "max_trajectories": str(n_trajectories), "record": "false",
                               "markers": "false", "robot_state_publisher": "false"})
    out: dict[str, dict[str, Any]] = {}
    for proc in desc.processes:
        params = _defaults(proc.name)
        for path in proc.param_files:
            data = yaml.safe_load(Path(path).read_text()) or {}
            for key in ("/**", proc.name):
                params.update((data.get(key) or {}).get("ros__parameters") or {})
        for flag, arg in zip(proc.cmd, proc.cmd[1:]):
            if flag == "-p":
                name, _, text = arg.partition(":=")
                params[name] = yaml.safe_load(text)   # rcl reads -p values as YAML too
        out[proc.name] = params
    return out


@dataclass(frozen=True)
class EpisodeConfig:
    """Settings of one episode; ``None`` fields come from the launch/config files.

    n_trajectories: exciting trajectories of the identification phase (S3: 4; the planner's
        ``max_trajectories``).
    max_cycles: planning cycles (``t_p`` apart) before identification gives up.
    settle: s after the last exciting trajectory ends before the task starts.
    control_dt: the simulator's publication period = the controller's command period (s).
    update_period: s of sim time between identifier updates (default: the node's).
    point_estimate: only matters when ``controller.nominal`` is ``estimate`` (with ``centre``
        the controller never uses it and none is computed): ``final``: box centre while
        identifying and the log-Cholesky estimate from the end of identification on (saves
        ~0.5 s wall per update); ``every``: the estimate at every update (the node's behaviour).
    max_sim_time: hard stop (s of sim time) whatever happens; recorded in ``notes``.
    noise_tau, physics_dt, quantize: simulator settings (default: the sim node's).
    return_duration, segment, pause: the task's timing (robot config ``demo:``).
    planner_overrides: keys of ``PlannerConfig`` (e.g. t_f, max_solve_time) for this episode.
    """

    n_trajectories: int = 4
    max_cycles: int = 8
    settle: float = 0.5
    control_dt: float = 1e-3
    update_period: float | None = None
    point_estimate: str = "final"
    noise_tau: float | None = None
    physics_dt: float | None = None
    quantize: bool | None = None
    return_duration: float | None = None
    segment: float | None = None
    pause: float = 0.5
    max_sim_time: float = 60.0
    planner_overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class Episode:
    """Everything one simulated episode produced (before evaluation)."""

    method: str
    payload_kg: float
    seed: int
    run: RunData
    ident_window: tuple[float, float] | None     # sim-time span of the exciting motion
    task_window: tuple[float, float]
    plans: list[dict[str, Any]]                   # one record per planning cycle
    executed: list[tuple[QuinticTrajectory, np.ndarray, float, float]]  # admitted: traj, k, start, end
    reference: dict[str, np.ndarray]              # t, q, dq, ddq of the desired motion (1 kHz)
    control: dict[str, np.ndarray]                # tau0, v_bound (N, nj) per command
    identifier_seconds: list[float]
    wall_seconds: float
    n_requested: int
    max_solve_time: float                         # the robot file's planner budget (s)
    notes: list[str] = field(default_factory=list)
    #: every trajectory offered to the controller: (sim time, "plan n" | "task", its verdict)
    admissions: list[tuple[float, str, Admission]] = field(default_factory=list)
    #: the controller's diagnostics, one per ``diagnostics_period`` (and at the end)
    controller_status: list[tuple[float, Status]] = field(default_factory=list)
    #: the controller's log events (sim time, level OK/WARN/ERROR, message)
    controller_log: list[tuple[float, int, str]] = field(default_factory=list)
    #: the return to the task's start as certified (``ours``; None: not certified or reached)
    return_path: ReturnPath | None = None


@dataclass
class EpisodeResult:
    """Verdict of one episode (``Table III`` cell) plus figures for Table V and the discussion."""

    method: str
    payload_kg: float
    success: bool
    phase: str | None                  # first failing phase: identification, return, task, None
    reasons: list[str]
    contains_truth: bool | None
    mass_interval: tuple[float, float] | None
    cond: float | None
    plans_executed: int
    plan_cycles: int
    random_would_verify: int | None
    max_V_task: float
    peak_torque_ratio: float            # max over the task of |τ_cmd| / τ_max
    worst_torque_ratio: float           # max over the task of (|τ₀| + ‖bound‖) / τ_max
    min_clearance_mm: float
    plan_seconds: list[float]
    late_plans: int                     # cycles whose wall time exceeded max_solve_time
    plan_failures: list[str]            # first reason of each uncertified cycle
    wall_seconds: float
    plans_rejected: int = 0             # published plans the controller's admission refused
    evaluation: Evaluation | None = field(default=None, repr=False)

    def summary(self) -> str:
        if self.success:
            return "success"
        return f"fail ({self.phase}): " + "; ".join(self.reasons)


def _as_arrays(robot: Robot, plan: PublishedPlan) -> JointTrajectoryArrays:
    """The plan as the two-point message the planner node publishes (``header.stamp`` = its
    start; quintic interpolation reproduces it exactly)."""
    traj, z = plan.trajectory, np.zeros(robot.nj)
    return JointTrajectoryArrays.from_arrays(
        [0.0, traj.t_f], np.stack([traj.q0, traj.q0 + plan.k]), np.stack([traj.dq0, z]),
        np.stack([traj.ddq0, z]), robot.joint_names, robot.joint_names, plan.start_ns * 1e-9)


def _random_k(planner: ExcitingPlanner, traj: QuinticTrajectory,
              rng: np.random.Generator) -> np.ndarray:
    """k uniform in 𝒦 ∩ joint-limit box; an empty joint interval (the carried-over velocity
    cannot be stopped inside the limits) gets its midpoint — published unchecked anyway."""
    lo, hi, _ = planner.k_box(traj)
    return np.where(lo <= hi, rng.uniform(np.minimum(lo, hi), np.maximum(lo, hi)),
                    0.5 * (lo + hi))


class _Graph:
    """The node runtimes of one episode and the messages between them (module doc)."""

    def __init__(self, robot: Robot, payload: float | Payload, method: str,
                 obstacles: Sequence[BoxObstacle], seed: int, config: EpisodeConfig) -> None:
        mode, self.excitation = METHODS[method]
        self.robot, self.config = robot, config
        params = graph_parameters(robot, _mass(payload), mode, config.n_trajectories)
        # -- sim: the launch's settings, one publication per control period
        sim = {**params["sim"], "rate_hz": 1.0 / config.control_dt, "seed": seed}
        if isinstance(payload, Payload):       # a body other than the dumbbell of its mass
            sim.update({k: tuple(v) for k, v in payload_parameters(payload).items()})
        sim.update({k: v for k, v in (("noise_tau", config.noise_tau),
                                      ("physics_dt", config.physics_dt),
                                      ("quantize", config.quantize)) if v is not None})
        self.sim = SimRuntime(robot, RuntimeSettings.from_parameters(sim))
        # -- robust_controller: the node's configure (build_runtime) with its settings
        ctl = dict(params["robust_controller"])
        use_sim_time = bool(ctl.pop("use_sim_time", True))
        self.settings = ControllerSettings.from_mapping(ctl)
        self.ctl: ControllerRuntime = build_runtime(self.settings, use_sim_time, 0.0, robot)
        # -- identifier and planner: only for the identifying methods (module doc)
        self.irt: IdentifierRuntime | None = None
        self.horizon: RecedingHorizon | None = None
        self.certifier: TaskCertifier | None = None
        self.tighten_period = np.inf
        if self.excitation is None:
            return
        # ours: the return is certified as sysid-demo certifies it (robust controller,
        # identified box); random stays the paper's baseline, whose motions nobody checks
        if self.excitation == "planned":
            demo = robot.config.get("demo") or {}
            self.certifier = TaskCertifier(
                robot, np.asarray(demo.get("start", home_posture(robot)), float),
                [np.asarray(w, float) for w in demo["waypoints"]],
                float(config.segment or demo.get("segment", 1.0)), obstacles)
        ip = params["identifier"]
        # the node's own translation of its parameters (hardware_like, friction: auto)
        icfg = load_identification_config(robot, **identification_overrides(robot, ip))
        self.update_period = float(config.update_period or ip["update_period"])
        # the estimate acts only through the controller's nominal (EpisodeConfig.point_estimate)
        self.point_estimate = bool(ip["point_estimate"]) and self.ctl.ctl.nominal == "estimate"
        background = ip["method"] == "lp-cuts" and float(ip["tighten_period"]) > 0
        ident = OnlineIdentifier(robot, icfg, method=ip["method"],
                                 point_estimate=self.point_estimate
                                 and config.point_estimate == "every",
                                 background_cuts=background,
                                 restart_after=int(ip["stamp_restart_samples"]))
        self.irt = IdentifierRuntime(ident, icfg)
        if background:
            self.tighten_period = float(ip["tighten_period"])
        pp = params["exciting_planner"]
        overrides = {k: pp[k] for k in ("t_f", "t_p", "max_solve_time") if pp.get(k) is not None}
        planner = ExcitingPlanner(robot, PlannerConfig.from_robot(
            robot, {"obstacles": tuple(obstacles), **overrides, **config.planner_overrides}),
            controller_model(robot))
        prior = prior_box(robot)       # the planner node's bounds until the identifier's first
        self.horizon = RecedingHorizon(planner, prior,
                                       int(pp["max_trajectories"]),
                                       float(pp["shrink_tolerance"]), int(pp["stall_cycles"]))


def _mass(payload: float | Payload) -> float:
    return payload.mass if isinstance(payload, Payload) else float(payload)


#: An episode as plain values: robot registry name, payload (kg, or a drawn body), method,
#: obstacles the planner sees, seed, settings, and whether the planner's budget counts its
#: thread's CPU seconds.
EpisodeSpec = tuple[str, "float | Payload", str, tuple[BoxObstacle, ...], int, EpisodeConfig,
                    bool]


def simulate_episode_task(spec: EpisodeSpec) -> Episode:
    """:func:`simulate_episode` from plain values, for the batch executor
    (:mod:`sysid_ros._src.batch`): each worker loads the robot itself."""
    from sysid_ros._src.model.robots import load_robot
    from sysid_ros._src.planning import planner as planner_module

    robot_name, payload, method, obstacles, seed, config, cpu_budget = spec
    if cpu_budget:
        # the planner reads its clock as planner.time.monotonic (deadlines, solve_time) only
        planner_module.time = SimpleNamespace(  # type: ignore[attr-defined,assignment]
            monotonic=time.thread_time)
    return simulate_episode(load_robot(robot_name), payload, method, obstacles, seed, config)


def simulate_episode(robot: Robot, payload: float | Payload, method: str,
                     obstacles: Sequence[BoxObstacle] = (), seed: int = 0,
                     config: EpisodeConfig = EpisodeConfig(),
                     log: Callable[[str], None] | None = None) -> Episode:
    """Run one episode (module doc) carrying ``payload``: a dumbbell of that many kg, or a
    :class:`~sysid_ros._src.simulation.payload.Payload` (e.g. one drawn inside a payload class,
    :func:`~sysid_ros._src.simulation.offcentre.draw_in_class`). ``obstacles`` matter to the planner
    (``ours``) only; the evaluation takes its own obstacle list (:func:`evaluate_episode`)."""
    if method not in METHODS:
        raise EpisodeError(f"method {method!r} is not one of {sorted(METHODS)}")
    if config.point_estimate not in ("final", "every"):
        raise EpisodeError(f"point_estimate must be 'final' or 'every', got "
                           f"{config.point_estimate!r}")
    demo = robot.config.get("demo") or {}
    if "waypoints" not in demo:
        raise EpisodeError(f"{robot.config_path}: no demo.waypoints (the move-and-place task)")
    wall0 = time.perf_counter()
    loop = _Loop(_Graph(robot, payload, method, obstacles, seed, config), seed, log)
    loop.run()
    return loop.episode(method, _mass(payload), seed, time.perf_counter() - wall0)


class _Loop:
    """The lock-step loop of one episode: each publication of ``sim`` answered by the
    controller, then the identifier, the planner and the task served at their sim-time periods
    (module doc); what it records becomes the :class:`Episode`."""

    def __init__(self, g: _Graph, seed: int, log: Callable[[str], None] | None) -> None:
        self.g, self.robot, self.config = g, g.robot, g.config
        self.demo: dict[str, Any] = g.robot.config.get("demo") or {}
        self.say = log or (lambda _m: None)
        self.rng = np.random.default_rng(seed)
        self.planner = g.horizon.planner if g.horizon is not None else None
        self.t_p = self.planner.config.t_p if self.planner is not None else np.inf
        # one row per publication: t, q, dq, τ measured, command, τ₀, robust bound, reference
        self.rows: dict[str, list] = {k: [] for k in ("t", "q", "dq", "tau", "cmd", "tau0",
                                                      "bound", "ref_q", "ref_dq", "ref_ddq")}
        self.bounds_t: list[float] = []
        self.bounds: list[np.ndarray] = []
        self.trajectories: list[JointTrajectoryArrays] = []
        self.plans: list[dict[str, Any]] = []
        self.executed: list[tuple[QuinticTrajectory, np.ndarray, float, float]] = []
        self.ident_seconds: list[float] = []
        self.ident_status: list[IdentifierStatus] = []
        self.notes: list[str] = []
        self.admissions: list[tuple[float, str, Admission]] = []
        self.ctl_status: list[tuple[float, Status]] = []
        self.ctl_log: list[tuple[float, int, str]] = []
        s = g.settings
        # the node's timers, on sim time (steady clock = ROS time here, module doc)
        self.next_tick, self.next_diag = s.watchdog_period, s.diagnostics_period
        self.next_plan = self.t_p              # a ROS timer first fires one period after start
        self.next_update = g.update_period if g.irt is not None else np.inf
        self.next_tighten = g.tighten_period
        self.task_window: tuple[float, float] | None = None
        self.ident_window: tuple[float, float] | None = None
        self.t_task_start = 0.5 if g.excitation is None else None   # sim time the task is published
        self.return_path: ReturnPath | None = None
        self.end_time = np.inf
        self.last_cmd = np.zeros(self.robot.nj)
        self.t = 0.0

    def run(self) -> None:
        g, ctl, config = self.g, self.g.ctl, self.config
        # autostart (the launch sets it): configure + activate; nothing is stale before any input
        refused = ctl.activate(0.0)
        assert not refused, refused
        while True:
            pub = g.sim.advance()
            js = pub.joint_states              # never None: the launch's sim is not hardware_like
            assert js is not None and js.dq is not None
            t = self.t = js.stamp_ns * 1e-9
            if t > self.end_time:
                break
            if t > config.max_sim_time:
                self.notes.append(f"stopped at the sim-time limit of {config.max_sim_time} s")
                break
            ref = self._control(t, js)
            self._controller_timers(t)
            self._identifier(t)
            if (g.horizon is not None and self.planner is not None
                    and t >= self.next_plan - 1e-9
                    and not g.horizon.finished and len(self.plans) < config.max_cycles):
                self._planning_cycle(t, js)
            if (self.t_task_start is not None and self.task_window is None
                    and t >= self.t_task_start - 1e-9):
                self._task(t, ref.q)
        t = self.t
        self.ctl_status.append((t, ctl.status(t)))
        self.ctl_log += [(t, level, msg) for level, msg in ctl.pop_log()]
        assert self.task_window is not None or self.notes, \
            "the loop ends after the task or at max_sim_time"

    def _control(self, t: float, js: Any) -> Any:
        """The robust_controller answers the publication (lock-step: the sim waits for it);
        the row of this step is recorded. The controller's reference at ``t``."""
        g, ctl, nj = self.g, self.g.ctl, self.robot.nj
        out = ctl.joint_state(t, t, js.q, js.dq)
        if out is not None:
            g.sim.command(out.tau, t)
            self.last_cmd = out.tau
        elif not any("no command" in n for n in self.notes):
            self.notes.append(f"t = {t:.3f} s: the controller sent no command (inactive or stale)")
        ref = ctl.queue.reference_at(t)
        assert ref is not None             # joint_state holds the measured pose if it had none
        for key, value in (("t", t), ("q", js.q), ("dq", js.dq), ("tau", js.effort),
                           ("cmd", self.last_cmd),
                           ("tau0", out.tau0 if out is not None else np.zeros(nj)),
                           ("bound", out.v_bound if out is not None and out.v_bound is not None
                            else np.zeros(nj)),
                           ("ref_q", ref.q), ("ref_dq", ref.dq), ("ref_ddq", ref.ddq)):
            self.rows[key].append(value)
        if g.irt is not None:
            g.irt.joint_state(t, js.q, js.dq, js.effort)
        return ref

    def _controller_timers(self, t: float) -> None:
        """The controller's steady-clock timers: watchdog and diagnostics."""
        ctl, s = self.g.ctl, self.g.settings
        if t >= self.next_tick - 1e-9:
            action = ctl.tick(t, t)
            if action is not None:       # what the node's lifecycle transition does
                if action.kind == "deactivate":
                    ctl.deactivate()
                else:
                    ctl.activate(t)
            self.next_tick += s.watchdog_period
        self.ctl_log += [(t, level, msg) for level, msg in ctl.pop_log()]
        if t >= self.next_diag - 1e-9:
            self.ctl_status.append((t, ctl.status(t)))
            ctl.end_period()
            self.next_diag += s.diagnostics_period

    def _identifier(self, t: float) -> None:
        """Box update every update_period, cut rounds every tighten_period."""
        g, irt = self.g, self.g.irt
        if irt is not None and t >= self.next_update - 1e-9:
            self._update(t)
        if irt is not None and t >= self.next_tighten - 1e-9:
            if irt.tighten():
                self._publish_box(t)
            self.next_tighten += g.tighten_period

    def _update(self, t: float) -> None:
        g, irt, config, executed = self.g, self.g.irt, self.config, self.executed
        assert irt is not None
        # identification ends at an update instant (so that update has fresh rows): all
        # trajectories run (or planning gave up) and settled; the task follows
        final = False
        if self.t_task_start is None:
            assert g.horizon is not None     # set (with irt) exactly when excitation is
            done = bool(g.horizon.finished) or len(self.plans) >= config.max_cycles
            last_end = executed[-1][3] if executed else t
            final = done and t >= last_end + config.settle - 1e-9
            if final and g.point_estimate:
                irt.ident.point_estimate = True
        clock = time.perf_counter()
        outcome = irt.update()
        self.ident_seconds.append(time.perf_counter() - clock)
        report = irt.report()
        self.ident_status.append(IdentifierStatus(t, {"ok": 0, "warn": 1}.get(report.level, 2),
                                                  report.message))
        if outcome.publish:
            self._publish_box(t)
        if outcome.became_inconsistent:
            self.notes.append(f"identifier: data inconsistent at t = {t:.2f} s (bounds kept)")
        self.next_update += g.update_period
        if final:
            self.ident_window = (executed[0][2], last_end) if executed else None
            self.t_task_start = t + config.control_dt

    def _publish_box(self, t: float) -> None:
        """The identifier's box on /sysid/payload_bounds: to the controller and the planner."""
        irt, horizon = self.g.irt, self.g.horizon
        assert irt is not None and horizon is not None     # identifying methods only
        box = irt.box()
        if box is None:
            return
        self.g.ctl.bounds(t, box)
        horizon.on_bounds(box)
        self.bounds_t.append(t)
        self.bounds.append(np.stack([box.lower, box.nominal, box.upper]))

    def _offer(self, t: float, label: str, arr: JointTrajectoryArrays, frame_id: str) -> Admission:
        """A trajectory message to the controller: admitted (then recorded) or rejected."""
        adm = self.g.ctl.trajectory(t, arr, frame_id)
        self.admissions.append((t, label, adm))
        if adm.accepted:
            self.trajectories.append(arr)
        else:
            self.notes.append(f"t = {t:.2f} s: controller rejected {label}: "
                              f"{'; '.join(adm.reasons)}")
        return adm

    def _planning_cycle(self, t: float, js: Any) -> None:
        """The exciting_planner: one receding-horizon cycle (every t_p)."""
        horizon, excitation = self.g.horizon, self.g.excitation
        assert horizon is not None
        horizon.on_state(js.q, js.dq)
        if excitation == "planned":
            rec, plan = self._planned(t, js.stamp_ns)
        else:
            rec, plan = self._random(t, js.stamp_ns)
        self.plans.append(rec)
        rec["admitted"] = False
        if plan is not None:
            self._send_plan(t, rec, plan)
        self.say(f"  t = {t:5.2f} s cycle {len(self.plans)}: "
                 + ("no certified plan" if plan is None else "executed" if rec["admitted"]
                    else "rejected by the controller")
                 + f" ({rec['seconds']:.2f} s wall"
                 + (", would NOT pass the sound check" if excitation == "random"
                    and not rec["verified"] else "") + ")")
        self.next_plan += self.t_p

    def _planned(self, t: float, now_ns: int) -> tuple[dict[str, Any], PublishedPlan | None]:
        """``ours``: the planner's certified cycle (its record, its plan or None)."""
        assert self.g.horizon is not None
        cyc = self.g.horizon.cycle(now_ns)      # lock-step: no sim time passes while solving
        r = cyc.result
        rec = {"t": t, "verified": bool(r and r.verified),
               "seconds": r.solve_time if r else 0.0,
               "cond": r.cond if r else float("nan"),
               "status": r.status if r else cyc.message,
               "reasons": list(r.reasons) if r else [cyc.message]}
        return rec, cyc.plan

    def _random(self, t: float, now_ns: int) -> tuple[dict[str, Any], PublishedPlan]:
        """``random``: k drawn in 𝒦, checked (recorded only) and published unchecked."""
        horizon, planner = self.g.horizon, self.planner
        assert horizon is not None and planner is not None
        init = horizon.start_state(now_ns)
        assert init is not None          # on_state came first
        q0, dq0, ddq0, start_ns = init
        traj = QuinticTrajectory(q0, dq0, ddq0, planner.config.t_f)
        k = _random_k(planner, traj, self.rng)
        box = horizon.bounds
        clock = time.perf_counter()
        ver = planner.reach.verify(traj, k, box.lower, box.upper)
        rec = {"t": t, "verified": ver.ok, "seconds": time.perf_counter() - clock,
               "cond": planner.model.objective(traj, k)[2], "status": "random",
               "reasons": list(ver.reasons)}
        plan = PublishedPlan(start_ns, traj, k, box)
        horizon.adopt(plan)              # published unchecked: the baseline
        return rec, plan

    def _send_plan(self, t: float, rec: dict[str, Any], plan: PublishedPlan) -> None:
        """The plan to the controller; admitted, it takes over from the previous one."""
        # the planner node's certificate (exciting_planner.trajectory_msg); none for random
        frame = (Certificate(box_digest(plan.box.lower, plan.box.upper),
                             KNOWN_CHECKS[0]).to_frame_id()
                 if self.g.excitation == "planned" else "")
        adm = self._offer(t, f"plan {len(self.plans)}", _as_arrays(self.robot, plan), frame)
        rec["admitted"], rec["admission"] = adm.accepted, list(adm.reasons)
        if adm.accepted:
            start = plan.start_ns * 1e-9
            executed = self.executed
            if executed:             # the new plan takes over from the previous one
                prev = executed[-1]
                executed[-1] = (prev[0], prev[1], prev[2], min(prev[3], start))
            executed.append((plan.trajectory, plan.k, start, start + plan.trajectory.t_f))

    def _task(self, t: float, q_ref: np.ndarray) -> None:
        """The demo's task: the return to its start (``ours``: certified, else not sent) and
        the move-and-place, in one message."""
        g, config, demo, robot = self.g, self.config, self.demo, self.robot
        task_start = np.asarray(demo.get("start", g.sim.sim.home), float)
        duration = float(config.return_duration or demo.get("return_duration", 3.0))
        if g.certifier is not None and g.horizon is not None:
            # as sysid-demo: certified for the controller's box (the last one published),
            # directly or back through the executed plans' start poses, or not sent
            self.return_path = g.certifier.return_path(
                g.horizon.bounds, q_ref, task_start, duration,
                vias=return_vias([(tr, k, b - a) for tr, k, a, b in self.executed]))
            if not self.return_path.certified:
                self.notes.append(f"t = {t:.2f} s: return not certifiable, not sent: "
                                  + "; ".join(self.return_path.reasons[:2]))
                self.task_window = (t, t)
                self.end_time = t + 0.5
                return
        else:
            self.return_path = ReturnPath.direct(q_ref, task_start, duration)
        times, pos, offset = task_points(
            self.return_path.times, self.return_path.positions,
            [np.asarray(w, float) for w in demo["waypoints"]],
            float(config.segment or demo.get("segment", 1.0)), config.pause)
        z = np.zeros_like(pos)
        self._offer(t, "task", JointTrajectoryArrays.from_arrays(
            times.tolist(), pos, z, z, robot.joint_names, robot.joint_names, t), TASK_FRAME_ID)
        self.task_window = (t + offset, t + float(times[-1]) + 1.0)
        self.end_time = self.task_window[1]
        self.say(f"  t = {t:5.2f} s task published; move-and-place from "
                 f"t = {self.task_window[0]:.2f}")

    def episode(self, method: str, payload_kg: float, seed: int, wall: float) -> Episode:
        """What the loop recorded, as an :class:`Episode`."""
        nj, rows, planner = self.robot.nj, self.rows, self.planner
        t_arr = np.asarray(rows["t"])
        run = RunData(t_arr, np.asarray(rows["q"]), np.asarray(rows["dq"]),
                      np.asarray(rows["tau"]), t_arr, np.asarray(rows["cmd"]).reshape(-1, nj),
                      np.asarray(self.bounds_t), np.asarray(self.bounds).reshape(-1, 3, 10),
                      self.g.sim.sim.true_theta_e(), self.trajectories, self.ident_status)
        reference = {"t": t_arr, "q": np.asarray(rows["ref_q"]), "dq": np.asarray(rows["ref_dq"]),
                     "ddq": np.asarray(rows["ref_ddq"])}
        control = {"tau0": np.asarray(rows["tau0"]).reshape(-1, nj),
                   "v_bound": np.asarray(rows["bound"]).reshape(-1, nj)}
        return Episode(method, payload_kg, seed, run, self.ident_window,
                       self.task_window or (float(t_arr[-1]), float(t_arr[-1])), self.plans,
                       self.executed, reference, control, self.ident_seconds, wall,
                       # lateness is judged against the robot file's budget (else the
                       # default), not an override
                       self.config.n_trajectories, float((self.robot.config.get("planner") or {}).get(
                           "max_solve_time", defaults_of(PlannerConfig)["max_solve_time"]))
                       if planner else 0.0,
                       self.notes, self.admissions, self.ctl_status, self.ctl_log,
                       self.return_path)


def identification_cond(robot: Robot, episode: Episode, rate_hz: float = 100.0,
                        reg: Regressors | None = None) -> float | None:
    """cond(Y_e) of the identification data: end-effector columns of the inverse-dynamics
    regressor Y(q_d, q̇_d, q̈_d) stacked at ``rate_hz`` along the executed desired exciting
    motion (first trajectory's start to the last one's end) — the planner's objective (S3-30)
    over the whole phase, S3 Table V's figure. ``None`` without identification."""
    if episode.ident_window is None:
        return None
    ref = episode.reference
    a, b = episode.ident_window
    step = max(1, int(round(1.0 / (rate_hz * np.median(np.diff(ref["t"]))))))
    sel = np.flatnonzero((ref["t"] >= a) & (ref["t"] <= b))[::step]
    reg = reg or Regressors(robot)
    y_e = reg.split(reg.Y(ref["q"][sel], ref["dq"][sel], ref["ddq"][sel]))[0]
    return float(np.linalg.cond(y_e.reshape(-1, 10)))


def _truncated(run: RunData, t_end: float) -> RunData:
    """The part of ``run`` up to ``t_end`` (s)."""
    n, nc, nb = (int(np.searchsorted(x, t_end, side="right"))
                 for x in (run.t, run.cmd_t, run.bounds_t))
    return RunData(run.t[:n], run.q[:n], run.dq[:n], run.tau_measured[:n], run.cmd_t[:nc],
                   run.cmd[:nc], run.bounds_t[:nb], run.bounds[:nb], run.truth,
                   [tr for tr in run.trajectories if tr.start_time <= t_end],
                   [st for st in run.identifier_status if st.t <= t_end])


def evaluate_episode(robot: Robot, episode: Episode, obstacles: Sequence[BoxObstacle],
                     reg: Regressors | None = None) -> EpisodeResult:
    """Verdict with ``sysid_ros._src.demo.report.evaluate``: first the identification phase (the run
    up to the end of the exciting motion: torque limit, collision, V ≤ V_max with the true θ_e),
    then the whole run with the task window (torque limit and V in the task, a collision at any
    time, the final box must contain the truth, and — for ``ours`` — every requested trajectory
    certified). A collision during the slow return to ``demo.start`` between the two (a joint-
    space move nobody certifies) is reported as phase ``return``. ``phase`` names the first
    phase that failed; ``reasons`` are that phase's."""
    sec = robot.config.get("controller") or {}
    kr, v_max = float(np.mean(sec["Kr"])), float(sec["V_max"])
    run = episode.run
    phase, reasons = None, []
    _, excitation = METHODS[episode.method]
    n_plans = len(episode.executed)
    if excitation == "planned" and n_plans < episode.n_requested:
        phase = "identification"
        reasons.append(f"no certified plan in {len(episode.plans)} planning cycles" if n_plans == 0
                       else f"only {n_plans} of {episode.n_requested} exciting trajectories "
                       f"certified in {len(episode.plans)} planning cycles")
    if episode.ident_window is not None:
        # the run cut at the end of the exciting motion: evaluate() checks collisions over the
        # whole run it is given, so this attributes them to the identification phase
        ev_id = evaluate(_truncated(run, episode.ident_window[1]), robot, obstacles,
                         episode.ident_window, kr, v_max)
        bad = [r for r in ev_id.reasons if not r.startswith("identification:")]
        if bad:
            phase, reasons = "identification", reasons + bad
    if phase is None and episode.return_path is not None and not episode.return_path.certified:
        phase, reasons = "return", [
            "return not certifiable for every θ_e in the controller's box (not sent): "
            + "; ".join(episode.return_path.reasons[:3])]
    if phase is None:
        # the slow return to demo.start (certified for ours, as in sysid-demo; unchecked for
        # random and the baselines): collisions only, as in the demo's verdict
        start = episode.ident_window[1] if episode.ident_window else 0.0
        ev_ret = evaluate(_truncated(run, episode.task_window[0]), robot, obstacles,
                          (start, episode.task_window[0]), kr, v_max)
        bad = [r for r in ev_ret.reasons if r.startswith("collision")]
        if bad:
            phase, reasons = "return", bad
    ev = evaluate(run, robot, obstacles, episode.task_window, kr, v_max)
    # the task never ran when the controller refused it (the robot held its pose instead)
    refused = [f"controller rejected the task: {'; '.join(a.reasons)}"
               for _t, label, a in episode.admissions if label == "task" and not a.accepted]
    if refused:
        ev.fail(refused[0])
    if phase is None and not ev.success:
        phase, reasons = "task", list(ev.reasons)
    final = ev.final_bounds
    peak_ratio = float(np.max(ev.peak_cmd / ev.tau_max)) if ev.peak_cmd.size else float("nan")
    # what the controller's guarantee may demand: τ₀ plus a robust input of up to γ√P_ii
    # (‖bound‖ for ARMOUR's metric) while V ≤ V_max; > 1 means the box is too wide to certify
    in_task = (run.cmd_t >= episode.task_window[0]) & (run.cmd_t <= episode.task_window[1])
    ctrl = episode.control
    worst = (np.abs(ctrl["tau0"][in_task]) + ctrl["v_bound"][in_task]) / ev.tau_max
    worst_ratio = float(worst.max()) if worst.size else float("nan")
    rand_ok = (sum(bool(p["verified"]) for p in episode.plans)
               if excitation == "random" else None)
    return EpisodeResult(
        method=episode.method, payload_kg=episode.payload_kg, success=phase is None,
        phase=phase, reasons=reasons, contains_truth=ev.contains_truth,
        mass_interval=final.named("m")[::2] if final is not None else None,
        cond=identification_cond(robot, episode, reg=reg), plans_executed=n_plans,
        plan_cycles=len(episode.plans), random_would_verify=rand_ok, max_V_task=ev.max_V,
        peak_torque_ratio=peak_ratio, worst_torque_ratio=worst_ratio,
        min_clearance_mm=ev.min_clearance * 1000.0,
        plan_seconds=[p["seconds"] for p in episode.plans],
        plan_failures=[(p["reasons"] or [p["status"]])[0] for p in episode.plans
                       if not p["verified"] and excitation == "planned"],
        late_plans=(sum(p["seconds"] > episode.max_solve_time for p in episode.plans)
                    if excitation == "planned" else 0),
        wall_seconds=episode.wall_seconds, evaluation=ev,
        plans_rejected=sum(label.startswith("plan") and not a.accepted
                           for _t, label, a in episode.admissions))


def run_episode(robot: Robot, payload: float | Payload, method: str,
                obstacles: Sequence[BoxObstacle] = (), seed: int = 0,
                config: EpisodeConfig = EpisodeConfig(),
                log: Callable[[str], None] | None = None) -> EpisodeResult:
    """:func:`simulate_episode` then :func:`evaluate_episode` with the same obstacles."""
    ep = simulate_episode(robot, payload, method, obstacles, seed, config, log)
    return evaluate_episode(robot, ep, obstacles)
