"""Errors of the model package."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["BoxError", "ModelError", "RobotConfigError", "UnknownRobotError", "UnsupportedJointError"]


class ModelError(SysidError):
    """Base class of every error raised by ``sysid_ros._src.model``."""


class UnknownRobotError(ModelError):
    """A robot name that has no ``config/<name>.yaml``."""


class RobotConfigError(ModelError):
    """A robot config that is missing, malformed, or has a field of the wrong length or unit."""


class UnsupportedJointError(ModelError):
    """A joint type the batched kinematics does not implement (1-DoF revolute and a free-flyer
    root are supported: Gen3, Z1, B1 + Z1)."""


class BoxError(ModelError):
    """A parameter box that is malformed: wrong shape, non-finite, lower > upper or nominal
    outside [lower, upper] (the message names the parameter), or two boxes over other names."""
