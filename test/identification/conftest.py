"""Shared simulated data for the identifier tests (Pinocchio ABA + RK4, not the regressors)."""
from __future__ import annotations

import pytest

from sysid_ros.model.robots import load_robot


@pytest.fixture(scope="session")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="session")
def z1():
    return load_robot("z1")
