"""The robust controller's runtime: settings, trajectory admission and take-over, watchdogs,
activation and status — a state machine driven by plain calls with explicit time (no rclpy; the
node ``sysid_ros._src.nodes.robust_controller`` only translates messages, parameters and timers).

Two clocks are passed in: ``steady`` (monotonic seconds: watchdogs, ages, diagnostics periods —
it cannot stall) and ``ros_now`` (ROS time: trajectory start times, the control law's t;
under ``use_sim_time`` it is /clock and freezes with the simulator).

States and transitions (the node maps them onto its lifecycle):

- *inactive* (after configure): no commands. ``activate`` is refused while joint_states or
  /clock are stale (received before, silent now); otherwise it resets the law, drops every
  trajectory and holds the measured pose (any trajectory must be re-sent after an activation)
  — except an automatic re-activation (below), which resumes the running trajectory: in
  simulation the planner's next plan continues from it (the reference moved on during the gap,
  so the first commands may clip; hardware never re-activates by itself).
- *active*: a command per fresh joint state (``publish_on = joint_states``) or per timer tick.
- **stale** — joint_states older than ``stale_timeout`` or ROS time frozen for ``clock_timeout``
  (``use_sim_time`` only), both on the steady clock: commanding stops at once (no command is
  computed from a stale state; the drive's own watchdog then holds/brakes the robot) and
  ``tick`` asks the node to deactivate (lifecycle *inactive*, reason on /diagnostics). With
  ``auto_reactivate`` the node re-activates by itself once every input is fresh again (sim);
  otherwise an operator activates (hardware).
- bounds silent for ``bounds_warn_after``: WARN only — the last box still contains θ_e (the
  identifier's boxes only shrink), so commanding continues; the age is reported.

Diagnostics describe the last period: conditions now (stale, inactive, bounds age) plus what
happened since the previous report (rejected joint states, trajectories, bounds; clipped
commands); ``end_period`` starts a new period, so a NaN joint state is an ERROR for one period
and clears when clean data follow.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.control.admission import (KNOWN_CHECKS, Certificate, Tolerances, box_digest,
                                         check_continuity, check_limits, check_torque)
from sysid_ros._src.control.tracking_bounds import TrackingErrorBound, tracking_error_bound
from sysid_ros._src.control.controller import (NOMINALS, ControlOutput, PidGains, RobustController,
                                          gains_from_config)
from sysid_ros._src.control.errors import (BoundsError, TrajectoryError)
from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.control.settings import COMMAND_RELIABILITIES, ControllerSettings
from sysid_ros._src.control.trajectory import JointTrajectoryArrays, TrajectoryQueue
from sysid_ros._src.control.watchdog import ClockWatch, Freshness
from sysid_ros._src.control.arm_view import arm_view
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.robots import Robot, load_robot

__all__ = ["OK", "WARN", "ERROR", "STATE_LABELS", "COMMAND_RELIABILITIES", "ControllerSettings",
           "Admission", "Status", "Action", "ControllerRuntime", "build_runtime"]

OK, WARN, ERROR = 0, 1, 2
#: the node's ``~/state`` vector (``ControllerRuntime.state_vector``)
STATE_LABELS = ("r_norm", "V_sup", "V_max", "rho", "lambda", "bound_norm", "clipped", "compute_s")


@dataclass(frozen=True)
class Admission:
    """Outcome of one incoming trajectory."""

    accepted: bool
    certified: bool
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Status:
    """One diagnostics report: level (OK/WARN/ERROR), message, key/values."""

    level: int
    message: str
    values: dict[str, str]


@dataclass(frozen=True)
class Action:
    """What ``tick`` asks the node to do: ``deactivate`` or ``activate``, and why."""

    kind: str
    reason: str


@dataclass
class _Period:
    """Events since the last diagnostics report."""

    rejected_states: int = 0
    last_state_error: str = ""
    rejected_trajectories: int = 0
    last_trajectory_error: str = ""
    rejected_bounds: int = 0
    last_bounds_error: str = ""
    commands: int = 0
    clipped: int = 0


@dataclass
class _Counters:
    commands: int = 0
    clipped: int = 0
    accepted: int = 0
    accepted_certified: int = 0
    rejected: int = 0
    stale_events: int = 0


class ControllerRuntime:
    """The controller's state machine (module doc). Not thread-safe: one caller thread."""

    def __init__(self, robot: Robot, ctl: RobustController, settings: ControllerSettings,
                 bound: TrackingErrorBound, use_sim_time: bool, steady: float) -> None:
        self.robot, self.ctl, self.settings, self.bound = robot, ctl, settings, bound
        self.queue = TrajectoryQueue(robot.nj)
        self.tolerances = Tolerances(settings.takeover_position_tolerance,
                                     settings.takeover_velocity_tolerance,
                                     settings.takeover_acceleration_tolerance)
        self.js = Freshness(settings.stale_timeout)
        self.bounds_seen = Freshness(settings.bounds_warn_after)
        self.clock = ClockWatch(settings.clock_timeout, enabled=use_sim_time)
        self.configured_at = steady
        self.active = False
        self.stale_reason = ""           # why tick deactivated the controller ("" = it did not)
        self._resume = False             # the next activation is an auto re-activation
        self.last_stale = ""             # reason of the last stale stop (kept for reports)
        self.bounds_source = "prior"
        self.scheduling = "normal"       # the command thread's policy, as the node set it
        self.state: tuple[float, np.ndarray, np.ndarray] | None = None
        self.last_output: ControlOutput | None = None
        self.counters = _Counters()
        self.period = _Period()
        self.log: list[tuple[int, str]] = []
        # every box the controller has held, by digest: certificates name one of them
        self.known_boxes: dict[str, ParameterBox] = {}
        self._remember(ctl.prior)

    # -- activation --------------------------------------------------------------------------
    def stale(self, steady: float) -> str:
        """Why the inputs are stale now ("" = fresh or not yet received)."""
        if self.js.stale(steady):
            return (f"joint_states stale ({self.js.age(steady) * 1e3:.1f} ms > "
                    f"{self.settings.stale_timeout * 1e3:.1f} ms)")
        if self.clock.stalled(steady):
            return (f"/clock stopped ({self.clock.age(steady):.2f} s > "
                    f"{self.settings.clock_timeout:.2f} s without a change of ROS time)")
        return ""

    def activate(self, steady: float) -> str:
        """Arm the output (module doc); returns the refusal reason, "" on success."""
        why = self.stale(steady)
        if why:
            return f"activation refused: {why}"
        self.ctl.reset()
        if not self._resume:
            self.queue.clear()
            if self.state is not None:
                self.queue.hold(self.state[1])
        self.active, self.stale_reason, self._resume = True, "", False
        return ""

    def deactivate(self) -> None:
        self.active = False

    def tick(self, steady: float, ros_now: float) -> Action | None:
        """Watchdog step (call every ``watchdog_period`` on the steady clock)."""
        self.clock.observe(steady, ros_now)
        why = self.stale(steady)
        if why and self.active:
            self.active, self.stale_reason = False, why
            self.counters.stale_events += 1
            self.last_stale = why
            self._log(ERROR, f"{why}: commands stopped, deactivating")
            return Action("deactivate", why)
        if (not why and not self.active and self.stale_reason and self.settings.auto_reactivate
                and self.js.last is not None and steady - self.js.last <= self.js.timeout):
            self._log(OK, f"inputs fresh again after '{self.stale_reason}': re-activating "
                          "(auto_reactivate; the running trajectory resumes)")
            self._resume = True
            return Action("activate", "inputs fresh again")
        return None

    # -- inputs ------------------------------------------------------------------------------
    def joint_state(self, steady: float, stamp: float, q: np.ndarray,
                    dq: np.ndarray) -> ControlOutput | None:
        """A valid joint state (stamp in ROS seconds, ≤ 0 = unknown); returns the command to
        send when commanding on joint_states."""
        self.js.feed(steady)
        self.state = (stamp, q, dq)
        if not self.queue.has_reference:
            self.queue.hold(q)
        if self.settings.publish_on == "joint_states":
            return self.command(steady)
        return None

    def joint_state_rejected(self, reason: str) -> None:
        self.period.rejected_states += 1
        if reason != self.period.last_state_error:
            self._log(ERROR, f"joint_states rejected: {reason}")
        self.period.last_state_error = reason

    def bounds(self, steady: float, box: ParameterBox) -> None:
        """A new θ_e box (validated by its construction); one over other parameters is
        rejected and the previous box kept."""
        try:
            self.ctl.set_bounds(box)
        except BoundsError as exc:
            self.bounds_rejected(str(exc))
            return
        self._remember(box)
        self.bounds_seen.feed(steady)
        self.bounds_source = "identifier"

    def bounds_rejected(self, reason: str) -> None:
        self.period.rejected_bounds += 1
        self.period.last_bounds_error = reason
        self._log(WARN, f"payload bounds rejected, keeping the previous box: {reason}")

    def trajectory(self, ros_now: float, traj: JointTrajectoryArrays | None, frame_id: str,
                   decode_error: str = "") -> Admission:
        """Admit or reject one trajectory (``traj`` None with the decoder's ``decode_error``).
        A rejected trajectory leaves the current one running. Its arrival time is the stamp of
        the latest joint state — the time base the reference is sampled on — or ``ros_now``
        before any."""
        if traj is None:
            return self._reject(False, [decode_error])
        now = self.state[0] if self.state is not None else ros_now
        try:
            planned = self.queue.plan(traj, now)
        except TrajectoryError as exc:
            return self._reject(False, [str(exc)])
        certified, why_not = self._certified(frame_id)
        take_over = max(planned.start, now)
        reasons = check_limits(planned, self.robot.limits)
        reasons += check_continuity(planned, self.queue.reference_at(take_over), take_over,
                                    self.tolerances)
        if not reasons and self.settings.check_torque and self.ctl.mode != "pid":
            reasons += check_torque(planned, self.ctl)
        if not certified and not self.settings.accept_uncertified:
            reasons.append(f"uncertified ({why_not}) and accept_uncertified is false")
        if reasons:
            return self._reject(certified, reasons)
        self.queue.push(traj, now, planned)
        self.counters.accepted += 1
        self.counters.accepted_certified += int(certified)
        return Admission(True, certified)

    def _certified(self, frame_id: str) -> tuple[bool, str]:
        try:
            cert = Certificate.parse(frame_id)
        except TrajectoryError as exc:
            return False, str(exc)
        if cert is None:
            return False, "no certificate"
        if cert.check not in KNOWN_CHECKS:
            return False, f"unknown check {cert.check!r}"
        if self.ctl.mode == "pid":
            return False, "the PID baseline has no certified bound"
        box = self.known_boxes.get(cert.box)
        if box is None:
            return False, f"certificate names a box {cert.box} this controller never held"
        held = self.ctl.box
        if np.any(held.lower < box.lower) or np.any(held.upper > box.upper):
            return False, "the controller's box is not inside the certified box"
        return True, ""

    def _reject(self, certified: bool, reasons: list[str]) -> Admission:
        self.counters.rejected += 1
        self.period.rejected_trajectories += 1
        self.period.last_trajectory_error = "; ".join(reasons)
        self._log(WARN, f"trajectory rejected, current one continues: {'; '.join(reasons)}")
        return Admission(False, certified, tuple(reasons))

    # -- output ------------------------------------------------------------------------------
    def command(self, steady: float) -> ControlOutput | None:
        """The torque command now, or None (inactive, no state yet, or stale input)."""
        if not self.active or self.state is None or self.stale(steady):
            return None
        t, q, dq = self.state
        ref = self.queue.sample(t)
        if ref is None:
            return None
        out = self.ctl.compute(t, q, dq, ref.q, ref.dq, ref.ddq)
        self.last_output = out
        self.counters.commands += 1
        self.counters.clipped += int(out.clipped)
        self.period.commands += 1
        self.period.clipped += int(out.clipped)
        return out

    def state_vector(self, out: ControlOutput, compute_s: float) -> np.ndarray:
        """The quantities of ``STATE_LABELS`` for one command."""
        return np.array([out.r_norm, out.V_sup, out.V_max, self.bound.rho, out.lam,
                         out.bound_norm, float(out.clipped), compute_s])

    # -- status ------------------------------------------------------------------------------
    def status(self, steady: float) -> Status:
        """The report for the current period (module doc)."""
        issues: list[tuple[int, str]] = []
        why = self.stale(steady)
        if why:
            issues.append((ERROR, why + ": not commanding"))
        elif self.stale_reason and not self.active:
            issues.append((ERROR, f"deactivated: {self.stale_reason}; inputs fresh again, "
                                  "waiting for activation"))
        elif not self.active:
            issues.append((WARN, "inactive: not commanding"))
        p = self.period
        if p.rejected_states:
            issues.append((ERROR, f"joint_states rejected ({p.rejected_states} this period; "
                                  f"last: {p.last_state_error})"))
        if p.rejected_trajectories:
            issues.append((WARN, f"trajectory rejected, current one continues "
                                 f"({p.rejected_trajectories} this period; last: "
                                 f"{p.last_trajectory_error})"))
        if p.rejected_bounds:
            issues.append((WARN, f"payload bounds rejected (last: {p.last_bounds_error})"))
        age = self._bounds_age(steady)
        if age > self.settings.bounds_warn_after and self.ctl.mode in ("robust", "pid"):
            since = "no bounds received" if self.bounds_seen.last is None else "no new bounds"
            issues.append((WARN, f"identifier silent: {since} for {age:.1f} s (the last box "
                                 "still holds; it stops shrinking)"))
        if p.clipped:
            issues.append((WARN, f"{p.clipped} of {p.commands} commands clipped this period "
                                 "(guarantee void while clipped)"))
        level = max((lvl for lvl, _ in issues), default=OK)
        message = "; ".join(m for _, m in sorted(issues, key=lambda x: -x[0])) or \
            "active: commanding torques"
        values = {"active": str(self.active).lower(), "mode": self.ctl.mode,
                  "bounds": self.bounds_source, "bounds_age_s": f"{age:.3f}",
                  "bounds_digest": box_digest(self.ctl.box.lower, self.ctl.box.upper),
                  "joint_states_age_ms": f"{self.js.age(steady) * 1e3:.1f}",
                  "commands": str(self.counters.commands),
                  "clipped_commands": str(self.counters.clipped),
                  "trajectories_accepted": str(self.counters.accepted),
                  "trajectories_certified": str(self.counters.accepted_certified),
                  "trajectories_rejected": str(self.counters.rejected),
                  "stale_events": str(self.counters.stale_events),
                  "last_stale": self.last_stale,
                  "accept_uncertified": str(self.settings.accept_uncertified).lower(),
                  "rho": f"{self.bound.rho:.6g}", "scheduling": self.scheduling}
        return Status(level, message, values)

    def end_period(self) -> None:
        self.period = _Period()

    def pop_log(self) -> list[tuple[int, str]]:
        out, self.log = self.log, []
        return out

    # -- helpers -----------------------------------------------------------------------------
    def _bounds_age(self, steady: float) -> float:
        last = self.bounds_seen.last
        return steady - (self.configured_at if last is None else last)

    def _remember(self, box: ParameterBox) -> None:
        self.known_boxes[box_digest(box.lower, box.upper)] = box
        if len(self.known_boxes) > 256:          # oldest first (dicts keep insertion order)
            self.known_boxes.pop(next(iter(self.known_boxes)))

    def _log(self, level: int, message: str) -> None:
        self.log.append((level, message))


def build_runtime(settings: ControllerSettings, use_sim_time: bool, steady: float,
                  robot: Robot | None = None) -> ControllerRuntime:
    """Load the robot and build the law, its bound and the runtime (configure). ``robot``: an
    already loaded robot instead of ``settings.robot`` (the in-process pipeline, whose robot may
    be an edited file). Raises ModelError / ControlError naming what is wrong."""
    settings.validate()
    # a floating-base robot (B1 + Z1) is controlled as its arm with the trunk as base
    robot = arm_view(robot if robot is not None else
                     load_robot(settings.robot, settings.robot_config or None,
                                settings.calibration or None))
    defaults = robot.config.get("controller", {}) or {}

    # the robot file's controller: section, with the node's parameters overriding where given
    # (gains_from_config drops the absent ones, None)
    gains = gains_from_config(robot, {
        "Kr": settings.Kr, "alpha": settings.alpha, "V_max": settings.V_max,
        "r_norm_threshold": settings.r_norm_threshold, "boundary_layer": settings.boundary_layer,
        "torque_limit_scale": settings.torque_limit_scale})
    nj = robot.nj
    pid = PidGains(*(np.full(nj, float(getattr(settings, n)))
                     for n in ("pid_kp", "pid_ki", "pid_kd", "pid_i_clamp")))
    # τ₀'s θ_e nominal (box centre by default) comes from the robot file: the planner's
    # certificate assumes the same choice
    ctl = RobustController(robot, gains, mode=settings.mode, prior=prior_box(robot), pid=pid,
                           theta_r_uncertainty=settings.theta_r_uncertainty,
                           nominal=str(defaults.get("nominal", NOMINALS[0])))
    bound = tracking_error_bound(robot, gains.Kr, gains.V_max)
    return ControllerRuntime(robot, ctl, settings, bound, use_sim_time, steady)

