"""``python -m sysid_ros._src.visualization.description ROBOT``: print the path of the robot's URDF
(the file its robot facts name: the package's ``urdf/`` or the example-robot-data wheel), e.g.
for ``robot_state_publisher`` on a full ROS install::

    ros2 launch sysid_ros sim.launch.yaml robot:=z1 \\
        urdf:=$(python3 -m sysid_ros._src.visualization.description z1)
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from sysid_ros._src.paths import example_robot_data_dir, package_share

__all__ = ["urdf_path", "main"]

_ERD_PREFIX = "example-robot-data:"   # the robot files' spelling (model.robots)


def urdf_path(robot: str) -> Path:
    """URDF file of a robot name (``config/<name>.yaml``) or robot facts file; reads only the
    facts file's ``model.urdf`` (no Pinocchio), so it is cheap enough for a launch file."""
    facts = Path(robot) if Path(robot).suffix in (".yaml", ".yml") else \
        package_share() / "config" / f"{robot}.yaml"
    urdf = str(yaml.safe_load(facts.read_text())["model"]["urdf"])
    if urdf.startswith(_ERD_PREFIX):
        return example_robot_data_dir() / urdf[len(_ERD_PREFIX):]
    return package_share() / urdf


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m sysid_ros._src.visualization.description ROBOT|FACTS.yaml",
              file=sys.stderr)
        return 2
    try:
        print(urdf_path(args[0]))
    except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
        print(f"description: cannot find the URDF of {args[0]!r}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
