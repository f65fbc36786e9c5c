"""Command-line options over a node's parameter table (``sysid-replay BAG --rate 2``).

The recorder and replay nodes keep their ``ros2 bag``-like command lines: an option given there
overrides the ROS parameter of the same name, and is checked against the same table entry
(type, range, choices), so the two ways of configuring a node accept exactly the same values.
No rclpy here.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sysid_ros._src.nodes.params import Param, ParameterError, check_value
from sysid_ros._src.param_table import add_options

__all__ = ["add_options", "overlay"]


def overlay(table: Sequence[Param], values: Mapping[str, Any], cli: Mapping[str, Any],
            where: str = "command line") -> dict[str, Any]:
    """``values`` (from :func:`~sysid_ros._src.nodes.params.declare`) with every CLI option that was
    given (not ``None``) in its place, validated by the table. An empty string or list counts as
    not given, like an empty optional parameter. Raises :class:`ParameterError` naming the
    option for a bad value or for an option the table does not have."""
    by_name = {p.name: p for p in table}
    merged = dict(values)
    for name, value in cli.items():
        if value is None or (isinstance(value, (str, list)) and not value):
            continue
        p = by_name.get(name)
        if p is None:
            raise ParameterError(f"{where}: option {name} is not a parameter of this node")
        merged[name] = check_value(p, value, where)
    return merged
