"""Exceptions of :mod:`sysid_ros._src.identification`; every message is one line naming the problem."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["IdentificationError", "IdentificationConfigError", "SampleError",
           "UnsupportedRobotError"]


class IdentificationError(SysidError):
    """Base class of every identification problem."""


class IdentificationConfigError(IdentificationError, ValueError):
    """A bad noise/uncertainty/window setting; the message names the key."""


class SampleError(IdentificationError, ValueError):
    """Unusable samples: NaN/inf, wrong shape, timestamps not strictly increasing."""


class UnsupportedRobotError(IdentificationError):
    """The robot cannot be identified by this method (e.g. a floating base needs contact wrenches)."""
