"""Closed loop on MuJoCo (Gen3 + 8 lb / 3.63 kg dumbbell) along a degree-5 Bézier trajectory:
with a box containing the truth, V = ½rᵀM r (MuJoCo's mass matrix) stays ≤ V_max at every
control step and |e| within the planner's bound; the "wrong" model (no payload taken as exact)
violates the assumption and its error and V are measurably larger."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros.control.bounds import tracking_error_bound
from sysid_ros.control.controller import ControllerGains, RobustController, ThetaBox
from sysid_ros.model.robots import load_robot
from sysid_ros.simulation.payload import dumbbell_for, true_theta_e

from .closed_loop import bezier_rest_to_rest, run

V_MAX = float(load_robot("gen3").config["controller"]["V_max"])     # the configured level


@pytest.fixture(scope="module")
def setup():
    robot = load_robot("gen3")
    payload = dumbbell_for(robot, 3.63)
    truth = true_theta_e(robot, payload)
    rad = 0.15 * np.abs(truth) + 1e-3
    # the truth sits near a corner of the box, so the controller's θ₀ (the box centre) is off
    # the truth by 0.9·rad per parameter and the robust input must work
    box = ThetaBox(truth - 1.9 * rad, truth - 0.9 * rad, truth + 0.1 * rad)
    assert np.all((truth >= box.lower) & (truth <= box.upper))
    # a folded start pose along whose 2-s path the true torques stay inside the limits (no
    # clipping: the guarantee's assumption), independent of the simulator's start pose
    q0 = np.array([0.0, 0.3, 3.14, -2.4, 0.0, -0.1, 1.57])
    k = np.array([0.9, -0.6, 0.75, 0.75, -0.9, 0.75, 1.2])
    traj = bezier_rest_to_rest(robot, q0, k, 2.0)
    return robot, payload, box, traj


def _loop(setup, mode):
    robot, payload, box, traj = setup
    ctl = RobustController(robot, ControllerGains(5.0, 20.0, V_MAX), mode=mode,
                           prior=box)
    ctl.set_bounds(box)
    return run(robot, ctl, payload, traj, duration=2.5)


def test_robust_keeps_V_below_V_max_and_wrong_does_not(setup):
    robot = setup[0]
    robust = _loop(setup, "robust")
    assert not robust.clipped.any()
    # sound: the true V (MuJoCo mass matrix incl. armature) never exceeds V_max ...
    assert robust.V_true.max() <= V_MAX
    # ... and the controller's V_sup over-approximates it at every step
    assert np.all(robust.V_true <= robust.V_sup + 1e-12)
    # the robust input was actually needed: V came close to V_max
    assert robust.V_true.max() > 0.25 * V_MAX
    bound = tracking_error_bound(robot, 5.0, V_MAX)
    assert robust.r_norm.max() <= bound.rho
    assert np.all(np.abs(robust.e) <= bound.e_max)

    wrong = _loop(setup, "wrong")
    assert wrong.V_true.max() > V_MAX                      # assumption violated → guarantee lost
    assert np.abs(wrong.e).max() > 3.0 * np.abs(robust.e).max()
    assert np.sqrt((wrong.e ** 2).mean()) > 3.0 * np.sqrt((robust.e ** 2).mean())
