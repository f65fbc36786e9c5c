"""The Z1's velocity premise: the floor of any causal estimate from encoder counts (two motions
built here against the stated premises), the level's half-widths against Pinocchio's CRBA over
sampled parameters, and the refusal that follows."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.demo.priors import robot_with_prior
from sysid_ros._src.demo.velocity_premise import (causal_velocity_floor, controller_velocity_refusal,
                                             level_half_widths)
from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="module")
def z1_demo(tmp_path_factory):
    """The Z1's facts as the demo runs them: its demo prior (the 1 kg dumbbell class)."""
    robot = load_robot("z1")
    return load_robot(robot_with_prior(robot, robot.config["demo"]["prior"],
                                       tmp_path_factory.mktemp("facts")))


def test_two_motions_with_the_same_counts_differ_by_twice_the_floor(z1_demo):
    """A joint at rest and one on a jerk ramp: both within the stated |q̈| and jerk premises,
    within one count of each other at every past sample of a 500 Hz stream (so a reading
    within half a count of each exists), and their velocities now differ by 2 x the floor."""
    sec = z1_demo.config["identification"]["differenced_velocity"]
    res = np.deg2rad(sec["encoder_resolution_deg"])
    accel, jerk = sec["accel_abs"], sec["jerk_abs"]
    floor = causal_velocity_floor(z1_demo)
    t = np.arange(-0.2, 1e-12, 1.0 / 500.0)
    tau = min((6.0 * res / jerk) ** (1.0 / 3.0), accel / jerk)
    s = np.clip(t + tau, 0.0, None)
    q2, dq2, ddq2 = jerk * s ** 3 / 6.0, jerk * s ** 2 / 2.0, jerk * s
    assert np.all(np.abs(ddq2) <= accel + 1e-12)
    assert np.all(np.abs(np.diff(ddq2)) <= jerk * np.diff(t) + 1e-9)
    assert np.all(np.abs(q2 - 0.0) <= res + 1e-15)
    assert dq2[-1] == pytest.approx(2.0 * floor, rel=1e-9)
    # the identifier's own (centred) bound is above the floor, as it must be
    assert sec["velocity_noise_abs"] >= floor


def test_level_half_widths_are_the_lightest_over_the_boxes(z1_demo):
    """ρ_j = √(2 V_max / M_jj) with M_jj at its smallest: never below what sampled parameters in
    the boxes give (Pinocchio CRBA), and close to their smallest."""
    robot = z1_demo
    rho = level_half_widths(robot)
    q = np.asarray(robot.config["demo"]["start"], float)
    theta0 = robot.theta()
    rad = robot.links_rel_uncertainty * np.abs(theta0)
    box = prior_box(robot)
    lo, hi = theta0 - rad, theta0 + rad
    lo[robot.ee_columns], hi[robot.ee_columns] = box.lower, box.upper
    rng = np.random.default_rng(0)
    model = robot.model.copy()
    data = model.createData()
    m_min = np.full(robot.nj, np.inf)
    for k in range(200):
        theta = np.where(rng.random(theta0.size) < 0.5, lo, hi) if k % 2 else rng.uniform(lo, hi)
        for i in range(1, model.njoints):
            model.inertias[i] = pin.Inertia.FromDynamicParameters(theta[10 * (i - 1):10 * i])
        m_min = np.minimum(m_min, np.diag(pin.crba(model, data, q)))
    rho_sampled = np.sqrt(2.0 * float(robot.config["controller"]["V_max"]) / m_min)
    assert np.all(rho >= rho_sampled * (1 - 1e-9))
    assert np.all(rho <= 1.1 * rho_sampled)


def test_the_z1_counts_cannot_tell_its_level_and_finer_counts_fall_back(z1_demo):
    """0.01° counts: joint 2's floor exceeds its half-width, and the refusal says that no
    estimate can tell whether V ≤ V_max holds; 0.001° counts: the floor is below every half-width, and
    the refusal is the law's own tolerance (0: no velocity-error term)."""
    why = controller_velocity_refusal(z1_demo)
    assert why.startswith("no estimate from these encoder counts") and "joint2" in why
    assert causal_velocity_floor(z1_demo) > level_half_widths(z1_demo)[1]
    config = copy.deepcopy(z1_demo.config)
    config["simulation"]["encoder_resolution_deg"] = [0.001] * z1_demo.nj
    config["identification"]["differenced_velocity"]["encoder_resolution_deg"] = 0.001
    fine = dataclasses.replace(z1_demo, config=config)
    floor = causal_velocity_floor(fine)
    assert floor == pytest.approx(causal_velocity_floor(z1_demo) * 0.1 ** (2 / 3), rel=1e-6)
    assert floor < level_half_widths(fine).min()
    why = controller_velocity_refusal(fine)
    assert "velocity_error_max" in why and "no estimate" not in why
