"""The workspace enclosure of the trunk-motion torque (enclosures.disturbance) against the floating
B1 + Z1's exact fictitious torque from Pinocchio (control.arm_view.DisturbanceRows): exact on a
point box, never below the truth over a workspace, and tighter there than the closed form."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.control import arm_view as av
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.enclosures.disturbance import trunk_acceleration_bound, workspace_grid

GRAVITY_UP = np.array([0.0, 0.0, av.GRAVITY])     # the IMU's specific force of a level, still trunk


@pytest.fixture(scope="module")
def setup():
    full = load_robot("b1_z1")
    view = av.arm_view(full)
    arm = av._arm_indices(full)
    model = av._reduced_model(full, arm)
    from sysid_ros._src.model.box import ParameterBox
    demo = full.config["demo"]["prior_box"]       # the demo's 1 kg dumbbell class
    lo, hi = np.array(demo["lower"]), np.array(demo["upper"])
    box = ParameterBox(tuple(f"p{i}" for i in range(10)), lower=lo, nominal=0.5 * (lo + hi),
                       upper=hi)
    lower, upper = av._body_boxes(full, model, box)
    return full, view, model, lower, upper, av.DisturbanceRows(full, view)


def _exact(rows, q, theta, accel, alpha):
    """Pinocchio: the arm torque of the trunk accelerating at ``accel`` (linear) and ``alpha``
    (angular), arm still, in the view's θ order."""
    return rows(q, np.zeros(q.size), np.zeros(3), alpha, GRAVITY_UP + accel) @ theta


def _view_theta(view, lower, upper, pick):
    """The view's θ (bodies in chain order) from per-body boxes: ``pick`` ∈ [0, 1] per entry."""
    return (lower + pick * (upper - lower)).reshape(-1)


def test_a_point_box_gives_the_exact_norms(setup):
    """q and θ fixed: the enclosure is ‖J_a,j‖·a and ‖J_α,j‖·α, with J from Pinocchio's
    floating model (columns: unit trunk accelerations)."""
    full, view, model, lower, upper, rows = setup
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = view.random_configuration(rng)
        theta = _view_theta(view, lower, upper, 0.5)
        box_lo, box_hi = theta.reshape(lower.shape), theta.reshape(lower.shape)
        for linear in (True, False):
            cols = np.stack([_exact(rows, q, theta, e if linear else np.zeros(3),
                                    np.zeros(3) if linear else e) for e in np.eye(3)], axis=1)
            want = 0.7 * np.linalg.norm(cols, axis=1)
            got = trunk_acceleration_bound(model, "z1", box_lo, box_hi, q, q,
                                           0.7 if linear else 0.0, 0.0 if linear else 0.7)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _attained(rows, q, theta, accel, alpha):
    """accel ‖J_a,j‖ + alpha ‖J_α,j‖ per joint at (q, θ): |d_j| for the trunk accelerations of
    those norms aligned with joint j's rows — a value the trunk's motion attains."""
    def norms(linear):
        cols = [_exact(rows, q, theta, e if linear else np.zeros(3), np.zeros(3) if linear else e)
                for e in np.eye(3)]
        return np.linalg.norm(np.stack(cols, axis=1), axis=1)
    return accel * norms(True) + alpha * norms(False)


def test_the_enclosure_covers_every_sampled_motion_in_the_workspace(setup):
    """Random q in the view's workspace and θ at random vertices of the body boxes, with the
    trunk's accelerations at their bounds in the worst directions: the exact torque never
    exceeds the enclosure; the enclosure is within 2.5× the sampled maximum (not vacuous) and,
    on the configured workspace, below the closed form on joint 1 (what it is for)."""
    full, view, model, lower, upper, rows = setup
    motion = av.TrunkMotionBound.from_robot(full)
    accel = motion.accel + 2 * av.GRAVITY * np.sin(0.5 * motion.tilt)
    q_lo, q_hi = av.workspace(full)
    bound = trunk_acceleration_bound(model, "z1", lower, upper, q_lo, q_hi, accel, motion.alpha)
    rng = np.random.default_rng(4)
    worst = np.zeros(view.nj)
    for _ in range(300):
        q = rng.uniform(q_lo, q_hi)
        theta = _view_theta(view, lower, upper, rng.integers(0, 2, size=lower.shape))
        worst = np.maximum(worst, _attained(rows, q, theta, accel, motion.alpha))
    assert np.all(worst <= bound), (worst, bound)
    assert np.all(bound[:5] <= 2.5 * worst[:5]), (worst, bound)
    closed = av._closed_form_bound(full, model, motion, lower, upper)
    spin = av._closed_form_bound(full, model, av.TrunkMotionBound(0, motion.omega, 0, 0),
                                 lower, upper)
    assert bound[0] + spin[0] < 0.8 * closed[0]


def test_an_assumption_outside_the_workspace_is_not_covered(setup):
    """The enclosure holds over its box only: somewhere in the arm's full joint box (outside the
    workspace) the trunk's angular acceleration puts more torque on a joint than the workspace
    bound allows."""
    full, view, model, lower, upper, rows = setup
    q_lo, q_hi = av.workspace(full)
    bound = trunk_acceleration_bound(model, "z1", lower, upper, q_lo, q_hi, 0.0, 1.0)
    theta = _view_theta(view, lower, upper, 1.0)
    rng = np.random.default_rng(5)
    lim_lo, lim_hi = full.limits.q_lower[av._arm_indices(full)], \
        full.limits.q_upper[av._arm_indices(full)]
    worst = np.zeros(view.nj)
    for _ in range(200):
        worst = np.maximum(worst, _attained(rows, rng.uniform(lim_lo, lim_hi), theta, 0.0, 1.0))
    assert np.any(worst > bound), (worst, bound)


def test_workspace_grid_covers_the_box_within_the_budget():
    lo, hi = np.array([0.0, -1.0, 2.0]), np.array([1.0, 1.0, 2.0])
    edges = workspace_grid(lo, hi, 200)
    assert np.prod([e.size - 1 for e in edges]) <= 200
    for e, a, b in zip(edges, lo, hi):
        assert e[0] == a and e[-1] == b and np.all(np.diff(e) >= 0)
    assert edges[2].size == 2                      # a zero-width joint: one cell
    with pytest.raises(ValueError):
        workspace_grid(hi, lo, 10)


def test_a_per_axis_bound_is_the_weighted_sum_on_a_point_box(setup):
    """Per-axis bounds |α_k| ≤ ᾱ_k: on a point box the enclosure is Σ_k ᾱ_k |J_α,jk|
    exactly (Pinocchio's columns), attained at a vertex of the α box."""
    full, view, model, lower, upper, rows = setup
    alpha = np.array([0.9, 0.45, 0.05])
    rng = np.random.default_rng(6)
    q = view.random_configuration(rng)
    theta = _view_theta(view, lower, upper, 0.5)
    point = theta.reshape(lower.shape)
    cols = np.stack([_exact(rows, q, theta, np.zeros(3), e) for e in np.eye(3)], axis=1)
    got = trunk_acceleration_bound(model, "z1", point, point, q, q, 0.0, alpha)
    np.testing.assert_allclose(got, np.abs(cols) @ alpha, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_a_per_axis_bound_covers_every_vertex_over_the_workspace(setup):
    """Over the workspace no vertex of the α box at random q and θ vertices exceeds the
    per-axis enclosure, which is within the ball through the box's corner."""
    full, view, model, lower, upper, rows = setup
    alpha = np.array([0.9, 0.45, 0.05])
    rng = np.random.default_rng(6)
    q_lo, q_hi = av.workspace(full)
    bound = trunk_acceleration_bound(model, "z1", lower, upper, q_lo, q_hi, 0.0, alpha)
    worst = np.zeros(view.nj)
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * 3)).reshape(3, -1).T
    for _ in range(100):
        q = rng.uniform(q_lo, q_hi)
        theta = _view_theta(view, lower, upper, rng.integers(0, 2, size=lower.shape))
        d = np.stack([_exact(rows, q, theta, np.zeros(3), s * alpha)
                      - _exact(rows, q, theta, np.zeros(3), np.zeros(3)) for s in signs])
        worst = np.maximum(worst, np.abs(d).max(axis=0))
    assert np.all(worst <= bound), (worst, bound)
    # and a per-axis box is tighter than the ball through its corner on the joints it spares
    ball = trunk_acceleration_bound(model, "z1", lower, upper, q_lo, q_hi, 0.0,
                                    float(np.linalg.norm(alpha)))
    assert np.all(bound <= ball * (1 + 1e-9))
