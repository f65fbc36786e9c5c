"""Errors of the planning package (all subclasses of ``PlanningError``)."""
from __future__ import annotations

from sysid_ros.errors import SysidError

__all__ = ["PlanningError", "PlannerConfigError", "PlanRequestError", "UnplannableRobotError"]


class PlanningError(SysidError):
    """Base class of every error raised by ``sysid_ros.planning``."""


class PlannerConfigError(PlanningError):
    """A missing or malformed planner setting (config section ``planner:`` or node parameter)."""


class PlanRequestError(PlanningError):
    """A malformed trajectory request: wrong shapes, NaN/inf, non-positive duration."""


class UnplannableRobotError(PlanningError):
    """A robot the planner's kinematics cannot handle (e.g. a floating base)."""
