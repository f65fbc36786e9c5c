"""Reading the YAML files robot facts come from (robot files, calibration overlays)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sysid_ros.model.errors import RobotConfigError

__all__ = ["read_yaml_mapping"]


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """A YAML file whose top level is a mapping; RobotConfigError naming the file otherwise."""
    if not path.is_file():
        raise RobotConfigError(f"{what} file not found: {path}")
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise RobotConfigError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(doc, dict):
        raise RobotConfigError(f"{path}: expected a mapping at the top level")
    return doc
