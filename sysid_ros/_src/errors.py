"""The root of every error sysid_ros raises on bad input or failed assumptions.

Each package has its own base class (``ModelError``, ``BagError``, ``IdentificationError``,
``CalibrationError``, ``ControlError``, ``PlanningError``, ``SimulationError``, ``LaunchError``,
``MessageError``) with specific subclasses whose messages are one line naming the problem; all
derive from :class:`SysidError`, so a caller that only wants "anything the package refused"
catches that one class. Programming errors (bugs) are left as Python's own exceptions.
"""
from __future__ import annotations

__all__ = ["SysidError"]


class SysidError(Exception):
    """Base class of every sysid_ros error."""
