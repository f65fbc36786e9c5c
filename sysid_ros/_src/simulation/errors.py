"""Errors raised by the simulator library (no ROS import)."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["SimulationError", "SimConfigError", "PayloadError", "CommandError"]


class SimulationError(SysidError):
    """Base class of every simulator error."""


class SimConfigError(SimulationError, ValueError):
    """A simulator setting (SimConfig field or robot ``simulation:`` section) is invalid."""


class PayloadError(SimulationError, ValueError):
    """A payload's mass, centre of mass or inertia is not physical."""


class CommandError(SimulationError, ValueError):
    """A torque command has the wrong length or non-finite entries."""
