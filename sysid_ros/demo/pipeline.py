"""In-process, lock-step closed loop of the whole method (no DDS): the paper's experiments.

One *episode* = the Gen3 in the built-in MuJoCo simulator carrying a dumbbell, controlled at
1 kHz (sim time) by :class:`~sysid_ros.control.RobustController`, with the library pieces the
nodes wrap, called in sim time:

1. identification (methods ``ours`` and ``random`` only): every ``t_p`` a new degree-5
   trajectory takes over from the current desired state until ``n_trajectories`` were
   executed — the same :class:`~sysid_ros.planning.receding.RecedingHorizon` object the
   ``exciting_planner`` node runs (first plan from rest at the measured pose, each plan starting
   one solve budget after its cycle, continuity at start + t_p):
   ``ours``: its certified cycle with the current bounds, only certified plans are executed (an
   uncertified cycle keeps the current trajectory, which brakes to rest);
   ``random``: k uniform in 𝒦 ∩ the joint-limit box (``ExcitingPlanner.k_box``), executed
   whether or not it would pass the sound check (the check is run and recorded only).
   An :class:`~sysid_ros.identification.OnlineIdentifier` takes the *measured* samples and
   updates its box every ``update_period`` s of sim time; the controller uses each new box.
2. the move-and-place task of the demo (``sysid_ros.demo.cli.task_points`` with the robot
   config's ``demo:`` section): slow return to ``demo.start``, then two minimum-jerk segments.
3. evaluation with :func:`sysid_ros.demo.report.evaluate` on the in-memory arrays (the same
   verdict as ``sysid-demo``): separately for the identification phase (a torque-limit hit,
   collision or V > V_max there is a failure "during identification") and the task.

Lock-step: sim time stops while the planner or the identifier computes, i.e. both answer
instantly in sim time (the nodes run them beside the loop, so on hardware a plan must be
certified within ``max_solve_time`` of wall time, still enforced here by the planner itself,
and a box arrives one LP later). Their wall times are recorded.

Methods (S3 Table III; controller modes of ``sysid_ros.control.controller``):
``ours`` (certified plans + robust controller with the identified box), ``random`` (random
uncertified excitation, then the same), ``wrong`` (no identification; controller model without
payload taken as exact), ``conservative`` (no identification; robust controller with the prior
box B₀), ``grav-pid`` (no identification; gravity compensation at the prior box centre + PID).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np
import yaml

from sysid_ros.control import (JointTrajectoryArrays, PidGains, RobustController, ThetaBox,
                               TrajectoryQueue, gains_from_config, prior_box)
from sysid_ros.demo.cli import task_points
from sysid_ros.demo.report import Evaluation, IdentifierStatus, RunData, evaluate
from sysid_ros.identification import OnlineIdentifier, load_identification_config
from sysid_ros.model.regressors import Regressors
from sysid_ros.model.robots import Robot
from sysid_ros.paths import package_share
from sysid_ros.planning import (BoxObstacle, ExcitingPlanner, PlannerConfig, QuinticTrajectory,
                                controller_model)
from sysid_ros.planning.receding import PublishedPlan, RecedingHorizon
from sysid_ros.simulation import SimConfig, Simulator, dumbbell_for

__all__ = ["METHODS", "EpisodeConfig", "Episode", "EpisodeResult", "simulate_episode",
           "evaluate_episode", "run_episode", "identification_cond", "node_params"]

#: method → (controller mode, identification excitation or None)
METHODS: dict[str, tuple[str, str | None]] = {
    "ours": ("robust", "planned"),
    "random": ("robust", "random"),
    "wrong": ("wrong", None),
    "conservative": ("conservative", None),
    "grav-pid": ("pid", None),
}


def node_params(node: str) -> dict[str, Any]:
    """The ``/**: ros__parameters`` of config/<node>.yaml: the nodes' defaults, so an episode
    uses the same noise, rates and gains as the ROS graph of ``sysid-demo``."""
    data = yaml.safe_load((package_share() / "config" / f"{node}.yaml").read_text()) or {}
    return dict((data.get("/**") or {}).get("ros__parameters") or {})


@dataclass(frozen=True)
class EpisodeConfig:
    """Settings of one episode; ``None`` fields come from the config files (see ``resolve``).

    n_trajectories: exciting trajectories of the identification phase (S3: 4).
    max_cycles: planning cycles (``t_p`` apart) before identification gives up.
    settle: s after the last exciting trajectory ends before the task starts.
    control_dt: controller period (s); the simulator steps ``physics_dt`` in between.
    update_period: s of sim time between identifier updates (config/identifier.yaml).
    point_estimate: only matters when ``controller.nominal`` is ``estimate`` (with ``centre``
        the controller never uses it and none is computed): ``final``: box centre while
        identifying and the log-Cholesky estimate once at the end (saves ~0.5 s wall per
        update); ``every``: the estimate at every update (the identifier node's behaviour).
    max_sim_time: hard stop (s of sim time) whatever happens; recorded in ``notes``.
    noise_tau, physics_dt, quantize: simulator settings (config/sim.yaml).
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
    executed: list[tuple[QuinticTrajectory, np.ndarray, float, float]]  # traj, k, start, end
    reference: dict[str, np.ndarray]              # t, q, dq, ddq of the desired motion (1 kHz)
    control: dict[str, np.ndarray]                # tau0, v_bound (N, nj) per command
    identifier_seconds: list[float]
    wall_seconds: float
    n_requested: int
    max_solve_time: float                         # the robot file's planner budget (s)
    notes: list[str] = field(default_factory=list)


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
    evaluation: Evaluation | None = field(default=None, repr=False)

    def summary(self) -> str:
        if self.success:
            return "success"
        return f"fail ({self.phase}): " + "; ".join(self.reasons)


def _resolve(robot: Robot, cfg: EpisodeConfig) -> dict[str, Any]:
    sim, ident = node_params("sim"), node_params("identifier")
    demo = robot.config.get("demo") or {}
    pick = lambda v, d: d if v is None else v  # noqa: E731
    return {
        "noise_tau": float(pick(cfg.noise_tau, sim.get("noise_tau", 0.1))),
        "physics_dt": float(pick(cfg.physics_dt, sim.get("physics_dt", 2.5e-4))),
        "quantize": bool(pick(cfg.quantize, sim.get("quantize", True))),
        "update_period": float(pick(cfg.update_period, ident.get("update_period", 0.5))),
        "return_duration": float(pick(cfg.return_duration, demo.get("return_duration", 3.0))),
        "segment": float(pick(cfg.segment, demo.get("segment", 1.0))),
    }


def _controller(robot: Robot, mode: str) -> RobustController:
    sec = robot.config.get("controller") or {}
    gains = gains_from_config(robot)
    p = node_params("robust_controller")
    pid = PidGains(*(np.full(robot.nj, float(p.get(n, d))) for n, d in
                     (("pid_kp", 100.0), ("pid_ki", 20.0), ("pid_kd", 20.0),
                      ("pid_i_clamp", 0.2))))
    # τ₀'s θ_e nominal: the robot file's choice, shared with the planner's certificate
    return RobustController(robot, gains, mode=mode, prior=prior_box(robot), pid=pid,
                            nominal=str(sec.get("nominal", "centre")))


def _as_arrays(robot: Robot, traj: QuinticTrajectory, k: np.ndarray,
               start: float) -> JointTrajectoryArrays:
    """The plan as the two-point message the node publishes (quintic interpolation is exact)."""
    z = np.zeros(robot.nj)
    return JointTrajectoryArrays.from_arrays(
        [0.0, traj.t_f], np.stack([traj.q0, traj.q0 + k]), np.stack([traj.dq0, z]),
        np.stack([traj.ddq0, z]), robot.joint_names, robot.joint_names, start)


def _random_k(planner: ExcitingPlanner, traj: QuinticTrajectory,
              rng: np.random.Generator) -> np.ndarray:
    """k uniform in 𝒦 ∩ joint-limit box; an empty joint interval (the carried-over velocity
    cannot be stopped inside the limits) gets its midpoint — executed unchecked anyway."""
    lo, hi, _ = planner.k_box(traj)
    return np.where(lo <= hi, rng.uniform(np.minimum(lo, hi), np.maximum(lo, hi)),
                    0.5 * (lo + hi))


def simulate_episode(robot: Robot, payload_kg: float, method: str,
                     obstacles: Sequence[BoxObstacle] = (), seed: int = 0,
                     config: EpisodeConfig = EpisodeConfig(),
                     log: Callable[[str], None] | None = None) -> Episode:
    """Run one episode (module doc). ``obstacles`` matter to the planner (``ours``) only; the
    evaluation takes its own obstacle list (:func:`evaluate_episode`)."""
    if method not in METHODS:
        raise ValueError(f"method {method!r} is not one of {sorted(METHODS)}")
    if config.point_estimate not in ("final", "every"):
        raise ValueError(f"point_estimate must be 'final' or 'every', got {config.point_estimate!r}")
    demo = robot.config.get("demo") or {}
    if "waypoints" not in demo:
        raise ValueError(f"{robot.config_path}: no demo.waypoints (the move-and-place task)")
    wall0 = time.perf_counter()
    say = log or (lambda _m: None)
    res = _resolve(robot, config)
    mode, excitation = METHODS[method]
    rng = np.random.default_rng(seed)
    sim = Simulator(robot, dumbbell_for(robot, payload_kg),
                    SimConfig(physics_dt=res["physics_dt"], noise_tau=res["noise_tau"],
                              quantize=res["quantize"]), seed=seed)
    substeps = int(round(config.control_dt / sim.physics_dt))
    if substeps < 1 or abs(substeps * sim.physics_dt - config.control_dt) > 1e-9:
        raise ValueError("control_dt must be a whole number of physics steps")
    ctl = _controller(robot, mode)
    queue = TrajectoryQueue(robot.nj)
    queue.hold(sim.measure().q)
    planner = ident = None
    if excitation is not None:
        pcfg = PlannerConfig.from_robot(robot, {"obstacles": tuple(obstacles),
                                               **config.planner_overrides})
        planner = ExcitingPlanner(robot, pcfg, controller_model(robot))
        uses_estimate = ctl.nominal == "estimate"
        ident = OnlineIdentifier(robot, load_identification_config(robot, friction="config"),
                                 point_estimate=uses_estimate and config.point_estimate == "every")
    t_p = planner.config.t_p if planner else 0.0
    horizon = (RecedingHorizon(planner, (ident.lower, ident.upper))
               if planner is not None and ident is not None else None)

    log_t, log_q, log_dq, log_tau, log_cmd, log_tau0, log_bound = [], [], [], [], [], [], []
    ref_t, ref_q, ref_dq, ref_ddq = [], [], [], []
    bounds_t, bounds = [], []
    trajectories: list[JointTrajectoryArrays] = []
    plans: list[dict[str, Any]] = []
    executed: list[tuple[QuinticTrajectory, np.ndarray, float, float]] = []
    ident_seconds: list[float] = []
    ident_status: list[IdentifierStatus] = []
    notes: list[str] = []
    buf_start = 0
    next_update = res["update_period"]
    next_plan = 0.0 if excitation else np.inf
    task_window: tuple[float, float] | None = None
    ident_window: tuple[float, float] | None = None
    t_task_start = 0.5 if excitation is None else None    # sim time the task is published
    end_time = np.inf

    def identifier_update(t: float, final: bool = False) -> None:
        nonlocal buf_start
        clock = time.perf_counter()
        if len(log_t) > buf_start:
            ident.add_samples(np.asarray(log_t[buf_start:]), np.asarray(log_q[buf_start:]),
                              np.asarray(log_dq[buf_start:]), np.asarray(log_tau[buf_start:]))
            buf_start = len(log_t)
        if final and uses_estimate:
            ident.point_estimate = True
        status = ident.update()
        ident_seconds.append(time.perf_counter() - clock)
        ident_status.append(IdentifierStatus.of(t, status, list(ident.warnings)
                                                if status == "ok" else []))
        if status == "ok":
            ctl.set_bounds(ThetaBox(ident.lower, ident.nominal, ident.upper))
            bounds_t.append(t)
            bounds.append(np.stack([ident.lower, ident.nominal, ident.upper]))
        elif status == "inconsistent" and not any("inconsistent" in n for n in notes):
            notes.append(f"identifier: data inconsistent at t = {t:.2f} s (bounds kept)")

    step = 0
    while True:
        m = sim.measure()
        t = step * config.control_dt   # exact grid (sim.time accumulates rounding)
        if t > end_time:
            break
        if t > config.max_sim_time:
            notes.append(f"stopped at the sim-time limit of {config.max_sim_time} s")
            break
        # -- identification: receding-horizon excitation ------------------------------------
        if t >= next_plan - 1e-9 and len(executed) < config.n_trajectories \
                and len(plans) < config.max_cycles:
            now_ns = int(round(t * 1e9))
            lo, hi = (ident.lower, ident.upper)
            horizon.on_state(m.q, m.dq)
            horizon.on_bounds(lo, hi)
            plan: PublishedPlan | None = None
            if excitation == "planned":
                out = horizon.cycle(now_ns)      # lock-step: no sim time passes while solving
                r = out.result
                rec = {"t": t, "verified": bool(r and r.verified),
                       "seconds": r.solve_time if r else 0.0,
                       "cond": r.cond if r else float("nan"),
                       "status": r.status if r else out.message,
                       "reasons": list(r.reasons) if r else [out.message]}
                plan = out.plan
            else:
                q0, dq0, ddq0, start_ns = horizon.start_state(now_ns)
                traj = QuinticTrajectory(q0, dq0, ddq0, planner.config.t_f)
                k = _random_k(planner, traj, rng)
                clock = time.perf_counter()
                ver = planner.reach.verify(traj, k, lo, hi)
                rec = {"t": t, "verified": ver.ok, "seconds": time.perf_counter() - clock,
                       "cond": planner.model.objective(traj, k)[2], "status": "random",
                       "reasons": list(ver.reasons)}
                plan = PublishedPlan(start_ns, traj, k, lo.copy(), hi.copy())
                horizon.adopt(plan)              # executed unchecked: the baseline
            plans.append(rec)
            say(f"  t = {t:5.2f} s cycle {len(plans)}: "
                + ("executed" if plan is not None else "no certified plan")
                + f" ({rec['seconds']:.2f} s wall"
                + (", would NOT pass the sound check" if excitation == "random"
                   and not rec["verified"] else "") + ")")
            if plan is not None:
                start = plan.start_ns * 1e-9
                arr = _as_arrays(robot, plan.trajectory, plan.k, start)
                trajectories.append(arr)
                queue.push(arr, now=t)
                if executed:
                    prev = executed[-1]
                    executed[-1] = (prev[0], prev[1], prev[2], start)
                executed.append((plan.trajectory, plan.k, start, start + plan.trajectory.t_f))
            next_plan = t + t_p
        # -- task ---------------------------------------------------------------------------
        if t_task_start is not None and task_window is None and t >= t_task_start - 1e-9:
            times, pos, offset = task_points(queue.sample(t).q, np.asarray(
                demo.get("start", sim.home), float), [np.asarray(w, float) for w in
                                                      demo["waypoints"]],
                res["return_duration"], res["segment"], config.pause)
            z = np.zeros_like(pos)
            arr = JointTrajectoryArrays.from_arrays(times, pos, z, z, robot.joint_names,
                                                    robot.joint_names, t)
            trajectories.append(arr)
            queue.push(arr, now=t)
            task_window = (t + offset, t + times[-1] + 1.0)
            end_time = task_window[1]
            say(f"  t = {t:5.2f} s task published; move-and-place from t = {task_window[0]:.2f}")
        # -- control ------------------------------------------------------------------------
        ref = queue.sample(t)
        out = ctl.compute(t, m.q, m.dq, ref.q, ref.dq, ref.ddq)
        log_t.append(t)
        log_q.append(m.q)
        log_dq.append(m.dq)
        log_tau.append(m.tau_measured)
        log_cmd.append(out.tau)
        log_tau0.append(out.tau0)
        log_bound.append(out.v_bound if out.v_bound is not None else np.zeros(robot.nj))
        ref_t.append(t)
        ref_q.append(ref.q)
        ref_dq.append(ref.dq)
        ref_ddq.append(ref.ddq)
        sim.step(out.tau, substeps)
        step += 1
        if ident is not None and t_task_start is None and t >= next_update - 1e-9:
            # identification ends at an update instant (so that update has fresh rows and
            # carries the point estimate): all trajectories run, or planning gave up
            done = len(executed) >= config.n_trajectories or len(plans) >= config.max_cycles
            last_end = executed[-1][3] if executed else t
            final = done and t >= last_end + config.settle - 1e-9
            identifier_update(t, final)
            next_update += res["update_period"]
            if final:
                ident_window = (executed[0][2], last_end) if executed else None
                t_task_start = t + config.control_dt

    nj = robot.nj
    run = RunData(np.asarray(log_t), np.asarray(log_q), np.asarray(log_dq),
                  np.asarray(log_tau), np.asarray(log_t), np.asarray(log_cmd).reshape(-1, nj),
                  np.asarray(bounds_t), np.asarray(bounds).reshape(-1, 3, 10),
                  sim.true_theta_e(), trajectories, ident_status)
    reference = {"t": np.asarray(ref_t), "q": np.asarray(ref_q), "dq": np.asarray(ref_dq),
                 "ddq": np.asarray(ref_ddq)}
    control = {"tau0": np.asarray(log_tau0).reshape(-1, nj),
               "v_bound": np.asarray(log_bound).reshape(-1, nj)}
    return Episode(method, payload_kg, seed, run, ident_window, task_window, plans, executed,
                   reference, control, ident_seconds, time.perf_counter() - wall0,
                   # lateness is judged against the robot file's budget, not an override
                   config.n_trajectories, float((robot.config.get("planner") or {}).get(
                       "max_solve_time", planner.config.max_solve_time)) if planner else 0.0,
                   notes)


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
    """Verdict with ``sysid_ros.demo.report.evaluate``: first the identification phase (the run
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
    if phase is None:
        # the slow return to demo.start (not planned, not part of the task): collisions only,
        # as in the demo's verdict
        start = episode.ident_window[1] if episode.ident_window else 0.0
        ev_ret = evaluate(_truncated(run, episode.task_window[0]), robot, obstacles,
                          (start, episode.task_window[0]), kr, v_max)
        bad = [r for r in ev_ret.reasons if r.startswith("collision")]
        if bad:
            phase, reasons = "return", bad
    ev = evaluate(run, robot, obstacles, episode.task_window, kr, v_max)
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
        mass_interval=(float(final[0, 0]), float(final[2, 0])) if final is not None else None,
        cond=identification_cond(robot, episode, reg=reg), plans_executed=n_plans,
        plan_cycles=len(episode.plans), random_would_verify=rand_ok, max_V_task=ev.max_V,
        peak_torque_ratio=peak_ratio, worst_torque_ratio=worst_ratio,
        min_clearance_mm=ev.min_clearance * 1000.0,
        plan_seconds=[p["seconds"] for p in episode.plans],
        plan_failures=[(p["reasons"] or [p["status"]])[0] for p in episode.plans
                       if not p["verified"] and excitation == "planned"],
        late_plans=(sum(p["seconds"] > episode.max_solve_time for p in episode.plans)
                    if excitation == "planned" else 0),
        wall_seconds=episode.wall_seconds, evaluation=ev)


def run_episode(robot: Robot, payload_kg: float, method: str,
                obstacles: Sequence[BoxObstacle] = (), seed: int = 0,
                config: EpisodeConfig = EpisodeConfig(),
                log: Callable[[str], None] | None = None) -> EpisodeResult:
    """:func:`simulate_episode` then :func:`evaluate_episode` with the same obstacles."""
    ep = simulate_episode(robot, payload_kg, method, obstacles, seed, config, log)
    return evaluate_episode(robot, ep, obstacles)
