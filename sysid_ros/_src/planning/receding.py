"""The receding-horizon planning cycle (docs/theory/planner.md#receding-horizon), driven by plain calls with explicit
time — what the ``exciting_planner`` node and the in-process pipeline both run (no rclpy here).

- Bounds: the robot's payload prior B₀ until the identifier's first box (:meth:`on_bounds`).
- Start: the first plan starts at rest at the measured pose, one solve budget (``max_solve_time``)
  after the cycle began; every later plan starts at ``start + t_p`` of the current one (or one
  solve budget from now, if later), from the current desired state at that instant, so the
  desired motion is continuous (position, velocity, acceleration).
- Lateness: a plan certified after its own start time is discarded (``missed start``): the robot
  keeps following the current trajectory, which ends at rest.
- Stop: after ``max_trajectories`` published plans (0 = no limit), or when the bounds' total
  relative width shrank by less than ``shrink_tolerance`` in each of ``stall_cycles``
  consecutive published cycles (0 = never).

Nothing unverified is ever returned as a plan to publish (:attr:`CycleOutcome.plan` is set only
for a certified, on-time plan).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.enclosures.errors import EnclosureError
from sysid_ros._src.planning.errors import PlanningError
from sysid_ros._src.planning.planner import ExcitingPlanner, PlanResult
from sysid_ros._src.planning.trajectory import QuinticTrajectory

__all__ = ["CycleOutcome", "PublishedPlan", "RecedingHorizon"]


@dataclass(frozen=True)
class PublishedPlan:
    """A certified plan: ``trajectory`` with parameter ``k``, starting at ``start_ns`` (the
    caller's clock), verified for every θ_e in ``box``."""

    start_ns: int
    trajectory: QuinticTrajectory
    k: np.ndarray
    box: ParameterBox


@dataclass
class CycleOutcome:
    """What one cycle did. ``level``: ``ok`` | ``warn`` | ``error``; ``values``: the figures
    for diagnostics (solve_time, iterations, verified, objective = cond(Y_e), stage = what the
    NLP minimised, status, reason)."""

    level: str
    message: str
    values: dict[str, str] = field(default_factory=dict)
    plan: PublishedPlan | None = None
    finished: str = ""            # why the planner is done ("" = not done)
    result: PlanResult | None = None   # the planner's own outcome, when it ran


class RecedingHorizon:
    """The planning cycle around one :class:`ExcitingPlanner` (module docstring)."""

    def __init__(self, planner: ExcitingPlanner, prior: ParameterBox,
                 max_trajectories: int = 0, shrink_tolerance: float = 0.01,
                 stall_cycles: int = 0) -> None:
        if max_trajectories < 0 or stall_cycles < 0 or shrink_tolerance < 0:
            raise PlanningError("max_trajectories, stall_cycles and shrink_tolerance must be ≥ 0")
        self.planner = planner
        self.bounds = prior
        self.bounds_source = "prior"
        self.max_trajectories = max_trajectories
        self.shrink_tolerance = shrink_tolerance
        self.stall_cycles = stall_cycles
        self.published = 0
        self.cycles = 0
        self.finished = ""
        self.current: PublishedPlan | None = None
        self._state: tuple[np.ndarray, np.ndarray] | None = None
        self._stalled = 0
        self._last_width: float | None = None

    # -- inputs ------------------------------------------------------------------------------
    def on_state(self, q: np.ndarray, dq: np.ndarray) -> None:
        """The latest measured joint state (rad, rad/s)."""
        self._state = (np.asarray(q, float), np.asarray(dq, float))

    def on_bounds(self, box: ParameterBox) -> None:
        """The identifier's latest θ_e box (validated by its construction)."""
        self.bounds = box
        self.bounds_source = "identifier"

    # -- the cycle ---------------------------------------------------------------------------
    def start_state(self, now_ns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        """(q₀, q̇₀, q̈₀, start ns) of the next plan, or None before the first joint state."""
        cfg = self.planner.config
        lead = int(cfg.max_solve_time * 1e9)
        if self.current is None:
            if self._state is None:
                return None
            # The controller holds its start pose (zero desired velocity): start from rest at the
            # measured pose, one solve budget ahead, like every later plan.
            q = self._state[0]
            return q, np.zeros_like(q), np.zeros_like(q), now_ns + lead
        cur = self.current
        t_next = max(cur.start_ns + int(cfg.t_p * 1e9), now_ns + lead)
        q, dq, ddq = cur.trajectory.state_at((t_next - cur.start_ns) * 1e-9, cur.k)
        return q, dq, ddq, t_next

    def cycle(self, now_ns: int, clock_ns: Callable[[], int] | None = None) -> CycleOutcome:
        """Plan once at ``now_ns``. ``clock_ns`` reads the time after solving (default: no time
        passes, as in lock-step simulation); a plan certified after its start is discarded."""
        if self.finished:
            return CycleOutcome("ok", f"done: {self.finished}", finished=self.finished)
        init = self.start_state(now_ns)
        if init is None:
            return CycleOutcome("warn", "waiting for joint_states", {"verified": "false"})
        q0, dq0, ddq0, start = init
        box = self.bounds
        self.cycles += 1
        try:
            res = self.planner.plan(q0, dq0, ddq0, box)
        except (PlanningError, EnclosureError) as exc:
            return CycleOutcome("error", f"planning failed: {exc}",
                                {"verified": "false", "reason": str(exc)})
        values = {"solve_time": f"{res.solve_time:.4f}", "iterations": str(res.iterations),
                  "solves": str(res.solves), "verified": str(res.verified).lower(),
                  "objective": f"{res.cond:.6g}", "stage": res.objective, "status": res.status,
                  "bounds_source": self.bounds_source, "reason": "; ".join(res.reasons)}
        if not res.verified or res.k is None:
            return CycleOutcome("warn", "no certified plan: following the current trajectory to "
                                "rest", values, result=res)
        done_ns = clock_ns() if clock_ns is not None else now_ns
        if done_ns >= start:
            values["reason"] = "missed start: plan certified after its start time"
            return CycleOutcome("warn", "plan discarded (late): current trajectory continues",
                                values, result=res)
        plan = PublishedPlan(start, res.trajectory, res.k, box)
        self.adopt(plan)
        values["published"] = str(self.published)
        return CycleOutcome("ok", f"plan {self.published} published (cond {res.cond:.1f})",
                            values, plan, self.finished, res)

    def adopt(self, plan: PublishedPlan) -> None:
        """Make ``plan`` the current one (counted, stop rules applied). :meth:`cycle` calls it for
        its certified plans; the in-process pipeline also calls it for the paper's *random*
        excitation baseline, which executes unchecked plans — the node never does."""
        self.current = plan
        self.published += 1
        self.finished = self._done_reason()

    def _done_reason(self) -> str:
        if self.max_trajectories > 0 and self.published >= self.max_trajectories:
            return f"published {self.published} trajectories (max_trajectories)"
        lo, hi = self.bounds.lower, self.bounds.upper
        width = float(np.sum((hi - lo) / (np.abs(hi) + np.abs(lo) + 1e-9)))
        reason = ""
        if self._last_width is not None and self.stall_cycles > 0:
            shrink = (self._last_width - width) / max(self._last_width, 1e-12)
            self._stalled = self._stalled + 1 if shrink < self.shrink_tolerance else 0
            if self._stalled >= self.stall_cycles:
                reason = f"bounds stopped shrinking for {self._stalled} cycles"
        self._last_width = width
        return reason
