"""The identifier on hardware-like data (truth known): real rates, drops, offsets, dry friction.

Data from :func:`sysid_ros._src.simulation.record_hardware_like`: MuJoCo physics with friction and
armature up to ±50 % off the catalogue values, MuJoCo's dry friction constraint (not a sign law),
per-joint torque-sensor offsets, motor-side torques with bounded noise, stamp jitter and 10 %
dropped samples, positions quantised to the encoder. Velocities are exact here: the identifier
assumes exact q̇ (noisy velocities make it answer ``inconsistent``, which the last test shows).
The identifier runs uncalibrated: ``friction: wide`` puts [Fc, Fv, Ia, β] of every joint in a
wide box as LP unknowns shared by all windows.

The torque-noise bound must cover more than the sensor: the trapezoid over samples 2–10 ms
apart misses the 1 kHz controller's torque transients between them, and the Simpson-vs-trapezoid
check cannot see content near the sampling rate. Measured on these recordings against 4 kHz
sampling of the same motion: up to 0.019 N·m·s per 0.1 s window at 100 Hz (0.19 N·m on
average, 1.6x the sensor's 0.12 N·m), a few rows just above the sensor bound at 500 Hz. An
uncalibrated user states it (``INTERPOLATION`` below, as a fraction of the sensor bound added);
``sysid-calibrate`` derives the bound from data at the same rate instead. The identifier node
states exactly these with ``hardware_like:=true`` (``simulation.assumptions``).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
    record_hardware_like
from sysid_ros._src.simulation.assumptions import identifier_assumptions, sampling_margin
from sysid_ros._src.simulation.errors import SimConfigError

DURATION = 6.0
INTERPOLATION = {100.0: 1.0, 500.0: 0.5, 1000.0: 0.5}   # × the sensor bound, added to it


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def _record(robot, rate, seed, swap=False, velocity="exact"):
    rng = np.random.default_rng(seed)
    # the torque stream aligned with the states here: with 10 % drops a lagged torque reading
    # lands in a double drop every ~0.1 s at 1 kHz and splits the run (lagged streams:
    # test/calibration/test_torque_lag.py); the velocity lag likewise, and the friction error
    # that grows with speed off (test/calibration/test_noise_speed.py)
    profile = HardwareProfile.from_robot(robot, rate_hz=rate, drop_prob=0.1, velocity=velocity,
                                         physics_dt=None, torque_lag=0.0, velocity_lag=0.0,
                                         friction_speed_error=0.0)
    truth = random_hardware_truth(robot, rng, friction_rel=0.5)
    return record_hardware_like(robot, rng, dumbbell_for(robot, 3.63), DURATION, profile,
                                truth=truth,
                                swap_payload=dumbbell_for(robot, 1.81) if swap else None,
                                swap_time=DURATION / 2 if swap else None)


def _config(robot, rec, state_velocity=True):
    """The identifier's assumptions for the recording's profile (``identifier_assumptions``:
    what the identifier node states with ``hardware_like:=true``); ``state_velocity=False``
    leaves a noisy velocity unstated (exact assumed)."""
    kw = identifier_assumptions(robot, rec.profile)
    if not state_velocity:
        kw.pop("velocity_noise_abs", None)
    return load_identification_config(robot, **kw)


def test_the_stated_bounds_are_the_profiles_with_the_sampling_margin(gen3):
    """What ``_config`` states: the sensor bound × (1 + margin) at each rate (the margin this
    module's docstring measured), the wide friction box, the velocity bound of a noisy profile;
    refused: finite-difference velocities (unless the user states a bound), missing ones, noisy
    ones on a floating base."""
    for rate, margin in INTERPOLATION.items():
        assert sampling_margin(rate) == margin
        profile = HardwareProfile.from_robot(gen3, rate_hz=rate, physics_dt=None,
                                             velocity="noisy")
        kw = identifier_assumptions(gen3, profile)
        np.testing.assert_allclose(kw["torque_noise_abs"], (1.0 + margin) * np.broadcast_to(
            profile.torque_noise, (gen3.nj,)))
        assert kw["torque_noise_rel"] == pytest.approx((1.0 + margin) * profile.torque_noise_rel)
        np.testing.assert_allclose(kw["velocity_noise_abs"], profile.velocity_noise)
        assert kw["friction"] == "wide"
        # the driver's velocity lag and speed-proportional friction error, as the profile has them
        np.testing.assert_allclose(kw["velocity_lag_s"], np.broadcast_to(profile.velocity_lag,
                                                                         (gen3.nj,)))
        np.testing.assert_allclose(kw["torque_noise_speed"], profile.friction_speed_error)
        assert np.all(kw["velocity_lag_s"] > 0) and np.all(kw["torque_noise_speed"] > 0)
        # calibrated: the calibration's friction box and measured bound stand; the velocity
        # bound is still stated for what the payload adds (its inertia carries the noise into
        # the rows; the arm's share is in the calibration's bound)
        calibrated = identifier_assumptions(gen3, profile, calibrated=True)
        assert set(calibrated) == {"velocity_noise_abs", "velocity_noise_scope"}
        assert calibrated["velocity_noise_scope"] == "payload"
        np.testing.assert_allclose(calibrated["velocity_noise_abs"], profile.velocity_noise)
    z1 = load_robot("z1")
    # the Z1 file states the premises of the identifier's own estimate of its differenced
    # velocities: that estimate and its bound; calibrated, the payload's share only
    section = z1.config["identification"]["differenced_velocity"]
    for calibrated_z1 in (False, True):
        kw = identifier_assumptions(z1, calibrated=calibrated_z1)
        assert kw["velocity_estimate"] == {k: v for k, v in section.items()
                                           if k != "velocity_noise_abs"}
        np.testing.assert_allclose(kw["velocity_noise_abs"], section["velocity_noise_abs"])
        assert kw.get("velocity_noise_scope") == ("payload" if calibrated_z1 else None)
    # without that statement the differences have no bound: refused, calibrated or not
    config = {**z1.config, "identification": {
        k: v for k, v in z1.config["identification"].items() if k != "differenced_velocity"}}
    bare = dataclasses.replace(z1, config=config)
    with pytest.raises(SimConfigError, match="finite_difference.*velocity_noise_abs"):
        identifier_assumptions(bare)
    with pytest.raises(SimConfigError, match="finite_difference"):
        identifier_assumptions(bare, calibrated=True)
    assert identifier_assumptions(bare, calibrated=True, velocity_stated=True) == {}
    with pytest.raises(SimConfigError, match="'filtered'.*velocity_noise_abs"):
        identifier_assumptions(gen3, HardwareProfile.from_robot(gen3, velocity="filtered"))
    with pytest.raises(SimConfigError, match="missing"):
        identifier_assumptions(gen3, HardwareProfile.from_robot(gen3, velocity="missing"),
                               calibrated=True)
    b1 = load_robot("b1_z1")
    noisy = HardwareProfile.from_robot(b1, velocity="noisy", velocity_noise=0.01)
    np.testing.assert_array_equal(identifier_assumptions(b1, noisy)["velocity_noise_abs"],
                                  np.full(b1.nj, 0.01))     # the rows carry it (floating base)


@pytest.mark.parametrize("rate", [100.0, 500.0, 1000.0])
def test_ok_and_sound_at_real_rates_with_drops(gen3, rate):
    rec = _record(gen3, rate, seed=int(rate))
    assert np.mean(np.diff(rec.t)) > 1.05 / rate                      # drops are really there
    res = identify(gen3, _config(gen3, rec), rec.t, rec.q, rec.dq, rec.tau_meas, "lp")
    assert res.status == "ok", res.reason
    assert res.contains(rec.truth.theta_e)
    assert res.upper[0] - res.lower[0] < 0.8 * (5.5 - 1.0)            # the data inform m
    assert not res.warnings


@pytest.mark.parametrize("rate", [100.0, 500.0, 1000.0])
def test_payload_swap_is_inconsistent_at_every_rate(gen3, rate):
    rec = _record(gen3, rate, seed=int(rate) + 1, swap=True)
    res = identify(gen3, _config(gen3, rec), rec.t, rec.q, rec.dq, rec.tau_meas, "lp")
    assert res.status == "inconsistent"
    assert res.lower is None and "torque-noise bound" in res.reason


@pytest.mark.slow
def test_ok_and_sound_with_the_gen3_files_driver_effects(gen3):
    """The file's profile as it stands (1 kHz, torque and velocity lags, a friction error that
    grows with speed): the identifier states the lags and the speed-dependent bound from it.
    Ignoring the velocity lag would give, on this draw, an ``ok`` box without the truth: the
    payload data's own velocity lag contradicts the stated 0 and the result is
    ``inconsistent`` instead."""
    rng = np.random.default_rng(1)
    profile = HardwareProfile.from_robot(gen3)
    assert np.all(np.asarray(profile.velocity_lag) > 0)
    assert np.all(np.asarray(profile.friction_speed_error) > 0)
    truth = random_hardware_truth(gen3, rng, friction_rel=0.5)
    rec = record_hardware_like(gen3, rng, dumbbell_for(gen3, 3.63), DURATION, profile,
                               truth=truth)
    kw = identifier_assumptions(gen3, profile)
    res = identify(gen3, load_identification_config(gen3, **kw), rec.t, rec.q, rec.dq,
                   rec.tau_meas, "lp", point_estimate=False)
    assert res.status == "ok", res.reason
    assert res.contains(rec.truth.theta_e)
    kw.pop("velocity_lag_s")
    unstated = identify(gen3, load_identification_config(gen3, **kw), rec.t, rec.q, rec.dq,
                        rec.tau_meas, "lp", point_estimate=False)
    assert unstated.status == "inconsistent" and unstated.lower is None
    assert unstated.reason.startswith("velocity lag premise broken")


def test_violated_joint_is_named_with_its_time_span(gen3):
    rec = _record(gen3, 500.0, seed=3)
    tau = rec.tau_meas.copy()
    t0 = rec.t[0]
    bad = (rec.t - t0 > 2.0) & (rec.t - t0 < 3.0)
    # joint_3's sensor misbehaves for one second: 6x its noise bound, one sign (a glitch)
    bound = rec.profile.torque_noise[2] + rec.profile.torque_noise_rel * np.abs(tau[bad, 2])
    tau[bad, 2] += 8.0 * bound
    res = identify(gen3, _config(gen3, rec), rec.t, rec.q, rec.dq, tau, "lp")
    assert res.status == "inconsistent"
    diag = res.consistency
    assert diag is not None and diag.noise_scale > 1.0
    assert diag.joint_scale is not None
    assert int(np.argmax(diag.joint_scale)) == 2                      # joint_3
    worst = max(diag.spans, key=lambda s: s.scale)
    assert worst.joint == 2 and worst.t_end - t0 > 2.0 and worst.t_start - t0 < 3.0
    assert "joint_3" in res.reason


def test_noisy_velocities_break_the_exact_velocity_assumption_loudly(gen3):
    rec = _record(gen3, 500.0, seed=5, velocity="noisy")
    res = identify(gen3, _config(gen3, rec, state_velocity=False), rec.t, rec.q, rec.dq,
                   rec.tau_meas, "lp")
    assert res.status == "inconsistent" or res.contains(rec.truth.theta_e)
    # stated (identification.velocity_noise_abs = the profile's bound), the box holds the truth
    res = identify(gen3, _config(gen3, rec), rec.t, rec.q, rec.dq, rec.tau_meas, "lp")
    assert res.status == "ok" and res.contains(rec.truth.theta_e)


def test_box_pinned_to_a_wrong_prior_is_flagged(gen3, tmp_path):
    """A prior whose lower mass face sits above the truth (a heavier tool than fitted): the box
    comes out narrow on that face and excludes the truth — the most dangerous outcome — and
    carries the warning; the right prior gives no warning."""
    from sysid_ros._src.simulation.synthetic import simulate_mujoco

    rng = np.random.default_rng(11)
    run = simulate_mujoco(gen3, rng, dumbbell_for(gen3, 3.63), duration=1.2, noise_tau=0.1)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.1,
                                      torque_noise_rel=0.0)
    normal = identify(gen3, cfg, run.t, run.q, run.dq, run.tau_meas, "lp")
    assert normal.status == "ok" and normal.contains(run.theta_e) and not normal.warnings
    m_true = run.theta_e[0]
    width = normal.upper[0] - normal.lower[0]
    prior = tmp_path / "heavy_tool.yaml"
    lo = cfg.prior.lower.copy()
    hi = cfg.prior.upper.copy()
    lo[0], hi[0] = m_true + 0.3 * width, m_true + 6.0
    prior.write_text(f"lower: {lo.tolist()}\nupper: {hi.tolist()}\n")
    wrong = identify(gen3, load_identification_config(gen3, friction="config",
                                                      torque_noise_abs=0.1, torque_noise_rel=0.0,
                                                      prior=str(prior)),
                     run.t, run.q, run.dq, run.tau_meas, "lp")
    assert wrong.status == "ok" and not wrong.contains(run.theta_e)
    assert wrong.warnings and "pinned to the prior" in wrong.warnings[0]
    assert "m on its lower face" in wrong.warnings[0]
    # the same face declared physical (a fact of the mounting, the user's statement): a note
    # that names it and what the data allow beyond it, no warning
    prior.write_text(f"lower: {lo.tolist()}\nupper: {hi.tolist()}\nphysical_faces: [m lower]\n")
    stated = identify(gen3, load_identification_config(gen3, friction="config",
                                                       torque_noise_abs=0.1, torque_noise_rel=0.0,
                                                       prior=str(prior)),
                      run.t, run.q, run.dq, run.tau_meas, "lp")
    assert stated.status == "ok" and not stated.warnings
    assert any(n.startswith("m rests on the prior's physical lower face") for n in stated.notes)
    prior.write_text(f"lower: {lo.tolist()}\nupper: {hi.tolist()}\nphysical_faces: [mass low]\n")
    with pytest.raises(IdentificationConfigError, match="physical_faces entry 'mass low'"):
        load_identification_config(gen3, prior=str(prior))
