"""The identifier's speed-dependent torque-error bound (``torque_noise_speed``): each row's radius
grows by s_j·∫|q̇| dt/(1 − rel) (the window-averaged bound a_j + s_j·mean |speed| times T),
against the total variation of the positions from forward dynamics (pin.aba + RK4)."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import IdentificationConfigError, load_identification_config
from sysid_ros._src.simulation.synthetic import simulate

from .conftest import payload_rows


def test_radius_grows_by_the_speed_bound_times_the_distance_travelled(gen3):
    run = simulate(gen3, np.random.default_rng(11), theta_e=gen3.theta_e(), duration=0.6,
                   noise_rel=0.02)
    rel = 0.02
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.1,
                                     torque_noise_rel=rel)
    speed = np.linspace(0.5, 2.0, gen3.nj)
    base = payload_rows(gen3, cfg, run.t, run.q, run.dq, run.tau_meas)
    more = payload_rows(gen3, cfg.with_overrides(torque_noise_speed=speed), run.t, run.q,
                        run.dq, run.tau_meas)
    j = base.joint
    # ∫|q̇| dt over the window = the total variation of q (reversals included)
    travel = np.array([np.sum(np.abs(np.diff(run.q[(run.t >= a) & (run.t <= b), k])))
                       for a, b, k in zip(base.t_start, base.t_end, j)])
    assert np.all(travel > 1e-3)              # the joints move: the check is not 0 = 0
    np.testing.assert_allclose(more.r - base.r, speed[j] * travel / (1.0 - rel), rtol=1e-3)
    np.testing.assert_array_equal(more.c, base.c)
    # zero: the constant bound, the very same rows
    same = payload_rows(gen3, cfg.with_overrides(torque_noise_speed=0.0), run.t, run.q, run.dq,
                        run.tau_meas)
    np.testing.assert_array_equal(same.r, base.r)


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf")])
def test_a_bad_speed_bound_is_refused_by_name(gen3, value):
    with pytest.raises(IdentificationConfigError, match="torque_noise_speed"):
        load_identification_config(gen3, torque_noise_speed=value)
