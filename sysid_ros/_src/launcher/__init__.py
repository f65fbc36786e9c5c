"""Runner for ``launch/*.launch.yaml`` graphs where ROS 2 ``launch`` is not installed.

Python API: ``with launch_graph("replay", {"bag": "..."}) as g: ...`` or :class:`Graph`;
:func:`load_launch` resolves a file to :class:`ProcessSpec` commands without starting anything.
"""
from __future__ import annotations

from .graph import Graph, launch_graph
from .parse import (
    LaunchDescription,
    LaunchError,
    ProcessSpec,
    find_pkg_share,
    launch_dir,
    load_launch,
    resolve_executable,
)

__all__ = [
    "Graph",
    "LaunchDescription",
    "LaunchError",
    "ProcessSpec",
    "find_pkg_share",
    "launch_dir",
    "launch_graph",
    "load_launch",
    "resolve_executable",
]
