"""The velocity estimate from differenced encoder positions (identification.velocity_estimate):
its per-sample bound against the simulator's exact velocities on hardware-like Z1 data (500 Hz,
drops, jittered stamps, 0.01° counts), the identifier's box on those data against the truth,
and the loud outcomes when a premise is broken or not stated."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from sysid_ros._src.identification import IdentificationConfigError, OnlineIdentifier, identify, \
    load_identification_config
from sysid_ros._src.identification.velocity_estimate import VelocityEstimate, slope_source
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, record_hardware_like
from sysid_ros._src.simulation.assumptions import differenced_velocity, identifier_assumptions
from sysid_ros._src.simulation.errors import SimConfigError


@pytest.fixture(scope="module")
def z1():
    return load_robot("z1")


@pytest.fixture(scope="module")
def recording(z1):
    prof = HardwareProfile.from_robot(z1)
    assert prof.velocity == "finite_difference" and prof.quantize
    return prof, record_hardware_like(z1, np.random.default_rng(3), dumbbell_for(z1, 1.0), 8.0,
                                      prof)


@pytest.mark.slow
def test_bound_holds_against_exact_velocities(z1, recording):
    prof, rec = recording
    kw = identifier_assumptions(z1, prof)
    est = load_identification_config(z1, **kw).velocity_estimate
    assert est is not None
    # the stated premises hold on the simulator's exact accelerations (its physics steps)
    ddq = rec.exact.step_ddq
    assert np.all(np.abs(ddq) <= est.accel_abs)
    dt = np.diff(rec.t_true)[:, None]
    assert np.all(np.abs(np.diff(ddq, axis=0)) <= est.jerk_abs * (dt + est.accel_hold_s))
    out = est.estimate(rec.t, rec.q, 2.5 * prof.period)
    used = np.isfinite(out.bound)
    assert used.mean() > 0.9
    err = np.abs(out.dq - rec.exact.dq)
    assert np.all(err[used] <= out.bound[used])
    assert np.all(out.bound[used].max(axis=0) <= 2.0 * kw["velocity_noise_abs"])
    assert np.nanmax(out.check) <= 0.0                 # the data agree with the premises
    # the driver's own backward difference is outside the bound the identifier states
    assert np.abs(rec.dq - rec.exact.dq).max() > kw["velocity_noise_abs"].max()


def test_jerk_beyond_the_stated_bound_is_detected():
    rng = np.random.default_rng(0)
    period, res = 0.002, np.deg2rad(0.01)
    t_true = np.arange(0.0, 4.0, period)
    stamps = t_true + 0.2 * period * rng.random(t_true.size)
    w = 2 * np.pi * 10.0                # |q̈| ≤ 0.05·w² ≈ 197, jerk ≤ 0.05·w³ ≈ 12400
    q = (0.05 * np.sin(w * t_true))[:, None]
    dq = (0.05 * w * np.cos(w * t_true))[:, None]
    q_pub = np.round(q / res) * res

    def estimate(jerk: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        est = VelocityEstimate(0.02, np.array([res]), 0.2 * period, np.array([0.05 * w ** 2]),
                               np.array([jerk]))
        out = est.estimate(stamps, q_pub, 2.5 * period)
        return out.dq, out.bound, out.check

    v, bound, check = estimate(0.05 * w ** 3)           # the true bound
    used = np.isfinite(bound)
    assert np.all(np.abs(v - dq)[used] <= bound[used]) and np.nanmax(check) <= 0
    v, bound, check = estimate(0.0005 * w ** 3)         # stated 100x too low
    used = np.isfinite(bound)
    assert np.any(np.abs(v - dq)[used] > bound[used])   # the bound is then wrong ...
    assert np.nanmax(check) > 0                          # ... and the data say so


@pytest.mark.slow
def test_identifier_box_holds_the_truth_and_a_broken_premise_is_inconsistent(z1, recording):
    prof, rec = recording
    kw = identifier_assumptions(z1, prof)
    cfg = load_identification_config(z1, prior="rated", **kw)
    assert cfg.velocity_estimate is not None
    res = identify(z1, cfg, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", point_estimate=False)
    assert res.status == "ok" and res.contains(rec.truth.theta_e)
    # an encoder stated 100x finer than it is, with the motion's bounds stated near zero: the
    # two estimates disagree beyond their bounds
    broken = dataclasses.replace(cfg.velocity_estimate,
                                 resolution=cfg.velocity_estimate.resolution / 100.0,
                                 accel_abs=np.full(z1.nj, 0.01), jerk_abs=np.full(z1.nj, 0.01))
    cfg = load_identification_config(z1, prior="rated", **{**kw, "velocity_estimate": broken})
    res = identify(z1, cfg, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", point_estimate=False)
    assert res.status == "inconsistent" and res.box is None
    assert "velocity estimate premises broken" in res.reason
    # the streaming identifier (the node's) says so too, at its next update
    online = OnlineIdentifier(z1, cfg, "lp", point_estimate=False)
    for s in range(0, len(rec), 500):
        online.add_samples(rec.t[s:s + 500], rec.q[s:s + 500], rec.dq[s:s + 500],
                           rec.tau_meas[s:s + 500])
        online.update()
    assert online.status == "inconsistent" and "velocity estimate" in online.reason


def test_differenced_velocities_without_a_statement_are_refused(z1):
    config = copy.deepcopy(z1.config)
    del config["identification"]["differenced_velocity"]
    robot = dataclasses.replace(z1, config=config)
    with pytest.raises(SimConfigError, match="finite_difference"):
        identifier_assumptions(robot)
    cfg = load_identification_config(z1, **identifier_assumptions(z1))
    assert isinstance(cfg.velocity_estimate, VelocityEstimate)
    assert np.all(cfg.velocity_noise_abs > 0)
    # a premise missing from the section is named
    section = {k: v for k, v in z1.config["identification"]["differenced_velocity"].items()
               if k != "jerk_abs"}
    with pytest.raises(IdentificationConfigError, match="jerk_abs"):
        load_identification_config(z1, **differenced_velocity(z1, section))


def test_payload_scope_needs_a_calibration_made_from_the_same_estimate(z1):
    """With a calibration the rows state only the payload's share of the velocity error: the
    calibration's bound must have absorbed the rest through the same estimate. One made from
    other velocities (the driver's differences) is refused, naming the remedy."""
    half = z1.config["identification"]["differenced_velocity"]["half_width_s"]

    def calibrated_on(sources: list[str]):
        config = {**z1.config, "calibration": {"provenance": {"velocity_source": sources}}}
        robot = dataclasses.replace(z1, config=config)
        return load_identification_config(robot, **identifier_assumptions(robot,
                                                                          calibrated=True))

    with pytest.raises(IdentificationConfigError, match="--state-estimate slope"):
        calibrated_on(["measured"])
    cfg = calibrated_on([slope_source(half)])
    assert cfg.velocity_noise_scope == "payload" and cfg.velocity_estimate is not None


@pytest.mark.slow
def test_calibrated_on_the_estimate_the_payload_box_holds_the_truth(z1):
    """The product path on a drawn hardware-like Z1: calibrated without payload on the
    identifier's own estimate (``--state-estimate slope``), then 1 kg dumbbell data identified
    with the estimate and the payload's share of its bound (scope payload): ``ok``, truth in."""
    from sysid_ros._src.calibration import CalibrationOptions, Recording, calibrate
    from sysid_ros._src.calibration.document import calibration_document
    from sysid_ros._src.calibration.state import slope_derivative
    from sysid_ros import apply_calibration
    from sysid_ros._src.simulation import sim_truth

    prof = HardwareProfile.from_robot(z1)
    payload = dumbbell_for(z1, 1.0)
    cal = record_hardware_like(z1, np.random.default_rng([1, 2, 0]), None, 20.0, prof,
                               sim_truth(z1, 1))
    pay = record_hardware_like(z1, np.random.default_rng([1, 2, 2]), payload, 10.0, prof,
                               sim_truth(z1, 1, payload))
    half = z1.config["identification"]["differenced_velocity"]["half_width_s"]
    rec = Recording(cal.t, cal.q, cal.dq, cal.tau_meas)
    rec = rec.with_velocity(slope_derivative(cal.t, cal.q, half).dq, slope_source(half))
    res = calibrate(z1, [rec], CalibrationOptions(margin=1.5, link_boxes=False))
    robot = apply_calibration(z1, calibration_document(res))
    cfg = load_identification_config(robot, **identifier_assumptions(robot, prof,
                                                                     calibrated=True))
    assert cfg.velocity_noise_scope == "payload" and cfg.velocity_estimate is not None
    out = identify(robot, cfg, pay.t, pay.q, pay.dq, pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(pay.truth.theta_e)
