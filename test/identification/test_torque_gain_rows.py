"""The payload rows with a constant gain error on the torque reading, against the simulated truth
(Pinocchio, noise-free, the robot exact): the reading is τ/k with k drawn per joint in 1 ± 0.1.

With ``torque_gain_rel`` ≥ the true error the rows hold at the truth — with the gain as a
shared unknown (at its true value) and with g·|∫τ̂| in each row's radius; with the gain ignored
they are violated by far more than their radius (the assumption failing loudly).
"""
from __future__ import annotations

import numpy as np

from sysid_ros._src.identification import load_identification_config
from sysid_ros._src.identification.problem import PayloadProblem
from sysid_ros._src.identification.windows import MomentumWindows
from sysid_ros._src.simulation.synthetic import simulate

GAIN_REL = 0.1


def _rows(robot, reading, run, friction, **kw):
    cfg = load_identification_config(robot, friction="config", torque_noise_abs=1e-9,
                                     torque_noise_rel=0.0, robot_uncertainty_rel=0.0,
                                     torque_gain_rel=kw.pop("gain_rel", 0.0))
    cfg = cfg.with_overrides(friction_radius=np.zeros_like(cfg.friction_radius),
                             friction_nominal=friction, **kw)
    problem = PayloadProblem(robot, cfg)
    return problem, problem.rows(MomentumWindows(robot, cfg).extend(run.t, run.q, run.dq,
                                                                   reading))


def test_rows_hold_at_the_true_gain_and_fail_when_it_is_ignored(z1):
    rng = np.random.default_rng(11)
    friction = z1.friction.nominal.copy()
    friction[:, 0] = 0.0          # no Coulomb: RK4 chatters on the sign law (test_windows.py)
    run = simulate(z1, rng, theta_e=z1.theta_e(), duration=0.6, robot_rel=0.0,
                   friction_true=friction)
    gain = 1.0 + GAIN_REL * rng.uniform(-1.0, 1.0, z1.nj)
    gain[1] = 1.0 - 0.9 * GAIN_REL            # the gravity joint reads 9 % high: not vacuous
    reading = run.tau / gain
    theta = run.theta_e

    # the gain as a shared unknown per joint, v = (k − 1)/g ∈ [−1, 1]
    problem, rows = _rows(z1, reading, run, friction, gain_rel=GAIN_REL)
    assert problem.gain_joints.tolist() == list(range(z1.nj))
    x = np.zeros(problem.n_x)
    x[:10] = theta
    x[problem.gain_col:problem.gain_col + z1.nj] = (gain - 1.0) / GAIN_REL
    lo, hi = problem.prior()
    assert np.all((x >= lo) & (x <= hi))
    assert np.all(np.abs(rows.A @ x - rows.c) <= rows.r)
    x_one = x.copy()                          # ...and not at gain 1
    x_one[problem.gain_col:problem.gain_col + z1.nj] = 0.0
    assert np.max(np.abs(rows.A @ x_one - rows.c) - rows.r) > 100 * np.max(rows.r)

    # the same bound in each row's radius (no shared unknowns)
    _, per_row = _rows(z1, reading, run, friction, gain_rel=GAIN_REL, friction_unknowns=False)
    assert per_row.A.shape[1] == 10
    assert np.all(np.abs(per_row.A @ theta - per_row.c) <= per_row.r)

    # ignored: the rows at the truth miss by far more than their radius
    _, ignored = _rows(z1, reading, run, friction)
    excess = np.abs(ignored.A[:, :10] @ theta - ignored.c) - ignored.r
    assert np.max(excess) > 100 * np.max(ignored.r)

    # a stated gain (torque_gain) rescales the reading: with the true gain and no bound the
    # rows hold again
    _, rescaled = _rows(z1, reading, run, friction, torque_gain=gain)
    assert np.all(np.abs(rescaled.A[:, :10] @ theta - rescaled.c) <= rescaled.r)
