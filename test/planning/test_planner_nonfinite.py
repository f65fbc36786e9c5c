"""A solver iterate the sound check cannot even evaluate (non-finite k) ends the cycle as an
unverified plan with the reason, never as an exception from the margin update."""
from __future__ import annotations

import numpy as np

from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.planning.planner import ExcitingPlanner, PlannerConfig

from .conftest import HOME


def test_non_finite_solver_output_is_reported_not_raised(gen3, gen3_controller, payload_box,
                                                         monkeypatch):
    lo, hi, _ = payload_box
    planner = ExcitingPlanner(gen3, PlannerConfig.from_robot(gen3, {"max_solve_time": 0.6}),
                              gen3_controller)
    monkeypatch.setattr(planner, "_solve",
                        lambda traj, *args, **kw: (np.full(traj.nj, np.nan), 0, "nan iterate"))
    res = planner.plan(HOME, np.zeros(7), np.zeros(7), theta_e_box(lo, hi))
    assert not res.verified and res.k is None
    assert any("not a finite" in r for r in res.reasons), res.reasons
    assert res.verification is not None and res.verification.reach is None
