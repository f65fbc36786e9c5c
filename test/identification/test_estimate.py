"""Point estimate: Ipopt (exact gradient) agrees with SciPy on the same η problem."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import load_identification_config
from .conftest import payload_rows
from sysid_ros._src.identification.estimate import estimate_theta, least_squares_reference
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from sysid_ros._src.model.parameters import is_physically_consistent


def test_ipopt_matches_scipy_least_squares(gen3):
    rng = np.random.default_rng(7)
    theta = gen3.theta_e() + random_payload_theta(rng)
    run = simulate(gen3, rng, theta_e=theta, duration=0.5, noise_rel=0.01, robot_rel=0.0,
                   friction_true=gen3.friction.nominal)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.0, torque_noise_rel=0.01)
    rows = payload_rows(gen3, cfg, run.t, run.q, run.dq, run.tau_meas)
    a = estimate_theta(rows.A, rows.c, rows.r, gen3.theta_e())
    b = least_squares_reference(rows.A, rows.c, rows.r, gen3.theta_e())
    assert a.success
    assert is_physically_consistent(a.theta)
    # Same minimum: SciPy from the common start gets no lower, and cannot improve on Ipopt's
    # point when started there; well-determined parameters (m, m·c) agree.
    assert a.cost <= b.cost * (1 + 1e-9)
    polish = least_squares_reference(rows.A, rows.c, rows.r, gen3.theta_e(), eta0=a.eta)
    assert polish.cost >= a.cost * (1 - 1e-7)
    np.testing.assert_allclose(a.theta[:4], b.theta[:4], rtol=2e-3, atol=2e-3)
    # With θ_r and friction exact the mass is well determined: the estimate is close to the truth.
    assert abs(a.theta[0] - theta[0]) < 0.2


def test_ipopt_callbacks_match_the_row_form_and_finite_differences():
    """The Gram-form callbacks (objective, batched gradient, batched-difference Hessian) against
    the row form of ls_objective and SciPy's finite differences of its gradient."""
    from scipy.optimize import approx_fprime

    from sysid_ros._src.identification.estimate import _GramProblem, _weighted, ls_objective

    rng = np.random.default_rng(3)
    Y, U, r = rng.normal(size=(60, 10)), rng.normal(size=60), np.full(60, 0.1)
    ref = np.array([1.0, 0.01, 0.0, 0.02, 0.01, 0.0, 0.01, 0.0, 0.0, 0.01])
    A, b, lam = _weighted(Y, U, r)
    f, grad = ls_objective(A, b, lam, ref)
    prob = _GramProblem(A.T @ A, A.T @ b, float(b @ b), lam, ref)
    etas = rng.normal(scale=0.3, size=(4, 10))
    for eta in etas:
        assert np.isclose(prob.objective(eta), f(eta), rtol=1e-9)
        np.testing.assert_allclose(prob.gradient(eta), grad(eta), rtol=1e-8, atol=1e-8)
        H = np.array([approx_fprime(eta, lambda x, k=k: grad(x)[k], 1e-6) for k in range(10)])
        low = np.tril_indices(10)
        np.testing.assert_allclose(prob.hessian(eta, np.zeros(0), 2.0), 2.0 * H[low],
                                   rtol=1e-3, atol=1e-3 * np.abs(H).max())
    np.testing.assert_allclose(prob.gradient(etas), [grad(e) for e in etas], rtol=1e-8, atol=1e-8)


@pytest.mark.slow
def test_estimate_held_to_the_prior_matches_a_convex_reference(gen3):
    """An unconstrained estimate outside the prior B₀ is re-solved within it: the same optimum
    as the convex problem min ‖D(Yθ − U)‖² + λ‖θ − θ_ref‖² over B₀ ∩ {pseudo-inertia ⪰ 0}
    solved by cvxpy + Clarabel; bounds that hold the free optimum change nothing."""
    import cvxpy as cp

    from sysid_ros._src.identification.estimate import _weighted, ls_objective
    from sysid_ros._src.model.parameters import pseudo_inertia

    rng = np.random.default_rng(11)
    theta = gen3.theta_e() + random_payload_theta(rng)
    run = simulate(gen3, rng, theta_e=theta, duration=0.5, noise_rel=0.01, robot_rel=0.0,
                   friction_true=gen3.friction.nominal)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.0,
                                     torque_noise_rel=0.01)
    rows = payload_rows(gen3, cfg, run.t, run.q, run.dq, run.tau_meas)
    ref = gen3.theta_e()
    free = estimate_theta(rows.A, rows.c, rows.r, ref)
    wide = (free.theta - 1.0, free.theta + 1.0)
    np.testing.assert_array_equal(estimate_theta(rows.A, rows.c, rows.r, ref, bounds=wide).theta,
                                  free.theta)
    # a prior whose mass ceiling sits 0.3 kg under the free estimate
    lower, upper = np.full(10, -10.0), np.full(10, 10.0)
    lower[[0, 4, 6, 9]] = 0.0
    upper[0] = free.theta[0] - 0.3
    held = estimate_theta(rows.A, rows.c, rows.r, ref, bounds=(lower, upper))
    assert held.success and is_physically_consistent(held.theta)
    assert np.all(held.theta >= lower - 1e-7) and np.all(held.theta <= upper + 1e-7)

    A, b, lam = _weighted(rows.A, rows.c, rows.r)
    x = cp.Variable(10)
    basis = pseudo_inertia(np.eye(10))                    # J(θ) is linear in θ
    J = sum(x[k] * basis[k] for k in range(10))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ x - b)
                                  + 0.5 * lam * cp.sum_squares(x - ref)),
                      [x >= lower, x <= upper, 0.5 * (J + J.T) >> 0])
    prob.solve(solver=cp.CLARABEL)
    f, _ = ls_objective(A, b, lam, ref)
    assert held.cost <= prob.value * (1 + 1e-6) + 1e-9
    np.testing.assert_allclose(held.theta[:4], x.value[:4], rtol=1e-3, atol=1e-4)
    assert np.isclose(held.theta[0], upper[0], atol=1e-6)       # the mass rests on the ceiling
    assert f(held.eta) == held.cost
