"""Node parameters declared once, from one table per node.

Each node module defines ``PARAMETERS``: a tuple of :class:`Param` (name, type, default, range or
choices, unit, description). From that one table come

- the declarations, with a ``ParameterDescriptor`` carrying type, description and range, so
  ``ros2 param describe`` shows them and rclpy itself refuses an out-of-range value
  (:func:`declare`);
- the validation of every value, with an error naming the node and the parameter;
- the parameter reference in docs/parameters.md (:func:`markdown`; a test keeps it current);
- the check of the node's YAML file in config/ (:func:`check_yaml`; a test runs it).

No sentinels: a parameter with ``default=None`` is *optional* — declared with its type only, and
absent means "use the robot file" (the value read back is ``None``), never −1 or 0. (An optional
string given as "" counts as absent: a launch file cannot leave a parameter out conditionally.)
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sysid_ros.errors import SysidError

__all__ = ["Param", "ParameterError", "declare", "check_value", "check_yaml", "markdown"]

#: Parameter types: the name used in the tables and docs → the Python type of its value.
TYPES: dict[str, type] = {"bool": bool, "int": int, "double": float, "string": str,
                          "double[]": list, "string[]": list, "double|double[]": object}


class ParameterError(SysidError):
    """A node parameter (or a parameter file entry) has the wrong type or is out of range."""


@dataclass(frozen=True)
class Param:
    """One node parameter.

    Attributes:
        name: the ROS parameter name.
        type: one of :data:`TYPES` (``bool``, ``int``, ``double``, ``string``, ``double[]``,
            ``string[]``, or ``double|double[]``: one number for every joint or one per joint,
            declared with dynamic typing).
        description: one sentence, shown by ``ros2 param describe``.
        default: the value when the parameter is not given; ``None`` = optional (absent means
            "use the robot file" / "off", as the description says).
        range: inclusive ``(low, high)`` for ``int``/``double`` (each element for ``double[]``).
        choices: allowed values of a ``string`` parameter.
        unit: physical unit, for the docs (``s``, ``Hz``, ``N·m``, …).
        read_only: cannot be changed after start-up (all of ours, unless stated).
    """

    name: str
    type: str
    description: str
    default: Any = None
    range: tuple[float, float] | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    read_only: bool = True

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ParameterError(f"parameter {self.name}: unknown type {self.type!r}")
        if self.default is not None:
            check_value(self, self.default, "the table's default")

    def constraint_text(self) -> str:
        """The range/choices in words (descriptor ``additional_constraints`` and the docs)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.range is not None:
            return f"[{_fmt(self.range[0])}, {_fmt(self.range[1])}]"
        return ""


def _fmt(x: float) -> str:
    return f"{x:g}" if math.isfinite(x) else ("∞" if x > 0 else "−∞")


def check_value(p: Param, value: Any, where: str) -> Any:
    """``value`` if it fits ``p`` (ints are accepted for doubles), else :class:`ParameterError`."""
    if p.type == "double|double[]":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return check_value(Param(p.name, "double", p.description, None, p.range, unit=p.unit),
                               value, where)
        items = list(value) if isinstance(value, (list, tuple)) else None
        if not items:
            raise ParameterError(f"{where}: parameter {p.name} must be a number or a non-empty "
                                 f"list of numbers, got {type(value).__name__} {value!r}")
        return [float(v) for v in check_value(
            Param(p.name, "double[]", p.description, None, p.range, unit=p.unit), items, where)]
    want = TYPES[p.type]
    ok_type = (isinstance(value, want) and not (want is int and isinstance(value, bool))
               or (want is float and isinstance(value, int) and not isinstance(value, bool)))
    if not ok_type:
        raise ParameterError(f"{where}: parameter {p.name} must be {p.type}, got "
                             f"{type(value).__name__} {value!r}")
    if p.type == "double[]":
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise ParameterError(f"{where}: parameter {p.name} must be a list of numbers")
    if p.type == "string[]" and not all(isinstance(v, str) for v in value):
        raise ParameterError(f"{where}: parameter {p.name} must be a list of strings")
    if p.choices and value not in p.choices:
        raise ParameterError(f"{where}: parameter {p.name} = {value!r} is not one of "
                             f"{', '.join(p.choices)}")
    if p.range is not None and p.type in ("int", "double", "double[]"):
        values = value if p.type == "double[]" else [value]
        lo, hi = p.range
        for v in values:
            if not lo <= v <= hi:                    # NaN fails too
                raise ParameterError(f"{where}: parameter {p.name} = {v!r} is outside "
                                     f"{p.constraint_text()}" + (f" {p.unit}" if p.unit else ""))
    return float(value) if want is float else value


#: Parameters every rclpy node has (declared by rclpy itself, not by the tables).
BUILTIN = (Param("use_sim_time", "bool", "follow /clock instead of the system clock", False,
                 read_only=False),)


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


def check_yaml(path: str | Path, table: Sequence[Param]) -> list[str]:
    """Problems of a ROS parameter file for a node with ``table`` (empty list: fine). Every
    ``ros__parameters`` entry must be in the table, with the table's type and range."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        return [f"{path}: cannot read: {exc}"]
    if not isinstance(data, Mapping):
        return [f"{path}: expected a mapping of node names"]
    by_name = {p.name: p for p in table}
    by_name.update({p.name: p for p in BUILTIN})
    problems = []
    for node_name, section in data.items():
        params = section.get("ros__parameters") if isinstance(section, Mapping) else None
        if not isinstance(params, Mapping):
            problems.append(f"{path}: {node_name}: no ros__parameters mapping")
            continue
        for key, value in params.items():
            p = by_name.get(key)
            if p is None:
                problems.append(f"{path}: {node_name}.{key} is not a parameter of this node")
                continue
            try:
                check_value(p, value, f"{path}: {node_name}")
                if p.type == "double" and isinstance(value, int):
                    problems.append(f"{path}: {node_name}.{key} = {value} must be written as a "
                                    "double (e.g. 10.0): rclpy refuses an integer there")
            except ParameterError as exc:
                problems.append(str(exc))
    return problems


def markdown(node: str, table: Sequence[Param]) -> str:
    """The parameter reference of one node as a Markdown table."""
    lines = [f"### `{node}`", "", "| name | type | default | range | unit | description |",
             "|---|---|---|---|---|---|"]
    for p in table:
        default = "(absent)" if p.default is None else f"`{yaml.safe_dump(p.default).split(chr(10))[0]}`"
        lines.append(f"| `{p.name}` | {p.type} | {default} | {p.constraint_text()} | {p.unit} | "
                     f"{p.description} |")
    return "\n".join(lines) + "\n"


#: Nodes whose parameters come from a ``PARAMETERS`` table: node name → module. (The others
#: still declare their parameters by hand; they move here one by one.)
TABLE_NODES: dict[str, str] = {"exciting_planner": "sysid_ros.nodes.exciting_planner",
                               "identifier": "sysid_ros.nodes.identifier",
                               "markers": "sysid_ros.nodes.markers", "sim": "sysid_ros.nodes.sim",
                               "robust_controller": "sysid_ros.nodes.robust_controller",
                               "recorder": "sysid_ros.nodes.recorder",
                               "replay": "sysid_ros.nodes.replay"}


def node_tables() -> dict[str, tuple[Param, ...]]:
    """Every table-driven node's parameter table (imports the node modules, hence rclpy)."""
    import importlib

    return {node: tuple(importlib.import_module(mod).PARAMETERS)
            for node, mod in TABLE_NODES.items()}


def reference_markdown() -> str:
    """docs/parameters.md: the parameter reference of every table-driven node."""
    head = ("# Node parameters\n\n"
            "Generated from each node's `PARAMETERS` table by `python -m sysid_ros.nodes.params`"
            " (test/nodes/test_params.py fails when this page or a config/<node>.yaml disagrees"
            " with a table). *(absent)*: optional — not given means the robot file's value or"
            " off, as described; no sentinel values. Ranges are inclusive and enforced by"
            " rclpy's parameter descriptors (`ros2 param describe`).\n\n")
    return head + "\n".join(markdown(n, t) for n, t in sorted(node_tables().items()))


if __name__ == "__main__":
    print(reference_markdown(), end="")
