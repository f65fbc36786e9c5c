"""Mass-matrix enclosures over q-boxes (enclosures.mass_matrix) against Pinocchio's CRBA at dense
random configurations inside each box: entries inside the interval matrix, λ_min/λ_max and
(M⁻¹)_ii inside their bounds, the folded (one-sided) bounds on the correct side, and the fold
factor of a body turned about its own joint axis."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.enclosures.chain import SerialChain
from sysid_ros._src.enclosures.interval import Interval
from sysid_ros._src.enclosures.mass_matrix import enclose_mass_matrix, fold_factor


def _crba(robot, q):
    data = robot.model.createData()
    m = pin.crba(robot.model, data, q)
    return np.triu(m) + np.triu(m, 1).T


@pytest.fixture(scope="module", params=["gen3", "z1"])
def setup(request):
    robot = load_robot(request.param)
    chain = SerialChain.from_robot(robot)
    theta = robot.theta()
    bodies = [tuple(float(x) for x in theta[10 * i:10 * i + 10]) for i in range(chain.nb)]
    return robot, chain, bodies


@pytest.mark.parametrize("width", [0.0, 0.01, 0.05])
def test_enclosure_contains_crba(setup, width):
    robot, chain, bodies = setup
    rng = np.random.default_rng(int(width * 1000))
    centres = robot.random_configuration(rng, 24)
    half = rng.uniform(0.0, width, centres.shape) if width else np.zeros(centres.shape)
    enc = enclose_mass_matrix(chain, centres - half, centres + half, bodies)
    lam_lo, lam_hi = enc.lambda_min_lower(), enc.lambda_max_upper()
    inv_hi = enc.inverse_diagonal_upper()
    rad = enc.radius
    for b in range(centres.shape[0]):
        for _ in range(20):
            q = rng.uniform(centres[b] - half[b], centres[b] + half[b])
            m = _crba(robot, q)
            assert np.all(np.abs(m - enc.centre[b]) <= rad[b] * (1 + 1e-12) + 1e-15)
            ev = np.linalg.eigvalsh(m)
            assert lam_lo[b] <= ev[0] and ev[-1] <= lam_hi[b]
            assert np.all(np.diag(np.linalg.inv(m)) <= inv_hi[b])
    if width == 0.0:          # a point: the bounds are the exact values up to rounding
        m = np.array([_crba(robot, q) for q in centres])
        np.testing.assert_allclose(lam_lo, np.linalg.eigvalsh(m)[:, 0], rtol=1e-9)


def test_interval_parameters_and_armature_are_covered(setup):
    robot, chain, bodies = setup
    rng = np.random.default_rng(11)
    theta = robot.theta()
    rad = 0.05 * np.abs(theta)
    ivb = [tuple(Interval(theta[10 * i + p], rad[10 * i + p]) for p in range(10))
           for i in range(chain.nb)]
    ia = Interval(np.full(robot.nj, 0.02), 0.01)
    q = robot.random_configuration(rng, 8)
    enc = enclose_mass_matrix(chain, q - 0.01, q + 0.01, ivb, ia)
    for b in range(q.shape[0]):
        model = robot.model.copy()
        th = theta + rng.uniform(-1, 1, theta.size) * rad
        for i in range(1, model.njoints):
            model.inertias[i] = pin.Inertia.FromDynamicParameters(th[10 * (i - 1):10 * i])
        qq = rng.uniform(q[b] - 0.01, q[b] + 0.01)
        m = pin.crba(model, model.createData(), qq)
        m = np.triu(m) + np.triu(m, 1).T + np.diag(rng.uniform(0.01, 0.03, robot.nj))
        assert np.all(np.abs(m - enc.centre[b]) <= enc.radius[b] * (1 + 1e-12) + 1e-15)


def test_fold_factor_bounds_the_turned_body():
    z1 = load_robot("z1")
    chain = SerialChain.from_robot(z1)
    theta = z1.theta_e()
    inertia = pin.Inertia.FromDynamicParameters(theta).matrix()
    for w in (0.05, 0.13, 0.4):
        s = fold_factor(chain, 5, theta, np.array([w]), upper=False)[0]
        t = fold_factor(chain, 5, theta, np.array([w]), upper=True)[0]
        assert 0.0 < s < 1.0 < t
        for d in np.linspace(-w, w, 81):
            x = pin.SE3(pin.utils.rpyToMatrix(d, 0.0, 0.0), np.zeros(3)).toActionMatrix()
            turned = x.T @ inertia @ x          # the body seen after its joint turned by d
            assert np.linalg.eigvalsh(turned - s * inertia)[0] >= -1e-15
            assert np.linalg.eigvalsh(t * inertia - turned)[0] >= -1e-15


@pytest.mark.parametrize("fold", ["lower", "upper"])
def test_folded_bounds_are_one_sided(setup, fold):
    """With the last joint folded, M(q) ⪰ (⪯) every matrix of the returned set: its λ_min lower
    bound stays below, and its upper diagonal above, the true values over the box."""
    robot, chain, bodies = setup
    rng = np.random.default_rng(5)
    q = robot.random_configuration(rng, 12)
    half = np.full(q.shape, 0.02)
    half[:, -1] = 0.3                                   # a wide last joint: what fold is for
    enc = enclose_mass_matrix(chain, q - half, q + half, bodies, fold=fold)
    lam_lo = enc.lambda_min_lower()
    inv_hi = enc.inverse_diagonal_upper()
    diag_hi = np.diagonal(enc.centre + enc.radius, axis1=-2, axis2=-1)
    for b in range(q.shape[0]):
        for _ in range(20):
            m = _crba(robot, rng.uniform(q[b] - half[b], q[b] + half[b]))
            if fold == "lower":
                assert lam_lo[b] <= np.linalg.eigvalsh(m)[0]
                assert np.all(np.diag(np.linalg.inv(m)) <= inv_hi[b])
            else:
                assert np.all(np.diag(m) <= diag_hi[b])
