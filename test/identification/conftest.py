"""Shared simulated data for the identifier tests (Pinocchio ABA + RK4, not the regressors)."""
from __future__ import annotations

import pytest

from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="session")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="session")
def z1():
    return load_robot("z1")


def payload_rows(robot, cfg, t, q, dq, tau, unknowns: bool = False):
    """Constraint rows of a whole recording; with ``unknowns`` False the friction and θ_r enter
    each row's radius, so the rows have the 10 θ_e columns only (A·θ_e vs c)."""
    from sysid_ros._src.identification import MomentumWindows, PayloadProblem

    cfg = cfg.with_overrides(friction_unknowns=unknowns, theta_r_unknowns=unknowns)
    return PayloadProblem(robot, cfg).rows(MomentumWindows(robot, cfg).extend(t, q, dq, tau))
