"""The momentum identity p(b) − p(a) = ∫(τ + W_c θ) dt closes along a simulated trajectory.

The trajectory comes from Pinocchio's ABA integrated with RK4 (independent of the regressor
code); the residual must shrink like the trapezoid rule's O(dt²) as the sampling is refined.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import load_robot


def _torque(t: float) -> np.ndarray:
    return np.array([3.0, 25.0, 2.0, 10.0, 1.0, 1.5, 0.5]) * np.sin(
        np.array([1.3, 0.7, 2.1, 1.1, 2.9, 1.7, 3.3]) * t)


def _simulate(robot, dt: float, t_end: float):
    model, data = robot.model, robot.model.createData()

    def f(t, x):
        q, v = x[:7], x[7:]
        return np.concatenate([v, pin.aba(model, data, q, v, _torque(t))])

    n = int(round(t_end / dt))
    xs = np.empty((n + 1, 14))
    xs[0] = np.concatenate([[0.0, 0.3, 0.0, 1.2, 0.0, 0.5, 0.0], np.zeros(7)])
    for k in range(n):
        t, x = k * dt, xs[k]
        k1 = f(t, x)
        k2 = f(t + dt / 2, x + dt / 2 * k1)
        k3 = f(t + dt / 2, x + dt / 2 * k2)
        k4 = f(t + dt, x + dt * k3)
        xs[k + 1] = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.arange(n + 1) * dt, xs[:, :7], xs[:, 7:]


def _residual(dt: float) -> float:
    robot = load_robot("gen3")
    reg = Regressors(robot)
    theta = robot.theta()
    t, q, dq = _simulate(robot, dt, 0.5)
    w_m, w_c = reg.momentum_pair(q, dq)
    tau = np.array([_torque(s) for s in t])
    integrand = tau + w_c @ theta
    integral = np.sum(0.5 * (integrand[1:] + integrand[:-1]) * np.diff(t)[:, None], axis=0)
    dp = (w_m[-1] - w_m[0]) @ theta
    return float(np.max(np.abs(dp - integral)) / np.max(np.abs(integral)))


def test_momentum_identity_closes_to_integration_accuracy():
    coarse, fine = _residual(2e-3), _residual(1e-3)
    assert fine < 1e-3
    # trapezoid rule: halving dt divides the error by ~4
    assert 3.0 < coarse / fine < 5.0
