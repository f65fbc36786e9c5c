"""Parameter conventions, pseudo-inertia and the log-Cholesky map P(η)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.model.parameters import (PAPER_NAMES, PARAM_NAMES, from_paper_order,
                                        is_physically_consistent, log_cholesky,
                                        log_cholesky_inverse, log_cholesky_jacobian,
                                        pseudo_inertia, to_paper_order)
from sysid_ros._src.model.robots import load_robot


def test_paper_order_round_trips_by_name():
    theta = np.arange(10.0) + 1.0
    paper = to_paper_order(theta)
    named = dict(zip(PARAM_NAMES, theta))
    assert paper[PAPER_NAMES.index("XX")] == named["Ixx"]
    assert paper[PAPER_NAMES.index("XY")] == named["Ixy"]
    assert paper[PAPER_NAMES.index("XZ")] == named["Ixz"]
    assert paper[PAPER_NAMES.index("YZ")] == named["Iyz"]
    assert paper[PAPER_NAMES.index("ZZ")] == named["Izz"]
    np.testing.assert_array_equal(from_paper_order(paper), theta)
    batch = np.random.default_rng(0).normal(size=(4, 3, 10))
    np.testing.assert_array_equal(from_paper_order(to_paper_order(batch)), batch)


def test_pseudo_inertia_matches_pinocchio():
    for _ in range(20):
        inertia = pin.Inertia.Random()
        theta = inertia.toDynamicParameters()
        np.testing.assert_allclose(pseudo_inertia(theta), inertia.toPseudoInertia().toMatrix(),
                                   atol=1e-12)
    assert is_physically_consistent(load_robot("gen3").theta_e())
    bad = load_robot("gen3").theta_e().copy()
    bad[0] = -1.0
    assert not is_physically_consistent(bad)
    # triangle inequality violated: Ixx > Iyy + Izz about the COM
    bad = load_robot("gen3").theta_e().copy()
    bad[4] = 10.0
    assert not is_physically_consistent(bad)


@pytest.mark.parametrize("scale", [0.1, 1.0, 2.0])
def test_log_cholesky_is_always_consistent(scale):
    eta = np.random.default_rng(2).normal(size=(2000, 10)) * scale
    assert np.all(is_physically_consistent(log_cholesky(eta)))


def test_log_cholesky_extreme_eta_are_consistent():
    eta = np.zeros((6, 10))
    eta[0, 0], eta[1, 0] = -8.0, 4.0            # tiny / huge mass
    eta[2, 1:4] = [-6.0, 0.0, 6.0]               # strongly anisotropic
    eta[3, 7:] = [50.0, -50.0, 30.0]             # far-away centre of mass
    eta[4, 4:7] = [40.0, -40.0, 40.0]
    eta[5] = [-3.0, -5.0, -5.0, -5.0, 0, 0, 0, 0.01, 0, 0]  # point mass close to the origin
    theta = log_cholesky(eta)
    assert np.all(np.isfinite(theta))
    j = pseudo_inertia(theta)
    # consistency relative to the matrix scale (absolute eigenvalues can be tiny)
    eig = np.linalg.eigvalsh(j)
    assert np.all(eig[:, 0] > -1e-12 * np.abs(eig[:, -1]))


def test_log_cholesky_jacobian_matches_central_differences():
    rng = np.random.default_rng(3)
    eta = rng.normal(size=(10, 10))
    jac = log_cholesky_jacobian(eta)
    h = 1e-6
    for k in range(10):
        e = np.zeros(10)
        e[k] = h
        fd = (log_cholesky(eta + e) - log_cholesky(eta - e)) / (2 * h)
        np.testing.assert_allclose(jac[:, :, k], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_log_cholesky_inverse_round_trips():
    theta = load_robot("gen3").theta_e()
    np.testing.assert_allclose(log_cholesky(log_cholesky_inverse(theta)), theta, atol=1e-14)
    eta = np.random.default_rng(4).normal(size=(50, 10))
    np.testing.assert_allclose(log_cholesky_inverse(log_cholesky(eta)), eta, atol=1e-8)
    with pytest.raises(ValueError, match="not strictly physically consistent"):
        bad = theta.copy()
        bad[0] = -1.0
        log_cholesky_inverse(bad)


def test_com_inertia_conversion_matches_pinocchio():
    for _ in range(10):
        inertia = pin.Inertia.Random()
        theta = inertia.toDynamicParameters()
        from sysid_ros._src.model.parameters import com_inertia_from_theta, theta_from_com_inertia
        m, c, i_c = com_inertia_from_theta(theta)
        np.testing.assert_allclose(c, inertia.lever, atol=1e-12)
        np.testing.assert_allclose(i_c, inertia.inertia, atol=1e-12)
        np.testing.assert_allclose(theta_from_com_inertia(m, c, i_c), theta, atol=1e-12)
