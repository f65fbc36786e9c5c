"""Hardware-like data: the physics is the drawn truth (not the facts file), dry friction is MuJoCo's
(stiff) constraint, and publication (rate, stamps, drops, stalls, velocity modes, bags) is as the
profile says. Checked against Pinocchio and against the profile's definitions, not against the
code under test."""
from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.bagio import ArrayLengthError, read_joint_states
from sysid_ros._src.identification.config import load_identification_config
from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import (
    HardwareProfile, HardwareSensor, HardwareTruth, SimConfig, SimConfigError, Simulator,
    SimulatorSpec, dumbbell_for, exciting_reference, random_hardware_truth,
    record_hardware_like, true_theta_e, write_joint_states_bag,
)

CLEAN = HardwareProfile(rate_hz=500.0, velocity="exact", quantize=False)




def _model(robot, theta_bodies: np.ndarray) -> pin.Model:
    """Pinocchio model with the given bodies and no armature (added explicitly below)."""
    model = robot.model.copy()
    for j, th in enumerate(theta_bodies.reshape(-1, 10), start=1):
        model.inertias[j] = pin.Inertia.FromDynamicParameters(th)
    model.armature = np.zeros(model.nv)
    return model


def _rnea(model: pin.Model, q, dq, ddq) -> np.ndarray:
    data = model.createData()
    return np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, dq, ddq)])


# -- (a) the measured torque is the truth's law, not the facts file's --------------------------
@pytest.mark.parametrize("fixture", ["gen3", "z1"])
def test_measured_torque_follows_the_truth_and_not_the_config_model(fixture, request):
    robot = request.getfixturevalue(fixture)
    rng = np.random.default_rng(11)
    first, second = dumbbell_for(robot, 1.81), dumbbell_for(robot, 3.18)
    truth = random_hardware_truth(robot, rng, fc_max=1.0, offset_max=1.0, link_rel=0.1)
    rec = record_hardware_like(robot, rng, first, 2.0, CLEAN, truth,
                               swap_payload=second, swap_time=1.0)
    assert len(rec) == 1000                      # 500 Hz, no drops, first sample at 2 ms
    np.testing.assert_allclose(rec.truth.theta_e, true_theta_e(robot, first), atol=1e-12)
    np.testing.assert_allclose(rec.theta_e_after_swap, true_theta_e(robot, second), atol=1e-12)
    # the truth really differs from the facts file
    assert np.abs(rec.truth.theta_r - HardwareTruth.nominal(robot).theta_r).max() > 1e-3
    fc, fv, ia, beta = rec.truth.friction.T
    ex, h = rec.exact, rec.profile.physics_dt
    # published = exact when the profile adds nothing; the Euler step links the two states
    np.testing.assert_array_equal(rec.q, ex.q)
    np.testing.assert_array_equal(rec.dq, ex.dq)
    np.testing.assert_allclose(ex.q, ex.step_q + h * ex.dq, atol=1e-12)
    np.testing.assert_allclose(rec.tau_meas, rec.tau_motor + beta, atol=1e-12)

    # τ̂ − β = RNEA_truth(q, q̇, q̈) + Ia q̈ + Fv q̇⁺ + dry, before and after the payload swap
    after = rec.t_true > 1.0
    tau_link = np.empty_like(rec.tau_meas)
    for mask, theta_e in ((~after, rec.truth.theta_e), (after, rec.theta_e_after_swap)):
        model = _model(robot, dataclasses.replace(rec.truth, theta_e=theta_e).theta(robot))
        tau_link[mask] = _rnea(model, ex.step_q[mask], ex.step_dq[mask], ex.step_ddq[mask])
    predicted = tau_link + ia * ex.step_ddq + fv * ex.dq + ex.dry_friction
    scale = 1.0 + np.abs(rec.tau_meas)
    assert np.max(np.abs(rec.tau_meas - beta - predicted) / scale) < 1e-9
    # ... and the identifier's nominal model with its own friction law does not explain them
    nominal = HardwareTruth.nominal(robot, first)
    fc_n, fv_n, ia_n, beta_n = robot.friction.nominal.T
    model_n = _model(robot, nominal.theta(robot))
    tau_nom = (_rnea(model_n, rec.q, ex.dq, ex.step_ddq) + ia_n * ex.step_ddq + fv_n * ex.dq
               + fc_n * np.sign(ex.dq) + beta_n)
    rms = np.sqrt(np.mean((rec.tau_meas - tau_nom)[~after] ** 2, axis=0))
    assert rms.mean() > 0.5 and rms.min() > 0.05, rms


def test_a_position_ripple_is_a_load_the_measured_torque_carries(gen3):
    """``HardwareTruth.ripple``: a·sin(2q) + b·cos(2q) per joint, applied at every physics step
    at the step's start position, is in the motor torque the sensor reads — the law above plus
    the ripple evaluated by hand; the ripple is no sensor effect (the motion changes)."""
    rng = np.random.default_rng(5)
    truth = random_hardware_truth(gen3, rng, fc_max=1.0, offset_max=1.0, link_rel=0.1)
    ripple = rng.uniform(-1.5, 1.5, (gen3.nj, 2))
    rippled = dataclasses.replace(truth, ripple=ripple)
    rec = record_hardware_like(gen3, np.random.default_rng(6), None, 1.0, CLEAN, rippled)
    plain = record_hardware_like(gen3, np.random.default_rng(6), None, 1.0, CLEAN, truth)
    ex, (_, fv, ia, beta) = rec.exact, rec.truth.friction.T
    model = _model(gen3, rec.truth.theta(gen3))
    by_hand = ripple[:, 0] * np.sin(2 * ex.step_q) + ripple[:, 1] * np.cos(2 * ex.step_q)
    predicted = (_rnea(model, ex.step_q, ex.step_dq, ex.step_ddq) + ia * ex.step_ddq
                 + fv * ex.dq + ex.dry_friction + by_hand)
    assert np.max(np.abs(rec.tau_meas - beta - predicted) / (1.0 + np.abs(rec.tau_meas))) < 1e-9
    assert np.max(np.abs(by_hand)) > 0.5
    assert np.max(np.abs(rec.q - plain.q)) > 1e-4
    np.testing.assert_allclose(rippled.with_payload(gen3, None).ripple, ripple)
    with pytest.raises(SimConfigError, match="ripple"):
        dataclasses.replace(truth, ripple=np.zeros((gen3.nj, 3)))
    with pytest.raises(SimConfigError, match="ripple_order"):
        dataclasses.replace(truth, ripple=ripple, ripple_order=0)


def test_random_truth_stays_in_its_ranges(gen3):
    rng = np.random.default_rng(3)
    nom = gen3.friction.nominal
    fc_max = np.array([2.0] * 4 + [1.0] * 3)
    payload = dumbbell_for(gen3, 2.27)
    for _ in range(5):
        t = random_hardware_truth(gen3, rng, friction_rel=0.5, fc_max=fc_max, offset_max=1.0,
                                  link_rel=0.2, payload=payload)
        fc, fv, ia, beta = t.friction.T
        assert np.all((fc >= 0) & (fc <= fc_max))
        assert np.all(np.abs(fv / nom[:, 1] - 1) <= 0.5)
        assert np.all(np.abs(ia / nom[:, 2] - 1) <= 0.5)
        assert np.all(np.abs(beta) <= 1.0)
        bodies = t.theta_r.reshape(-1, 10)
        nominal = HardwareTruth.nominal(gen3).theta_r.reshape(-1, 10)
        assert np.all(is_physically_consistent(bodies))
        ratio = np.divide(bodies, nominal, out=np.ones_like(bodies), where=nominal != 0)
        assert np.all(np.abs(ratio - 1) <= 0.2 + 1e-12) and np.any(np.abs(ratio - 1) > 0.05)
        np.testing.assert_array_equal(t.theta_e, true_theta_e(gen3, payload))
    # defaults come from the robot file's simulation.hardware_like.truth
    offsets = np.array(gen3.config["simulation"]["hardware_like"]["truth"]["offset_max"])
    betas = np.array([random_hardware_truth(gen3, rng).friction[:, 3] for _ in range(20)])
    assert np.all(np.abs(betas) <= offsets) and np.all(np.abs(betas).max(axis=0) > 0.3 * offsets)
    with pytest.raises(SimConfigError, match="fc_max"):
        random_hardware_truth(gen3, rng, fc_max=[1.0, 2.0])


def test_nominal_truth_reproduces_the_default_simulator(gen3):
    """A truth equal to the facts file changes nothing (same bodies, same exact Coulomb law)."""
    payload = dumbbell_for(gen3, 2.27)
    plain = Simulator(SimulatorSpec(gen3, payload, SimConfig(quantize=False)))
    same = Simulator(SimulatorSpec(gen3, payload, SimConfig(quantize=False),
                                   truth=HardwareTruth.nominal(gen3, payload)))
    tau = 0.3 * gen3.limits.tau_max * np.cos(np.arange(gen3.nj))
    for sim in (plain, same):
        sim.step(tau, n_steps=400)
    np.testing.assert_array_equal(plain.q, same.q)
    np.testing.assert_array_equal(plain.dq, same.dq)


# -- (b) publication: rate, stamps, drops, stalls ----------------------------------------------
def test_rate_jitter_drops_and_gaps_match_the_profile(gen3):
    profile = HardwareProfile(rate_hz=500.0, jitter=0.2, drop_prob=0.1, gap_every_s=2.0,
                              gap_s=0.5, velocity="exact")
    rec = record_hardware_like(gen3, np.random.default_rng(5), None, 5.0, profile)
    period = profile.period
    k = np.rint(rec.t_true / period)
    np.testing.assert_allclose(rec.t_true, k * period, atol=1e-9)    # robot clock, 2 ms grid
    delay = rec.t - rec.t_true
    assert delay.min() >= -1e-9 and delay.max() <= 0.2 * period + 1e-9
    assert delay.max() > 0.15 * period                                 # jitter is there
    assert np.all(np.diff(rec.t) > 0)
    np.testing.assert_array_equal(rec.t, np.rint(rec.t * 1e9) * 1e-9)  # whole nanoseconds
    # stalls: nothing in [1.5, 2), [3.5, 4); each gap is 0.5 s (+ a period or two of drops)
    phase = np.mod(rec.t_true, 2.0)
    assert not np.any(phase >= 1.5 - 1e-9)
    dt = np.diff(rec.t_true)
    gaps = dt[dt > 0.1]
    assert gaps.size == 2 and np.all((gaps > 0.5) & (gaps < 0.5 + 4 * period)), gaps
    # drops: i.i.d. outside the stalls
    expected = np.arange(1, int(5.0 / period) + 1)
    outside = expected[np.mod(expected * period, 2.0) < 1.5 - 1e-9]
    drop_fraction = 1.0 - len(rec) / outside.size
    assert drop_fraction == pytest.approx(0.1, abs=0.03)
    assert np.median(np.diff(rec.t)) == pytest.approx(period, abs=0.2 * period)


def test_profile_defaults_and_validation(gen3):
    assert HardwareProfile(rate_hz=1000.0).physics_dt == pytest.approx(5e-4)
    assert HardwareProfile(rate_hz=500.0).physics_dt == pytest.approx(1e-3)
    assert HardwareProfile(rate_hz=4000.0).physics_dt == pytest.approx(1.25e-4)
    assert HardwareProfile(rate_hz=700.0).physics_dt == pytest.approx(5e-4)   # divides 1 ms
    profile = HardwareProfile.from_robot(gen3)
    assert profile.rate_hz == gen3.config["simulation"]["hardware_like"]["profile"]["rate_hz"]
    bad = [({"rate_hz": 50.0}, "rate_hz"), ({"jitter": 0.5}, "jitter"),
           ({"drop_prob": 1.0}, "drop_prob"), ({"gap_s": 1.0}, "gap_s"),
           ({"gap_every_s": 1.0, "gap_s": 2.0}, "gap_s"), ({"torque_noise": -0.1}, "torque_noise"),
           ({"torque_noise": [0.1, -1.0]}, "torque_noise"), ({"velocity": "smoothed"}, "velocity"),
           ({"control_dt": 1e-3, "physics_dt": 3e-4}, "control_dt"),
           ({"physics_dt": 2e-3}, "physics_dt"), ({"quantize": "yes"}, "quantize")]
    for kwargs, field in bad:
        with pytest.raises(SimConfigError, match=f"HardwareProfile.{field}"):
            HardwareProfile(**kwargs)
    with pytest.raises(SimConfigError, match=r"unknown keys \['rate'\]"):
        HardwareProfile.from_mapping({"rate": 100.0}, "simulation.hardware_like.profile")
    with pytest.raises(SimConfigError, match="torque_noise must be"):
        HardwareSensor(gen3, HardwareProfile(torque_noise=[0.1, 0.2]), HardwareTruth.nominal(gen3),
                       np.random.default_rng(0))


# -- (c) velocity modes --------------------------------------------------------------------------
def test_finite_difference_velocity_is_the_quotient_of_published_samples(z1):
    profile = HardwareProfile(rate_hz=500.0, jitter=0.2, drop_prob=0.05,
                              velocity="finite_difference", quantize=True)
    rec = record_hardware_like(z1, np.random.default_rng(7), None, 2.0, profile)
    res = np.deg2rad(np.asarray(z1.config["simulation"]["encoder_resolution_deg"]))
    np.testing.assert_allclose(rec.q / res, np.rint(rec.q / res), atol=1e-6)   # quantised
    quotient = np.diff(rec.q, axis=0) / np.diff(rec.t)[:, None]
    np.testing.assert_allclose(rec.dq[1:], quotient, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(rec.dq[0], 0.0)
    assert np.abs(rec.dq - rec.exact.dq).max() > 1e-3   # not the true velocity


def test_sample_by_sample_publication_equals_the_batch(z1):
    """The node feeds the sensor one sample at a time: same result as a whole batch."""
    profile = HardwareProfile(rate_hz=500.0, velocity="finite_difference")
    truth = HardwareTruth.nominal(z1)
    rng = np.random.default_rng(2)
    t = np.arange(1, 41) * profile.period
    q = z1.limits.q_lower + 1.0 + 0.3 * np.sin(3.0 * t)[:, None]
    dq, tau = np.zeros_like(q), rng.normal(size=q.shape)
    batch = HardwareSensor(z1, profile, truth, np.random.default_rng(0)).read(t, q, dq, tau)
    one = HardwareSensor(z1, profile, truth, np.random.default_rng(0))
    rows = [one.read(t[i], q[i], dq[i], tau[i]) for i in range(t.size)]
    np.testing.assert_allclose(np.vstack([r.dq for r in rows]), batch.dq, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.vstack([r.q for r in rows]), batch.q)


def test_noisy_and_missing_velocities_and_bag_without_velocity(gen3, tmp_path):
    noisy = record_hardware_like(gen3, np.random.default_rng(1), None, 0.5,
                                 HardwareProfile(rate_hz=500.0, velocity="noisy",
                                                 velocity_noise=0.01))
    err = noisy.dq - noisy.exact.dq
    assert np.abs(err).max() <= 0.01 and np.abs(err).max() > 0.009
    rec = record_hardware_like(gen3, np.random.default_rng(1), None, 0.5,
                               HardwareProfile(rate_hz=500.0, velocity="missing"))
    assert rec.dq is None
    bag = write_joint_states_bag(tmp_path / "bag", rec, gen3)
    # bagio requires every field by default: an empty velocity is an error naming the field ...
    with pytest.raises(ArrayLengthError, match="velocity is empty"):
        read_joint_states(bag)
    # ... and is read as None when velocity is not required
    series = read_joint_states(bag, require=("position", "effort"))
    assert series.velocity is None
    np.testing.assert_array_equal(series.position, rec.q)
    np.testing.assert_array_equal(series.effort, rec.tau_meas)


# -- (d) MuJoCo dry friction: Fc while sliding, sticking below it, whatever the payload ------
@pytest.mark.parametrize("payload_kg", [None, 1.0])
def test_mujoco_dry_friction_is_fc_when_sliding_and_sticks_below_fc(z1, payload_kg):
    """The wrist roll (joint 6, ~0.001 kg·m² without payload) is where MuJoCo's default soft
    frictionloss crept at up to 0.7 rad/s under a push below Fc and only reached Fc above
    0.26 rad/s with the 1 kg dumbbell: a friction law that changed with the payload's inertia
    and made calibrated Z1 payload data inconsistent. The stiff constraint (mjmodel) sticks:
    under 0.5·Fc the joint creeps at well under the identifier's 0.02 rad/s Coulomb band, with
    or without the payload, and slides at exactly Fc."""
    fr = z1.friction.nominal.copy()
    fr[:, 0], fr[:, 3] = 1.0, 0.0
    payload = None if payload_kg is None else dumbbell_for(z1, payload_kg)
    truth = dataclasses.replace(HardwareTruth.nominal(z1, payload), friction=fr)
    profile = HardwareProfile(rate_hz=1000.0)
    model = truth.pinocchio_model(z1)
    data = model.createData()
    j = 5
    band = load_identification_config(z1).coulomb_band      # the identifier's band for this robot
    for push, sliding in ((0.5, False), (1.5, True)):
        sim = Simulator(SimulatorSpec.hardware_like(z1, payload, profile, truth))
        dry, vel = [], []
        for _ in range(600):                   # 0.3 s
            tau = pin.computeGeneralizedGravity(model, data, sim.q)
            tau[j] += push * fr[j, 0]
            sim.step(tau)
            dry.append(sim.dry_friction()[j])
            vel.append(sim.dq[j])
        dry, vel = np.array(dry[-100:]), np.array(vel[-100:])
        if sliding:    # past its transient, sliding at Fc (viscous friction takes the excess)
            assert np.all(vel > band)
            np.testing.assert_allclose(dry, fr[j, 0], rtol=1e-6)
        else:          # sticking: friction balances the push, the creep is far inside the band
            np.testing.assert_allclose(dry + fr[j, 1] * vel, push * fr[j, 0], rtol=1e-3)
            assert np.max(np.abs(vel)) < 0.1 * band


# -- (e) bag round trip ------------------------------------------------------------------------
def test_bag_round_trip(gen3, tmp_path):
    profile = dataclasses.replace(HardwareProfile.from_robot(gen3), rate_hz=500.0, physics_dt=None)
    rec = record_hardware_like(gen3, np.random.default_rng(4), dumbbell_for(gen3, 2.27), 1.0,
                               profile)
    bag = write_joint_states_bag(tmp_path / "bag", rec, gen3, storage="sqlite3")
    series = read_joint_states(bag, joint_names=gen3.joint_names)
    assert series.names == gen3.joint_names
    np.testing.assert_array_equal(series.stamps_ns, np.rint(rec.t * 1e9).astype(np.int64))
    np.testing.assert_array_equal(series.position, rec.q)
    np.testing.assert_array_equal(series.velocity, rec.dq)
    np.testing.assert_array_equal(series.effort, rec.tau_meas)
    with pytest.raises(SimConfigError, match="do not match"):
        write_joint_states_bag(tmp_path / "other", rec, load_robot("z1"))


def test_exciting_reference_starts_at_rest_and_respects_limits(z1):
    rng = np.random.default_rng(8)
    start = np.array(z1.config["simulation"]["home"])
    ref = exciting_reference(z1, rng, start=start, speed=0.5)
    t = np.linspace(0.0, 20.0, 4001)
    q, dq = ref(t)
    np.testing.assert_allclose(q[0], start, atol=1e-15)
    np.testing.assert_allclose(dq[0], 0.0, atol=1e-15)
    assert np.all(q >= z1.limits.q_lower) and np.all(q <= z1.limits.q_upper)
    assert np.all(np.abs(dq) <= 0.5 * z1.limits.dq_max)
    np.testing.assert_allclose(ref(3.3)[0], q[660], atol=1e-12)       # scalar = batch row
    np.testing.assert_allclose(np.gradient(q, t, axis=0)[1:-1], dq[1:-1], atol=1e-3)


def test_bad_recording_arguments(gen3):
    rng = np.random.default_rng(0)
    with pytest.raises(SimConfigError, match="duration"):
        record_hardware_like(gen3, rng, None, 0.0, CLEAN)
    with pytest.raises(SimConfigError, match="swap_payload and swap_time"):
        record_hardware_like(gen3, rng, None, 1.0, CLEAN, swap_time=0.5)
    with pytest.raises(SimConfigError, match="floating base"):
        record_hardware_like(load_robot("b1_z1"), rng, None, 1.0, CLEAN)


def test_sim_record_writes_the_robot_the_sim_node_simulates(gen3, tmp_path):
    """``sysid-sim-record``'s robot is the sim runtime's (``sim_truth``, same hardware_seed):
    its calibration is of the robot the graph then runs. The bag reads back at the profile's
    rate; a second run with the same output refuses (exit 2)."""
    from sysid_ros._src.simulation import RuntimeSettings, SimRuntime, sim_truth
    from sysid_ros._src.simulation.record_cli import main

    rt = SimRuntime(gen3, RuntimeSettings(hardware_like=True, hardware_seed=3, payload_mass=0.0))
    assert rt.sim.truth is not None
    drawn = sim_truth(gen3, 3)
    np.testing.assert_array_equal(rt.sim.truth.friction, drawn.friction)
    np.testing.assert_array_equal(rt.sim.truth.theta_r, drawn.theta_r)
    assert not np.allclose(sim_truth(gen3, 4).friction, drawn.friction)
    out = tmp_path / "bag"
    assert main(["--seconds", "1.0", "--hardware-seed", "3", "--out", str(out)]) == 0
    js = read_joint_states(out, "/joint_states", list(gen3.joint_names))
    profile = HardwareProfile.from_robot(gen3)
    assert abs(np.median(np.diff(js.t)) - 1.0 / profile.rate_hz) < 0.2 / profile.rate_hz
    assert main(["--seconds", "1.0", "--out", str(out)]) == 2


def test_sim_node_refuses_a_filtered_velocity_profile_up_front(gen3):
    """``filtered`` velocities are a centred smoothing of a whole log: the sim node, which
    publishes sample by sample, refuses such a profile when it is built, naming the key."""
    import copy

    from sysid_ros._src.simulation import RuntimeSettings, SimRuntime

    config = copy.deepcopy(gen3.config)
    profile = config["simulation"]["hardware_like"]["profile"]
    profile["velocity"] = "filtered"
    profile["velocity_lag"] = 0.0           # a lag applies to published velocities only
    robot = dataclasses.replace(gen3, config=config)
    with pytest.raises(SimConfigError, match="profile.velocity 'filtered'"):
        SimRuntime(robot, RuntimeSettings(hardware_like=True, payload_mass=0.0))
