"""Tracking-error bound: eigenvalue bounds of H + diag(I_a) checked against Pinocchio's CRBA."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros.control.bounds import (mass_matrix_eigen_bounds, mass_matrix_extremes,
                                      tracking_error_bound)
from sysid_ros.control.errors import BoundsError, ControllerConfigError
from sysid_ros.model.robots import load_robot


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def _perturbed_model(robot, rng, payload_mass):
    """A model with θ_r drawn in its box and a physically consistent payload on the EE body."""
    model = robot.model.copy()
    rel = robot.links_rel_uncertainty
    for i in range(1, model.njoints):
        if i == robot.ee_joint_id:
            pay = pin.Inertia(payload_mass, rng.uniform(-0.05, 0.05, 3) + [0, 0, -0.2],
                              np.diag(rng.uniform(1e-3, 2e-2, 3)))
            model.inertias[i] = model.inertias[i] + pay
        else:
            th = model.inertias[i].toDynamicParameters()
            th = th + rng.uniform(-1, 1, 10) * rel * np.abs(th)
            model.inertias[i] = pin.Inertia.FromDynamicParameters(th)
    return model


def test_eigen_bounds_enclose_crba_over_workspace_and_boxes(gen3):
    eb = mass_matrix_eigen_bounds(gen3)
    rng = np.random.default_rng(7)
    ia_lo, ia_hi = gen3.friction.lower[:, 2], gen3.friction.upper[:, 2]
    lo_seen = np.inf
    for k in range(300):
        model = _perturbed_model(gen3, rng, payload_mass=rng.uniform(0.0, 4.0))
        q = gen3.random_configuration(rng)
        h = pin.crba(model, model.createData(), q)
        h = np.triu(h) + np.triu(h, 1).T
        ia = rng.uniform(ia_lo, ia_hi)
        lo_seen = min(lo_seen, np.linalg.eigvalsh(h + np.diag(ia))[0])
    assert eb.lambda_min <= lo_seen
    # and the bound is not vacuous: within 10 % of what the samples reach
    assert eb.lambda_min > 0.9 * lo_seen


def test_nominal_extremes_match_dense_sampling(gen3):
    nominal = mass_matrix_eigen_bounds(gen3, with_uncertainty=False, margin=0.0)
    q = gen3.random_configuration(np.random.default_rng(3), 3000)
    lo, hi = mass_matrix_extremes(gen3, q)
    # the optimiser finds extremes at least as extreme as 3000 random samples (to rounding)
    assert nominal.lambda_min <= lo + 1e-9
    assert nominal.lambda_max >= hi - 1e-9
    # at the reported argmin the CRBA value (with the unloaded EE body, which λ_min drops as
    # a PSD term) is just above the bound
    at_min = mass_matrix_extremes(gen3, nominal.q_at_min)[0]
    assert nominal.lambda_min <= at_min < nominal.lambda_min + 0.01


def test_payload_box_raises_lambda_max(gen3):
    th = gen3.theta_e()
    heavy = th.copy()
    heavy[0] += 4.0
    heavy[3] += 4.0 * -0.2
    heavy[4] += 4.0 * 0.04
    heavy[6] += 4.0 * 0.04
    box = (np.minimum(th, heavy), np.maximum(th, heavy))
    assert mass_matrix_eigen_bounds(gen3, box).lambda_max > mass_matrix_eigen_bounds(gen3).lambda_max


def test_tracking_error_bound_formula(gen3):
    b = tracking_error_bound(gen3, 5.0, 0.02)
    assert b.rho == pytest.approx(np.sqrt(2 * 0.02 / b.lambda_min))
    np.testing.assert_allclose(b.e_max, b.rho / 5.0)
    np.testing.assert_allclose(b.de_max, 2 * b.rho)
    kr = np.arange(1.0, 8.0)
    np.testing.assert_allclose(tracking_error_bound(gen3, kr, 0.02).e_max, b.rho / kr)


@pytest.mark.parametrize("kr,vmax", [(0.0, 0.02), (-1.0, 0.02), (5.0, 0.0), (5.0, np.nan)])
def test_bad_gains_rejected(gen3, kr, vmax):
    with pytest.raises(ControllerConfigError):
        tracking_error_bound(gen3, kr, vmax)


def test_malformed_box_rejected(gen3):
    th = gen3.theta_e()
    with pytest.raises(BoundsError):
        mass_matrix_eigen_bounds(gen3, (th + 1.0, th))
