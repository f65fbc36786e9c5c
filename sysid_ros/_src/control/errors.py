"""Errors of the control package (every one names what was wrong)."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["ControlError", "TrajectoryError", "CertificateError", "BoundsError",
           "ControllerConfigError"]


class ControlError(SysidError):
    """Base class of every error raised by ``sysid_ros._src.control``."""


class TrajectoryError(ControlError):
    """A desired trajectory that cannot be followed: wrong joint names, non-increasing times,
    non-finite values, missing velocities/accelerations, or inconsistent array shapes."""


class CertificateError(TrajectoryError):
    """A trajectory certificate (header.frame_id ``sysid_cert/v1;…``) that cannot be read."""


class BoundsError(ControlError):
    """A parameter box that is malformed (wrong size, lower > upper, non-finite)."""


class ControllerConfigError(ControlError):
    """A controller setting out of range (gain ≤ 0, unknown mode, …)."""
