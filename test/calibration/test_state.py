"""State estimation against the simulator's exact velocities, and soundness downstream with
positions only: the calibration and the identifier both get the same estimator's velocities,
so the calibrated bound absorbs the estimator's error."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, Recording, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.state import butterworth_derivative, encoder_sigma, rts_smoother
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.calibration.timing import estimate_velocity_lag
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros import apply_calibration


@pytest.fixture(scope="module")
def positions_only(gen3):
    return draw_case(gen3, 100, cal_seconds=(10.0,), payload_seconds=6.0, velocity="missing")


def _rms(a):
    return float(np.sqrt(np.mean(a ** 2)))


def test_rts_beats_the_butterworth_baseline(gen3, cases):
    rec = cases[0].cal[0]
    sigma_q = encoder_sigma(gen3)
    exact = rec.exact.dq
    base = butterworth_derivative(rec.t, rec.q)
    rts_q = rts_smoother(rec.t, rec.q, None, sigma_q=sigma_q)
    # the driver's velocity lag compensated as measured (a lagging q̇ contradicts q)
    lag = estimate_velocity_lag(cases[0].recordings()[:1], gen3.nj).lag
    dq = np.column_stack([np.interp(rec.t + lag[j], rec.t, rec.dq[:, j])
                          for j in range(gen3.nj)])
    rts_qv = rts_smoother(rec.t, rec.q, dq, sigma_q=sigma_q)
    e_base, e_q, e_qv = (_rms(e.dq - exact) for e in (base, rts_q, rts_qv))
    e_raw = _rms(dq - exact)
    assert e_q < 0.5 * e_base
    assert e_qv < e_raw            # smoothing the measured velocities helps too
    assert e_qv <= e_q
    assert _rms(rts_qv.ddq - rec.exact.step_ddq) < 0.5 * _rms(base.ddq - rec.exact.step_ddq)


@pytest.mark.slow
def test_positions_only_keeps_the_downstream_box_sound(gen3, positions_only):
    case = positions_only
    assert case.cal[0].dq is None and case.payload.dq is None
    sigma_q = encoder_sigma(gen3)

    def estimated(rec, name):
        est = rts_smoother(rec.t, rec.q, None, sigma_q=sigma_q)
        return Recording(rec.t, rec.q, est.dq, rec.tau_meas, name, "state estimate (rts)")

    res = calibrate(gen3, [estimated(case.cal[0], "cal")], CalibrationOptions(link_boxes=False))
    doc = calibration_document(res)
    assert doc["provenance"]["velocity_source"] == ["state estimate (rts)"]
    robot = apply_calibration(gen3, doc)
    pay = estimated(case.payload, "payload")
    out = identify(robot, load_identification_config(robot), pay.t, pay.q, pay.dq, pay.tau,
                   "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(case.payload.truth.theta_e)


def test_slope_is_the_identifiers_estimate():
    """``--state-estimate slope`` gives a calibration the identifier's own velocity estimate
    (what its payload-scope rows rest on): the same numbers where the identifier has a window,
    close to the true velocity of a quantised, jittered sinusoid."""
    from sysid_ros._src.calibration.state import slope_derivative
    from sysid_ros._src.identification.velocity_estimate import VelocityEstimate

    rng = np.random.default_rng(1)
    t_true = np.arange(0.0, 2.0, 0.002)
    t = t_true + 0.0004 * rng.random(t_true.size)
    res = np.deg2rad(0.01)
    q = np.round(0.3 * np.sin(2.0 * t_true)[:, None] / res) * res
    est = slope_derivative(t, q, 0.02)
    ident = VelocityEstimate(0.02, np.array([res]), 0.0004, np.array([1.2]),
                             np.array([2.4])).estimate(t, q, 0.005)
    inside = np.isfinite(ident.bound[:, 0])
    assert inside.mean() > 0.9
    np.testing.assert_allclose(est.dq[inside], ident.dq[inside])
    truth = 0.6 * np.cos(2.0 * t_true)
    assert np.all(np.abs(est.dq[inside, 0] - truth[inside]) <= ident.bound[inside, 0])
