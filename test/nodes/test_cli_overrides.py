"""Command-line options over a parameter table (sysid_ros._src.nodes.cli_overrides): an option given
replaces the parameter and is held to the same table entry; every option of the recorder and
replay command lines is a parameter of the node's table."""
from __future__ import annotations

import pytest

from sysid_ros._src.nodes.cli_overrides import overlay
from sysid_ros._src.nodes.params import Param, ParameterError

TABLE = (Param("rate", "double", "time scale", 1.0, (1e-3, 1e3)),
         Param("bag", "string", "bag path"),
         Param("topics", "string[]", "topics"),
         Param("storage", "string", "plugin", "mcap", choices=("mcap", "sqlite3")))
DECLARED = {"rate": 1.0, "bag": None, "topics": None, "storage": "mcap"}


def test_given_options_replace_parameters_and_absent_ones_do_not() -> None:
    got = overlay(TABLE, DECLARED, {"rate": 2, "bag": "/b", "topics": [], "storage": None})
    assert got == {"rate": 2.0, "bag": "/b", "topics": None, "storage": "mcap"}
    assert isinstance(got["rate"], float)
    assert overlay(TABLE, DECLARED, {"bag": ""}) == DECLARED        # "" = not given
    assert DECLARED["bag"] is None                                  # input left untouched


@pytest.mark.parametrize("cli, match", [({"rate": 0.0}, r"command line: parameter rate = 0\.0 "
                                                         r"is outside \[0\.001, 1000\]"),
                                        ({"storage": "zip"}, "storage = 'zip' is not one of"),
                                        ({"rat": 2.0}, "option rat is not a parameter")])
def test_bad_options_are_refused_by_name(cli: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        overlay(TABLE, DECLARED, cli)


@pytest.mark.parametrize("module", ["sysid_ros._src.nodes.recorder", "sysid_ros._src.nodes.replay"])
def test_every_command_line_option_is_a_table_parameter(module: str) -> None:
    import importlib

    mod = importlib.import_module(module)
    names = {p.name for p in mod.PARAMETERS}
    options = set(vars(mod.parse_args([])))
    assert options <= names, options - names
