"""Quintic interpolation and the take-over queue."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.control.errors import TrajectoryError
from sysid_ros._src.control.trajectory import JointTrajectoryArrays, TrajectoryQueue

NAMES = ["a", "b", "c"]


def _poly(rng):
    return rng.normal(size=(6, 3))


def _eval(c, t):
    k = np.arange(6)
    p = (t ** k) @ c
    v = (k[1:] * t ** (k[1:] - 1)) @ c[1:]
    a = (k[2:] * (k[2:] - 1) * t ** (k[2:] - 2)) @ c[2:]
    return p, v, a


def _traj(c, times, start, names=NAMES):
    pts = [_eval(c, t) for t in times]
    return JointTrajectoryArrays.from_arrays(times, [p[0] for p in pts], [p[1] for p in pts],
                                             [p[2] for p in pts], names, NAMES, start)


def test_reproduces_degree5_segment_exactly():
    rng = np.random.default_rng(0)
    c = _poly(rng)
    queue = TrajectoryQueue(3)
    queue.push(_traj(c, [0.0, 1.7], 10.0), now=9.0)
    for t in np.linspace(0.0, 1.7, 37):
        ref = queue.sample(10.0 + t)
        p, v, a = _eval(c, t)
        np.testing.assert_allclose(ref.q, p, atol=1e-10)
        np.testing.assert_allclose(ref.dq, v, atol=1e-10)
        np.testing.assert_allclose(ref.ddq, a, atol=1e-9)
    end = queue.sample(50.0)
    np.testing.assert_allclose(end.q, _eval(c, 1.7)[0])
    assert np.all(end.dq == 0) and np.all(end.ddq == 0)


def test_hold_then_takeover_at_stamp_and_reorder_by_name():
    rng = np.random.default_rng(1)
    c = _poly(rng)
    queue = TrajectoryQueue(3)
    assert queue.sample(0.0) is None
    queue.hold(np.array([1.0, 2.0, 3.0]))
    perm = [2, 0, 1]
    pts = [_eval(c, t) for t in (0.0, 1.0)]
    traj = JointTrajectoryArrays.from_arrays(
        [0.0, 1.0], [p[0][perm] for p in pts], [p[1][perm] for p in pts],
        [p[2][perm] for p in pts], [NAMES[i] for i in perm], NAMES, 5.0)
    queue.push(traj, now=1.0)
    np.testing.assert_allclose(queue.sample(4.99).q, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(queue.sample(5.5).q, _eval(c, 0.5)[0], atol=1e-10)
    # a newer plan takes over at its own stamp; the old one runs until then
    c2 = _poly(rng)
    queue.push(_traj(c2, [0.0, 1.0], 5.7), now=5.5)
    np.testing.assert_allclose(queue.sample(5.6).q, _eval(c, 0.6)[0], atol=1e-10)
    np.testing.assert_allclose(queue.sample(5.8).q, _eval(c2, 0.1)[0], atol=1e-10)


def test_late_first_point_is_joined_continuously():
    queue = TrajectoryQueue(3)
    queue.hold(np.zeros(3))
    z = np.zeros((1, 3))
    traj = JointTrajectoryArrays.from_arrays([2.0], np.ones((1, 3)), z, z, NAMES, NAMES, 0.0)
    queue.push(traj, now=3.0)
    np.testing.assert_allclose(queue.sample(3.0).q, 0.0)
    np.testing.assert_allclose(queue.sample(4.0).q, 0.5)          # symmetric quintic midpoint
    np.testing.assert_allclose(queue.sample(5.0).q, 1.0)


@pytest.mark.parametrize("kwargs,match", [
    (dict(names=["a", "b", "x"]), "joint names"),
    (dict(times=[0.0, 1.0, 1.0]), "strictly increasing"),
    (dict(nan=True), "NaN"),
    (dict(no_acc=True), "accelerations"),
])
def test_malformed_rejected(kwargs, match):
    times = kwargs.get("times", [0.0, 1.0, 2.0])
    p = np.zeros((len(times), 3))
    if kwargs.get("nan"):
        p[1, 1] = np.nan
    acc = [] if kwargs.get("no_acc") else np.zeros_like(p)
    with pytest.raises(TrajectoryError, match=match):
        JointTrajectoryArrays.from_arrays(times, p, np.zeros_like(p), acc,
                                          kwargs.get("names", NAMES), NAMES, 0.0)
