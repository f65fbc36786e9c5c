"""Exceptions of :mod:`sysid_ros._src.calibration`; every message is one line naming the problem."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["CalibrationError", "CalibrationInputError", "CalibrationInconsistentError"]


class CalibrationError(SysidError):
    """Base class of every calibration problem."""


class CalibrationInputError(CalibrationError, ValueError):
    """Unusable input: a bag, an option or a recording that cannot be calibrated from."""


class CalibrationInconsistentError(CalibrationError):
    """The data contradict the prior boxes (no plausible noise bound explains them)."""
