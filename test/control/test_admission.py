"""Trajectory admission: exact quintic ranges against dense sampling, the tester's over-limit
trajectory, continuity at take-over, torque infeasibility and certificates."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.admission import Certificate, box_digest
from sysid_ros._src.control.errors import CertificateError
from sysid_ros._src.control.polynomial import polynomial_range
from sysid_ros._src.control.controller_runtime import ControllerSettings, build_runtime
from sysid_ros._src.control.trajectory import JointTrajectoryArrays
from sysid_ros._src.model.box import theta_e_box


def _dense_range(coef, length, n=200_001):
    x = np.linspace(0.0, length, n)
    p = np.polynomial.polynomial.polyval(x, coef)
    return p.min(), p.max()


def test_polynomial_range_matches_dense_sampling_and_is_never_inside_it():
    rng = np.random.default_rng(3)
    coef = rng.normal(size=(300, 6))
    length = rng.uniform(0.05, 4.0, size=300)
    # degenerate rows: lower degree, a triple root (p′ has a double root), a constant
    coef[0, 3:] = 0.0
    coef[1] = np.polynomial.polynomial.polyfromroots([0.5, 0.5, 0.5]).tolist() + [0.0, 0.0]
    length[1] = 1.0
    coef[2] = [1.5, 0, 0, 0, 0, 0]
    lo, hi = polynomial_range(coef, length)
    for i in range(coef.shape[0]):
        d_lo, d_hi = _dense_range(coef[i], length[i])
        scale = 1.0 + np.abs(coef[i]).sum() * max(1.0, length[i]) ** 5
        # sampling only sees points of the interval: the exact range contains it …
        assert lo[i] <= d_lo + 1e-12 * scale and hi[i] >= d_hi - 1e-12 * scale, i
        # … and is attained (no slack beyond the sampling grid's resolution)
        assert d_hi - hi[i] > -1e-6 * scale and lo[i] - d_lo > -1e-6 * scale, i


@pytest.fixture
def gen3():
    def make(**kw):
        rt = build_runtime(ControllerSettings(**kw), use_sim_time=False, steady=0.0)
        q = np.array(rt.robot.config["simulation"]["home"])
        rt.joint_state(0.0, 1.0, q, np.zeros(rt.robot.nj))
        assert rt.activate(0.0) == ""
        return rt, q
    return make


def _traj(rt, times, pos, vel=None, acc=None, start=0.0):
    z = np.zeros((len(times), rt.robot.nj))
    return JointTrajectoryArrays.from_arrays(times, pos, z if vel is None else vel,
                                             z if acc is None else acc, rt.robot.joint_names,
                                             rt.robot.joint_names, start)


def test_tester_over_limit_trajectory_is_rejected_and_current_one_continues(gen3):
    rt, q = gen3(accept_uncertified=True)
    ok_target = q + 0.1
    assert rt.trajectory(1.0, _traj(rt, [0.0, 2.0], [q, ok_target]), "").accepted
    before = rt.queue.reference_at(2.0)
    bad = q.copy()
    bad[1] = 3.0                      # the tester's q2 -> 3.0 rad (limit 2.25 rad)
    adm = rt.trajectory(1.0, _traj(rt, [0.0, 1.0], [q, bad]), "")
    assert not adm.accepted
    assert any("joint 2 reaches" in r and "upper limit" in r for r in adm.reasons)
    assert any("joint 2 speed" in r for r in adm.reasons)
    np.testing.assert_array_equal(rt.queue.reference_at(2.0).q, before.q)
    st = rt.status(0.01)
    assert st.level == 1 and "trajectory rejected" in st.message


def test_overshoot_between_knots_is_caught_although_every_knot_is_inside(gen3):
    rt, q = gen3(accept_uncertified=True)
    upper = rt.robot.limits.q_upper[1]
    # end point 0.02 rad inside the limit but arriving with velocity (then held at rest is
    # refused separately): use three knots, the middle one fast, all inside the limits
    p0, p2 = q.copy(), q.copy()
    p1 = q.copy()
    p1[1] = upper - 0.02
    p2[1] = upper - 0.3
    v = np.zeros((3, 7))
    v[1, 1] = 1.2                     # still rising at the knot: it overshoots after it
    traj = _traj(rt, [0.0, 2.0, 3.0], [p0, p1, p2], vel=v)
    planned = rt.queue.plan(traj, 1.0)
    ts = np.linspace(planned.start, planned.start + 3.0, 30001)
    dense_max = max(planned.sample(t).q[1] for t in ts)
    assert dense_max > upper                  # the independent reference: it does leave
    assert all(p[1] <= upper for p in (p0, p1, p2))
    adm = rt.trajectory(1.0, traj, "")
    assert not adm.accepted and any("joint 2 reaches" in r for r in adm.reasons), adm


def test_velocity_limit_is_exact_for_a_rest_to_rest_quintic(gen3):
    rt, q = gen3(accept_uncertified=True)
    vmax = rt.robot.limits.dq_max[0]
    T = 1.0
    for factor, accepted in ((0.999, True), (1.001, False)):
        delta = factor * vmax * T / 1.875       # peak speed of a min-jerk move: 15/8 Δ/T
        target = q.copy()
        target[0] += delta
        adm = rt.trajectory(1.0, _traj(rt, [0.0, T], [q, target]), "")
        assert adm.accepted is accepted, (factor, adm)
        rt.queue.clear()
        rt.queue.hold(q)


def test_takeover_continuity_and_rest_at_the_end(gen3):
    rt, q = gen3(accept_uncertified=True)
    jump = q + 0.05
    adm = rt.trajectory(1.0, _traj(rt, [0.0, 1.0], [jump, jump]), "")
    assert not adm.accepted and any("position at take-over" in r for r in adm.reasons)
    # the same target with its first point later: the controller joins it from its reference
    assert rt.trajectory(1.0, _traj(rt, [0.5, 1.0], [jump, jump]), "").accepted
    # stamped to start 0.4 s before it arrives (arrival = the latest joint state's stamp):
    # it would join mid-way, away from the reference
    rt.joint_state(0.001, 2.0, q, np.zeros(7))
    late = rt.trajectory(0.0, _traj(rt, [0.0, 1.0], [q, q + 0.1], start=1.6), "")
    assert not late.accepted and any("before arrival" in r for r in late.reasons), late
    moving = np.zeros((2, 7))
    moving[1, 0] = 0.5
    adm = rt.trajectory(1.0, _traj(rt, [1.0, 2.0], [jump, jump + 0.1], vel=moving), "")
    assert not adm.accepted and any("not at rest" in r for r in adm.reasons)


def test_torque_infeasible_trajectory_is_rejected(gen3):
    rt, q = gen3(accept_uncertified=True)
    lim = rt.robot.limits
    target = q.copy()
    T = 0.08
    target[1] += 0.9 * lim.dq_max[1] * T / 1.875       # fast enough, within the speed limit
    traj = _traj(rt, [0.0, T], [q, target])
    adm = rt.trajectory(1.0, traj, "")
    assert not adm.accepted and any("N·m" in r for r in adm.reasons), adm
    # independent check: Pinocchio's RNEA at the nominal parameters plus the armature torque
    # exceeds the limit at the start (peak acceleration of a min-jerk move is at s ≈ 0.21)
    planned = rt.queue.plan(traj, 1.0)
    worst = 0.0
    for s in np.linspace(0.0, T, 201):
        ref = planned.sample(planned.start + s)
        tau = pin.rnea(rt.robot.model, rt.robot.model.createData(), ref.q, ref.dq, ref.ddq)
        tau = tau + rt.robot.friction.lower[:, 2] * ref.ddq
        worst = max(worst, abs(tau[1]) - lim.tau_max[1])
    assert worst > 0.0


def test_certificates(gen3):
    rt, q = gen3(accept_uncertified=False)
    target = q + 0.05
    traj = lambda: _traj(rt, [0.5, 1.5], [target, target])          # noqa: E731
    prior = rt.ctl.prior
    cert = Certificate(box_digest(prior.lower, prior.upper), "exciting_planner.reachability")
    adm = rt.trajectory(1.0, traj(), "")
    assert not adm.accepted and "accept_uncertified is false" in adm.reasons[-1]
    assert rt.trajectory(1.0, traj(), cert.to_frame_id()).certified
    # a shrunk box from the identifier: the prior's certificate still covers it
    mid = 0.5 * (prior.lower + prior.upper)
    lo, hi = 0.5 * (prior.lower + mid), 0.5 * (prior.upper + mid)
    rt.bounds(0.1, theta_e_box(lo, hi, mid))
    assert rt.trajectory(1.0, traj(), cert.to_frame_id()).accepted
    # refused loudly: unknown box, unknown check, malformed, and a certificate whose box
    # does not contain the one the controller uses
    for frame_id, why in (
            (Certificate("0123456789abcdef", cert.check).to_frame_id(), "never held"),
            (Certificate(cert.box, "sampling").to_frame_id(), "unknown check"),
            ("sysid_cert/v1;box=xyz", "malformed")):
        adm = rt.trajectory(1.0, traj(), frame_id)
        assert not adm.accepted and why in adm.reasons[-1], adm
    inner_lo, inner_hi = 0.5 * (lo + mid), 0.5 * (hi + mid)
    rt.bounds(0.2, theta_e_box(inner_lo, inner_hi, mid))   # the controller remembers it …
    rt.bounds(0.3, theta_e_box(lo, hi, mid))               # … then holds a wider one again
    small = Certificate(box_digest(inner_lo, inner_hi), cert.check)
    adm = rt.trajectory(1.0, traj(), small.to_frame_id())
    assert not adm.accepted and "not inside the certified box" in adm.reasons[-1]
    with pytest.raises(CertificateError, match="malformed"):
        Certificate.parse("sysid_cert/v1;box=;check=x")
    assert Certificate.parse("base_link") is None


def test_conservative_mode_does_not_honour_a_certificate_for_the_identifier_box(gen3):
    rt, q = gen3(accept_uncertified=False, mode="conservative")
    prior = rt.ctl.prior
    mid = 0.5 * (prior.lower + prior.upper)
    lo, hi = 0.5 * (prior.lower + mid), 0.5 * (prior.upper + mid)
    rt.bounds(0.1, theta_e_box(lo, hi, mid))        # conservative mode keeps using the prior
    cert = Certificate(box_digest(lo, hi), "exciting_planner.reachability")
    target = q + 0.05
    adm = rt.trajectory(1.0, _traj(rt, [0.5, 1.5], [target, target]), cert.to_frame_id())
    assert not adm.accepted and not adm.certified
