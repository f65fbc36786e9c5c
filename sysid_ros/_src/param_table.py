"""The parameter table of a node, without ROS: :class:`Param` (name, type, default, range or
choices, unit, description), the validation of a value against it (:func:`check_value`), the check
of a ROS parameter file (:func:`check_yaml`) and the Markdown reference (:func:`markdown`).
``sysid_ros._src.nodes.params`` (the surface the nodes import) turns a table into rclpy declarations.

A library's settings object can be the table's single source: each field of a frozen dataclass
declared with :func:`setting` (default, description, range, unit) once, and
:func:`parameter_table` derives the node's table from the fields, so the two cannot disagree.

No sentinels: a parameter with ``default=None`` is *optional* — declared with its type only, and
absent means "use the robot file" (the value read back is ``None``), never −1 or 0. (An optional
string given as "" counts as absent: a launch file cannot leave a parameter out conditionally.)
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
import argparse
import inspect
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, get_type_hints

import yaml

from sysid_ros._src.errors import SysidError

__all__ = ["BUILTIN", "Param", "ParameterError", "TYPES", "check_value", "check_yaml", "markdown",
           "add_options", "defaults_of", "parameter_table", "setting"]

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
    lines = [f"### `{node}`", "", "| name | type | default | description |", "|---|---|---|---|"]
    for p in table:
        default = "(absent)" if p.default is None else f"`{yaml.safe_dump(p.default).split(chr(10))[0]}`"
        kind = f"{p.type}, {p.unit}" if p.unit else p.type
        limits = p.constraint_text()
        lines.append(f"| `{p.name}` | {kind} | {default} | {p.description}"
                     + (f"; {limits}" if limits else "") + " |")
    return "\n".join(lines) + "\n"


#: A settings field's Python type → its parameter type (``X | None``: the optional ``X``).
_FIELD_TYPES = {"bool": "bool", "int": "int", "float": "double", "str": "string"}


def setting(default: Any, description: str, range: tuple[float, float] | None = None,
            choices: tuple[str, ...] = (), unit: str = "", read_only: bool = True) -> Any:
    """A dataclass field that is also a node parameter (:func:`parameter_table`); ``default``
    None: optional (absent)."""
    return field(default=default, metadata={"param": dict(
        description=description, range=range, choices=choices, unit=unit,
        read_only=read_only)})


def parameter_table(settings: type) -> tuple[Param, ...]:
    """The parameter table of the dataclass ``settings``, one :class:`Param` per field, in field
    order: its name, its type from the annotation (``float`` → double, ``str | None`` → an
    optional string, …) and the default, description and range its :func:`setting` gives."""
    if not is_dataclass(settings):
        raise ParameterError(f"{settings!r} is not a dataclass")
    hints = get_type_hints(settings)
    out = []
    for f in fields(settings):
        meta = f.metadata.get("param")
        if meta is None or f.default is MISSING:
            raise ParameterError(f"{settings.__name__}.{f.name}: not declared with setting()")
        names = [getattr(t, "__name__", str(t)) for t in getattr(hints[f.name], "__args__",
                                                               (hints[f.name],))]
        kinds = [_FIELD_TYPES[n] for n in names if n != "NoneType" and n in _FIELD_TYPES]
        if len(kinds) != 1:
            raise ParameterError(f"{settings.__name__}.{f.name}: no parameter type for "
                                 f"{hints[f.name]}")
        out.append(Param(f.name, kinds[0], default=f.default, **meta))
    return tuple(out)


def defaults_of(source: type | Callable[..., Any]) -> dict[str, Any]:
    """Name → default of a dataclass's fields or a callable's keyword parameters: a node's table
    takes the defaults of the library object its parameters configure from here, so each is
    written once (where the library defines it)."""
    if is_dataclass(source):
        return {f.name: f.default for f in fields(source) if f.default is not MISSING}
    return {name: p.default for name, p in inspect.signature(source).parameters.items()
            if p.default is not inspect.Parameter.empty}


#: The command-line type of a parameter type (``double|double[]``: one number or a comma list,
#: parsed by the caller).
_KINDS: dict[str, Any] = {"double": float, "int": int, "string": str, "double|double[]": str}


def add_options(parser: argparse.ArgumentParser, table: Sequence[Param], names: Sequence[str],
                short: Mapping[str, str] | None = None) -> None:
    """A ``--name`` option per table entry in ``names`` (``_`` → ``-``), its help the entry's
    description with the table's default: the option and the parameter are one setting. Every
    option defaults to None (not given: the parameter's value stands); a bool is a switch."""
    by_name = {p.name: p for p in table}
    for name in names:
        p = by_name[name]
        flags = [*([short[name]] if short and name in short else []),
                 "--" + name.replace("_", "-")]
        text = p.description + (" (per joint: a comma list)" if p.type == "double|double[]"
                                 else "") + (f", {p.unit}" if p.unit else "") + \
            ("" if p.default in (None, False) else f" (default {p.default})")
        if p.type == "bool":
            parser.add_argument(*flags, dest=name, action="store_true", default=None, help=text)
        elif p.type == "string[]":
            parser.add_argument(*flags, dest=name, nargs="*", help=text)
        else:
            parser.add_argument(*flags, dest=name, type=_KINDS[p.type], help=text,
                                choices=p.choices or None)
