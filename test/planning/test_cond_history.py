"""``planner.cond_history``: the ``cond`` objective of the rows already
executed and the planned ones together. Its value is numpy's cond of the stacked rows, its
gradient matches central differences, and the planner minimises it when asked. And
``planner.restarts``: more NLP starts never make the certified plan worse."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.planning.errors import PlannerConfigError
from sysid_ros._src.planning.nominal import NominalModel
from sysid_ros._src.planning.planner import ExcitingPlanner, PlannerConfig
from sysid_ros._src.planning.trajectory import QuinticTrajectory


def _traj(gen3) -> QuinticTrajectory:
    home = np.asarray(gen3.config["simulation"]["home"], float)
    return QuinticTrajectory(home, np.full(7, 0.05), np.full(7, -0.1), 3.0)


def test_value_is_the_cond_of_history_and_plan_and_gradient_matches(gen3):
    model = NominalModel(gen3, (), n_samples=48)
    traj = _traj(gen3)
    rng = np.random.default_rng(4)
    old = model._executed_rows(traj, rng.uniform(-0.5, 0.5, 7), 1.5)[1]
    gram = old.T @ old
    for _ in range(3):
        k = rng.uniform(-0.5, 0.5, 7)
        y = model._samples(traj, k)
        value, grad, cond = model.cond_with_history(y, gram)
        np.testing.assert_allclose(np.exp(value),
                                   np.linalg.cond(np.vstack([old, y[0].real])), rtol=1e-8)
        # the plan's own cond is the reported figure
        np.testing.assert_allclose(cond, model.objective(traj, k)[2], rtol=1e-10)
        h = 1e-6
        fd = np.array([(model.cond_with_history(model._samples(traj, k + h * e), gram)[0]
                        - model.cond_with_history(model._samples(traj, k - h * e), gram)[0])
                       / (2 * h) for e in np.eye(7)])
        np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-6 * np.abs(fd).max())
    # with no history it is S3-30's objective
    k = rng.uniform(-0.5, 0.5, 7)
    y = model._samples(traj, k)
    (v0, g0, _), (v1, g1, _) = model.cond_with_history(y, np.zeros((10, 10))), model.cond_of(y)
    np.testing.assert_allclose(v0, v1, rtol=1e-9)
    np.testing.assert_allclose(g0, g1, rtol=1e-6, atol=1e-9 * np.abs(g1).max())


def test_planner_uses_the_history_when_configured(gen3, gen3_controller, payload_box):
    """With ``cond_history`` the NLP's objective is bound to the executed rows: the same k
    scores differently before and after a history exists; without the flag (S3-30) the
    history does not count."""
    traj = _traj(gen3)
    k = np.full(7, 0.2)
    cfg = PlannerConfig.from_robot(gen3, {"cond_history": True})
    planner = ExcitingPlanner(gen3, cfg, gen3_controller)
    y = planner.model._samples(traj, k)
    box = payload_box
    alone = planner._objective("cond", box, traj, k)(y)[0]
    planner.information = planner.model.information(traj, -k, cfg.t_p)
    with_history = planner._objective("cond", box, traj, k)(y)[0]
    assert np.isclose(alone, planner.model.cond_of(y)[0])
    assert with_history < alone - 0.05        # the other direction's rows fill in
    plain = ExcitingPlanner(gen3, PlannerConfig.from_robot(gen3, {"cond_history": False}),
                            gen3_controller)
    plain.information = planner.information
    assert np.isclose(plain._objective("cond", box, traj, k)(y)[0], alone)


def test_restarts_keep_the_plan_certified_and_never_worse(gen3, gen3_controller):
    """``planner.restarts``: from the same state and box a planner with restarts returns a
    certified plan whose objective is no higher than the one without (a restart replaces the
    plan only when lower and certified), and the sound check passes it again."""
    from sysid_ros._src.model.box import theta_e_box
    from sysid_ros._src.simulation.payload import dumbbell_for, true_theta_e

    th = true_theta_e(gen3, dumbbell_for(gen3, 3.63))
    r = 0.05 * np.abs(th) + 1e-3
    box = theta_e_box(th - r, th + r, th)
    home = np.asarray(gen3.config["simulation"]["home"], float)
    z = np.zeros(7)
    values = []
    for restarts in (0, 3):
        planner = ExcitingPlanner(gen3, PlannerConfig.from_robot(
            gen3, {"restarts": restarts, "max_solve_time": 1.4}), gen3_controller)
        res = planner.plan(home, z, z, box)
        assert res.verified and res.k is not None, res.reasons
        assert planner.reach.verify(res.trajectory, res.k, box.lower, box.upper).ok
        values.append(planner.model.cond_of(planner.model._samples(res.trajectory, res.k))[0])
    assert values[1] <= values[0] + 1e-9
    with pytest.raises(PlannerConfigError, match="restarts"):
        PlannerConfig.from_robot(gen3, {"restarts": -1})
