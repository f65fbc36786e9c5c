"""Online identifier: shrinking boxes that keep the truth, bounded work per update, reset."""
from __future__ import annotations

import numpy as np

from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate


def test_online_boxes_shrink_and_contain_truth(gen3):
    rng = np.random.default_rng(11)
    theta = gen3.theta_e() + random_payload_theta(rng, 3.0)
    run = simulate(gen3, rng, theta_e=theta, duration=1.5, noise_rel=0.025)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.0, torque_noise_rel=0.025,
                                     online_max_rows=70, online_lp_rows=70)
    online = OnlineIdentifier(gen3, cfg)
    prev = (online.lower.copy(), online.upper.copy())
    chunk = 1000
    for s in range(0, len(run.t), chunk):
        sl = slice(s, s + chunk)
        online.add_samples(run.t[sl], run.q[sl], run.dq[sl], run.tau_meas[sl])
        online.update()
        assert online.status in ("ok", "insufficient_data")
        assert np.all(online.lower >= prev[0]) and np.all(online.upper <= prev[1])
        assert np.all(theta >= online.lower) and np.all(theta <= online.upper)
        assert np.all(online.nominal >= online.lower) and np.all(online.nominal <= online.upper)
        # beyond the cap only rows binding an LP optimum stay: n_x per vertex, 20 vertices
        assert online.summary()["rows"] <= cfg.online_lp_rows + 20 * online.problem.n_x
        prev = (online.lower.copy(), online.upper.copy())
    assert online.status == "ok"
    assert online.upper[0] - online.lower[0] < 0.6 * cfg.prior.width[0]
    # Chaining boxes loses little against one LP over all rows.
    offline = identify(gen3, cfg, run.t, run.q, run.dq, run.tau_meas, point_estimate=False)
    assert online.upper[0] - online.lower[0] < 1.5 * (offline.upper[0] - offline.lower[0])
    online.reset()
    np.testing.assert_array_equal(online.lower, cfg.prior.lower)
    assert online.samples == 0 and online.status == "insufficient_data"
