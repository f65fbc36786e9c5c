"""The exclusion rule (windows where a joint reaches its drive's speed clamp, run starts) against
an independent truth: hardware-like MuJoCo data whose torque carries a smooth error of several
N·m while a joint runs at or above a stated speed, as real Gen3 drives do at their clamp.

- the clamp is detected from a plateau of |q̇| and not from a sinusoid's crest;
- without the rule those windows need a far larger noise bound; with it the calibration keeps
  its bound, the identifier applies the same written rule, its box holds the payload's truth,
  and it reports what it dropped;
- the rule never hides a payload change: a swap mid-recording is still ``inconsistent``.

Assumptions: calibration and payload recordings share robot, driver and clamp; the rule's speed
is the one written by the calibration; the noise bound is measured (empirical margin).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.errors import CalibrationInconsistentError
from sysid_ros._src.calibration.exclusion import speed_clamps
from sysid_ros._src.calibration.synthetic import as_recording
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
    record_hardware_like

LIMIT = 0.3          # rad/s: the simulated clamp, low enough for the exciting motions to reach
ERROR = 4.0          # N·m: the torque error while at it (real Gen3: 4-30 N·m)
DURATION = 10.0


def test_clamp_plateau_is_detected_and_a_sinusoid_crest_is_not():
    t = np.arange(0.0, 6.0, 0.002)
    crest = 1.2 * np.sin(np.pi * t)                        # 0.5 Hz: 0.13 s within 2 % of its top
    clamped = np.clip(1.6 * np.sin(np.pi * t), -1.0, 1.0)  # rides ±1 rad/s for 0.45 s each time
    dq = np.stack([crest, clamped], axis=1)
    q = np.cumsum(dq, axis=0) * 0.002
    rec = Recording(t, q, dq, np.zeros_like(q))
    clamps = speed_clamps([rec], 2)
    assert np.isinf(clamps[0])
    assert clamps[1] == pytest.approx(1.0, abs=1e-9)


@pytest.fixture(scope="module")
def setup():
    gen3 = load_robot("gen3")
    rng = np.random.default_rng(11)
    profile = HardwareProfile.from_robot(gen3, rate_hz=500.0, physics_dt=None,
                                         velocity_limit=LIMIT, velocity_limit_error=ERROR)
    truth = random_hardware_truth(gen3, rng, friction_rel=0.5)
    cal = record_hardware_like(gen3, rng, None, DURATION, profile, truth)
    pay = record_hardware_like(gen3, rng, dumbbell_for(gen3, 3.63), DURATION, profile, truth)
    swap = record_hardware_like(gen3, rng, dumbbell_for(gen3, 3.63), DURATION, profile, truth,
                                swap_payload=dumbbell_for(gen3, 1.81), swap_time=DURATION / 2)
    # the rule starts below where the error does (as `auto` does: 0.9 x the clamp): the
    # compensated lag is known to its radius only, and the speed margin covers that timing
    rule = np.full(gen3.nj, 0.9 * LIMIT)
    stated = calibrate(gen3, [as_recording(cal)],
                       CalibrationOptions(link_boxes=False, exclude_speed=rule))
    return gen3, cal, pay, swap, stated, rule


def test_without_the_rule_the_clamp_windows_are_refused_or_need_a_far_larger_bound(setup):
    gen3, cal, _, _, stated, _ = setup
    assert sum(stated.excluded["rows_by_reason"].values()) > 0
    try:
        bare = calibrate(gen3, [as_recording(cal)],
                         CalibrationOptions(link_boxes=False, exclude_speed="none"))
    except CalibrationInconsistentError:
        return                         # refused outright: no plausible bound explains them
    assert np.max(bare.noise_min / stated.noise_min) > 3.0


def test_identifier_applies_the_written_rule_and_holds_the_truth(setup):
    gen3, _, pay, _, stated, rule = setup
    robot = apply_calibration(gen3, calibration_document(stated))
    config = load_identification_config(robot)
    np.testing.assert_allclose(config.exclude_speed_rad_s, rule)
    out = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(pay.truth.theta_e)
    assert any("excluded by the stated rule" in n for n in out.notes)
    # and without the rule the same payload data are refused: the error is real
    bare = dataclasses.replace(config, exclude_speed_rad_s=np.full(gen3.nj, np.inf))
    out = identify(robot, bare, pay.t, pay.q, pay.dq, pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "inconsistent"


def test_the_rule_never_hides_a_payload_swap(setup):
    gen3, _, _, swap, stated, _ = setup
    robot = apply_calibration(gen3, calibration_document(stated))
    config = load_identification_config(robot)
    out = identify(robot, config, swap.t, swap.q, swap.dq, swap.tau_meas, "lp",
                   point_estimate=False)
    assert out.status == "inconsistent"
