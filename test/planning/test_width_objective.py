"""The ``width`` objective: its predicted mass width is the box the
identifier's own LP (``identification.feasible_set.polytope_box``) gives for the same rows and radii,
its gradient matches central differences (weights held), the history it keeps predicts the
same box, and the planner runs it end to end."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification.feasible_set import polytope_box
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.planning.errors import PlannerConfigError
from sysid_ros._src.planning.nominal import NominalModel
from sysid_ros._src.planning.planner import ExcitingPlanner, PlannerConfig
from sysid_ros._src.planning.trajectory import QuinticTrajectory
from sysid_ros._src.planning.width import (binding_rows, half_width, keep_history,
                                      predicted_half_width)


def _traj(gen3) -> QuinticTrajectory:
    home = np.asarray(gen3.config["simulation"]["home"], float)
    return QuinticTrajectory(home, np.full(7, 0.05), np.full(7, -0.1), 3.0)


def _width(gen3) -> np.ndarray:
    w = 0.3 * np.abs(gen3.theta_e()) + 0.05
    w[0] = 4.5
    return w


def test_prediction_is_the_identifiers_box_for_rows_centred_on_the_truth(gen3):
    """Rows a_i with data c_i = a_i·θ and radius r_i: the identifier's LP box of the mass,
    around θ inside the box B, is 2h wide (h from the objective's own HiGHS model)."""
    model = NominalModel(gen3, (), n_samples=48)
    traj = _traj(gen3)
    k = np.random.default_rng(1).uniform(-0.5, 0.5, 7)
    weights = model.row_weights(traj, k)
    y = model._samples(traj, k)
    log_h, _, _ = predicted_half_width(y, weights, _width(gen3))
    a = y[0].real
    theta = gen3.theta_e()
    half = 0.5 * _width(gen3)
    box = polytope_box(a, a @ theta, 1.0 / weights, theta - half, theta + half)
    assert box.box is not None
    np.testing.assert_allclose(box.box.width[0], 2.0 * np.exp(log_h), rtol=1e-4)
    assert 2.0 * np.exp(log_h) < _width(gen3)[0]          # the rows do narrow it


def test_gradient_with_the_weights_held(gen3):
    model = NominalModel(gen3, (), n_samples=64)
    traj = _traj(gen3)
    rng = np.random.default_rng(2)
    weights = model.row_weights(traj, np.zeros(7))
    width = _width(gen3)
    history = model.weighted_rows(traj, rng.uniform(-0.5, 0.5, 7), 1.5)
    gram = model.information(traj, rng.uniform(-0.5, 0.5, 7), 1.5)
    for cond_weight in (0.0, 0.5):
        for _ in range(3):
            k = rng.uniform(-0.6, 0.6, 7)

            def value(x: np.ndarray) -> float:
                return predicted_half_width(model._samples(traj, x), weights, width, history,
                                            cond_weight=cond_weight, gram=gram)[0]

            _, grad, _ = predicted_half_width(model._samples(traj, k), weights, width, history,
                                              cond_weight=cond_weight, gram=gram)
            h = 1e-6
            fd = np.array([(value(k + h * e) - value(k - h * e)) / (2 * h) for e in np.eye(7)])
            np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-6 * np.abs(fd).max())


def test_cond_term_is_the_cond_of_history_and_new_rows(gen3):
    """cond_weight·log cond of [history; new rows] is what the term adds (numpy's cond of the
    stacked matrix as the reference)."""
    model = NominalModel(gen3, (), n_samples=32)
    traj = _traj(gen3)
    k_old, k = np.full(7, 0.3), np.full(7, -0.2)
    weights = model.row_weights(traj, k)
    width = _width(gen3)
    old = model._executed_rows(traj, k_old, 1.5)[1]
    y = model._samples(traj, k)
    base = predicted_half_width(y, weights, width)[0]
    with_cond = predicted_half_width(y, weights, width, cond_weight=2.0, gram=old.T @ old)[0]
    stacked = np.vstack([old, y[0].real])
    np.testing.assert_allclose(with_cond - base, 2.0 * np.log(np.linalg.cond(stacked)),
                               rtol=1e-8)


def test_kept_history_predicts_the_same_box(gen3):
    """The rows ``binding_rows`` keeps give every θ_e entry the same predicted width as all
    rows; ``keep_history`` keeps everything under its limit and caps it above."""
    model = NominalModel(gen3, (), n_samples=64)
    traj = _traj(gen3)
    rng = np.random.default_rng(3)
    rows = np.vstack([model.weighted_rows(traj, rng.uniform(-0.5, 0.5, 7), 1.5)
                      for _ in range(3)])
    width = _width(gen3)
    kept = rows[binding_rows(rows, width)]
    assert 0 < kept.shape[0] < rows.shape[0]
    for p in range(10):
        np.testing.assert_allclose(half_width(kept, width, p), half_width(rows, width, p),
                                   rtol=1e-6)
    assert keep_history(rows, width, limit=rows.shape[0]) is rows
    capped = keep_history(rows, width, limit=50)
    assert capped.shape[0] <= 50 + kept.shape[0]
    np.testing.assert_array_equal(capped[-10:], rows[-10:])     # the most recent stay


def test_planner_runs_the_width_objective(gen3, gen3_controller, payload_box):
    """A cycle with ``objective: width`` minimises it, its plan passes the sound check, and the
    executed part's rows become the next cycle's history."""
    planner = ExcitingPlanner(gen3, PlannerConfig.from_robot(gen3, {"objective": "width"}),
                              gen3_controller)
    home = np.asarray(gen3.config["simulation"]["home"], float)
    lo, hi, _ = payload_box
    box = theta_e_box(lo, hi)
    res = planner.plan(home, np.zeros(7), np.zeros(7), box)
    assert res.objective == "width"
    assert res.verified and res.k is not None and np.linalg.norm(res.k) > 0.05
    executed = planner.model.weighted_rows(res.trajectory, res.k, planner.config.t_p)
    np.testing.assert_allclose(planner.weighted_history, executed)


def test_cond_weight_must_be_non_negative(gen3):
    with pytest.raises(PlannerConfigError, match="cond_weight"):
        PlannerConfig.from_robot(gen3, {"objective": "width", "cond_weight": -0.5})


def test_width_objective_adds_its_weighted_terms(gen3):
    """The planner's ``width`` = log h + cond_weight·log cond + radius_weight·``radius``."""
    planner = ExcitingPlanner(gen3, PlannerConfig.from_robot(
        gen3, {"objective": "width", "cond_weight": 0.5, "radius_weight": 0.2}))
    model = planner.model
    traj = _traj(gen3)
    k = np.full(7, 0.25)
    weights = model.row_weights(traj, k)
    y = model._samples(traj, k)
    width = _width(gen3)
    got = planner._width_objective(y, weights, width)
    lp = predicted_half_width(y, weights, width, cond_weight=0.5, gram=np.zeros((10, 10)))
    radius = model.weighted_mass_of(y, weights, width, np.zeros((10, 10)))
    np.testing.assert_allclose(got[0], lp[0] + 0.2 * radius[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], lp[1] + 0.2 * radius[1], rtol=1e-10)
