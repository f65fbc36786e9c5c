"""Errors of the demo package (all subclasses of ``DemoError``)."""
from __future__ import annotations

from sysid_ros._src.errors import SysidError

__all__ = ["DemoError", "DemoConfigError", "EXIT_SUCCESS", "EXIT_FAILURE", "EXIT_BAD_INPUT",
           "EXIT_REFUSED", "EXIT_NO_BAG"]

#: sysid-demo's exit codes (sysid_ros._src.demo.demo_cli's docstring says what each means)
EXIT_SUCCESS, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_REFUSED, EXIT_NO_BAG = 0, 1, 2, 3, 4


class DemoError(SysidError):
    """Base class of every error raised by ``sysid_ros._src.demo``."""


class DemoConfigError(DemoError):
    """A missing or malformed demo setting (robot file ``demo:`` section or a CLI option)."""
