"""Calibration rows in the payload problem's unknowns (fast checks; the end-to-end checks with
simulated truth are test/calibration/test_calibration_constraints.py)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sysid_ros._src.identification import IdentificationConfigError, load_identification_config
from sysid_ros._src.identification.calibration_constraints import CalibrationConstraints, \
    CalibrationRows, column_names
from sysid_ros._src.identification.problem import N_THETA_E, PayloadProblem
from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def _random_rows(robot, n: int, rng: np.random.Generator) -> CalibrationConstraints:
    cols = column_names(robot)
    A = sp.random(n, len(cols), density=0.5, random_state=1, format="csr")
    ee = robot.theta_e()
    zeros, t = np.zeros(n), np.sort(rng.uniform(0, 10, n))
    rows = CalibrationRows(
        A, rng.uniform(0, 0.1, n), rng.normal(size=n), rng.uniform(0, 0.1, n),
        rng.uniform(0.3, 0.5, n), rng.integers(0, robot.nj, n), t, t + 0.4,
        np.arange(n), np.arange(n) + 40, np.zeros(n, int), 10 * robot.n_bodies, zeros,
        zeros.copy(), zeros.copy(), rng.uniform(0, 1, n))
    return CalibrationConstraints(robot.name, tuple(cols), rows, np.full(robot.nj, 0.1),
                                  ee - 0.05 * np.abs(ee), ee + 0.05 * np.abs(ee), {})


def test_rows_map_the_calibration_columns_onto_the_shared_unknowns(gen3):
    """A·x in the identifier's unknowns equals A_cal·x_cal for the x_cal they describe: links
    θ_r^c + δθ_r, the calibration-time EE body, the friction unknowns (no θ_e column)."""
    rng = np.random.default_rng(0)
    cal = _random_rows(gen3, 40, rng)
    config = load_identification_config(gen3, friction="wide", calibration_rows=cal)
    assert config.theta_r_unknowns
    p = PayloadProblem(gen3, config)
    rows = p.calibration_rows()
    lo, hi = p.prior()
    x = rng.uniform(lo, hi)
    x_cal = np.zeros(len(cal.columns))
    other = np.setdiff1d(np.arange(10 * gen3.n_bodies), np.arange(gen3.ee_columns.start,
                                                                  gen3.ee_columns.stop))
    x_cal[other] = p.theta_r_c
    x_cal[other[p.r_free]] += x[p.theta_r_slice]
    x_cal[gen3.ee_columns] = x[p.ee_cal_col:p.ee_cal_col + N_THETA_E]
    f = 10 * gen3.n_bodies + np.arange(4 * gen3.nj).reshape(gen3.nj, 4)
    x_cal[f[p.free]] = x[p.col[p.free]]
    x_cal[f[~p.free]] = config.friction_nominal[~p.free]
    assert np.allclose(rows.A @ x - rows.c, cal.rows.A @ x_cal - cal.rows.c)
    assert np.all(rows.A[:, :N_THETA_E] == 0)          # the payload was not there
    # Fc·∫σ over [s ± s_r] with 0 ≤ Fc ≤ Fc_max: Fc_max·s_r joins the fixed radius
    j = cal.rows.joint
    assert np.allclose(rows.r_fixed, cal.rows.r_fixed + config.friction_upper[j, 0]
                       * cal.rows.sign_rad)
    assert np.allclose(rows.r_noise, cal.noise[j] * cal.rows.t_noise)
    assert np.array_equal(lo[p.ee_cal_col:p.ee_cal_col + p.n_ee_cal], cal.ee_lower)


def test_rows_need_the_shared_unknowns_and_the_right_robot(gen3):
    cal = _random_rows(gen3, 10, np.random.default_rng(1))
    config = load_identification_config(gen3, calibration_rows=cal)
    with pytest.raises(IdentificationConfigError, match="theta_r_unknowns"):
        config.with_overrides(theta_r_unknowns=False)
    with pytest.raises(IdentificationConfigError, match="friction_unknowns"):
        config.with_overrides(friction_unknowns=False)
    with pytest.raises(IdentificationConfigError, match="made for robot 'gen3'"):
        load_identification_config(load_robot("z1"), calibration_rows=cal)
    assert len(load_identification_config(gen3, calibration_rows=cal,
                                          calibration_rows_max=4).calibration_rows) <= 4
