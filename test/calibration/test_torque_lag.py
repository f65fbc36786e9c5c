"""Streams that lag the positions, on hardware-like MuJoCo data with known lags: the torque
(real Gen3 logs: 60-120 ms) and the velocity (a driver's causal filter). The calibration finds
each lag (the torque's within its stated radius), the identifier that compensates the calibrated
lags returns an ``ok`` box holding the payload's truth, and the same calibration without the
compensation is loudly ``inconsistent``: the premise the bounds rest on fails and the identifier
says so instead of boxing.

Assumptions of the claim here: calibration and payload recordings share the robot, driver and
lag (the lag is a property of the driver); the noise bound is measured (empirical margin).
"""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import load_robot

LAG = np.array([0.10, 0.06, 0.08, 0.08, 0.12, 0.10, 0.10])   # s, as measured on real Gen3 logs


@pytest.fixture(scope="module")
def lagged():
    gen3 = load_robot("gen3")
    case = draw_case(gen3, 0, cal_seconds=(12.0,), payload_seconds=8.0, rate_hz=500.0,
                     torque_lag=tuple(LAG))
    return gen3, case, calibrate(gen3, case.recordings(), CalibrationOptions(link_boxes=False))


def test_calibration_finds_the_lag_within_its_radius(lagged):
    _, _, res = lagged
    est = res.torque_lag
    assert est is not None
    assert np.all(np.abs(est.lag - LAG) <= est.radius), (est.lag, est.radius)
    assert np.all(est.radius < 0.03)
    # compensating it is what makes the rows fit: the window RMS drops on every joint
    assert np.all(est.rms_lag < 0.8 * est.rms_zero)


def test_identifier_with_the_calibrated_lag_is_ok_and_holds_the_truth(lagged):
    gen3, case, res = lagged
    robot = apply_calibration(gen3, calibration_document(res))
    config = load_identification_config(robot)
    np.testing.assert_allclose(config.torque_lag_s, res.torque_lag.lag)
    pay = case.payload
    out = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(pay.truth.theta_e)


def test_identifier_without_the_lag_is_inconsistent(lagged):
    gen3, case, res = lagged
    robot = apply_calibration(gen3, calibration_document(res))
    config = load_identification_config(robot, torque_lag_s=0.0, torque_lag_radius_s=0.0)
    pay = case.payload
    out = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "inconsistent"


VELOCITY_LAG = 0.03   # s: a driver's causal velocity filter, to first order


@pytest.fixture(scope="module")
def filtered():
    gen3 = load_robot("gen3")
    case = draw_case(gen3, 0, cal_seconds=(12.0,), payload_seconds=8.0,
                     velocity_lag=(VELOCITY_LAG,) * gen3.nj)
    return gen3, case, calibrate(gen3, case.recordings(), CalibrationOptions(link_boxes=False))


def test_velocity_lag_is_estimated_and_compensated(filtered):
    """A lagged velocity (a driver's filter) is found where the motion shows it, within the
    radius written beside it, compensated by the identifier (``ok``, truth inside), and loudly
    refused without the compensation or with a lag off by more than its radius: the payload
    data's own lag contradicts the stated one (:mod:`~sysid_ros._src.identification.velocity_lag`)."""
    gen3, case, res = filtered
    lag, radius = res.config.velocity_lag_s, res.config.velocity_lag_radius_s
    found = lag != 0.0
    assert found.sum() >= 4
    np.testing.assert_allclose(lag[found], VELOCITY_LAG, atol=0.003)
    assert np.all(np.abs(lag[found] - VELOCITY_LAG) <= radius[found])
    assert np.all(radius[found] < 0.5 * VELOCITY_LAG)                 # informative
    robot = apply_calibration(gen3, calibration_document(res))
    pay = case.payload
    config = load_identification_config(robot)
    np.testing.assert_allclose(config.velocity_lag_s, lag)
    np.testing.assert_allclose(config.velocity_lag_radius_s, radius)
    out = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(pay.truth.theta_e)
    for wrong in (0.0, VELOCITY_LAG + 0.03):
        bare = load_identification_config(robot, velocity_lag_s=wrong)
        out = identify(robot, bare, pay.t, pay.q, pay.dq, pay.tau_meas, "lp",
                       point_estimate=False)
        assert out.status == "inconsistent" and out.lower is None
        assert "velocity lag premise broken" in out.reason
