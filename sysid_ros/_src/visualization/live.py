"""State of the live view that does not depend on ROS: which obstacle entries to draw and which
plan is being executed at a given time (the markers node feeds both; no rclpy here)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import yaml

from sysid_ros._src.errors import SysidError
from sysid_ros._src.model.robots import Robot

__all__ = ["LiveViewError", "PlanHistory", "obstacle_items", "plan_margins"]

T = TypeVar("T")


class LiveViewError(SysidError):
    """An obstacle file or entry of the live view cannot be used."""


def obstacle_items(robot: Robot, spec: str | None) -> list[dict[str, Any]]:
    """Obstacle entries to draw: ``None`` = the robot file's ``planner.obstacles``, ``"none"`` =
    nothing, else a YAML file holding a list of boxes (or ``{obstacles: [...]}``)."""
    if spec == "none":
        return []
    if spec:
        try:
            data = yaml.safe_load(Path(spec).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise LiveViewError(f"obstacles file {spec}: {exc}") from exc
        items = data.get("obstacles", []) if isinstance(data, dict) else data
        where = f"obstacles file {spec}"
    else:
        items = (robot.config.get("planner") or {}).get("obstacles") or []
        where = f"{robot.config_path}: planner.obstacles"
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise LiveViewError(f"{where}: expected a list of boxes "
                            "{name, center, half_extents, rpy, frame}")
    return [dict(i) for i in items]


def plan_margins(robot: Robot, wanted: bool) -> tuple[np.ndarray, str]:
    """(radius increase per collision sphere, m; a note for the log): the sound chain-length
    bound of the planner's tracking-error margin e_max when ``wanted`` and the robot has one,
    zeros otherwise — the note says which, and why."""
    from sysid_ros._src.visualization.geometry import sphere_margins

    if not wanted:
        return sphere_margins(robot, None), "without margin (plan_margin false)"
    try:
        from sysid_ros._src.planning.planner import controller_model

        e_max = controller_model(robot).e_max
    except (SysidError, ValueError) as exc:
        return sphere_margins(robot, None), f"without margin (no tracking-error bound: {exc})"
    m = sphere_margins(robot, e_max)
    return m, f"enlarged by the e_max chain bound ({1e3 * m.min():.0f}-{1e3 * m.max():.0f} mm)"


@dataclass
class PlanHistory(Generic[T]):
    """The last few plans with their start times; :meth:`current` is the one executing at t.

    A plan starts at its header stamp (ns); a stamp ≤ 0 means "on arrival" and counts as started.
    The receding horizon overlaps two plans at most, so ``keep`` = 4 is plenty."""

    keep: int = 4
    _plans: list[tuple[int, int, T]] = field(default_factory=list)   # (serial, start ns, item)
    _serial: int = 0
    _shown: int = -1

    def add(self, start_ns: int, item: T) -> None:
        self._serial += 1
        self._plans.append((self._serial, start_ns if start_ns > 0 else -1, item))
        del self._plans[:-self.keep]

    def current(self, t_ns: int) -> T | None:
        """The newest plan started by ``t_ns`` if it differs from the last one returned."""
        running = [p for p in self._plans if p[1] <= t_ns]
        if not running or running[-1][0] == self._shown:
            return None
        self._shown = running[-1][0]
        return running[-1][2]
