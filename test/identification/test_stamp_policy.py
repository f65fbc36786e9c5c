"""The online identifier's stamp policy (sysid_ros.identification.stamps):
isolated zero/duplicate/backward stamps are dropped and counted without touching the windows
in progress; only a persistent jump back (a replay restarting) restarts the windows."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros.identification import IdentificationConfigError, OnlineIdentifier, \
    load_identification_config
from sysid_ros.identification.stamps import ACCEPT, BACKWARD, DUPLICATE, REJECT, RESTART, \
    RESTARTS, ZERO, StampFilter
from sysid_ros.identification.synthetic import random_payload_theta, simulate


def test_filter_verdicts():
    f = StampFilter(restart_after=3)
    assert [f.check(t) for t in (1.0, 2.0, 0.0, 2.0, 1.5, 3.0)] == \
        [ACCEPT, ACCEPT, REJECT, REJECT, REJECT, ACCEPT]
    assert f.counts == {ZERO: 1, DUPLICATE: 1, BACKWARD: 1}
    # behind but not increasing among themselves: no restart however many
    assert [f.check(t) for t in (0.5, 0.4, 0.3, 0.2)] == [REJECT] * 4
    # three consistent stamps behind: a restart, accepted from the third on
    assert [f.check(t) for t in (0.1, 0.15, 0.16, 0.9)] == [REJECT, REJECT, RESTART, ACCEPT]
    assert f.counts[RESTARTS] == 1 and f.last == 0.9
    assert f.counts[BACKWARD] == 1 + 4          # the new run's first two were not "bad"
    with pytest.raises(IdentificationConfigError):
        StampFilter(restart_after=1)


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
    assert dirty.stamps.counts == {ZERO: 1, BACKWARD: 1}
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
    assert ident.n_restarts == 1 and ident.stamps.counts[RESTARTS] == 1
    assert BACKWARD not in ident.stamps.counts          # the new run's first 9 were not "bad"
    assert ident.samples == 2 * run.t.size - 9
    assert ident.windows_used > first + 0.8 * first
    assert ident.status == "ok"
    assert np.all(ident.lower <= theta) and np.all(theta <= ident.upper)
