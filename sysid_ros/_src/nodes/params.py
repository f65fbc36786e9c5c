"""Node parameters declared once, from one table per node.

Each node module defines ``PARAMETERS``: a tuple of :class:`Param`. From that one
table come

- the declarations, with a ``ParameterDescriptor`` carrying type, description and range, so
  ``ros2 param describe`` shows them and rclpy itself refuses an out-of-range value
  (:func:`declare`);
- the validation of every value, with an error naming the node and the parameter;
- the parameter reference in docs/reference/parameters.md (:func:`reference_markdown`; a test keeps it
  current);
- the check of the node's YAML file in config/ (:func:`check_yaml`; a test runs it).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sysid_ros._src.param_table import (BUILTIN, Param, ParameterError, check_value, check_yaml,
                                  markdown)

# The table itself (no ROS) lives in sysid_ros._src.param_table; this module is the surface nodes import.
__all__ = ["BUILTIN", "Param", "ParameterError", "TABLE_NODES", "check_value", "check_yaml", "declare",
           "markdown", "node_tables", "reference_markdown"]


def declare(node: Any, table: Sequence[Param]) -> dict[str, Any]:
    """Declare every parameter of ``table`` on the rclpy ``node`` and return name → value
    (``None`` for an optional parameter that was not given). Raises :class:`ParameterError`."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
    from rclpy.exceptions import ParameterUninitializedException
    from rclpy.parameter import Parameter

    ros_type = {"bool": Parameter.Type.BOOL, "int": Parameter.Type.INTEGER,
                "double": Parameter.Type.DOUBLE, "string": Parameter.Type.STRING,
                "double[]": Parameter.Type.DOUBLE_ARRAY, "string[]": Parameter.Type.STRING_ARRAY,
                "double|double[]": Parameter.Type.NOT_SET}
    values: dict[str, Any] = {}
    where = f"node {node.get_name()}"
    for p in table:
        dynamic = p.type == "double|double[]"
        desc = ParameterDescriptor(name=p.name, type=ros_type[p.type].value,
                                   description=p.description + (f" ({p.unit})" if p.unit else ""),
                                   additional_constraints=p.constraint_text(),
                                   read_only=p.read_only, dynamic_typing=dynamic)
        if p.range is not None and p.type == "int":
            desc.integer_range = [IntegerRange(from_value=int(p.range[0]), to_value=int(p.range[1]),
                                               step=0)]
        elif p.range is not None and p.type == "double" and all(map(math.isfinite, p.range)):
            desc.floating_point_range = [FloatingPointRange(from_value=float(p.range[0]),
                                                            to_value=float(p.range[1]), step=0.0)]
        default = ros_type[p.type] if p.default is None else p.default
        try:
            if dynamic and p.default is None:      # no typed placeholder for a dynamic type
                node.declare_parameter(p.name, None, desc)
            else:
                node.declare_parameter(p.name, default, desc)
            value = node.get_parameter(p.name).value
            if dynamic and hasattr(value, "tolist"):  # rclpy hands arrays back as array('d')
                value = list(value)
        except ParameterUninitializedException:
            value = None
        except Exception as exc:  # rclpy's own type/range refusals, re-raised with the name
            raise ParameterError(f"{where}: parameter {p.name}: {exc}") from exc
        if value == "" and p.type == "string" and p.default is None:
            value = None      # launch files cannot omit a parameter: "" given = absent
        values[p.name] = None if value is None else check_value(p, value, where)
    return values


#: Every node and the module holding its ``PARAMETERS`` table.
TABLE_NODES: dict[str, str] = {"exciting_planner": "sysid_ros._src.nodes.exciting_planner",
                               "identifier": "sysid_ros._src.nodes.identifier",
                               "markers": "sysid_ros._src.nodes.markers", "sim": "sysid_ros._src.nodes.sim",
                               "robust_controller": "sysid_ros._src.nodes.robust_controller",
                               "recorder": "sysid_ros._src.nodes.recorder",
                               "replay": "sysid_ros._src.nodes.replay"}


def node_tables() -> dict[str, tuple[Param, ...]]:
    """Every table-driven node's parameter table (imports the node modules, hence rclpy)."""
    import importlib

    return {node: tuple(importlib.import_module(mod).PARAMETERS)
            for node, mod in TABLE_NODES.items()}


def reference_markdown() -> str:
    """docs/reference/parameters.md: the parameter reference of every table-driven node."""
    head = ("# Node parameters\n\n"
            "Generated from each node's `PARAMETERS` table (`python -m sysid_ros._src.nodes.params`;"
            " checked against config/<node>.yaml). *(absent)*: optional, the robot file's value"
            " or off. Ranges are inclusive, enforced by rclpy.\n\n")
    return head + "\n".join(markdown(n, t) for n, t in sorted(node_tables().items()))


if __name__ == "__main__":
    print(reference_markdown(), end="")
