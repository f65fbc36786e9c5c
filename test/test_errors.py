"""One root for every error the package raises: `except SysidError` catches any refusal."""
from __future__ import annotations

import importlib
import inspect

import pytest

from sysid_ros.errors import SysidError

MODULES = ["sysid_ros.bagio.errors", "sysid_ros.calibration.errors", "sysid_ros.control.errors",
           "sysid_ros.identification.errors", "sysid_ros.model.errors",
           "sysid_ros.planning.errors", "sysid_ros.simulation.errors", "sysid_ros.launcher.parse",
           "sysid_ros.nodes.messages"]


@pytest.mark.parametrize("name", MODULES)
def test_every_error_class_derives_from_the_root(name):
    module = importlib.import_module(name)
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, Exception) and c.__module__ == module.__name__
               and not c.__name__.startswith("_")]   # private control flow, never raised out
    assert classes, name
    for cls in classes:
        assert issubclass(cls, SysidError), cls


def test_a_real_refusal_is_caught_by_the_root(tmp_path):
    from sysid_ros.model.robots import load_robot
    with pytest.raises(SysidError, match="not found"):
        load_robot("gen3", tmp_path / "missing.yaml")
