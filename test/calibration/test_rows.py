"""The calibration rows and LPs on data that follow the package's law exactly (Pinocchio ABA +
RK4, Fc·sign(q̇) friction, bounded noise): the truth satisfies every row at the true noise
bound, the minimal bound is below it, and the LP boxes at that bound contain the truth."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sysid_ros._src.calibration.calibrate import CalibrationOptions, calibration_rows, window_config
from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.lp import BoxLP, min_noise, scale_rows
from sysid_ros._src.calibration.prior import calibration_prior
from sysid_ros._src.identification.calibration_constraints import friction_column
from sysid_ros._src.simulation.synthetic import simulate

NOISE = 0.05   # N·m per sample, uniform


@pytest.fixture(scope="module")
def exact_case(gen3):
    rng = np.random.default_rng(3)
    friction = gen3.friction.nominal.copy()
    friction[:, 0] = [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2]       # Coulomb friction
    friction[:, 3] = [0.5, -0.4, 0.3, -0.2, 0.1, -0.1, 0.05]   # offsets
    friction[:, 1] *= 1.3
    friction[:, 2] *= 0.8
    run = simulate(gen3, rng, theta_e=gen3.theta_e(), duration=3.0, rate_hz=1000.0,
                   robot_rel=0.0, friction_true=friction, noise_abs=NOISE)
    rec = Recording(run.t, run.q, run.dq, run.tau_meas, "exact")
    options = CalibrationOptions(window_s=0.2, stride_s=0.05)
    config = window_config(gen3, options)
    prior = calibration_prior(gen3)
    rows = calibration_rows(gen3, config, prior, [rec])
    truth = np.concatenate([gen3.theta(), friction.reshape(-1)])
    return rows, prior, truth


def test_truth_satisfies_every_row_at_the_true_noise_bound(exact_case):
    rows, _, truth = exact_case
    excess = rows.residual(truth) / rows.t_noise          # window-averaged, N·m
    assert excess.max() <= NOISE
    # the bound is not vacuous: window averages of ±0.05 uniform noise are much smaller
    assert excess.max() < 0.5 * NOISE


def test_minimal_noise_is_consistent_minimal_and_boxes_contain_the_truth(exact_case, gen3):
    rows, prior, truth = exact_case
    scaled = scale_rows(rows, prior.lower, prior.upper)
    delta, profile = min_noise(scaled, gen3.nj)
    need = np.array([np.max(rows.residual(truth)[rows.joint == j]
                            / rows.t_noise[rows.joint == j]) for j in range(gen3.nj)])
    # the truth is one consistent fit (with the floor p): the LP's sum cannot exceed it
    assert np.all(profile >= 0) and np.all(delta >= profile)
    assert np.sum(delta) <= np.sum(np.maximum(need, profile)) + 1e-6
    assert BoxLP(scaled, delta * (1 + 1e-6) + 1e-9).feasible
    assert np.all(delta <= NOISE)        # below the per-sample bound: windows average noise
    lp = BoxLP(scaled, np.maximum(need, 0.0) + 1e-9)
    assert lp.feasible
    cols = friction_column(rows.n_theta, np.arange(gen3.nj)[:, None],
                           np.arange(4)[None]).reshape(-1)
    lo, hi = lp.box(cols)
    assert np.all(truth[cols] >= lo - 1e-9) and np.all(truth[cols] <= hi + 1e-9)
    # and the data inform them: viscous and armature boxes far inside the wide prior
    width = (hi - lo).reshape(gen3.nj, 4)
    prior_w = (prior.upper[cols] - prior.lower[cols]).reshape(gen3.nj, 4)
    assert np.all(width[:, 1:3] < 0.5 * prior_w[:, 1:3])


def test_two_sided_coulomb_rows_are_tighter_than_a_radius(exact_case, gen3):
    """A_up/A_lo put Fc·[s − s_r, s + s_r] into the row exactly (Fc ≥ 0); the identifier-style
    alternative, Fc at the centre s plus a radius Fc_max·s_r, gives a box at least as wide.
    Both contain the truth."""
    rows, prior, truth = exact_case
    A_up, A_lo = rows.sides()
    fc = truth[friction_column(rows.n_theta, rows.joint, 0)]
    assert np.allclose((A_lo - A_up) @ truth, 2 * fc * rows.sign_rad)
    fc_max = prior.upper[friction_column(rows.n_theta, rows.joint, 0)]
    loose = replace(rows, sign_rad=np.zeros_like(rows.sign_rad),
                    r_fixed=rows.r_fixed + fc_max * rows.sign_rad)
    delta = np.full(gen3.nj, NOISE)
    cols = friction_column(rows.n_theta, np.arange(gen3.nj), 0)
    boxes = []
    for r in (rows, loose):
        lp = BoxLP(scale_rows(r, prior.lower, prior.upper), delta)
        boxes.append(lp.box(cols))
    (lo2, hi2), (lo1, hi1) = boxes[0], boxes[1]
    assert np.all(truth[cols] >= lo2 - 1e-9) and np.all(truth[cols] <= hi2 + 1e-9)
    assert np.all(truth[cols] >= lo1 - 1e-9) and np.all(truth[cols] <= hi1 + 1e-9)
    assert np.all(hi2 - lo2 <= hi1 - lo1 + 1e-6)
    assert np.sum(hi2 - lo2) < np.sum(hi1 - lo1)
