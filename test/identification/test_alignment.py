"""Stream alignment (calibrated torque and velocity lags) against an independent reference
(numpy interpolation of the whole log), and the online path against the offline one: the node
feeds samples in small batches, the offline tools all at once, and both must give the same
rows."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification.alignment import StreamAlignment
from sysid_ros._src.identification.config import load_identification_config
from sysid_ros._src.identification.windows import MomentumWindows
from sysid_ros._src.model.robots import load_robot

NJ = 3


def _log(n: int = 400, dt: float = 0.01, drop: tuple[int, ...] = (150, 151, 152)):
    t = np.delete(np.arange(n) * dt, drop)
    q = np.stack([np.sin(t + k) for k in range(NJ)], axis=1)
    dq = np.stack([np.cos(t + k) for k in range(NJ)], axis=1)
    tau = np.stack([np.sin(3 * t + k) for k in range(NJ)], axis=1)
    return t, q, dq, tau


def _push_all(align: StreamAlignment, t, q, dq, tau, chunk: int, max_gap: float):
    parts = [align.push(t[a:a + chunk], q[a:a + chunk], dq[a:a + chunk], tau[a:a + chunk], None,
                        max_gap) for a in range(0, t.size, chunk)]
    return (np.concatenate([p.t for p in parts]), np.concatenate([p.tau for p in parts]),
            np.concatenate([p.dq for p in parts]), np.concatenate([p.valid for p in parts]))


def test_lagged_readings_equal_numpy_interpolation_and_gaps_invalidate():
    t, q, dq, tau = _log()
    lag, vlag = np.array([0.035, 0.0, 0.105]), np.array([0.0, 0.025, 0.0])
    out_t, out_tau, out_dq, valid = _push_all(StreamAlignment(lag, vlag), t, q, dq, tau, 10**6,
                                              0.025)
    n = out_t.size
    assert n == np.sum(t + max(lag.max(), vlag.max()) <= t[-1])   # the tail waits for data
    np.testing.assert_array_equal(out_t, t[:n])
    for j in range(NJ):
        np.testing.assert_allclose(out_tau[:, j], np.interp(t[:n] + lag[j], t, tau[:, j]))
        np.testing.assert_allclose(out_dq[:, j], np.interp(t[:n] + vlag[j], t, dq[:, j]))
    # a reading that falls into the 40-ms hole cannot be aligned: those samples are invalid
    hole = (t[:n, None] + np.array([0.035, 0.025, 0.105])[None] > 1.49) & \
        (t[:n, None] + np.array([0.035, 0.025, 0.105])[None] < 1.53)
    np.testing.assert_array_equal(valid, ~hole.any(axis=1))


def test_batches_of_any_size_give_the_same_samples():
    t, q, dq, tau = _log()
    lag = np.array([0.035, -0.02, 0.1])
    whole = _push_all(StreamAlignment(lag), t, q, dq, tau, 10**6, 0.025)
    for chunk in (1, 7, 64):
        parts = _push_all(StreamAlignment(lag), t, q, dq, tau, chunk, 0.025)
        for a, b in zip(whole, parts):
            np.testing.assert_array_equal(a, b)


def test_zero_lags_pass_samples_through_untouched():
    t, q, dq, tau = _log()
    out = StreamAlignment(np.zeros(NJ)).push(t, q, dq, tau, None, 0.025)
    assert out.tau is tau and out.dq is dq and out.valid.all()


@pytest.mark.parametrize("chunk", [1, 50])
def test_online_windows_equal_offline_with_a_calibrated_lag(chunk):
    gen3 = load_robot("gen3")
    cfg = load_identification_config(gen3, torque_lag_s=[0.1, 0.07, 0.09, 0.09, 0.11, 0.1, 0.11],
                                      torque_lag_radius_s=0.01, velocity_lag_s=0.02)
    rng = np.random.default_rng(0)
    n = 600
    t = np.arange(n) * 0.004
    t = np.delete(t, [200, 201, 202, 400])
    q = 0.3 * np.sin(t[:, None] * rng.uniform(0.5, 2.0, gen3.nj) + rng.uniform(0, 3, gen3.nj))
    dq = np.gradient(q, t, axis=0)
    tau = rng.normal(size=q.shape)
    offline = MomentumWindows(gen3, cfg, rate_hz=250.0).extend(t, q, dq, tau)
    online = MomentumWindows(gen3, cfg, rate_hz=250.0)
    rows = [online.extend(t[a:a + chunk], q[a:a + chunk], dq[a:a + chunk], tau[a:a + chunk])
            for a in range(0, t.size, chunk)]
    rows = [r for r in rows if len(r)]
    assert len(offline) > 0
    for name in ("tau", "W", "start", "end", "delay"):
        np.testing.assert_allclose(np.concatenate([getattr(r, name) for r in rows]),
                                   getattr(offline, name), rtol=1e-9, atol=1e-12)
    # the radius widens every row's timing bound by its joint's value
    assert np.allclose(offline.delay, online.plan.torque_delay + 0.01)
