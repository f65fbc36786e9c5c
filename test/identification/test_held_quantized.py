"""Real-data effects the rows must carry, on MuJoCo data with known truth.

A robot's joint states and torques are not the model's continuous signals: positions come from
encoders (read to an encoder count) and the torque is a command held over the control period
(the simulator reports the torque of the period that just ended). On the Gen3 (Fv ≈ 10 N·m·s/rad)
one encoder count in a window's Δq would move the viscous term by ~0.0035 N·m·s — the rows
integrate the sampled q̇ instead — and the held command shifts ∫τ by ½·Δt·(τ_end − τ_start),
which the torque-timing unknowns carry (``torque_delay_samples`` 0.5). With the robot model exact
and noise-free torques, rows without the timing unknowns contradict the truth at a small noise
bound; with them the box is ok and holds it, with encoder counts as well.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec
from sysid_ros._src.simulation.payload import dumbbell_for


def _record(robot, quantize: bool, seconds: float = 1.5):
    """1 kHz, command held over each 1 ms period (4 physics steps), positions quantized or not,
    exact torque measurement: gravity compensation + PD towards a smooth reference."""
    sim = Simulator(SimulatorSpec(robot, dumbbell_for(robot, 2.0),
                                  SimConfig(physics_dt=2.5e-4, quantize=quantize)))
    home = np.asarray(robot.config["simulation"]["home"], float)
    sim.reset(home)
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(0)
    freq, phase = rng.uniform(1.0, 3.0, robot.nj), rng.uniform(0.0, 6.0, robot.nj)
    t, q, dq, tau = [], [], [], []
    for _ in range(int(seconds * 1000)):
        m = sim.measure()
        t.append(m.t), q.append(m.q), dq.append(m.dq), tau.append(m.tau_measured)
        ref = home + 0.15 * np.sin(freq * m.t + phase) * np.sin(0.5 * m.t)
        cmd = pin.computeGeneralizedGravity(model, data, m.q) + 150.0 * (ref - m.q) - 15.0 * m.dq
        sim.step(cmd, 4)
    return (np.array(t)[1:], np.array(q)[1:], np.array(dq)[1:], np.array(tau)[1:],
            sim.true_theta_e())


def _status(robot, cfg, data, **kw):
    res = identify(robot, cfg.with_overrides(**kw) if kw else cfg, *data[:4], "lp",
                   point_estimate=False)
    return res


def test_held_commands_and_encoder_counts(gen3):
    exact = dict(friction="config", torque_noise_abs=0.003, torque_noise_rel=0.0,
                 robot_uncertainty_rel=0.0)
    cfg = load_identification_config(gen3, **exact).with_overrides(friction_radius=0.0)
    assert cfg.torque_delay_samples == 0.5

    # held command, exact positions: the timing unknowns are what makes the rows hold
    held = _record(gen3, quantize=False)
    assert _status(gen3, cfg, held, torque_delay_samples=0.0).status == "inconsistent"
    for unknowns in (True, False):                    # shared timing unknowns or per-row radii
        res = _status(gen3, cfg, held, friction_unknowns=unknowns)
        assert res.status == "ok" and res.contains(held[4])
        assert res.upper[0] - res.lower[0] < 0.05     # not vacuous: 3 mN·m, exact robot

    # quantized positions (0.02°/0.011° counts): Fv·Δq would miss by ~0.0035 N·m·s per window
    # (3.5× a 0.01 N·m bound's radius); the rows' ∫q̇ does not. What a count leaves in the
    # regressors themselves (gravity at q ± ½ count) is within a 0.01 N·m bound.
    counts = _record(gen3, quantize=True)
    cfg = cfg.with_overrides(torque_noise_abs=0.01)
    res = _status(gen3, cfg, counts)
    assert res.status == "ok" and res.contains(counts[4])
    assert res.upper[0] - res.lower[0] < 0.1


def test_noisy_velocities_need_their_bound(gen3):
    """q̇ reported with ±2 mrad/s of noise (the Gen3 hardware-like profile's filtered velocity):
    through Ia·Δq̇ (armature 8–12 kg·m²) and the momentum H(q)·q̇ at the window's ends that is
    up to ~0.05 N·m·s per window, 50× a 0.01 N·m bound's radius. Unstated, the rows contradict
    the truth (`inconsistent`, loudly); stated as ``velocity_noise_abs``, the box holds it."""
    t, q, dq, tau, truth = _record(gen3, quantize=False)
    noisy = dq + np.random.default_rng(7).uniform(-0.002, 0.002, dq.shape)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.01,
                                     torque_noise_rel=0.0, robot_uncertainty_rel=0.0
                                     ).with_overrides(friction_radius=0.0)
    data = (t, q, noisy, tau)
    assert _status(gen3, cfg, data).status == "inconsistent"
    res = _status(gen3, cfg, data, velocity_noise_abs=0.002)
    assert res.status == "ok" and res.contains(truth)
    width = res.upper[0] - res.lower[0]
    exact = _status(gen3, cfg, (t, q, dq, tau))
    assert exact.status == "ok"
    assert exact.upper[0] - exact.lower[0] < width < 1.0   # it costs width; the prior: 4.5 kg


def test_velocity_noise_on_a_floating_base_widens_the_rows():
    """The arm joints' velocity error on the B1 + Z1 enters the base motion's radius rows
    (their coverage of perturbations: test_floating_base.py): the same samples give larger
    IMU-and-velocity radii with it than without."""
    from sysid_ros._src.identification import MomentumWindows
    from sysid_ros._src.identification.base_motion import BaseMotion
    from sysid_ros._src.model.robots import load_robot

    b1 = load_robot("b1_z1")
    rng = np.random.default_rng(0)
    n = 200
    t = np.arange(n) * 2e-3
    q = np.tile(b1.config["simulation"]["home"], (n, 1)) + 0.1 * np.sin(
        np.outer(t, rng.uniform(1.0, 3.0, b1.nj)))
    dq = np.gradient(q, t, axis=0)
    tau = rng.uniform(-1.0, 1.0, (n, b1.nj))
    z = np.zeros((n, 3))
    base = BaseMotion(z, np.tile([0.0, 0.0, -9.81], (n, 1)), np.full((n, 3), 1e-3),
                      np.full((n, 3), 1e-2), np.ones(n, bool))
    cfg = load_identification_config(b1)
    plain = MomentumWindows(b1, cfg, rate_hz=500.0).extend(t, q, dq, tau, base)
    noisy = MomentumWindows(b1, cfg.with_overrides(velocity_noise_abs=0.01),
                            rate_hz=500.0).extend(t, q, dq, tau, base)
    assert len(plain) == len(noisy) > 0
    assert np.all(noisy.base_W >= plain.base_W - 1e-12)
    assert np.all(noisy.base_W.sum(axis=1) > plain.base_W.sum(axis=1))
