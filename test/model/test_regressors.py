"""Oracle tests of the dynamics core against Pinocchio's own algorithms (all three robots)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import load_robot

ROBOTS = ["gen3", "z1", "b1_z1"]
N = 8
TOL = 1e-9


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


@pytest.fixture(scope="module", params=ROBOTS)
def setup(request):
    robot = load_robot(request.param)
    reg = Regressors(robot)
    rng = np.random.default_rng(abs(hash(request.param)) % 2**32)
    q = robot.random_configuration(rng, N)
    dq, ddq = rng.normal(size=(2, N, robot.nv)) * 2.0
    # a random but physically consistent θ, so the test does not hinge on the nominal values
    theta = robot.theta() * rng.uniform(0.5, 1.5, size=robot.theta().size)
    model = robot.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = pin.Inertia.FromDynamicParameters(theta[10 * (i - 1):10 * i])
    return robot, reg, model, model.createData(), theta, q, dq, ddq, rng




def test_inverse_dynamics_regressor_matches_rnea(setup):
    robot, reg, model, data, theta, q, dq, ddq, _ = setup
    y = reg.Y(q, dq, ddq)
    for k in range(N):
        assert _rel(y[k] @ theta, pin.rnea(model, data, q[k], dq[k], ddq[k])) < TOL


def test_momentum_regressor_matches_crba(setup):
    robot, reg, model, data, theta, q, dq, _, _ = setup
    w_m = reg.W_m(q, dq)
    for k in range(N):
        h = pin.crba(model, data, q[k])
        h = np.triu(h) + np.triu(h, 1).T
        assert _rel(w_m[k] @ theta, h @ dq[k]) < TOL


def test_coriolis_gravity_regressor_matches_pinocchio(setup):
    robot, reg, model, data, theta, q, dq, _, _ = setup
    w_c = reg.W_c(q, dq)
    for k in range(N):
        c = pin.computeCoriolisMatrix(model, data, q[k], dq[k])
        g = pin.computeGeneralizedGravity(model, data, q[k])
        assert _rel(w_c[k] @ theta, c.T @ dq[k] - g) < TOL


def test_passivity_regressor_matches_pinocchio(setup):
    robot, reg, model, data, theta, q, dq, _, rng = setup
    dq_a, ddq_a = rng.normal(size=(2, N, robot.nv))
    y_p = reg.Y_p(q, dq, dq_a, ddq_a)
    for k in range(N):
        h = pin.crba(model, data, q[k])
        h = np.triu(h) + np.triu(h, 1).T
        c = pin.computeCoriolisMatrix(model, data, q[k], dq[k])
        g = pin.computeGeneralizedGravity(model, data, q[k])
        assert _rel(y_p[k] @ theta, h @ ddq_a[k] + c @ dq_a[k] + g) < TOL


def test_energy_regressors_match_pinocchio(setup):
    robot, reg, model, data, theta, q, dq, _, _ = setup
    kin, pot = reg.kinetic(q, dq), reg.potential(q)
    for k in range(N):
        assert abs(kin[k] @ theta - pin.computeKineticEnergy(model, data, q[k], dq[k])) < TOL * 10
        assert abs(pot[k] @ theta - pin.computePotentialEnergy(model, data, q[k])) < TOL * 10
        ref_k = pin.computeKineticEnergyRegressor(model, data, q[k], dq[k])
        assert _rel(kin[k], ref_k) < TOL
        ref_u = pin.computePotentialEnergyRegressor(model, data, q[k])
        assert _rel(pot[k], ref_u) < TOL


def test_restricted_body_columns_equal_full(setup):
    robot, reg, *_ = setup
    _, _, _, _, _, q, dq, _, _ = setup
    full_m, full_c = reg.momentum_pair(q, dq)
    body = robot.ee_joint_id - 1
    part_m, part_c = reg.momentum_pair(q, dq, bodies=np.array([body]))
    np.testing.assert_allclose(part_m, full_m[..., robot.ee_columns], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(part_c, full_c[..., robot.ee_columns], rtol=1e-13, atol=1e-12)


def test_split_separates_end_effector_columns(setup):
    robot, reg, _, _, theta, q, dq, ddq, _ = setup
    y = reg.Y(q[:2], dq[:2], ddq[:2])
    y_e, y_r = reg.split(y)
    assert y_e.shape[-1] == 10 and y_r.shape[-1] == reg.n_theta - 10
    theta_r = np.delete(theta, np.arange(reg.n_theta)[robot.ee_columns])
    np.testing.assert_allclose(y_e @ theta[robot.ee_columns] + y_r @ theta_r, y @ theta, atol=1e-9)
    np.testing.assert_allclose(reg.theta_r_bodies(),
                               np.delete(robot.theta(), np.arange(reg.n_theta)[robot.ee_columns]))


def test_friction_regressor_matches_model(setup):
    robot, reg, *_ = setup
    rng = np.random.default_rng(3)
    dq, ddq = rng.normal(size=(2, 5, robot.nv))
    y_f = reg.friction(dq, ddq)
    phi = robot.friction.nominal.reshape(-1)
    fc, fv, ia, beta = robot.friction.nominal.T
    vi = robot.v_index
    expected = np.zeros((5, robot.nv))
    expected[:, vi] = fc * np.sign(dq[:, vi]) + fv * dq[:, vi] + ia * ddq[:, vi] + beta
    np.testing.assert_allclose(y_f @ phi, expected, atol=1e-12)


def test_fixed_base_w_c_is_lagrangian_gradient():
    """Independent check of W_c: central differences of Pinocchio's (K − U) regressors."""
    robot = load_robot("gen3")
    reg = Regressors(robot)
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(7)
    q, dq = robot.random_configuration(rng), rng.normal(size=robot.nv)
    h = 1e-5
    fd = np.empty((robot.nv, reg.n_theta))
    for j in range(robot.nv):
        e = np.zeros(robot.nv)
        e[j] = h
        lag = [pin.computeKineticEnergyRegressor(model, data, q + s * e, dq)
               - pin.computePotentialEnergyRegressor(model, data, q + s * e) for s in (1, -1)]
        fd[j] = (lag[0] - lag[1]) / (2 * h)
    np.testing.assert_allclose(reg.W_c(q, dq)[0], fd, atol=1e-7)


def test_bad_shapes_are_rejected():
    reg = Regressors(load_robot("gen3"))
    with pytest.raises(ValueError, match=r"q: expected shape \(N, 7\)"):
        reg.W_m(np.zeros((3, 6)), np.zeros((3, 7)))
    with pytest.raises(ValueError, match="same number of samples"):
        reg.momentum_pair(np.zeros((3, 7)), np.zeros((2, 7)))


def test_unsupported_joint_types_are_named():
    from sysid_ros._src.model.errors import UnsupportedJointError
    from sysid_ros._src.model.spatial import BatchKinematics

    model = pin.Model()
    jid = model.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "slider")
    model.appendBodyToJoint(jid, pin.Inertia.Random(), pin.SE3.Identity())
    with pytest.raises(UnsupportedJointError, match="JointModelPX of slider"):
        BatchKinematics(model)
