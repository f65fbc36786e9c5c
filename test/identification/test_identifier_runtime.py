"""The identifier node's runtime (identification/identifier_runtime.py) driven directly: callbacks' samples
reach the identifier at the next update, the box it offers contains the simulated truth, bad
inputs are counted by reason (never fatal), a reset returns to the prior, and the status report
says what the node publishes on /diagnostics."""
from __future__ import annotations

import numpy as np

from sysid_ros._src.identification import OnlineIdentifier, load_identification_config
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from sysid_ros._src.model.parameters import PARAM_NAMES


def test_runtime_update_box_rejections_and_reset(gen3) -> None:
    rng = np.random.default_rng(5)
    theta = gen3.theta_e() + random_payload_theta(rng, 2.0)
    run = simulate(gen3, rng, theta_e=theta, duration=1.0, noise_rel=0.025)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.0,
                                     torque_noise_rel=0.025)
    rt = IdentifierRuntime(OnlineIdentifier(gen3, cfg), cfg)
    assert rt.update().status == "insufficient_data" and rt.box() is None
    report = rt.report()
    assert report.level == "warn" and report.message.startswith("insufficient_data")

    for k in range(len(run.t)):
        rt.joint_state(run.t[k], run.q[k], run.dq[k], run.tau_meas[k])
    rt.joint_state_rejected("joint_states: no effort for joint_3")
    rt.imu(0.0, np.zeros(3), np.zeros(3))       # a fixed base uses none: counted, not buffered
    # a NaN effort after the last sample: skipped by the shared screen
    rt.joint_state(run.t[-1] + 1e-4, run.q[-1], run.dq[-1], np.full(gen3.nj, np.nan))
    out = rt.update()
    assert out.status == "ok" and out.publish and not out.became_inconsistent
    box = rt.box()
    lower, nominal, upper = box.lower, box.nominal, box.upper
    assert box.names == PARAM_NAMES and box.frame == gen3.ee_joint
    assert np.all(lower <= theta) and np.all(theta <= upper)
    assert np.all(lower <= nominal) and np.all(nominal <= upper)
    report = rt.report()
    assert report.level == "warn"                                  # ok, but messages were rejected
    assert report.values["received"] == str(len(run.t) + 2)
    assert report.values["rejected: joint_states: no effort"] == "1"
    assert report.values["rejected: imu: gen3 has a fixed base; no IMU is used"] == "1"
    assert report.values["rejected: non_finite"] == "1"

    rt.request_reset()
    assert rt.update().status == "insufficient_data"
    np.testing.assert_array_equal(rt.ident.lower, cfg.prior.lower)
    assert rt.report().values["resets"] == "1"
