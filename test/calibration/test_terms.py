"""Extra friction terms chosen by cross-validation (:mod:`sysid_ros._src.calibration.terms`) on
hardware-like Gen3 data (2 × 8 s at 500 Hz) with a known structure: nothing is added where the
linear law is right, and an injected drift or position-dependent torque is found.

The rows are built as the calibration builds them (its windows, prior and torque-lag
compensation), so what is selected here is what a calibration of such data would be told.
"""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from sysid_ros._src.calibration.calibrate import CalibrationOptions, calibration_rows, window_config
from sysid_ros._src.calibration.prior import calibration_prior
from sysid_ros._src.identification.calibration_constraints import friction_column
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.calibration.terms import CANDIDATES, MIN_GAIN, TERM_SIGMA_NM, select_terms, \
    term_columns
from sysid_ros._src.calibration.timing import estimate_torque_lag
from sysid_ros._src.model.robots import load_robot

CANDIDATE = {c.name: c for c in CANDIDATES}


@pytest.fixture(scope="module")
def setup():
    robot = load_robot("gen3")
    recs = draw_case(robot, 0, cal_seconds=(8.0, 8.0), payload_seconds=0.0).recordings()
    config = window_config(robot, CalibrationOptions())
    prior = calibration_prior(robot)
    lag = estimate_torque_lag(calibration_rows(robot, config, prior, recs), recs, prior, robot.nj)
    config = config.with_overrides(torque_lag_s=lag.lag, torque_lag_radius_s=lag.radius)

    def select(recordings, **kw):
        rows = calibration_rows(robot, config, prior, recordings)
        return rows, select_terms(rows, recordings, prior, robot.nj, **kw)

    return robot, recs, prior, select


def _with_tau(recs, extra):
    """Recordings with extra(rec) (N, nj) added to the measured torque."""
    return [replace(r, tau=r.tau + extra(r)) for r in recs]


def _by_hand_rms(rows, recs, prior, h, nj):
    """Held-out RMS per joint of the base law + harmonic h, computed independently: columns by
    np.trapezoid per window, the MAP fit as one stacked numpy least-squares problem per fold."""
    n, n_x = len(rows), rows.n_x
    A = rows.A.toarray()
    H = np.zeros((n, 2 * nj))
    for i in range(n):
        rec, j = recs[rows.source[i]], rows.joint[i]
        s = slice(rows.start[i], rows.end[i] + 1)
        A[i, friction_column(rows.n_theta, j, 0)] = np.trapezoid(np.sign(rec.dq[s, j]), rec.t[s])
        H[i, 2 * j] = np.trapezoid(np.sin(h * rec.q[s, j]), rec.t[s])
        H[i, 2 * j + 1] = np.trapezoid(np.cos(h * rec.q[s, j]), rec.t[s])
    q = np.concatenate([r.q for r in recs])
    rms = np.sqrt(np.mean(np.stack([np.sin(h * q), np.cos(h * q)], axis=2) ** 2, axis=0))
    M = np.hstack([A, H]) / (rows.t_end - rows.t_start)[:, None]
    y = rows.c / (rows.t_end - rows.t_start)
    sigma = np.concatenate([0.5 * (prior.upper - prior.lower), TERM_SIGMA_NM / rms.reshape(-1)])
    x0 = np.concatenate([prior.nominal, np.zeros(2 * nj)])
    fixed = np.concatenate([prior.lower, np.zeros(2 * nj)])
    free = sigma > 0
    free[n_x:] = True
    resid = np.empty(n)
    for k in range(len(recs)):
        tr, te = rows.source != k, rows.source == k
        lhs = np.vstack([M[tr][:, free], np.diag(1.0 / sigma[free])])
        rhs = np.concatenate([y[tr] - M[tr][:, ~free] @ fixed[~free], x0[free] / sigma[free]])
        x = fixed.copy()
        x[free] = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
        resid[te] = M[te] @ x - y[te]
    return np.array([np.sqrt(np.mean(resid[rows.joint == j] ** 2)) for j in range(nj)])


def test_term_columns_integrate_each_rows_own_joint(setup):
    robot, recs, _, select = setup
    rows, _ = select(recs[:1], min_gain=0.99)
    drift = term_columns(rows, recs[:1], CANDIDATE["drift"])
    harm = term_columns(rows, recs[:1], CANDIDATE["harmonic 2"])
    assert drift.shape == (len(rows), 1) and harm.shape == (len(rows), 2)
    rec = recs[0]
    for i in np.linspace(0, len(rows) - 1, 25).astype(int):
        s, j = slice(rows.start[i], rows.end[i] + 1), rows.joint[i]
        assert drift[i, 0] == pytest.approx(np.trapezoid(rec.t[s] - rec.t[0], rec.t[s]))
        assert harm[i, 1] == pytest.approx(np.trapezoid(np.cos(2 * rec.q[s, j]), rec.t[s]))


def test_plain_data_add_nothing(setup):
    robot, recs, _, select = setup
    _, sel = select(recs)
    assert sel.selected == (), sel.describe()
    assert np.all(sel.candidate_gain < MIN_GAIN)
    np.testing.assert_array_equal(sel.selected_rms, sel.base_rms)
    assert sel.folds.startswith("leave-one-recording-out")
    assert "none" in sel.describe()
    out = json.loads(json.dumps(sel.as_dict()))
    assert set(out["candidates"]) == set(CANDIDATE) and out["selected"] == []


def test_position_dependent_torque_on_every_joint_is_found(setup):
    robot, recs, prior, select = setup
    injected = _with_tau(recs, lambda r: 1.5 * np.sin(2.0 * r.q))
    rows, sel = select(injected)
    # harmonic orders 1-3 are nearly interchangeable over excursions of a few tenths of a rad
    # (module docstring), so the first pick is "a harmonic", and harmonic 2 on its own must pay
    assert sel.selected and sel.selected[0].startswith("harmonic"), sel.describe()
    assert sel.step_gain[0] > 0.2
    k = sel.names.index("harmonic 2")
    assert sel.candidate_gain[k] > 0.2
    assert np.mean(sel.candidate_rms[k]) < np.mean(sel.base_rms)
    assert np.mean(sel.selected_rms) < np.mean(sel.base_rms)
    by_hand = _by_hand_rms(rows, injected, prior, 2, robot.nj)
    np.testing.assert_allclose(sel.candidate_rms[k], by_hand, rtol=1e-4)


def test_position_dependent_torque_on_two_joints_shows_on_those_joints(setup):
    robot, recs, _, select = setup
    joints = [1, 3]

    def ripple(r):
        extra = np.zeros_like(r.tau)
        extra[:, joints] = 1.5 * np.sin(2.0 * r.q[:, joints])
        return extra

    _, sel = select(_with_tau(recs, ripple))
    k = sel.names.index("harmonic 2")
    # the evidence is per joint: whether harmonic 2 is a term for every joint is the mean over
    # joints, which the other joints' extrapolated spurious coefficients decide (module docstring)
    assert np.all(sel.candidate_rms[k, joints] < 0.8 * sel.base_rms[joints]), sel.as_dict()


def test_drift_is_found(setup):
    robot, recs, _, select = setup
    _, sel = select(_with_tau(recs, lambda r: 0.3 * (r.t - r.t[0])[:, None]))
    assert sel.selected[:1] == ("drift",), sel.describe()
    assert sel.step_gain[0] > 0.5
    assert np.all(sel.selected_rms < sel.base_rms)


def test_one_recording_is_split_in_halves(setup):
    robot, recs, _, select = setup
    _, sel = select(_with_tau(recs[:1], lambda r: 0.3 * (r.t - r.t[0])[:, None]))
    assert "two halves" in sel.folds
    assert sel.selected[:1] == ("drift",), sel.describe()


def test_min_gain_must_be_a_fraction(setup):
    robot, recs, _, select = setup
    with pytest.raises(ValueError, match="min_gain"):
        select(recs, min_gain=1.5)
