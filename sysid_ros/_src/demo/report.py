"""Evaluate a recorded closed-loop run and write ``report.md`` with PNG plots (no rclpy).

Everything is recomputed from the bag, independently of what the nodes said about themselves:

- final bounds vs. the simulator's truth (``/sim/payload_truth``) and whether the box contains it;
- tracking: the desired reference is rebuilt from ``/sysid/desired_trajectory`` with the
  controller library's quintic queue, and V = ½ rᵀ (H_true(q) + diag(Ia)) r is evaluated with the
  TRUE θ_e (r = ė + K_r e) against V_max; V ≤ V_max is the controller's guarantee under bounds
  that contain the truth;
- torques: peak |command| per joint against the limits (a command at the limit was clipped);
- collisions: the robot's collision spheres along the whole measured joint trajectory
  (Pinocchio-model forward kinematics) against the obstacle boxes: minimum signed distance.

- the identifier's own verdict: its last status on ``/diagnostics`` (level and message, e.g. a
  WARN that the box is pinned to a face of the prior — it may then hold only because the prior
  cuts it, so the run does not count as identified).

The run succeeds when the final box contains the truth and is not pinned to the prior, no
collision sphere ever entered an obstacle and the task phase has no torque-limit hit and
V ≤ V_max (callers add their own conditions, e.g. the number of certified exciting
trajectories, through ``Evaluation.fail``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Sequence

import numpy as np

from sysid_ros._src.bagio import TopicNotFoundError, iter_messages, list_topics, read_joint_states
from sysid_ros._src.control.trajectory import JointTrajectoryArrays, TrajectoryQueue
from sysid_ros._src.demo.class_payload import placement_section
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.parameters import PARAM_NAMES, theta_from_com_inertia
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.spatial import BatchKinematics
from sysid_ros._src.planning.obstacles import BoxObstacle, signed_distance

__all__ = ["RunData", "Evaluation", "IdentifierStatus", "load_run", "evaluate", "write_report",
           "floor_summary",
           "IDENTIFIER_DIAGNOSTIC", "PINNED_WARNING", "COMMAND_TOPIC", "bag_messages",
           "header_seconds"]

#: the arm's effort command as the demo graph records it
COMMAND_TOPIC = "/effort_controller/commands"

#: ``DiagnosticStatus.name`` of the identifier node (``sysid_ros._src.nodes.identifier.DIAG_NAME``;
#: not imported: this module needs no rclpy — a test checks the two agree)
IDENTIFIER_DIAGNOSTIC = "sysid_ros/identifier"
#: the identifier's warning for a box held only by a face of the prior
#: (``sysid_ros._src.identification.diagnostics.box_warnings``)
PINNED_WARNING = "box pinned to the prior"
_LEVELS = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}


@dataclass(frozen=True)
class IdentifierStatus:
    """One identifier diagnostic: time (s, bag clock mapped to stamps), level
    (``diagnostic_msgs/DiagnosticStatus`` byte: 0 OK, 1 WARN, 2 ERROR) and message."""

    t: float
    level: int
    message: str

    @property
    def level_name(self) -> str:
        return _LEVELS.get(self.level, str(self.level))

    @property
    def pinned(self) -> bool:
        return self.level == 1 and PINNED_WARNING in self.message

    @classmethod
    def of(cls, t: float, status: str, warnings: Sequence[str]) -> IdentifierStatus:
        """What the identifier node reports for an ``OnlineIdentifier`` status and its
        warnings (for the in-process pipeline, which has no /diagnostics)."""
        level = {"ok": 1 if warnings else 0, "insufficient_data": 1}.get(status, 2)
        return cls(t, level, status + (f"; WARNING: {' | '.join(warnings)}" if warnings else ""))


@dataclass(frozen=True)
class RunData:
    """What the report needs from a bag, as arrays (times in seconds of the bag's clock)."""

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau_measured: np.ndarray
    cmd_t: np.ndarray
    cmd: np.ndarray
    bounds_t: np.ndarray
    bounds: np.ndarray              # (K, 3, 10): lower, nominal, upper
    truth: np.ndarray | None        # (10,)
    trajectories: list[JointTrajectoryArrays]
    identifier_status: list[IdentifierStatus] = field(default_factory=list)


@dataclass
class Evaluation:
    """Figures of merit of one run; ``success`` is the task-phase verdict."""

    contains_truth: bool | None
    final_bounds: ParameterBox | None         # the last published θ_e box
    truth: np.ndarray | None
    task_window: tuple[float, float]
    max_abs_e: np.ndarray
    max_abs_de: np.ndarray
    max_V: float
    V_max: float
    peak_cmd: np.ndarray
    tau_max: np.ndarray
    torque_hits: list[str]
    min_clearance: float
    collided: bool
    success: bool
    reasons: list[str] = field(default_factory=list)
    identifier: IdentifierStatus | None = None      # its last status in the run
    identifier_warnings: int = 0                     # WARN/ERROR statuses over the run
    series: dict[str, Any] = field(default_factory=dict, repr=False)

    def fail(self, reason: str) -> None:
        """Record a failure found outside ``evaluate`` (e.g. too few certified plans)."""
        self.reasons.append(reason)
        self.success = False


def floor_summary(robot: Robot, ev: Evaluation) -> str | None:
    """One report line: the identifiability floor (identification.floor) of the identifier's
    link and friction boxes about the simulated truth, against the final box's mass width — the
    part of that width no excitation could have removed. None when there is nothing to compare
    (no box or no truth). A floating base (``robot`` with its trunk) takes the floor of the
    motions its task may make: the arm joints the legs' contract does not hold
    (``arm_view.legs.held_joints``) move, the others and the trunk rest at the demo's start."""
    from sysid_ros._src.identification import load_identification_config
    from sysid_ros._src.identification.errors import IdentificationError
    from sysid_ros._src.identification.floor import identifiability_floor

    if ev.final_bounds is None or ev.truth is None:
        return None
    moved, pose, what = None, None, "any motion"
    if robot.floating_base:
        moved, pose, names = _task_motion(robot)
        what = f"any motion of {', '.join(names)} alone (the trunk and the other joints at rest)"
    try:
        floor = identifiability_floor(robot, load_identification_config(robot), ev.truth,
                                      moved=moved, pose=pose)
    except IdentificationError as err:
        return f"not computed: {err}"
    width = float(ev.final_bounds.width[0])
    return (f"mass {floor.width[0]:.3g} kg of the final box's {width:.3g} kg — what noise-free "
            f"data from {what} would leave under the identifier's link and friction boxes "
            "(docs/theory/identification.md#the-identifiability-floor); the rest is the excitation's and the noise's")


def _task_motion(robot: Robot) -> tuple[list[int], np.ndarray, list[str]]:
    """A floating base's task motion for the floor: (indices of the moved arm joints, every
    joint's resting angle — the legs' standing posture and ``demo.start`` — , their names)."""
    from sysid_ros._src.control.legs import LegsContract, standing_configuration

    held = set(LegsContract.from_robot(robot).held_joints)
    arm = list(robot.config["arm_joints"])
    names = [n for n in arm if n not in held]
    pose = standing_configuration(robot)[robot.q_index]
    pose[[robot.joint_names.index(n) for n in arm]] = robot.config["demo"]["start"]
    return [robot.joint_names.index(n) for n in names], pose, names


#: the robust controller's record of the trajectories it admitted (sysid_ros._src.nodes.robust_controller)
ADMITTED_TOPIC = "/robust_controller/admitted_trajectory"
TRAJECTORY_TYPE = "trajectory_msgs/msg/JointTrajectory"


def bag_messages(bag: Path, topic: str, msgtype: str) -> Iterator[tuple[float, Any]]:
    """(log time s, message) of a topic; a topic the run did not record yields nothing."""
    try:
        for stamp, msg in iter_messages(bag, topic, msgtype):
            yield stamp * 1e-9, msg
    except TopicNotFoundError:
        return


def header_seconds(header: Any) -> float:
    """A ``std_msgs/Header``'s stamp in seconds."""
    return header.stamp.sec + header.stamp.nanosec * 1e-9


def _theta_from_inertia(inertia: Any) -> np.ndarray:
    i_c = np.array([[inertia.ixx, inertia.ixy, inertia.ixz], [inertia.ixy, inertia.iyy, inertia.iyz],
                    [inertia.ixz, inertia.iyz, inertia.izz]])
    return theta_from_com_inertia(inertia.m, np.array([inertia.com.x, inertia.com.y, inertia.com.z]),
                                  i_c)


def load_run(bag: Path, robot: Robot) -> RunData:
    """Read the topics of a demo run. Message times use header stamps where there is one."""
    js = read_joint_states(bag, "/joint_states", list(robot.joint_names))
    cmd_t, cmd = [], []
    for t, msg in bag_messages(bag, COMMAND_TOPIC, "std_msgs/msg/Float64MultiArray"):
        if len(msg.data) == robot.nj:
            cmd_t.append(t)
            cmd.append(np.asarray(msg.data, float))
    b_t, b = [], []
    for t, msg in bag_messages(bag, "/sysid/payload_bounds", "std_msgs/msg/Float64MultiArray"):
        data = np.asarray(msg.data, float)
        if data.size >= 30:
            b_t.append(t)
            b.append(data[:30].reshape(3, 10))
    truth = None
    for _, msg in bag_messages(bag, "/sim/payload_truth", "geometry_msgs/msg/InertiaStamped"):
        truth = _theta_from_inertia(msg.inertia)
    trajs = []
    # what the controller tracked: the trajectories it admitted (a rejected one, e.g. one that
    # arrived after its start, never became the reference); bags recorded before the
    # controller published them have only what was sent
    source = ADMITTED_TOPIC if ADMITTED_TOPIC in list_topics(bag) else "/sysid/desired_trajectory"
    for _, msg in bag_messages(bag, source, TRAJECTORY_TYPE):
        pts = msg.points
        trajs.append(JointTrajectoryArrays.from_arrays(
            [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in pts],
            [p.positions for p in pts], [p.velocities for p in pts],
            [p.accelerations for p in pts], list(msg.joint_names), list(robot.joint_names),
            header_seconds(msg.header)))
    # bag receive times and header stamps share the sim clock only approximately; map the
    # receive times of commands/bounds onto joint-state stamps through the bag clock
    offset = _bag_to_stamp_offset(bag, js.t)
    status = [IdentifierStatus(t + offset, int.from_bytes(st.level, "little")
                               if isinstance(st.level, bytes) else int(st.level),
                               _with_rejections(st))
              for t, msg in bag_messages(bag, "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
              for st in msg.status if st.name == IDENTIFIER_DIAGNOSTIC]
    # read_joint_states requires all three fields by default (raises otherwise)
    assert js.position is not None and js.velocity is not None and js.effort is not None
    return RunData(js.t, js.position, js.velocity, js.effort,
                   np.asarray(cmd_t) + offset, np.asarray(cmd).reshape(-1, robot.nj),
                   np.asarray(b_t) + offset, np.asarray(b).reshape(-1, 3, 10), truth, trajs,
                   status)


def _with_rejections(status: Any) -> str:
    """The status message, plus the count of joint_states the identifier rejected (its other
    reason for a WARN, which lives in the key-values only)."""
    values = {kv.key: kv.value for kv in status.values}
    rejected = values.get("rejected_total", "0")
    return status.message + (f" [{rejected} joint_states rejected]" if rejected != "0" else "")


def _bag_to_stamp_offset(bag: Path, stamps: np.ndarray) -> float:
    """Median (header stamp − bag receive time) of joint_states: shifts other topics' times."""
    recv = np.array([t for t, _ in bag_messages(bag, "/joint_states", "sensor_msgs/msg/JointState")])
    n = min(recv.size, stamps.size)
    return float(np.median(stamps[:n] - recv[:n])) if n else 0.0


def _reference(run: RunData, nj: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    queue = TrajectoryQueue(nj)
    queue.hold(run.q[0])
    pending = sorted(run.trajectories, key=lambda tr: tr.start_time)
    qd, dqd = np.empty_like(run.q), np.empty_like(run.q)
    active = np.zeros(run.t.size, bool)
    k = 0
    for i, t in enumerate(run.t):
        while k < len(pending) and pending[k].start_time <= t:
            queue.push(pending[k], now=t)
            k += 1
        ref = queue.sample(t)
        assert ref is not None          # the queue holds run.q[0] until a trajectory starts
        qd[i], dqd[i] = ref.q, ref.dq
        active[i] = k > 0
    return qd, dqd, active


def evaluate(run: RunData, robot: Robot, obstacles: Sequence[BoxObstacle],
             task_window: tuple[float, float], Kr: float, V_max: float) -> Evaluation:
    """Compute the figures of merit; the verdict concerns ``task_window`` (seconds)."""
    reasons: list[str] = []
    final = theta_e_box(run.bounds[-1, 0], run.bounds[-1, 2], run.bounds[-1, 1],
                        frame=robot.ee_joint) if run.bounds.size else None
    contains = None
    if final is not None and run.truth is not None:
        contains = final.contains(run.truth)

    qd, dqd, active = _reference(run, robot.nj)
    e, de = qd - run.q, dqd - run.dq
    r = de + Kr * e
    in_task = (run.t >= task_window[0]) & (run.t <= task_window[1])
    # V with the TRUE end-effector parameters (the controller never sees them)
    theta = robot.theta()
    if run.truth is not None:
        theta = theta.copy()
        theta[robot.ee_columns] = run.truth
    stride = max(1, run.t.size // 4000)
    idx = np.arange(0, run.t.size, stride)
    reg = Regressors(robot)
    w_m, _ = reg.momentum_pair(run.q[idx], r[idx])
    h_r = w_m @ theta + robot.friction.nominal[:, 2] * r[idx]
    V = 0.5 * np.einsum("ni,ni->n", r[idx], h_r)
    V_task = V[in_task[idx]]
    max_V = float(V_task.max()) if V_task.size else float("nan")
    if V_task.size and max_V > V_max:
        reasons.append(f"tracking bound: V reached {max_V:.4f} J > V_max = {V_max} J")

    cmd_task = (run.cmd_t >= task_window[0]) & (run.cmd_t <= task_window[1])
    peak = np.abs(run.cmd[cmd_task]).max(axis=0) if cmd_task.any() else np.zeros(robot.nj)
    hits = [robot.joint_names[j] for j in range(robot.nj)
            if peak[j] >= robot.limits.tau_max[j] * (1 - 1e-6)]
    if hits:
        reasons.append(f"torque limit reached on {', '.join(hits)}")

    # collisions count over the whole run (identification and return included), not only
    # the task: a sphere in an obstacle at any time is a failure
    kin = BatchKinematics(robot.model)
    fk = kin.forward(run.q[idx])
    clearance = np.inf
    for s in robot.spheres:
        centres = fk.pos[:, s.joint_id - 1] + fk.rot[:, s.joint_id - 1] @ s.offset
        for obs in obstacles:
            dist, _ = signed_distance(centres, obs)
            clearance = min(clearance, float(np.min(dist - s.radius)))
    collided = clearance < 0.0
    if collided:
        reasons.append(f"collision: a sphere penetrates an obstacle by {-clearance * 1000:.1f} mm")
    if contains is False:
        reasons.append("identification: the final box excludes the true θ_e")
    last = run.identifier_status[-1] if run.identifier_status else None
    if last is not None and last.pinned:
        reasons.append("identification: the identifier's final box is pinned to the prior "
                       f"({last.message})")
    if not in_task.any():
        reasons.append("no data in the task window")
    success = not reasons
    return Evaluation(
        contains_truth=contains, final_bounds=final, truth=run.truth, task_window=task_window,
        max_abs_e=np.abs(e[in_task]).max(axis=0) if in_task.any() else np.full(robot.nj, np.nan),
        max_abs_de=np.abs(de[in_task]).max(axis=0) if in_task.any() else np.full(robot.nj, np.nan),
        max_V=max_V, V_max=V_max, peak_cmd=peak, tau_max=robot.limits.tau_max,
        torque_hits=hits, min_clearance=clearance, collided=collided, success=success,
        reasons=reasons, identifier=last,
        identifier_warnings=sum(st.level >= 1 for st in run.identifier_status),
        series={"t": run.t, "e": e, "r_norm": np.linalg.norm(r, axis=1), "V_t": run.t[idx],
                "V": V, "active": active})


def _plots(out: Path, run: RunData, ev: Evaluation, robot: Robot) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = run.t[0]
    files = []
    fig, axes = plt.subplots(5, 2, figsize=(11, 12), sharex=True)
    for k, ax in enumerate(axes.T.ravel()):
        if run.bounds.size:
            bt = run.bounds_t - t0
            ax.fill_between(bt, run.bounds[:, 0, k], run.bounds[:, 2, k], step="post",
                            alpha=0.3, label="sound box")
            ax.step(bt, run.bounds[:, 1, k], where="post", lw=1, label="point estimate θ₀")
        if run.truth is not None:
            ax.axhline(run.truth[k], color="k", ls="--", lw=1, label="truth")
        ax.set_title(PARAM_NAMES[k], fontsize=10)
        ax.axvspan(ev.task_window[0] - t0, ev.task_window[1] - t0, color="0.9", zorder=-1)
    axes[0, 0].legend(fontsize=8, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel("time [s] (grey: move-and-place task)")
    fig.suptitle(f"θ_e bounds over time ({robot.ee_joint} frame, SI units)")
    fig.tight_layout()
    fig.savefig(out / "bounds.png", dpi=90)
    plt.close(fig)
    files.append("bounds.png")

    s = ev.series
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    a1.plot(s["t"] - t0, np.degrees(s["e"]), lw=0.8)
    a1.set_ylabel("e = q_d − q [deg]")
    a1.legend(robot.joint_names, fontsize=7, ncol=7)
    a2.plot(s["V_t"] - t0, s["V"], lw=1, label="V = ½ rᵀ(H+Ia)r (true θ)")
    a2.axhline(ev.V_max, color="r", ls="--", label="V_max")
    a2.set_ylabel("V [J]")
    a2.set_xlabel("time [s]")
    a2.legend(fontsize=8)
    for ax in (a1, a2):
        ax.axvspan(ev.task_window[0] - t0, ev.task_window[1] - t0, color="0.9", zorder=-1)
    fig.suptitle("Tracking error (grey: move-and-place task)")
    fig.tight_layout()
    fig.savefig(out / "tracking.png", dpi=90)
    plt.close(fig)
    files.append("tracking.png")

    fig, axes = plt.subplots(robot.nj, 1, figsize=(11, 1.6 * robot.nj), sharex=True)
    for j, ax in enumerate(np.atleast_1d(axes)):
        ax.plot(run.cmd_t - t0, run.cmd[:, j], lw=0.7, label="command")
        ax.plot(run.t - t0, run.tau_measured[:, j], lw=0.5, alpha=0.6, label="measured")
        for sgn in (1, -1):
            ax.axhline(sgn * robot.limits.tau_max[j], color="r", ls="--", lw=1)
        ax.set_ylabel(f"{robot.joint_names[j]}\n[N·m]", fontsize=8)
        ax.axvspan(ev.task_window[0] - t0, ev.task_window[1] - t0, color="0.9", zorder=-1)
    np.atleast_1d(axes)[0].legend(fontsize=7, loc="upper right")
    np.atleast_1d(axes)[-1].set_xlabel("time [s]")
    fig.suptitle("Joint torques against limits (red)")
    fig.tight_layout()
    fig.savefig(out / "torques.png", dpi=90)
    plt.close(fig)
    files.append("torques.png")
    return files


def _fmt(x: np.ndarray) -> str:
    return " ".join(f"{v: .4g}" for v in x)


def write_report(out: Path, run: RunData, ev: Evaluation, robot: Robot,
                 header: dict[str, Any], klass: ParameterBox | None = None) -> Path:
    """Write ``out/report.md`` and the PNGs; returns the report path. ``klass``: the payload
    class the run started from (the truth and the final box are then set against it)."""
    out.mkdir(parents=True, exist_ok=True)
    files = _plots(out, run, ev, robot)
    lines = ["# sysid_ros closed-loop demo", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()]
    lines += ["", f"## Identified bounds of θ_e ({robot.ee_joint} body incl. gripper and payload)",
              ""]
    if ev.final_bounds is not None:
        lines += ["| parameter | unit | lower | point estimate | upper | truth | inside |",
                  "|---|---|---|---|---|---|---|"]
        box = ev.final_bounds
        for k, (name, unit) in enumerate(zip(box.names, box.units)):
            lo, nom, up = box.named(name)
            tr = ev.truth[k] if ev.truth is not None else float("nan")
            inside = "yes" if lo <= tr <= up else "NO"
            lines.append(f"| {name} | {unit} | {lo:.5g} | {nom:.5g} | {up:.5g} | {tr:.5g} | "
                         f"{inside} |")
        lines += ["", f"Box contains the truth: **{ev.contains_truth}**"]
    else:
        lines.append("No bounds were published.")
    if klass is not None:
        lines += [""] + placement_section(klass, ev.truth, ev.final_bounds)
    if ev.identifier is not None:
        lines += ["", f"Identifier status (its last /diagnostics): **{ev.identifier.level_name}** "
                  f"— {ev.identifier.message}" + (f" ({ev.identifier_warnings} WARN/ERROR "
                                                   "statuses during the run)"
                                                   if ev.identifier_warnings else "")]
    else:
        lines += ["", "Identifier status: none recorded (no /diagnostics from the identifier)"]
    lines += ["", "## Move-and-place task", "",
              f"- max |e| per joint [deg]: {_fmt(np.degrees(ev.max_abs_e))}",
              f"- max |ė| per joint [deg/s]: {_fmt(np.degrees(ev.max_abs_de))}",
              f"- max V (true θ) = {ev.max_V:.5f} J, V_max = {ev.V_max} J",
              f"- peak |command| per joint [N·m]: {_fmt(ev.peak_cmd)}",
              f"- torque limits [N·m]: {_fmt(ev.tau_max)}",
              f"- minimum clearance of the collision spheres to the obstacles (whole run): "
              f"{ev.min_clearance * 1000:.1f} mm", ""]
    lines += [f"![{f}]({f})" for f in files]
    lines += ["", f"Result: {'success' if ev.success else 'failure'}"]
    if ev.reasons:
        lines += [f"- {r}" for r in ev.reasons]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
