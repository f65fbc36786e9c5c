"""Opt-in driver effects of the hardware-like simulator seen in real Gen3 logs: a torque stream
that lags the state stream (``torque_lag``), zero-phase smoothed velocities of a post-processed
log (``velocity="filtered"``) and a torque error while a joint runs at its speed limit
(``velocity_limit_error``). Checked against recordings of the same physics without the effect
(same seed: with noise, jitter and drops off the random draws do not reach the data)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sysid_ros._src.simulation import (
    HardwareProfile, HardwareSensor, HardwareTruth, SimConfigError, exciting_reference,
    record_hardware_like,
)

#: 100 Hz like the real logs, 1 ms physics; nothing random reaches the data.
CLEAN = HardwareProfile(rate_hz=100.0, velocity="exact", quantize=False)



def _record(robot, profile: HardwareProfile, seed: int = 3, duration: float = 2.5, *,
            fast: bool = False):
    """A recording without payload; ``fast``: a quicker reference (up to ~1.2 rad/s)."""
    rng = np.random.default_rng(seed)
    ref = (exciting_reference(robot, rng, speed=1.0, omega_range=(2.0, 6.0), ramp=0.5)
           if fast else None)
    return record_hardware_like(robot, rng, None, duration, profile, reference=ref)


# -- torque lag ----------------------------------------------------------------------------------
def test_zero_torque_lag_is_byte_identical_to_no_lag_field(gen3):
    profile = HardwareProfile.from_robot(gen3, rate_hz=500.0, physics_dt=None,   # noise, jitter
                                         torque_lag=0.0)
    a = _record(gen3, profile, duration=1.0)
    b = _record(gen3, dataclasses.replace(profile, torque_lag=(0.0,) * gen3.nj), duration=1.0)
    for name in ("t", "q", "dq", "tau_meas", "tau_motor"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_published_torque_is_the_lag_free_stream_shifted_by_the_lag(gen3):
    lag = (0.0, 0.06, 0.0, 0.0, 0.1, 0.0, 0.035)     # 6 and 10 periods; 3.5 periods
    base = _record(gen3, CLEAN)
    lagged = _record(gen3, dataclasses.replace(CLEAN, torque_lag=lag))
    np.testing.assert_array_equal(lagged.q, base.q)             # the state stream is not delayed
    np.testing.assert_array_equal(lagged.tau_motor, base.tau_motor)
    for j in (0, 2, 3, 5):
        np.testing.assert_array_equal(lagged.tau_meas[:, j], base.tau_meas[:, j])
    # whole periods: the lag-free row `shift` samples earlier (the first row before that)
    for j, shift in ((1, 6), (4, 10)):
        np.testing.assert_array_equal(lagged.tau_meas[shift:, j], base.tau_meas[:-shift, j])
        np.testing.assert_array_equal(lagged.tau_meas[:shift, j], base.tau_meas[0, j])
    # ... which is the torque of the physics step t − lag: the same physics sampled at 500 Hz
    dense = _record(gen3, dataclasses.replace(CLEAN, rate_hz=500.0))
    assert dense.profile.physics_dt == CLEAN.physics_dt
    step_of = {round(t * 1e3): k for k, t in enumerate(dense.t_true)}   # ms → dense row
    rows = [step_of[round((t - 0.06) * 1e3)] for t in lagged.t_true[6:]]
    np.testing.assert_allclose(lagged.tau_meas[6:, 1], dense.tau_meas[rows, 1], atol=1e-12)
    # a fraction of a period: the physics step t − lag, up to the torque change in one period
    want = np.interp(lagged.t_true - 0.035, dense.t_true, dense.tau_meas[:, 6])
    change = np.abs(np.diff(base.tau_meas[:, 6])).max()
    late = lagged.t_true >= 0.035 + base.t_true[0]
    assert np.abs(lagged.tau_meas[late, 6] - want[late]).max() <= change
    assert np.abs(lagged.tau_meas[late, 6] - base.tau_meas[late, 6]).max() > 3 * change / 10


def test_torque_lag_sample_by_sample_equals_the_batch(gen3):
    """The sim node feeds one sample per call; the delay line keeps what later calls need."""
    profile = HardwareProfile(rate_hz=100.0, torque_lag=[0.03, 0.0, 0.1, 0.0, 0.0, 0.5, 0.015])
    truth = HardwareTruth.nominal(gen3)
    t = np.arange(1, 121) * profile.period
    tau = np.random.default_rng(4).normal(size=(t.size, gen3.nj))
    q = np.zeros_like(tau)
    batch = HardwareSensor(gen3, profile, truth, np.random.default_rng(0)).read(t, q, q, tau)
    one = HardwareSensor(gen3, profile, truth, np.random.default_rng(0))
    rows = np.vstack([one.read(t[i], q[i], q[i], tau[i]).tau_meas for i in range(t.size)])
    np.testing.assert_allclose(rows, batch.tau_meas, rtol=0, atol=1e-12)
    np.testing.assert_allclose(batch.tau_meas[3:, 0], tau[:-3, 0], atol=1e-12)


# -- filtered velocities -------------------------------------------------------------------------
def _best_shift(est: np.ndarray, exact: np.ndarray, max_shift: int = 5) -> int:
    """Sample shift s minimising the RMS of est[i] − exact[i + s] (interior rows)."""
    n = est.shape[0]
    rms = {s: np.sqrt(np.mean((est[max_shift:n - max_shift]
                               - exact[max_shift + s:n - max_shift + s]) ** 2))
           for s in range(-max_shift, max_shift + 1)}
    return min(rms, key=rms.__getitem__)


def _lag(rec, dq: np.ndarray) -> float:
    """Delay (s, 0.5-ms grid) that best aligns ``dq`` with the exact q̇ interpolated at
    t_true − delay: the estimate's sub-sample phase lag."""
    grid = np.arange(-0.012, 0.012 + 1e-9, 5e-4)
    t, exact, inner = rec.t_true, rec.exact.dq, slice(5, -5)

    def rms(delay: float) -> float:
        ref = np.column_stack([np.interp(t[inner] - delay, t, col) for col in exact.T])
        return float(np.sqrt(np.mean((dq[inner] - ref) ** 2)))

    return float(grid[np.argmin([rms(d) for d in grid])])


def test_filtered_velocity_has_no_lag_small_error_and_is_smoother_than_a_difference(gen3):
    profile = HardwareProfile.from_robot(gen3, rate_hz=100.0, physics_dt=None, drop_prob=0.0,
                                         velocity="filtered")          # quantised, jittered
    rec = _record(gen3, profile, fast=True)
    fd = _record(gen3, dataclasses.replace(profile, velocity="finite_difference"), fast=True)
    np.testing.assert_array_equal(rec.q, fd.q)
    inner = slice(1, -1)
    err = rec.dq[inner] - rec.exact.dq[inner]
    rms = np.sqrt(np.mean(err**2))
    assert 0.002 <= rms <= 0.015            # ~0.008 rad/s here; the real logs' 0.005-0.022
    assert _best_shift(rec.dq, rec.exact.dq) == 0
    assert abs(_lag(rec, rec.dq)) <= 1.5e-3                   # no phase lag, to a sixth of a period
    assert _lag(fd, fd.dq) == pytest.approx(0.5 * profile.period, abs=1.5e-3)   # backward: half
    fd_err = fd.dq[inner] - fd.exact.dq[inner]
    assert rms < 0.5 * np.sqrt(np.mean(fd_err**2))
    roughness = [np.sqrt(np.mean(np.diff(v[inner], 2, axis=0) ** 2)) for v in (rec.dq, fd.dq)]
    assert roughness[0] < 0.25 * roughness[1]
    # the ends take the one-sided difference with their neighbour
    np.testing.assert_allclose(rec.dq[0], (rec.q[1] - rec.q[0]) / (rec.t[1] - rec.t[0]))
    np.testing.assert_allclose(rec.dq[-1], (rec.q[-1] - rec.q[-2]) / (rec.t[-1] - rec.t[-2]))


def test_filtered_velocity_window_segments_and_offline_only(gen3):
    # velocity_filter_s = 0: the plain central difference over the published stamps
    plain = HardwareProfile(rate_hz=100.0, jitter=0.2, velocity="filtered", velocity_filter_s=0.0,
                            gap_every_s=1.0, gap_s=0.3)
    rec = _record(gen3, plain)
    t, q, dq = rec.t, rec.q, rec.dq
    after_gap = np.flatnonzero(np.diff(t) > 0.2) + 1
    assert after_gap.size == 2
    inner = np.setdiff1d(np.arange(1, t.size - 1), np.concatenate([after_gap, after_gap - 1]))
    central = (q[inner + 1] - q[inner - 1]) / (t[inner + 1] - t[inner - 1])[:, None]
    np.testing.assert_allclose(dq[inner], central, rtol=1e-12, atol=1e-12)
    # no difference across a stall: each side is a segment of its own
    for i in after_gap:
        np.testing.assert_allclose(dq[i], (q[i + 1] - q[i]) / (t[i + 1] - t[i]))
        np.testing.assert_allclose(dq[i - 1], (q[i - 1] - q[i - 2]) / (t[i - 1] - t[i - 2]))
    # 0.04 s at 100 Hz: the mean of the 5 central differences centred on each sample
    smooth = _record(gen3, dataclasses.replace(plain, velocity_filter_s=0.04))
    k = np.arange(10, 60)
    window = np.mean([dq[k + s] for s in range(-2, 3)], axis=0)
    np.testing.assert_allclose(smooth.dq[k], window, rtol=1e-9, atol=1e-12)
    # centred: it cannot be published sample by sample
    sensor = HardwareSensor(gen3, plain, HardwareTruth.nominal(gen3), np.random.default_rng(0))
    z = np.zeros(gen3.nj)
    sensor.read(0.01, z, z, z)
    with pytest.raises(SimConfigError, match="whole log in one call"):
        sensor.read(0.02, z, z, z)


# -- torque error at the velocity limit ----------------------------------------------------------
def test_velocity_limit_error_only_at_the_limit_smooth_and_bounded(gen3):
    magnitude = np.array([10.0, 10.0, 10.0, 10.0, 5.0, 5.0, 0.0])
    limit, frac = 0.2, 0.9                       # small, so this trajectory reaches it
    profile = dataclasses.replace(CLEAN, velocity_limit_error=tuple(magnitude),
                                  velocity_limit=limit, velocity_limit_frac=frac)
    base = _record(gen3, CLEAN, fast=True)
    rec = _record(gen3, profile, fast=True)
    err = rec.tau_meas - base.tau_meas
    at_limit = np.abs(rec.exact.dq) >= frac * limit
    assert at_limit[:, :6].sum(axis=0).min() > 10            # every joint with an error gets there
    assert np.all(err[~at_limit] == 0.0)
    assert np.all(err[:, 6] == 0.0)                           # magnitude 0: none
    assert np.all(np.abs(err) <= magnitude + 1e-12)
    on = at_limit & (magnitude > 0)
    assert np.all(err[on] != 0.0)
    assert np.abs(err).max() > 0.5 * magnitude.max()
    # smooth and slow: over consecutive samples of an episode it changes by < 3·magnitude per s
    both = on[1:] & on[:-1]
    rate = np.abs(np.diff(err, axis=0)) / np.diff(rec.t_true)[:, None]
    assert np.all(rate[both] <= 3.0 * np.broadcast_to(magnitude, rate.shape)[both])
    # deterministic from the seed
    np.testing.assert_array_equal(_record(gen3, profile, fast=True).tau_meas, rec.tau_meas)


def test_velocity_limit_defaults_to_the_robot_limits(gen3):
    profile = HardwareProfile(rate_hz=100.0, velocity_limit_error=4.0)
    sensor = HardwareSensor(gen3, profile, HardwareTruth.nominal(gen3), np.random.default_rng(1))
    t = np.arange(1, 301) * profile.period
    limit = gen3.limits.dq_max
    dq = np.where((np.arange(t.size) // 50 % 2 == 1)[:, None], limit, 0.94 * limit)
    z = np.zeros_like(dq)
    out = sensor.read(t, z, dq, z)
    above = dq >= 0.95 * limit
    assert np.all(out.tau_meas[~above] == 0.0)
    assert np.all((np.abs(out.tau_meas[above]) > 0) & (np.abs(out.tau_meas[above]) <= 4.0))
    assert out.tau_meas[above].max() > 1.0 or out.tau_meas[above].min() < -1.0


# -- validation ----------------------------------------------------------------------------------
def test_new_fields_validation_and_yaml_keys(gen3):
    bad = [({"torque_lag": -0.01}, "torque_lag"), ({"torque_lag": 0.6}, "torque_lag"),
           ({"torque_lag": [0.1, -0.1]}, "torque_lag"), ({"torque_lag": [0.1, 0.7]}, "torque_lag"),
           ({"torque_lag": "slow"}, "torque_lag"), ({"velocity": "smoothed"}, "velocity"),
           ({"velocity_filter_s": -0.01}, "velocity_filter_s"),
           ({"velocity_filter_s": 2.0}, "velocity_filter_s"),
           ({"velocity_limit_error": -1.0}, "velocity_limit_error"),
           ({"velocity_limit": 0.0}, "velocity_limit"),
           ({"velocity_limit": [1.0, 0.0]}, "velocity_limit"),
           ({"velocity_limit_frac": 0.0}, "velocity_limit_frac"),
           ({"velocity_limit_frac": 1.5}, "velocity_limit_frac")]
    for kwargs, field in bad:
        with pytest.raises(SimConfigError, match=f"HardwareProfile.{field}"):
            HardwareProfile(**kwargs)
    assert HardwareProfile(torque_lag=0.5).torque_lag == 0.5
    # the robot file's YAML section takes the new keys (lists as YAML gives them)
    lags = [0.10, 0.06, 0.08, 0.08, 0.12, 0.10, 0.10]
    profile = HardwareProfile.from_mapping(
        {"rate_hz": 100.0, "torque_lag": lags, "velocity": "filtered", "velocity_filter_s": 0.03,
         "velocity_limit_error": [20, 5, 20, 20, 5, 5, 0],
         "velocity_limit": [1.745] * 4 + [2.094] * 3, "velocity_limit_frac": 0.97},
        "simulation.hardware_like.profile")
    assert profile.torque_lag == tuple(lags) and profile.velocity_limit_frac == 0.97
    with pytest.raises(SimConfigError, match="simulation.hardware_like.profile: HardwareProfile"):
        HardwareProfile.from_mapping({"torque_lag": 1.0}, "simulation.hardware_like.profile")
    # per-joint lengths are checked against the robot
    for kwargs in ({"torque_lag": [0.1, 0.2]}, {"velocity_limit_error": [1.0, 2.0]},
                   {"velocity_limit_error": 1.0, "velocity_limit": [1.0, 2.0]}):
        with pytest.raises(SimConfigError, match=f"HardwareProfile.{list(kwargs)[-1]}"):
            HardwareSensor(gen3, HardwareProfile(**kwargs), HardwareTruth.nominal(gen3),
                           np.random.default_rng(0))
