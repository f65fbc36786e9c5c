"""The velocity lag premise (identification/velocity_lag.py): the lag of the published velocities
behind the positions, measured by the curve the calibration estimates it with, and checked by the
identifier on the payload data, offline and online alike.

Oracles: motions with an analytic velocity and a known lag (the estimate and its radius), a
single pass over the same samples (the batch-by-batch sums), and hardware-like MuJoCo data whose
driver filters its velocities with a known 20 ms lag (the identifier's verdicts).
"""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.identification.velocity_lag import LagCurve, contradiction, estimate
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
    record_hardware_like
from sysid_ros._src.simulation.assumptions import identifier_assumptions

LAG = 0.025                                   # s
OMEGA = np.array([1.3, 2.1, 0.0, 3.4])        # rad/s; joint 3 stands still
NAMES = ("a", "b", "c", "d")


def _sines(rate: float, seconds: float, lag: float, seed: int):
    """q = sin(ω t + φ) sampled at ``rate`` with 10 % drops; q̇ read ``lag`` late."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate)
    t = t[rng.random(t.size) > 0.1]
    phase = rng.uniform(0, np.pi, OMEGA.size)
    q = np.sin(OMEGA * t[:, None] + phase)
    dq = OMEGA * np.cos(OMEGA * (t[:, None] - lag) + phase)
    return t, q, dq


def test_batches_give_the_sums_of_one_pass():
    t, q, dq = _sines(200.0, 8.0, LAG, 0)
    whole = LagCurve(OMEGA.size)
    whole.push(t, q, dq, 0.005)
    parts = LagCurve(OMEGA.size)
    cuts = np.unique(np.random.default_rng(1).integers(1, t.size, 60))
    for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [t.size]])):
        parts.push(t[a:b], q[a:b], dq[a:b], 0.005)
    assert parts.count == whole.count > 0.4 * t.size       # drops cut the differences
    np.testing.assert_allclose(parts.sq, whole.sq, rtol=1e-12)


@pytest.mark.parametrize("rate", [100.0, 500.0])
def test_estimate_finds_a_known_lag_within_its_radius(rate):
    """Two recordings of analytic motions: the lag to a millisecond, inside the radius; the
    joint that stands still has none."""
    curves = []
    for seed in (2, 3):
        curve = LagCurve(OMEGA.size)
        curve.push(*_sines(rate, 8.0, LAG, seed))
        curves.append(curve)
    found = estimate(curves)
    moving = OMEGA > 0
    np.testing.assert_allclose(found.lag[moving], LAG, atol=1e-3)
    assert np.all(np.abs(found.lag[moving] - LAG) <= found.radius[moving])
    assert np.all(found.radius[moving] < 0.25 * LAG)        # half a step at 100 Hz
    assert found.lag[~moving] == 0.0


def test_a_contradicted_lag_is_named_and_a_right_one_is_not():
    curve = LagCurve(OMEGA.size)
    curve.push(*_sines(200.0, 8.0, LAG, 4))
    n = OMEGA.size
    assert contradiction(curve, np.full(n, LAG), np.zeros(n), NAMES) is None
    # off by less than the radius: no contradiction; by more: the first such joint is named
    assert contradiction(curve, np.full(n, LAG + 0.01), np.full(n, 0.01), NAMES) is None
    wrong = contradiction(curve, np.zeros(n), np.zeros(n), NAMES)
    assert wrong is not None and wrong.joint == "a"
    assert abs(wrong.found - LAG) < 1e-3 and wrong.rms_stated > wrong.rms_best
    assert "velocity lag premise broken" in wrong.describe() and "25.0 ms" in wrong.describe()
    # a joint standing still shows no lag either way
    assert contradiction(curve, np.zeros(n), np.zeros(n), NAMES, joints=np.array([2])) is None


def test_a_lag_too_small_to_matter_or_too_little_data_is_not_flagged():
    """The same lag on motions of 0.1 mrad amplitude (its velocity error stays below
    MIN_EFFECT, as on exact simulated data whose curves are all near zero), or on less than
    MIN_SECONDS of samples: no verdict."""
    t, q, dq = _sines(200.0, 8.0, LAG, 5)
    n = OMEGA.size
    tiny = LagCurve(n)
    tiny.push(t, 1e-4 * q, 1e-4 * dq)
    assert contradiction(tiny, np.zeros(n), np.zeros(n), NAMES) is None
    short = LagCurve(n)
    keep = t < 0.8
    short.push(t[keep], q[keep], dq[keep])
    assert short.count > 0
    assert contradiction(short, np.zeros(n), np.zeros(n), NAMES) is None
    # a stated velocity bound above the lag's effect covers it too
    full = LagCurve(n)
    full.push(t, q, dq)
    assert contradiction(full, np.zeros(n), np.zeros(n), NAMES) is not None
    assert contradiction(full, np.zeros(n), np.zeros(n), NAMES, noise=np.full(n, 1.0)) is None


@pytest.fixture(scope="module")
def lagged():
    """A hardware-like Gen3 at 500 Hz whose driver publishes its velocities 20 ms late."""
    gen3 = load_robot("gen3")
    rng = np.random.default_rng(7)
    profile = HardwareProfile.from_robot(gen3, rate_hz=500.0, velocity_lag=0.02,
                                         friction_speed_error=0.0)
    truth = random_hardware_truth(gen3, rng, friction_rel=0.5)
    rec = record_hardware_like(gen3, rng, dumbbell_for(gen3, 3.63), 6.0, profile, truth=truth)
    return gen3, rec, identifier_assumptions(gen3, profile)


def test_the_identifier_refuses_an_unstated_velocity_lag_offline_and_online(lagged):
    """Stated: ``ok`` with the truth inside. Unstated: ``inconsistent`` offline, with the joint
    and both lags named, and the node's runtime, fed sample by sample, says the same."""
    gen3, rec, kw = lagged
    stated = load_identification_config(gen3, **kw)
    out = identify(gen3, stated, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(rec.truth.theta_e)
    unstated = load_identification_config(gen3, **{**kw, "velocity_lag_s": 0.0})
    out = identify(gen3, unstated, rec.t, rec.q, rec.dq, rec.tau_meas, "lp",
                   point_estimate=False)
    assert out.status == "inconsistent" and out.lower is None
    assert out.reason.startswith("velocity lag premise broken")
    assert "not the stated 0.0" in out.reason
    rt = IdentifierRuntime(OnlineIdentifier(gen3, unstated), unstated)
    for k in range(rec.t.size):
        rt.joint_state(rec.t[k], rec.q[k], rec.dq[k], rec.tau_meas[k])
        if k % 500 == 499:
            rt.update()
    final = rt.update()
    assert final.status == "inconsistent" and rt.box() is None
    assert rt.ident.reason.startswith("velocity lag premise broken")
    assert "velocity lag premise broken" in rt.report().message
