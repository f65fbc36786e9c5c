"""The sim node's logic without ROS (sysid_ros._src.simulation.sim_runtime), driven by plain calls with
explicit time and checked against an independently stepped MuJoCo Simulator (the truth) or
against the definitions of the hardware-like profile — fast, no DDS."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import (
    CommandError, Payload, PayloadError, RealtimePacer, RuntimeSettings, SimConfig, SimConfigError,
    SimRuntime, Simulator, SimulatorSpec, dumbbell_for, true_theta_e,
)
from sysid_ros._src.simulation.sim_runtime import COMMANDER_MEMORY_S, payload_from_settings

EXACT = dict(noise_tau=0.0, quantize=False)   # published = simulated, to compare bit for bit



def test_stale_command_gives_way_to_hold(gen3) -> None:
    """Zero-order hold of the newest command until it is command_timeout sim seconds old (aged
    from its arrival, not from t = 0), then the hold controller: the same MuJoCo simulator stepped
    by hand with that schedule gives the same trajectory, bit for bit."""
    timeout = 0.0305            # mid-period: no rounding ambiguity at the switch
    rt = SimRuntime(gen3, RuntimeSettings(rate_hz=1000.0, command_timeout=timeout, **EXACT))
    ref = Simulator(SimulatorSpec(gen3, config=SimConfig(physics_dt=rt.sim.physics_dt, **EXACT)))
    ref.reset(ref.home)
    assert rt.steps_per_pub == 4                      # 1 ms of the robot file's 0.25 ms steps
    tau = np.array([3.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0])
    pubs = [rt.advance() for _ in range(11)]          # t = 0 … 10 ms, holding
    rt.command(tau, wall_time=0.0)                    # arrives at sim time 10 ms
    pubs += [rt.advance() for _ in range(80)]
    for _ in range(10):
        ref.step(None, 4)
    for _ in range(31):                               # periods starting at 10 … 40 ms: fresh
        ref.step(tau, 4)
    ref_q_at_switch = ref.q.copy()
    for _ in range(49):                               # 41 … 90 ms: the hold controller
        ref.step(None, 4)
    np.testing.assert_array_equal(pubs[41].joint_states.q, ref_q_at_switch)
    np.testing.assert_array_equal(pubs[-1].joint_states.q, ref.q)
    efforts = np.array([p.joint_states.effort for p in pubs])
    np.testing.assert_array_equal(efforts[11:42], np.tile(tau, (31, 1)))   # the command acted
    assert np.all(np.abs(efforts[42:] - tau).max(axis=1) > 1.0)             # then the hold
    assert rt.fresh_command() is None
    stamps = np.array([p.stamp_ns for p in pubs])
    np.testing.assert_array_equal(stamps, np.arange(91) * 1_000_000)


def test_commands_are_validated_and_arm_only_commands_drive_b1_z1() -> None:
    b1z1 = load_robot("b1_z1")
    rt = SimRuntime(b1z1, RuntimeSettings(rate_hz=1000.0))
    arm = len(rt.sim.command_joints)
    assert arm < b1z1.nj
    rt.advance()
    rt.command(np.full(arm, 0.5), wall_time=0.0)
    for bad in (np.zeros(arm + 1), np.full(arm, np.nan)):
        with pytest.raises(CommandError, match="finite torques"):
            rt.command(bad, wall_time=0.0)
    np.testing.assert_array_equal(rt.fresh_command(), np.full(arm, 0.5))   # the last good one
    rt.advance()
    # arm joints apply the command; the legs stay under the standing controller
    idx = [b1z1.joint_names.index(j) for j in rt.sim.command_joints]
    np.testing.assert_allclose(rt.sim.tau_applied[idx], 0.5)


def test_lockstep_waits_only_when_a_commander_exists(gen3) -> None:
    rt = SimRuntime(gen3, RuntimeSettings(mode="lockstep"))
    rt.advance()
    assert not rt.waits_for_command(commander_seen=False, wall_now=100.0)    # nobody commands
    assert rt.waits_for_command(commander_seen=True, wall_now=100.0)
    rt.command(np.zeros(7), wall_time=100.0)
    assert not rt.waits_for_command(commander_seen=True, wall_now=100.0)     # answered
    rt.advance()
    # a graph query may miss the publisher: a controller that just commanded is waited for ...
    assert rt.waits_for_command(commander_seen=False, wall_now=100.0 + 0.5 * COMMANDER_MEMORY_S)
    # ... but not forever
    assert not rt.waits_for_command(commander_seen=False, wall_now=100.0 + 2 * COMMANDER_MEMORY_S)
    # a command that arrived before this publication's step began replies to an older state
    rt.advance(wall_time=200.0)
    rt.command(np.zeros(7), wall_time=199.9)
    assert not rt.answered and rt.waits_for_command(commander_seen=True, wall_now=200.1)
    rt.command(np.zeros(7), wall_time=200.2)
    assert rt.answered and not rt.waits_for_command(commander_seen=True, wall_now=200.2)
    realtime = SimRuntime(gen3, RuntimeSettings(mode="realtime"))
    realtime.advance()
    assert not realtime.waits_for_command(commander_seen=True, wall_now=0.0)


def test_hardware_like_profile_drops_what_it_says(gen3, tmp_path) -> None:
    """Clock and imu keep every 2 ms period; joint_states miss ~drop_prob of the slots outside
    stalls and every slot inside one, stamps lie in [instant, instant + jitter·period], and a
    'missing' velocity is None."""
    cfg = yaml.safe_load(gen3.config_path.read_text())
    cfg["simulation"]["hardware_like"]["profile"].update(
        rate_hz=500.0, jitter=0.2, drop_prob=0.2, gap_every_s=0.5, gap_s=0.1, velocity="missing", velocity_lag=0.0)
    path = tmp_path / "gen3_hw.yaml"
    path.write_text(yaml.safe_dump(cfg))
    rt = SimRuntime(load_robot("gen3", path), RuntimeSettings(hardware_like=True,
                                                              hardware_seed=3))
    pubs = [rt.advance() for _ in range(2000)]                  # 4 s
    t = np.array([p.stamp_ns for p in pubs]) * 1e-9
    np.testing.assert_allclose(t, np.arange(2000) * 2e-3, atol=1e-9)
    sent = np.array([p.joint_states is not None for p in pubs])
    phase_ms = np.array([p.stamp_ns for p in pubs]) // 1_000_000 % 500
    stall, free = phase_ms > 400, phase_ms < 400     # (the boundary instant is either)
    assert not sent[stall].any()
    n = int(free.sum())
    missing = 1.0 - sent[free].mean()
    assert abs(missing - 0.2) < 4.0 * np.sqrt(0.2 * 0.8 / n)   # binomial, 4 σ
    delay = np.array([p.joint_states.stamp_ns * 1e-9 for p in pubs if p.joint_states]) - t[sent]
    assert delay.min() >= -1e-9 and delay.max() <= 0.2 * 2e-3 + 1e-9
    assert delay.max() > 0.1 * 2e-3
    assert all(p.joint_states.dq is None for p in pubs if p.joint_states)


def test_reset_keeps_time_monotonic_and_drops_the_command(gen3) -> None:
    rt = SimRuntime(gen3, RuntimeSettings(command_timeout=10.0, **EXACT))
    rt.advance()
    rt.command(np.array([3.0, 0, 0, 0, 0, 0, -2.0]), wall_time=0.0)
    before = [rt.advance() for _ in range(200)]
    assert np.abs(before[-1].joint_states.q - rt.q0).max() > 0.01   # the command moved it
    rt.reset()
    assert rt.fresh_command() is None and rt.time == pytest.approx(0.2)
    after = rt.advance()
    assert after.stamp_ns == before[-1].stamp_ns + 1_000_000
    # one held period from rest at the initial posture: still there
    assert np.abs(after.joint_states.q - rt.q0).max() < 1e-4


def test_duration_and_wait_subscribers(gen3) -> None:
    rt = SimRuntime(gen3, RuntimeSettings(duration=0.0105, wait_subscribers=2))
    assert not rt.may_start(1) and rt.may_start(2)
    stamps = []
    while not rt.finished:
        stamps.append(rt.advance().stamp_ns)
    assert stamps[-1] == 11_000_000 and len(stamps) == 12     # first publication at ≥ duration


def test_payload_settings(gen3) -> None:
    rt = SimRuntime(gen3, RuntimeSettings(payload_mass=2.27))
    np.testing.assert_allclose(rt.sim.true_theta_e(), true_theta_e(gen3, dumbbell_for(gen3, 2.27)))
    custom = payload_from_settings(gen3, 1.0, (0.0, 0.0, 0.05), (1e-3, 0, 0, 2e-3, 0, 3e-3))
    assert isinstance(custom, Payload)
    np.testing.assert_allclose(custom.inertia_com, np.diag([1e-3, 2e-3, 3e-3]))
    assert payload_from_settings(gen3, 0.0, None, None) is None
    with pytest.raises(SimConfigError, match="without payload_mass"):
        payload_from_settings(gen3, 0.0, (0.0, 0.0, 0.05), None)
    with pytest.raises(SimConfigError, match="payload_inertia 6"):
        payload_from_settings(gen3, 1.0, (0.0, 0.0, 0.05), None)
    with pytest.raises(PayloadError):
        payload_from_settings(gen3, 1.0, (0.0, 0.0, 0.05), (1e-3, 0, 0, 1e-3, 0, 5e-3))


def test_bad_settings_are_refused_by_name(gen3) -> None:
    with pytest.raises(SimConfigError, match="whole number of physics_dt"):
        SimRuntime(gen3, RuntimeSettings(rate_hz=1000.0, physics_dt=3e-4))
    with pytest.raises(SimConfigError, match="mode"):
        RuntimeSettings(mode="fast")
    with pytest.raises(SimConfigError, match="physics_dt cannot be given with hardware_like"):
        RuntimeSettings(hardware_like=True, physics_dt=1e-3)
    with pytest.raises(SimConfigError, match="duration"):
        RuntimeSettings(duration=0.0)
    with pytest.raises(SimConfigError, match="q0"):
        SimRuntime(gen3, RuntimeSettings(initial_q=(0.0, 0.0)))
    # no physics_dt: the robot file's 0.25 ms, shortened to divide a 1/3 ms period
    rt = SimRuntime(gen3, RuntimeSettings(rate_hz=3000.0))
    assert rt.sim.physics_dt == pytest.approx(1 / 6000) and rt.steps_per_pub == 2


def test_realtime_pacer_never_bursts() -> None:
    pacer = RealtimePacer(0.01, wall_start=5.0, max_lag=0.1)
    assert pacer.next_deadline(5.0) == pytest.approx(5.01)
    assert pacer.next_deadline(5.012) == pytest.approx(5.02)         # a little late: catch up
    late = pacer.next_deadline(6.0)                                  # 0.97 s behind
    assert late == pytest.approx(6.0)                                # publish now ...
    assert pacer.next_deadline(6.0) == pytest.approx(6.01)           # ... then one per period
    assert pacer.slips == 1 and pacer.lost_s == pytest.approx(0.97)   # and says what it gave up


@pytest.mark.parametrize("rate_hz, clock_rate_hz", [(1000.0, 100.0), (500.0, 100.0),
                                                    (1000.0, 1000.0), (250.0, 1000.0)])
def test_clock_is_published_at_its_own_rate(gen3, rate_hz, clock_rate_hz) -> None:
    """/clock goes out with the first publication and then once per 1/clock_rate_hz of sim time
    (never more often than the publications): counted against the publications' own stamps."""
    rt = SimRuntime(gen3, RuntimeSettings(rate_hz=rate_hz, clock_rate_hz=clock_rate_hz, **EXACT))
    pubs = [rt.advance() for _ in range(int(rate_hz) + 1)]           # 0 … 1 s of sim time
    clocked = np.array([p.stamp_ns for p in pubs if p.clock]) * 1e-9
    assert clocked[0] == 0.0 and pubs[0].clock
    expected = min(rate_hz, clock_rate_hz)
    assert clocked.size == int(expected) + 1                         # includes both ends
    assert np.allclose(np.diff(clocked), 1.0 / expected)
    with pytest.raises(SimConfigError, match="clock_rate_hz"):
        RuntimeSettings(clock_rate_hz=0.0)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_a_commanded_arm_steps_as_the_per_substep_loop(gen3, integrator: str) -> None:
    """A held command on a fixed arm is stepped in one MuJoCo call; the reference steps the same
    model substep by substep (mj_step1, applied torque = clip(command) − β, mj_step2), as the
    simulator does while holding: the states agree bit for bit, clipping included."""
    import mujoco

    sim = Simulator(SimulatorSpec(gen3, dumbbell_for(gen3, 3.63),
                                  SimConfig(integrator=integrator)))
    sim.step(None, 4)                                  # leave the hold first
    model, ref = sim.model, mujoco.MjData(sim.model)
    mujoco.mj_copyData(ref, model, sim.data)
    dofs = [model.jnt_dofadr[model.joint(n).id] for n in gen3.joint_names]
    beta, tau_max = gen3.friction.nominal[:, 3], gen3.limits.tau_max
    rng = np.random.default_rng(3)
    for _ in range(300):
        tau = rng.uniform(-1.2, 1.2, gen3.nj) * tau_max      # some commands beyond the limits
        sim.step(tau, 4)
        for _ in range(4):
            mujoco.mj_step1(model, ref)
            ref.qfrc_applied[dofs] = np.clip(tau, -tau_max, tau_max) - beta
            mujoco.mj_step2(model, ref)
        assert np.array_equal(sim.data.qpos, ref.qpos) and np.array_equal(sim.data.qvel, ref.qvel)
        assert np.array_equal(sim.measure().clipped, np.abs(tau) > tau_max)


def test_hardware_like_floating_base_imu_has_the_datasheet_error() -> None:
    """B1 + Z1 with hardware_like: every imu publication is the simulator's exact reading (the
    same state measured again) plus one constant bias within the datasheet offset and noise
    within 4σ (ImuProfile of the robot file); the bias is the same over the run and the noise
    averages out around it."""
    from sysid_ros._src.simulation.imu import ImuProfile

    b1 = load_robot("b1_z1")
    rt = SimRuntime(b1, RuntimeSettings(hardware_like=True, hardware_seed=2))
    p = ImuProfile.from_robot(b1)
    gyro, acc = [], []
    for _ in range(400):
        pub = rt.advance()
        exact = rt.sim.measure().imu
        assert pub.imu is not None and exact is not None
        gyro.append(pub.imu.angular_velocity - exact.angular_velocity)
        acc.append(pub.imu.linear_acceleration - exact.linear_acceleration)
    for err, bias, sigma in ((np.array(gyro), p.gyro_bias, p.gyro_sigma),
                             (np.array(acc), p.accel_bias, p.accel_sigma)):
        mean = err.mean(axis=0)
        assert np.all(np.abs(mean) <= bias + 5.0 * sigma / np.sqrt(len(err)))
        noise = err - mean
        assert np.abs(noise).max() <= 4.0 * sigma + 2.0 * 5.0 * sigma / np.sqrt(len(err))
        assert np.std(noise) == pytest.approx(sigma, rel=0.15)
