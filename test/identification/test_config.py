"""Config: prior boxes cover their documented payload region; bad values name the key."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import IdentificationConfigError, load_identification_config, \
    payload_prior_box
from sysid_ros._src.identification.config import load_prior
from sysid_ros._src.simulation.synthetic import random_payload_theta
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import load_robot

REGIONS = {  # as documented next to each prior in config/<robot>.yaml
    "gen3": (4.0, (-0.08, -0.08, -0.30), (0.08, 0.08, -0.06), 0.12),
    "z1": (2.0, (-0.1, -0.1, -0.1), (0.3, 0.1, 0.1), 0.12),
    "b1_z1": (2.0, (-0.1, -0.1, -0.1), (0.3, 0.1, 0.1), 0.12),
}


@pytest.mark.parametrize("name", sorted(REGIONS))
def test_prior_contains_documented_payload_region(name):
    robot = load_robot(name)
    cfg = load_identification_config(robot)
    m, lo, hi, k = REGIONS[name]
    box = payload_prior_box(robot.theta_e(), m, np.array(lo), np.array(hi), k,
                            frame=robot.ee_joint)
    assert isinstance(cfg.prior, ParameterBox) and cfg.prior.frame == box.frame == robot.ee_joint
    assert cfg.prior.names == box.names == PARAM_NAMES
    assert np.all(cfg.prior.lower <= box.lower) and np.all(cfg.prior.upper >= box.upper)
    box_lo, box_hi = box.lower, box.upper
    rng = np.random.default_rng(0)
    # Random solid boxes with gyration radius ≤ k: size ≤ k·√(12/2) per side pair.
    for _ in range(500):
        th = robot.theta_e() + random_payload_theta(rng, m, lo, hi, size_max=k * np.sqrt(3))
        assert np.all(th >= box_lo - 1e-12) and np.all(th <= box_hi + 1e-12)


def test_overrides_and_errors(gen3):
    cfg = load_identification_config(gen3, torque_noise_rel=0.025, window=200, stride=50)
    assert cfg.torque_noise_rel == 0.025 and cfg.window == 200
    assert cfg.assumptions()["window_samples"] == 200
    assert cfg.sampling_plan(1e-3).window == 200           # samples fix the counts
    secs = load_identification_config(gen3, window_s=0.2, stride_s=0.05)
    for dt, window, stride in ((1e-2, 20, 4), (2e-3, 96, 24), (2.5e-4, 800, 200)):
        plan = secs.sampling_plan(dt)
        assert (plan.window, plan.stride) == (window, stride)
        assert plan.max_sample_gap == pytest.approx(max(2.5 * dt, 0.0025))   # one drop carried
    per_joint = load_identification_config(gen3, torque_noise_abs="0.1,0.2,0.3,0.4,0.5,0.6,0.7")
    assert per_joint.torque_noise_abs.tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    with pytest.raises(IdentificationConfigError, match="torque_noise_abs"):
        load_identification_config(gen3, torque_noise_abs=[0.1, 0.2])
    wide = load_identification_config(gen3, friction="wide")
    assert np.all(wide.friction_lower[:, :3] >= 0)           # Fc, Fv, Ia never negative
    assert np.all(wide.friction_upper[:, 3] >= 3.0) and np.all(wide.friction_lower[:, 3] <= -3.0)
    assert load_identification_config(gen3, prior="none").prior.lower[0] < 0.364 < \
        load_identification_config(gen3).prior.lower[0]
    with pytest.raises(IdentificationConfigError, match="prior"):
        load_identification_config(gen3, prior="no_such_tool")
    priors = gen3.config["identification"]["priors"]
    name, none_box = load_prior("none", priors, frame=gen3.ee_joint)
    assert name == "none" and none_box == load_identification_config(gen3, prior="none").prior
    np.testing.assert_array_equal(none_box.nominal, none_box.centre)
    with pytest.raises(IdentificationConfigError, match="prior"):
        load_prior("bad", {"bad": {"lower": [0.0] * 9, "upper": [1.0] * 9}})
    flat = none_box.with_bounds(none_box.lower, none_box.lower)
    with pytest.raises(IdentificationConfigError, match="prior"):     # B₀ needs width
        load_identification_config(gen3).with_overrides(prior=flat)
    none = load_identification_config(gen3, friction="none")
    assert not none.friction_nominal.any() and not none.friction_radius.any()
    with pytest.raises(IdentificationConfigError, match="stride"):
        load_identification_config(gen3, window=400, stride=75)
    with pytest.raises(IdentificationConfigError, match="torque_noise_rel"):
        load_identification_config(gen3, torque_noise_rel=1.5)
    with pytest.raises(IdentificationConfigError, match="friction"):
        load_identification_config(gen3, friction="maybe")


def test_timing_and_velocity_bounds_load_override_and_refuse_bad_values(gen3):
    """torque_delay_samples and velocity_noise_abs (the identifier node passes them through as
    overrides): defaults, one value or one per joint, and clear errors on bad values."""
    import numpy as np

    from sysid_ros._src.identification.errors import IdentificationConfigError

    cfg = load_identification_config(gen3)
    assert cfg.torque_delay_samples == 0.5 and np.all(cfg.velocity_noise_abs == 0.0)
    cfg = load_identification_config(gen3, torque_delay_samples=0.25, velocity_noise_abs=0.002)
    assert cfg.torque_delay_samples == 0.25
    assert np.allclose(cfg.velocity_noise_abs, np.full(gen3.nj, 0.002))
    per_joint = [0.001 * (k + 1) for k in range(gen3.nj)]
    assert np.allclose(load_identification_config(gen3, velocity_noise_abs=per_joint)
                       .velocity_noise_abs, per_joint)
    assert cfg.assumptions()["torque_delay_samples"] == 0.25
    with pytest.raises(IdentificationConfigError, match="torque_delay_samples"):
        load_identification_config(gen3, torque_delay_samples=-1.0)
    with pytest.raises(IdentificationConfigError, match="velocity_noise_abs"):
        load_identification_config(gen3, velocity_noise_abs=-0.1)
