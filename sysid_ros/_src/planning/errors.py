"""Errors of the planning package (subclasses of ``PlanningError``; ``UnplannableRobotError`` is
the enclosures' own, re-exported here)."""
from __future__ import annotations

from sysid_ros._src.enclosures.errors import UnplannableRobotError
from sysid_ros._src.errors import SysidError

__all__ = ["PlanningError", "PlannerConfigError", "PlanRequestError", "UnplannableRobotError"]


class PlanningError(SysidError):
    """Base class of every error raised by ``sysid_ros._src.planning``."""


class PlannerConfigError(PlanningError):
    """A missing or malformed planner setting (config section ``planner:`` or node parameter)."""


class PlanRequestError(PlanningError):
    """A malformed trajectory request: wrong shapes, NaN/inf, non-positive duration."""

