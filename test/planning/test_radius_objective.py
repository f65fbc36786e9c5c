"""The ``radius`` objective: the row radii bound what the links' box can do to a
sample's torque (checked with Pinocchio's RNEA on perturbed link inertias, not the regressor the
weights come from), its gradient against central differences with the weights held, and the
planner running it end to end."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.planning.nominal import NominalModel
from sysid_ros._src.planning.planner import ExcitingPlanner, PlannerConfig
from sysid_ros._src.planning.trajectory import QuinticTrajectory


def _traj(gen3) -> QuinticTrajectory:
    home = np.asarray(gen3.config["simulation"]["home"], float)
    return QuinticTrajectory(home, np.full(7, 0.05), np.full(7, -0.1), 3.0)


def test_radius_covers_every_link_inertia_in_the_box(gen3):
    """For link inertias drawn inside θ_r ± links_rel, the RNEA torque moves by less than the
    weight's radius minus its noise and friction parts, at every objective sample."""
    model = NominalModel(gen3, (), n_samples=24)
    traj = _traj(gen3)
    k = np.full(7, 0.3)
    r = 1.0 / model.row_weights(traj, k).reshape(24, 7)
    fr = 0.5 * (gen3.friction.upper - gen3.friction.lower)
    q, dq, ddq = traj.sample(np.linspace(0.0, traj.t_f, 24), k)
    noise = float(gen3.config["identification"]["torque_noise_abs"])
    links_only = r - noise - fr[:, 1] * np.abs(dq) - fr[:, 0] - fr[:, 3]
    rng = np.random.default_rng(0)
    nominal, data = gen3.model, gen3.model.createData()
    tau0 = np.array([pin.rnea(nominal, data, q[i], dq[i], ddq[i]) for i in range(24)])
    ee = gen3.ee_joint_id
    worst = np.zeros_like(links_only)
    for _ in range(20):
        perturbed = pin.Model(nominal)
        for j in range(1, nominal.njoints):
            if j == ee:
                continue
            theta = nominal.inertias[j].toDynamicParameters()
            theta = theta * (1 + gen3.links_rel_uncertainty * rng.choice([-1.0, 1.0], 10))
            perturbed.inertias[j] = pin.Inertia.FromDynamicParameters(theta)
        pdata = perturbed.createData()
        tau = np.array([pin.rnea(perturbed, pdata, q[i], dq[i], ddq[i]) for i in range(24)])
        worst = np.maximum(worst, np.abs(tau - tau0))
    assert np.all(worst <= links_only + 1e-9)
    some = links_only > 0                             # (the last joint carries no link here)
    assert np.max(worst[some] / links_only[some]) > 0.5     # corners come close: not vacuous


def test_gradient_with_the_weights_held(gen3):
    model = NominalModel(gen3, (), n_samples=32)
    traj = _traj(gen3)
    w = model.row_weights(traj, np.zeros(7))
    width = np.full(10, 0.5)
    rng = np.random.default_rng(2)
    k = rng.uniform(-0.4, 0.4, 7)

    def value(x: np.ndarray) -> float:
        return model.weighted_mass_of(model._samples(traj, x), w, width)[0]

    _, grad, _ = model.weighted_mass_of(model._samples(traj, k), w, width)
    h = 1e-6
    fd = np.array([(value(k + h * e) - value(k - h * e)) / (2 * h) for e in np.eye(7)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7 * np.abs(fd).max())


def test_planner_runs_the_radius_objective(gen3, gen3_controller, payload_box):
    """A cycle with ``objective: radius`` minimises it and its plan passes the sound check."""
    planner = ExcitingPlanner(gen3, PlannerConfig.from_robot(gen3, {"objective": "radius"}),
                              gen3_controller)
    home = np.asarray(gen3.config["simulation"]["home"], float)
    lo, hi, _ = payload_box
    res = planner.plan(home, np.zeros(7), np.zeros(7), theta_e_box(lo, hi))
    assert res.objective == "radius"
    assert res.verified and res.k is not None and np.linalg.norm(res.k) > 0.05


def test_history_is_the_weighted_rows_of_the_executed_part(gen3):
    """``weighted_information`` = Σ (w·y)(w·y)ᵀ over the executed part's samples, y from
    Pinocchio's regressor (not the planner's chain code), w the same samples' ``row_weights``."""
    from sysid_ros._src.model.regressors import Regressors

    model = NominalModel(gen3, (), n_samples=40)
    traj = _traj(gen3)
    k = np.full(7, 0.2)
    info = model.weighted_information(traj, k, 1.5)
    times = np.linspace(0.0, 1.5, 20)                     # 40 samples per 3 s, over 1.5 s
    q, dq, ddq = traj.sample(times, k)
    reg = Regressors(gen3)
    y = reg.split(reg.Y(q, dq, ddq))[0].reshape(-1, 10) * model.row_weights(traj, k, times)[:, None]
    np.testing.assert_allclose(info, y.T @ y, rtol=1e-8, atol=1e-10 * np.abs(info).max())
