"""Errors of the interval enclosures (subclasses of ``EnclosureError``)."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["EnclosureError", "UnplannableRobotError"]


class EnclosureError(SysidError):
    """Base class of every error raised by ``sysid_ros._src.enclosures``."""


class UnplannableRobotError(EnclosureError):
    """A robot the interval kinematics cannot handle (e.g. a floating base, a joint other than
    a revolute one): neither the planner nor the controller's bounds can take it."""
