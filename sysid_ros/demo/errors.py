"""Errors of the demo package (all subclasses of ``DemoError``)."""
from __future__ import annotations

from sysid_ros.errors import SysidError

__all__ = ["DemoError", "DemoConfigError"]


class DemoError(SysidError):
    """Base class of every error raised by ``sysid_ros.demo``."""


class DemoConfigError(DemoError):
    """A missing or malformed demo setting (robot file ``demo:`` section or a CLI option)."""
