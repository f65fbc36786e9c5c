"""The registry robots the simulator tests run on (loaded once per test module)."""
from __future__ import annotations

import pytest

from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="module")
def z1():
    return load_robot("z1")


@pytest.fixture(scope="module")
def b1_z1():
    return load_robot("b1_z1")
