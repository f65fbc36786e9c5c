"""One root for every error the package raises: `except SysidError` catches any refusal, and each
error class name means one thing across the package."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import sysid_ros
from sysid_ros._src.errors import SysidError


def _error_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(sysid_ros.__path__, "sysid_ros."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, BaseException) and cls.__module__ == module.__name__
                    and not cls.__name__.startswith("_")):   # private control flow, never raised out
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


ERRORS = _error_classes()


def test_the_package_defines_its_errors() -> None:
    assert len(ERRORS) >= 20


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_error_class_derives_from_the_root(cls: type[BaseException]) -> None:
    assert issubclass(cls, SysidError), f"{cls.__module__}.{cls.__name__} is not a SysidError"


def test_error_names_are_unique_across_the_package() -> None:
    by_name: dict[str, list[str]] = {}
    for cls in ERRORS:
        by_name.setdefault(cls.__name__, []).append(cls.__module__)
    clashes = {name: mods for name, mods in by_name.items() if len(mods) > 1}
    assert not clashes, f"one name, several errors: {clashes}"


def test_a_real_refusal_is_caught_by_the_root(tmp_path) -> None:
    from sysid_ros._src.model.robots import load_robot
    with pytest.raises(SysidError, match="not found"):
        load_robot("gen3", tmp_path / "missing.yaml")
