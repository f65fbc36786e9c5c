"""Each setting's default is defined in one place, and every other surface derives from it:

- the controller: ``ControllerSettings``' fields (``control/settings.py``); the node's table is
  derived from them;
- every node: its parameter table; config/<node>.yaml repeats none of its defaults;
- the identifier: ``IdentificationConfig``'s fields and ``PER_JOINT_DEFAULTS``; the robot files,
  the section reader, ``sysid-identify``'s flags and the identifier node's parameters give none
  of them a second value (absent there means "the robot file's, else the default").
"""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest
import yaml

from sysid_ros._src.control import settings as controller_settings
from sysid_ros._src.identification import config as identification_config
from sysid_ros._src.identification.identify_cli import build_parser
from sysid_ros._src.nodes import identifier_params, robust_controller_params
from sysid_ros._src.nodes.params import node_tables
from sysid_ros._src.param_table import ParameterError, parameter_table, setting

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ("gen3", "z1", "b1_z1")


def test_the_controller_table_is_derived_from_the_settings_fields() -> None:
    assert robust_controller_params.PARAMETERS is controller_settings.PARAMETERS
    assert controller_settings.PARAMETERS == parameter_table(controller_settings.ControllerSettings)
    # a field declared without setting() (a default of its own) is refused, not half derived
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Twice:
        stale_timeout: float = setting(0.02, "s")
        watchdog_period: float = 0.005

    with pytest.raises(ParameterError, match="watchdog_period"):
        parameter_table(Twice)


@pytest.mark.parametrize("node", sorted(node_tables()))
def test_a_node_parameter_file_repeats_no_default(node: str) -> None:
    doc = yaml.safe_load((ROOT / "config" / f"{node}.yaml").read_text())
    defaults = {p.name: p.default for p in node_tables()[node] if p.default is not None}
    for section in doc.values():
        given = section["ros__parameters"] or {}
        repeated = sorted(k for k, v in given.items() if k in defaults and v == defaults[k])
        assert not repeated, f"config/{node}.yaml repeats the table's defaults of {repeated}"


@pytest.mark.parametrize("robot", ROBOTS)
def test_a_robot_file_repeats_no_identification_default(robot: str) -> None:
    sec = yaml.safe_load((ROOT / "config" / f"{robot}.yaml").read_text())["identification"]
    repeated = []
    for key, default in identification_config.SECTION_DEFAULTS.items():
        if key not in sec:
            continue
        value = np.asarray(sec[key], dtype=object)
        if isinstance(default, (str, bool)):
            same = sec[key] == default
        else:
            same = bool(np.all(value.astype(float) == float(default)))
        if same:
            repeated.append(key)
    assert not repeated, f"config/{robot}.yaml identification: repeats the defaults of {repeated}"


@pytest.mark.parametrize("robot", ROBOTS)
def test_a_robot_file_repeats_no_controller_default(robot: str) -> None:
    from sysid_ros._src.control.controller import SECTION_DEFAULTS

    sec = yaml.safe_load((ROOT / "config" / f"{robot}.yaml").read_text())["controller"]
    repeated = sorted(k for k, v in SECTION_DEFAULTS.items() if k in sec and sec[k] == v)
    assert not repeated, f"config/{robot}.yaml controller: repeats the defaults of {repeated}"


@pytest.mark.parametrize("robot", ROBOTS)
def test_a_robot_file_repeats_no_planner_default(robot: str) -> None:
    from sysid_ros._src.param_table import defaults_of
    from sysid_ros._src.planning.planner import PlannerConfig

    defaults = {k: v for k, v in defaults_of(PlannerConfig).items()
                if isinstance(v, (bool, int, float, str))}
    sec = yaml.safe_load((ROOT / "config" / f"{robot}.yaml").read_text())["planner"]
    repeated = sorted(k for k, v in defaults.items() if k in sec and sec[k] == v)
    assert not repeated, f"config/{robot}.yaml planner: repeats the defaults of {repeated}"


def test_the_controller_gains_reader_gives_no_default_of_its_own() -> None:
    from sysid_ros._src.control import controller

    tree = ast.parse(inspect.getsource(controller.gains_from_config))
    literal = [c.args[0].value for c in ast.walk(tree) if isinstance(c, ast.Call)
               and getattr(c.func, "attr", "") == "get" and len(c.args) == 2
               and isinstance(c.args[0], ast.Constant) and isinstance(c.args[1], ast.Constant)]
    assert not literal, f"gains_from_config gives a literal default to {literal}"
    assert controller_settings.ControllerSettings().torque_limit_scale == \
        controller.SECTION_DEFAULTS["torque_limit_scale"]


def test_the_section_reader_gives_no_default_of_its_own() -> None:
    """``_section_settings`` reads every optional key with the fields' default: no literal second
    to a key of SECTION_DEFAULTS (``sec.get("window_s", 0.1)``, ``per_joint("torque_gain", 1.0)``)."""
    tree = ast.parse(inspect.getsource(identification_config._section_settings))
    literal = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) == 2 and \
                isinstance(node.args[0], ast.Constant) and \
                node.args[0].value in identification_config.SECTION_DEFAULTS and \
                isinstance(node.args[1], (ast.Constant, ast.UnaryOp)):
            literal.append(node.args[0].value)
    assert not literal, f"_section_settings gives a literal default to {literal}"


def test_sysid_identify_and_the_node_leave_the_identification_defaults_to_the_config() -> None:
    keys = set(identification_config.SECTION_DEFAULTS)
    flags = {a.dest: a.default for a in build_parser()._actions if a.dest in keys}
    assert "velocity_noise_scope" in flags and "window_s" in flags
    assert all(v is None for v in flags.values()), flags
    params = {p.name: p.default for p in identifier_params.PARAMETERS if p.name in keys}
    assert "velocity_noise_scope" in params and "torque_delay_samples" in params
    assert all(v is None for v in params.values()), params


@pytest.mark.parametrize("module, library", [
    ("sysid_ros._src.nodes.sim_params", "sysid_ros._src.simulation.sim_runtime:RuntimeSettings"),
    ("sysid_ros._src.nodes.exciting_planner_params", "sysid_ros._src.planning.receding:RecedingHorizon"),
    ("sysid_ros._src.nodes.replay", "sysid_ros._src.bagio:PlaybackOptions"),
    ("sysid_ros._src.nodes.recorder", "sysid_ros._src.bagio:BagWriter"),
])
def test_a_node_table_takes_the_library_defaults(module: str, library: str) -> None:
    """A parameter that configures a library object has no literal default in the node's table:
    the table reads the object's own (``defaults_of``), and the two agree (None: absent, in
    both)."""
    import importlib

    from sysid_ros._src.param_table import defaults_of

    mod, _, name = library.partition(":")
    shared = defaults_of(getattr(importlib.import_module(mod), name))
    source = importlib.import_module(module)
    literal = [call.args[0].value for call in ast.walk(ast.parse(inspect.getsource(source)))
               if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Param"
               and len(call.args) > 3 and shared.get(call.args[0].value) is not None
               and isinstance(call.args[3], ast.Constant)]
    assert not literal, f"{module} repeats the defaults of {literal}"
    table = {p.name: p.default for p in source.PARAMETERS}
    both = {n for n in shared if n in table and shared[n] is not None}
    assert both and all(table[n] == shared[n] for n in both)


def test_the_identification_overrides_are_defined_once_for_the_cli_and_the_node() -> None:
    """``velocity_noise_scope`` & co.: one definition (identification/settings.py) that both the
    identifier node's table and sysid-identify's parser are made from; values parse the same."""
    from sysid_ros._src.identification.settings import OVERRIDE_SETTINGS

    node = {p.name: p for p in identifier_params.PARAMETERS}
    assert all(node[p.name] is p for p in OVERRIDE_SETTINGS)
    parser = build_parser()
    actions = {a.dest: a for a in parser._actions}
    for p in OVERRIDE_SETTINGS:
        assert p.description in actions[p.name].help and actions[p.name].default is None
    args = parser.parse_args(["--bag", "x", "--velocity-noise-scope", "payload", "--window", "40",
                              "--torque-noise-abs", "0.1,0.2"])
    assert (args.velocity_noise_scope, args.window, args.torque_noise_abs) == \
        ("payload", 40, "0.1,0.2")
    with pytest.raises(SystemExit):
        parser.parse_args(["--bag", "x", "--velocity-noise-scope", "arm"])
