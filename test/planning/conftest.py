"""Shared fixtures of the planner tests: the Gen3, its controller model and a payload box."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.planning.planner import controller_model

HOME = np.array([0.0, 0.26, 3.14, -2.27, 0.0, 0.96, 1.57])


@pytest.fixture(scope="session")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="session")
def gen3_controller(gen3):
    return controller_model(gen3)


@pytest.fixture(scope="session")
def payload_box(gen3):
    """θ_e box: nominal EE body + a 2.27 kg dumbbell-like point mass 0.19 m down the tool axis,
    ±(5 % + small) around it — what the identifier reports after some excitation."""
    theta = gen3.theta_e().copy()
    m, z = 2.27, -0.1915
    theta[0] += m
    theta[3] += m * z
    theta[4] += m * z * z
    theta[6] += m * z * z
    rad = 0.05 * np.abs(theta) + np.array([0.02, 0.005, 0.005, 0.005] + [0.002] * 6)
    return theta - rad, theta + rad, theta
