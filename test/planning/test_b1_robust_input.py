"""The planner's per-joint robust-input bound against the real controller on the standing B1's
arm view, with the robot file's boundary layer and its exponent (``controller.boundary_layer``,
``boundary_layer_exponent``, docs/theory/controller.md#law): the layer scales the robust term by
s = min(1, (V_sup/(η V_max))^p), which is 1 on the level, so the planner's bound must enclose
every command without any credit for it; and a bound that ignored how the mass metric spreads
the robust input over the joints must fail."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.controller import RobustController, gains_from_config
from sysid_ros._src.demo.floating import robot_file_with_prior_box
from sysid_ros._src.control.arm_view import arm_view
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.planning import QuinticTrajectory, controller_model
from sysid_ros._src.planning.reachability import Reachability

N_INTERVALS = 32
DURATION = 1.5                     # s: the demo's task segment


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    full = load_robot(robot_file_with_prior_box(load_robot("b1_z1"), tmp_path_factory.mktemp("b1")))
    return arm_view(full)


@pytest.fixture(scope="module")
def task(view):
    """The demo's first task segment, its prior box (the θ_e class the demo starts from) and
    the planner's reachable set of it."""
    demo = view.config["demo"]
    start = np.asarray(demo["start"], float)
    k = np.asarray(demo["waypoints"][0], float) - start
    lo = np.asarray(demo["prior_box"]["lower"], float)
    hi = np.asarray(demo["prior_box"]["upper"], float)
    ctrl = controller_model(view)
    traj = QuinticTrajectory(start, np.zeros(6), np.zeros(6), DURATION)
    rs = Reachability(view, ctrl, (), N_INTERVALS).reach(traj, k, lo, hi)
    return ctrl, traj, k, (lo, hi), rs


def _mass(view, theta, q):
    model = view.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = pin.Inertia.FromDynamicParameters(theta[10 * (i - 1):10 * i])
    h = pin.crba(model, model.createData(), q)
    return np.triu(h) + np.triu(h, 1).T


def test_planner_bound_encloses_the_layered_controller(view, task):
    """States in each sub-interval's tracking box, scaled onto V ≤ V_max with a random truth in
    the boxes (many of them close to the level), any θ_e box nested in the plan's: |v_i| ≤ the
    planner's bound. Mutation: a planner that bounded |v_i| by joint i's own interval bound
    bound_i (``ReachableSet.bound``: what a per-joint law bound_i·sign(r_i) would need) is
    exceeded — the mass metric moves the light wrist's share onto the heavier joints."""
    ctrl, traj, k, (lo, hi), rs = task
    gains = gains_from_config(view)
    assert gains.boundary_layer > 0 and gains.boundary_layer_exponent > 0.5  # the file's choice
    rng = np.random.default_rng(12)
    t = np.sort(np.concatenate([rng.uniform(0, DURATION, 150),
                                np.linspace(0, DURATION, N_INTERVALS + 1)]))
    m = np.clip((t / DURATION * N_INTERVALS).astype(int), 0, N_INTERVALS - 1)
    qd, dqd, ddqd = traj.sample(t, k)
    theta0 = view.theta()
    worst, worst_mutant = 0.0, 0.0
    for n in range(t.size):
        a, b = np.sort(rng.uniform(lo, hi, (2, 10)), axis=0)
        ctl = RobustController(view, gains, prior=theta_e_box(a, b))
        theta = theta0 * (1 + view.links_rel_uncertainty * rng.uniform(-1, 1, theta0.size))
        theta[view.ee_columns] = rng.uniform(a, b)
        e = ctrl.e_max * rng.uniform(-1, 1, 6)
        de = ctrl.de_max * rng.uniform(-1, 1, 6) * (rng.random(6) < 0.8)   # some at rest
        r = de + ctrl.Kr * e
        v_true = 0.5 * r @ _mass(view, theta, qd[n] - e) @ r
        s = min(1.0, np.sqrt(ctrl.V_max / max(v_true, 1e-300)) * rng.uniform(0.7, 1.0))
        out = ctl.compute(0.0, qd[n] - s * e, dqd[n] - s * de, qd[n], dqd[n], ddqd[n])
        assert not out.clipped
        assert np.all(np.abs(out.v) <= rs.robust[m[n]]), (n, out.v, rs.robust[m[n]])
        worst = max(worst, float(np.max(np.abs(out.v) / rs.robust[m[n]])))
        worst_mutant = max(worst_mutant, float(np.max(np.abs(out.v) / rs.bound[m[n]])))
    assert worst > 0.3                               # the bound is not vacuously large
    assert worst_mutant > 1.0                        # the mutated bound fails
