"""Point estimates on data that follow the package's law exactly (Pinocchio ABA + RK4): MAP
with pseudo-inertia LMIs lands near the truth inside the box, IRLS resists outliers, energy rows
hold for the truth, and the Stribeck fit explains hardware-like data at least as well as the
linear law."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, Recording, calibrate
from sysid_ros._src.calibration.calibrate import calibration_rows, window_config
from sysid_ros._src.calibration.energy import energy_rows
from sysid_ros._src.calibration.prior import calibration_prior
from sysid_ros._src.simulation.synthetic import simulate
from sysid_ros._src.model.parameters import is_physically_consistent


def _truth_friction(gen3):
    f = gen3.friction.nominal.copy()
    f[:, 0] = [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2]
    f[:, 1] *= 1.2
    f[:, 2] *= 0.9
    f[:, 3] = [0.4, -0.3, 0.2, -0.2, 0.1, -0.1, 0.05]
    return f


@pytest.fixture(scope="module")
def exact(gen3):
    rng = np.random.default_rng(11)
    friction = _truth_friction(gen3)
    run = simulate(gen3, rng, theta_e=gen3.theta_e(), duration=6.0, rate_hz=1000.0,
                   robot_rel=0.0, friction_true=friction, noise_abs=0.05)
    return run, friction


def _rel_err(est, truth):
    return np.abs(est - truth) / np.abs(truth)


def test_map_estimate_is_consistent_inside_its_box_and_near_the_truth(gen3, exact):
    run, friction = exact
    res = calibrate(gen3, [Recording(run.t, run.q, run.dq, run.tau_meas, "exact")],
                    CalibrationOptions(link_boxes=False))
    assert np.all(res.friction_nominal >= res.friction_lower)
    assert np.all(res.friction_nominal <= res.friction_upper)
    bodies = res.link_nominal.reshape(-1, 10)
    assert np.all(is_physically_consistent(bodies))
    assert np.all(_rel_err(res.friction_nominal[:, 1], friction[:, 1]) < 0.05)   # Fv
    assert np.all(_rel_err(res.friction_nominal[:, 2], friction[:, 2]) < 0.05)   # Ia
    assert np.all(np.abs(res.friction_nominal[:, 3] - friction[:, 3]) < 0.1)      # β, N·m
    assert any("MAP" in n for n in res.notes)


def test_irls_resists_outliers(gen3, exact):
    run, friction = exact
    tau = run.tau_meas.copy()
    # sensor glitches: 30 N·m spikes on joint 2 in a few short bursts
    for start in (1.0, 2.5, 4.0):
        burst = (run.t > start) & (run.t < start + 0.03)
        tau[burst, 1] += 30.0
    rec = Recording(run.t, run.q, run.dq, tau, "glitchy")
    errs = {}
    for loss in ("none", "huber"):
        # the law held fixed (terms=False): on these data the cross-validation adopts
        # tanh(dq/0.01), nearly collinear with Fc·sign(q̇), which moves the coefficients compared
        res = calibrate(gen3, [rec], CalibrationOptions(link_boxes=False, robust=loss,
                                                        max_noise_frac=10.0, terms=False))
        errs[loss] = np.abs(res.friction_nominal[1, 1:] - friction[1, 1:])
    assert np.sum(errs["huber"]) < 0.5 * np.sum(errs["none"])


def test_energy_rows_hold_for_the_truth(gen3, exact):
    run, friction = exact
    rec = Recording(run.t, run.q, run.dq, run.tau, "noise-free")
    options = CalibrationOptions()
    prior = calibration_prior(gen3)
    rows = calibration_rows(gen3, window_config(gen3, options), prior, [rec])
    e = energy_rows(gen3, rows, [rec], np.full(gen3.nj, 0.05))
    truth = np.concatenate([gen3.theta(), friction.reshape(-1)])
    resid = e.A @ truth - e.c
    assert np.max(np.abs(resid)) < 1e-3 * np.max(np.abs(e.c))
    # and a wrong armature breaks them: the rows carry friction information
    wrong = truth.copy()
    wrong[rows.n_theta + 2::4] *= 1.2
    assert np.max(np.abs(e.A @ wrong - e.c)) > 20 * np.max(np.abs(resid))


def test_energy_rows_enter_the_point_estimate(gen3, exact):
    run, friction = exact
    res = calibrate(gen3, [Recording(run.t, run.q, run.dq, run.tau_meas, "exact")],
                    CalibrationOptions(link_boxes=False, energy=True))
    assert any("energy rows" in n for n in res.notes)
    assert np.all(_rel_err(res.friction_nominal[:, 2], friction[:, 2]) < 0.05)


@pytest.mark.slow
def test_stribeck_fit_is_at_least_as_good_as_the_linear_law(gen3, cases):
    res = calibrate(gen3, cases[0].recordings(),
                    CalibrationOptions(link_boxes=False, friction_law="stribeck"))
    fit = res.stribeck
    assert fit is not None and fit.params.shape == (gen3.nj, 8)
    assert np.all(fit.cost <= fit.cost_linear * (1 + 1e-6))
    v = np.linspace(-0.5, 0.5, 11)[:, None] * np.ones((1, gen3.nj))
    assert np.all(np.isfinite(fit.friction_torque(v)))


@pytest.mark.slow
def test_links_are_written_with_consistent_nominals_and_applied(gen3, cases):
    """A prior box other than the robot file's (here ±8 %) must reach the identifier: every
    body but the end effector is written, with a physically consistent nominal inside its box
    (the LP box, inside the prior), and apply_calibration turns them into the θ_r box."""
    from sysid_ros._src.calibration.document import calibration_document
    from sysid_ros._src.identification import load_identification_config
    from sysid_ros import apply_calibration

    res = calibrate(gen3, cases[0].recordings(), CalibrationOptions(link_rel=0.08))
    doc = calibration_document(res)
    names = [n for n in gen3.model.names[1:] if n != gen3.ee_joint]
    assert sorted(doc["links"]) == sorted(names)
    robot = apply_calibration(gen3, doc)
    lo, hi = load_identification_config(robot).theta_r_box
    for name in names:
        entry = doc["links"][name]
        nominal = np.array(entry["nominal"])
        assert is_physically_consistent(nominal)
        assert np.all(np.array(entry["lower"]) <= nominal)
        assert np.all(nominal <= np.array(entry["upper"]))
        jid = gen3.model.getJointId(name)
        assert np.allclose(robot.model.inertias[jid].toDynamicParameters(), nominal)
    theta = np.delete(gen3.theta(), np.arange(gen3.ee_columns.start, gen3.ee_columns.stop))
    assert np.all(lo <= theta + 1e-12) and np.all(theta <= hi + 1e-12)   # URDF inside
    # inside the prior box; at ±8 % the data tighten some parameters
    assert np.all(hi - lo <= 2 * 0.08 * np.abs(theta) + 1e-12)
    assert np.any(hi - lo < 0.99 * 2 * 0.08 * np.abs(theta))
