"""Command-line options over a node's parameter table (``sysid-replay BAG --rate 2``).

The recorder and replay nodes keep their ``ros2 bag``-like command lines: an option given there
overrides the ROS parameter of the same name, and is checked against the same table entry
(type, range, choices), so the two ways of configuring a node accept exactly the same values.
No rclpy here.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from sysid_ros.nodes.params import Param, ParameterError, check_value

__all__ = ["add_options", "overlay"]

_KINDS: dict[str, Any] = {"double": float, "int": int, "string": str}


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
        text = p.description + (f", {p.unit}" if p.unit else "") + \
            ("" if p.default in (None, False) else f" (default {p.default})")
        if p.type == "bool":
            parser.add_argument(*flags, dest=name, action="store_true", default=None, help=text)
        elif p.type == "string[]":
            parser.add_argument(*flags, dest=name, nargs="*", help=text)
        else:
            parser.add_argument(*flags, dest=name, type=_KINDS[p.type], help=text,
                                choices=p.choices or None)


def overlay(table: Sequence[Param], values: Mapping[str, Any], cli: Mapping[str, Any],
            where: str = "command line") -> dict[str, Any]:
    """``values`` (from :func:`~sysid_ros.nodes.params.declare`) with every CLI option that was
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
