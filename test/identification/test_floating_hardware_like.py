"""The standing B1 + Z1 on hardware-like data: a drawn robot (friction, offsets, links), 500 Hz
with drops and stamp jitter, quantised encoders, current-based torques (5 % of |τ| + 0.15 N·m per
sample), and a trunk IMU with a BMI088-class datasheet bias and noise
(sysid_ros._src.simulation.standing_hardware), identified with the data's own stated bounds
(identifier_assumptions: the IMU's datasheet bounds in the rows).

Independent references: the MuJoCo simulator's truth (θ_e of the payload drawn off the class
centre, the drawn links and friction) and its exact IMU, against which the recorded IMU's error
is known sample by sample.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sysid_ros._src.identification import MomentumWindows, PayloadProblem, identify, \
    load_identification_config
from sysid_ros._src.identification.base_motion import base_motion, imu_mount
from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import HardwareProfile, SimConfigError, dumbbell_for
from sysid_ros._src.simulation.assumptions import identifier_assumptions
from sysid_ros._src.simulation.offcentre import draw_in_class, place_in_box
from sysid_ros._src.simulation.imu import ImuProfile
from sysid_ros._src.simulation.standing_hardware import ImuStream, record_standing_hardware_like

SECONDS = 3.0


@pytest.fixture(scope="module")
def b1():
    return load_robot("b1_z1")


@pytest.fixture(scope="module")
def profile(b1):
    # velocities exact: the B1's driver differentiates encoder angles, which no bound covers yet
    return HardwareProfile.from_robot(b1, velocity="exact")


@pytest.fixture(scope="module")
def recording(b1, profile):
    box = b1.config["demo"]["prior_box"]
    drawn = draw_in_class(b1, np.asarray(box["lower"]), np.asarray(box["upper"]), seed=0)
    return record_standing_hardware_like(b1, np.random.default_rng([0, 5]), drawn.payload,
                                         SECONDS, profile)


def _imu_with(rec, scale: float) -> ImuStream:
    """The recording's IMU with its error (bias + noise) times ``scale``."""
    e = rec.imu_exact
    return ImuStream(rec.t, e.angular_velocity + scale * (rec.imu.angular_velocity
                                                          - e.angular_velocity),
                     e.linear_acceleration + scale * (rec.imu.linear_acceleration
                                                      - e.linear_acceleration))


def test_imu_profile_is_the_datasheet_and_its_noise_stays_in_the_bound(b1):
    """The robot file's IMU model: BMI088 offsets (1 deg/s, 20 mg), noise density times
    √bandwidth (0.014 deg/s/√Hz at 116 Hz, 175 µg/√Hz at 230 Hz); its noise is Gaussian of that
    σ truncated at 4σ, which is the identifier's per-sample bound; bad entries are refused."""
    p = ImuProfile.from_robot(b1)
    assert p.gyro_bias == pytest.approx(np.deg2rad(1.0), rel=1e-4)
    assert p.accel_bias == pytest.approx(0.020 * 9.80665, rel=1e-4)
    assert p.gyro_sigma == pytest.approx(np.deg2rad(0.014) * np.sqrt(116.0), rel=1e-3)
    assert p.accel_sigma == pytest.approx(175e-6 * 9.80665 * np.sqrt(230.0), rel=1e-3)
    bounds = p.identifier_bounds()
    assert bounds["gyro_noise_abs"] == pytest.approx(4.0 * p.gyro_sigma)
    rng = np.random.default_rng(1)
    n = p.noise(rng, 200_000, p.accel_sigma)
    assert np.abs(n).max() <= bounds["accel_noise_abs"]
    assert np.abs(n).max() > 0.9 * bounds["accel_noise_abs"]        # the tail reaches it
    assert np.std(n) == pytest.approx(p.accel_sigma, rel=0.02)       # 4σ truncation: 0.998σ
    gyro_bias, accel_bias = p.draw_bias(rng)
    assert np.all(np.abs(gyro_bias) <= p.gyro_bias) and np.all(np.abs(accel_bias) <= p.accel_bias)
    with pytest.raises(SimConfigError, match="missing keys"):
        ImuProfile.from_mapping({"gyro_bias": 0.01}, "imu")
    with pytest.raises(SimConfigError, match="accel_bandwidth_hz"):
        ImuProfile.from_mapping({**dataclasses.asdict(p), "accel_bandwidth_hz": 0.0}, "imu")


def test_assumptions_state_the_imu_and_still_refuse_unbounded_velocities(b1, profile):
    """identifier_assumptions gives a floating base the IMU's datasheet bounds (with the robot
    file's rate bounds), which load_identification_config takes; finite-difference velocities
    stay refused; an IMU override on a fixed base is refused by name."""
    kw = identifier_assumptions(b1, profile)
    cfg = load_identification_config(b1, **kw)
    bounds = ImuProfile.from_robot(b1).identifier_bounds()
    assert cfg.imu is not None
    assert cfg.imu.accel_noise_abs == pytest.approx(bounds["accel_noise_abs"])
    assert cfg.imu.gyro_bias_abs == pytest.approx(bounds["gyro_bias_abs"])
    assert cfg.imu.max_gap == b1.config["identification"]["imu"]["max_gap"]
    assert cfg.torque_noise_rel == pytest.approx(1.5 * profile.torque_noise_rel)
    with pytest.raises(SimConfigError, match="finite_difference"):
        identifier_assumptions(b1, dataclasses.replace(profile, velocity="finite_difference"))
    with pytest.raises(IdentificationConfigError, match="fixed base"):
        load_identification_config(load_robot("z1"), imu=kw["imu"])


@pytest.mark.slow
def test_recording_is_hardware_like(recording, profile):
    """500 Hz with drops and jitter, the IMU in the same message (one stamp), its error a
    constant bias within the datasheet offset plus noise within 4σ, and torques that are the
    drawn robot's current-based reading, not the motor torque."""
    rec = recording
    n_ideal = SECONDS * profile.rate_hz
    assert 0.95 * n_ideal < len(rec) < n_ideal                     # drops
    steps = np.diff(rec.t)
    assert np.median(steps) == pytest.approx(1.0 / profile.rate_hz, rel=0.1)
    assert steps.max() > 1.5 / profile.rate_hz                    # a dropped sample
    np.testing.assert_array_equal(rec.imu.t, rec.t)
    p = rec.imu_profile
    err = rec.imu.angular_velocity - rec.imu_exact.angular_velocity - rec.gyro_bias
    assert np.abs(err).max() <= 4.0 * p.gyro_sigma + 1e-12
    assert np.std(err) == pytest.approx(p.gyro_sigma, rel=0.1)
    assert np.all(np.abs(rec.accel_bias) <= p.accel_bias)
    beta = rec.truth.friction[:, 3]
    tau_err = rec.tau_meas - (rec.tau_motor + beta)
    assert np.all(np.abs(tau_err) <= profile.torque_noise
                  + profile.torque_noise_rel * np.abs(rec.tau_motor + beta) + 1e-9)
    assert np.abs(rec.tau_meas - rec.tau_motor).max() > 0.3        # offsets and noise


@pytest.mark.slow
def test_box_holds_the_truth_with_the_imu_error_in_the_rows(b1, profile, recording):
    """Identified with the data's stated bounds: ok, the truth (a payload drawn off the class
    centre) inside the box."""
    rec = recording
    cfg = load_identification_config(b1, **identifier_assumptions(b1, profile))
    res = identify(b1, cfg, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", imu=rec.imu,
                   point_estimate=False)
    assert res.status == "ok", res.reason
    theta = rec.truth.theta_e
    assert res.contains(theta)
    box = b1.config["demo"]["prior_box"]
    print(f"mass {theta[0]:.3f} kg (place in class "
          f"{place_in_box(theta, box['lower'], box['upper'])[0]:+.2f}), box "
          f"[{res.lower[0]:.3f}, {res.upper[0]:.3f}] kg, prior width {cfg.prior.width[0]:.2f} kg")


@pytest.mark.slow
def test_rows_cover_the_recorded_imu_error_at_the_truth(b1, profile, recording):
    """Window rows built from the recorded IMU differ from those of the exact IMU, at the true
    θ, by at most their IMU radius once the accelerometer bias's term −Σ_a b_a·G_a·θ (an LP
    unknown) is added; with the IMU bounds at zero (the error ignored) they do not."""
    rec = recording
    cfg = load_identification_config(b1, **identifier_assumptions(b1, profile))
    theta = rec.truth.theta(b1)
    mount = imu_mount(b1)
    assert np.allclose(mount.rotation, np.eye(3))         # IMU axes = trunk axes (b1 file)

    def rows(imu, bounds):
        base = base_motion(mount, bounds, imu.t, imu.angular_velocity, imu.linear_acceleration,
                           rec.t)
        return MomentumWindows(b1, cfg.with_overrides(imu=bounds), rate_hz=500.0).extend(
            rec.t, rec.q, rec.dq, rec.tau_meas, base)

    exact = rows(rec.imu_exact, cfg.imu)
    th_max = np.abs(theta)
    for bounds, holds in ((cfg.imu, True), (cfg.imu.scaled(0.0), False)):
        noisy = rows(rec.imu, bounds)
        assert len(noisy) == len(exact) > 100
        radius = (noisy.base_W @ th_max
                  + bounds.gyro_bias_abs * np.abs(noisy.D_omega).sum(axis=1) @ th_max)
        corrected = noisy.W @ theta - np.einsum("a,nat,t->n", rec.accel_bias, noisy.G, theta)
        excess = np.abs(corrected - exact.W @ theta) - radius
        assert bool(np.all(excess <= 1e-9)) == holds, excess.max()
    # the problem's own radius is at least the one checked here (|θ| at the box edge)
    problem = PayloadProblem(b1, cfg)
    assert np.all(problem.theta_r_abs_max + 1e-12 >= np.abs(rec.truth.theta_r))


@pytest.mark.slow
def test_unstated_imu_error_is_inconsistent(b1, profile, recording):
    """The IMU's error at 15x the datasheet (bias and noise: a unit far worse than the one the
    bounds were written for) with the bounds at zero: the rows contradict each other
    (inconsistent), never a box; stated at that level the box holds the truth. At the datasheet
    level itself the ignored error hides under the current-based torque bound (measured,
    docs/guide/hardware-like-data.md)."""
    rec = recording
    kw = identifier_assumptions(b1, profile)
    worse = _imu_with(rec, 15.0)
    ignored = load_identification_config(b1, **(kw | {"imu": kw["imu"] | {
        "gyro_bias_abs": 0.0, "gyro_noise_abs": 0.0, "accel_bias_abs": 0.0,
        "accel_noise_abs": 0.0}}))
    res = identify(b1, ignored, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", imu=worse,
                   point_estimate=False)
    assert res.status == "inconsistent", (res.status, res.lower, res.upper)
    stated = load_identification_config(b1, **(kw | {"imu": kw["imu"] | {
        k: 15.0 * kw["imu"][k] for k in ("gyro_bias_abs", "gyro_noise_abs", "accel_bias_abs",
                                         "accel_noise_abs")}}))
    res = identify(b1, stated, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", imu=worse,
                   point_estimate=False)
    assert res.status == "ok" and res.contains(rec.truth.theta_e)


@pytest.mark.slow
def test_payload_swap_is_inconsistent(b1, profile):
    """A 0.5 kg dumbbell swapped for a 2 kg one halfway through the hardware-like recording:
    inconsistent (the rigid-payload assumption broken), never a box."""
    rec = record_standing_hardware_like(b1, np.random.default_rng([0, 7]), dumbbell_for(b1, 0.5),
                                        4.0, profile, swap_payload=dumbbell_for(b1, 2.0),
                                        swap_time=2.0)
    cfg = load_identification_config(b1, **identifier_assumptions(b1, profile))
    res = identify(b1, cfg, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", imu=rec.imu,
                   point_estimate=False)
    assert res.status == "inconsistent", (res.status, res.lower, res.upper)


@pytest.mark.slow
def test_noisy_joint_velocities_enter_the_rows(b1, profile):
    """Joint velocities reported within ±0.01 rad/s (a driver's filtered velocity, 'noisy'):
    identifier_assumptions states the bound, the arm joints' errors enter the base motion's
    radius rows, and the box holds the truth."""
    noisy = dataclasses.replace(profile, velocity="noisy", velocity_noise=0.01)
    box = b1.config["demo"]["prior_box"]
    drawn = draw_in_class(b1, np.asarray(box["lower"]), np.asarray(box["upper"]), seed=1)
    rec = record_standing_hardware_like(b1, np.random.default_rng([1, 5]), drawn.payload,
                                        SECONDS, noisy)
    assert rec.dq is not None
    err = np.abs(rec.dq - rec.dq_exact)
    assert err.max() <= 0.01 and err.max() > 0.009
    kw = identifier_assumptions(b1, noisy)
    np.testing.assert_array_equal(kw["velocity_noise_abs"], np.full(b1.nj, 0.01))
    res = identify(b1, load_identification_config(b1, **kw), rec.t, rec.q, rec.dq,
                   rec.tau_meas, "lp", imu=rec.imu, point_estimate=False)
    assert res.status == "ok", res.reason
    assert res.contains(rec.truth.theta_e)
