"""The ``robust_controller`` node's parameter table (docs/reference/parameters.md), derived from
the fields of ``control.settings.ControllerSettings``: each setting is defined there once."""
from __future__ import annotations

from sysid_ros._src.control.settings import PARAMETERS

__all__ = ["PARAMETERS"]
