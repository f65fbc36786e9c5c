"""The bad-sample policy (sysid_ros._src.sample_screen) as the online identifier applies it:
isolated zero/duplicate/backward/far-future stamps are dropped and counted without touching the
windows in progress; only a persistent jump back (a replay restarting) restarts the windows, and
a persistent jump forward moves the time base."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import IdentificationConfigError, OnlineIdentifier, \
    load_identification_config
from sysid_ros._src.sample_screen import ACCEPT, JOINT_SET_CHANGED, RESTART, SKIP, SampleScreen
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate


S = 10**9


def test_screen_verdicts():
    f = SampleScreen(persistent=3, far_future_s=1.0)
    ok = [("effort", np.zeros(2))]
    assert [f.check(int(t * S), ok) for t in (1.0, 2.0, 0.0, 2.0, 1.5, 3.0)] == \
        [ACCEPT, ACCEPT, SKIP, SKIP, SKIP, ACCEPT]
    assert f.log.counts == {"zero_stamp": 1, "duplicate_stamp": 1, "backward_stamp": 1}
    # behind but not increasing among themselves: no restart however many
    assert [f.check(int(t * S), ok) for t in (0.5, 0.4, 0.3, 0.2)] == [SKIP] * 4
    # three consistent stamps behind: a restart, accepted from the third on
    assert [f.check(int(t * S), ok) for t in (0.1, 0.15, 0.16, 0.9)] == \
        [SKIP, SKIP, RESTART, ACCEPT]
    assert f.restarts == 1 and f.last == int(0.9 * S)
    assert f.log.counts["backward_stamp"] == 1 + 4 + 2     # every dropped one is counted
    # an isolated stamp far ahead is skipped; three in a row are a jump forward
    assert [f.check(int(t * S), ok) for t in (50.0, 1.0, 10.0, 10.5, 11.0, 11.1)] == \
        [SKIP, ACCEPT, SKIP, SKIP, ACCEPT, ACCEPT]
    assert f.log.counts["far_future_stamp"] == 3 and f.jumps == 1
    # a NaN is skipped whatever its stamp, and never moves the time base
    assert f.check(int(11.2 * S), [("effort", np.array([0.0, np.nan]))], ["a", "b"]) == SKIP
    assert f.log.examples["non_finite"][0][2] == "effort of joint b is nan" and \
        f.last == int(11.1 * S)
    # missing joints: isolated ones skipped, the third in a row with the same names a change
    assert [f.missing_joint(int(t * S), "j2 missing", ["j1"]) for t in (11.3, 11.4)] == [SKIP] * 2
    assert f.check(int(11.5 * S), ok) == ACCEPT                 # ends the run
    assert [f.missing_joint(int(t * S), "j2 missing", ["j1"]) for t in (11.6, 11.7, 11.8, 11.9)] == \
        [SKIP, SKIP, JOINT_SET_CHANGED, JOINT_SET_CHANGED]
    assert f.joint_set_changed and f.log.counts["missing_joint"] == 4
    with pytest.raises(ValueError):
        SampleScreen(persistent=1)


@pytest.fixture(scope="module")
def stream(gen3):
    rng = np.random.default_rng(41)
    theta = gen3.theta_e() + random_payload_theta(rng, 3.0)
    run = simulate(gen3, rng, theta_e=theta, duration=1.0, noise_rel=0.025)
    run = type(run)(run.t + 100.0, *(getattr(run, k) for k in
                                     ("q", "dq", "tau", "tau_meas", "theta_e")))  # ROS stamps
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.0,
                                     torque_noise_rel=0.025)
    return theta, run, cfg


def _feed(ident, t, q, dq, tau, chunk=250):
    for s in range(0, t.size, chunk):
        sl = slice(s, s + chunk)
        ident.add_messages(t[sl], q[sl], dq[sl], tau[sl])
        ident.update()


def test_isolated_bad_stamps_change_nothing(gen3, stream):
    """One zero stamp and one backward message (carrying garbage) inserted into a running
    stream: no restart, the same windows and the same box as without them, both counted."""
    theta, run, cfg = stream
    clean = OnlineIdentifier(gen3, cfg, point_estimate=False)
    _feed(clean, run.t, run.q, run.dq, run.tau_meas)
    i, j = 300, 700
    garbage = np.full((1, gen3.nj), 50.0)
    t = np.concatenate([run.t[:i], [0.0], run.t[i:j], [run.t[j - 200]], run.t[j:]])

    def spliced(x):
        return np.concatenate([x[:i], garbage, x[i:j], garbage, x[j:]])

    dirty = OnlineIdentifier(gen3, cfg, point_estimate=False)
    _feed(dirty, t, spliced(run.q), spliced(run.dq), spliced(run.tau_meas))
    assert dirty.n_restarts == 0
    assert dirty.screen.log.counts == {"zero_stamp": 1, "backward_stamp": 1}
    assert dirty.windows_used == clean.windows_used and dirty.samples == clean.samples
    # equal up to the summation order of the batches (the dropped messages split them)
    np.testing.assert_allclose(dirty.lower, clean.lower, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dirty.upper, clean.upper, rtol=1e-9, atol=1e-12)
    assert clean.status == "ok"
    assert np.all(clean.lower <= theta) and np.all(theta <= clean.upper)


def test_replay_restart_restarts_the_windows(gen3, stream):
    """The recording replayed from its start (time jumps back for good): the windows restart
    once, later windows form again, the box still contains the truth."""
    theta, run, cfg = stream
    ident = OnlineIdentifier(gen3, cfg, point_estimate=False, restart_after=10)
    _feed(ident, run.t, run.q, run.dq, run.tau_meas)
    first = ident.windows_used
    _feed(ident, run.t, run.q, run.dq, run.tau_meas)
    assert ident.n_restarts == 1 and ident.screen.restarts == 1
    # the new run's first 9 were dropped before the jump was known: counted, never silent
    assert ident.screen.log.counts == {"backward_stamp": 9}
    assert ident.samples == 2 * run.t.size - 9
    assert ident.windows_used > first + 0.8 * first
    assert ident.status == "ok"
    assert np.all(ident.lower <= theta) and np.all(theta <= ident.upper)


def test_restart_after_below_two_is_refused(gen3, stream):
    with pytest.raises(IdentificationConfigError, match="restart_after"):
        OnlineIdentifier(gen3, stream[2], restart_after=1)
