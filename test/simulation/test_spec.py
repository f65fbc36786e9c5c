"""A simulator's specification: resolved once at construction, it fully determines a run, and a
bad setting is refused there, naming it."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import (
    HardwareProfile, SimConfig, SimConfigError, Simulator, SimulatorSpec, dumbbell_for,
    random_hardware_truth, sim_truth,
)

from .mujoco_bodies import mj_body_theta




def _run(spec: SimulatorSpec, periods: int = 40) -> np.ndarray:
    """Measurements of a run from ``spec``: held, then commanded, then held again."""
    sim = Simulator(spec)
    rows = []
    for k in range(periods):
        cmd = None if k < 10 or k >= 30 else np.full(len(sim.command_joints), 0.3)
        sim.step(cmd, 4)
        m = sim.measure()
        rows.append(np.concatenate([[m.t], m.q, m.dq, m.tau_measured]))
    return np.array(rows)


def test_the_spec_resolves_what_the_simulator_simulates(gen3, b1_z1):
    """The resolved θ_e is the EE body MuJoCo compiled; the physics step, gains, home and
    noise bounds are the robot file's and the settings' (independently read here)."""
    payload = dumbbell_for(gen3, 2.27)
    spec = SimulatorSpec(gen3, payload, SimConfig(noise_tau=0.1, physics_dt=5e-4), seed=1)
    sim = Simulator(spec)
    np.testing.assert_allclose(mj_body_theta(sim.model, sim.mj.ee_body), spec.theta_e,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(spec.theta_e, gen3.theta_e() + payload.theta(), rtol=1e-12)
    section = gen3.config["simulation"]
    assert spec.physics_dt == sim.physics_dt == 5e-4
    np.testing.assert_array_equal(spec.hold_kp, np.broadcast_to(section["hold_kp"], (gen3.nj,)))
    np.testing.assert_array_equal(spec.home, section["home"])
    np.testing.assert_array_equal(spec.noise_tau, np.full(gen3.nj, 0.1))
    assert spec.command_joints == tuple(gen3.joint_names) and not spec.standing
    # physics_dt 0: the robot file's (1 ms on the standing B1 + Z1), legs at their posture
    legs = SimulatorSpec(b1_z1, config=SimConfig(physics_dt=0.0))
    assert legs.physics_dt == float(b1_z1.config["simulation"]["physics_dt"])
    assert legs.standing and legs.command_joints == tuple(b1_z1.config["arm_joints"])
    held = [n not in legs.command_joints for n in b1_z1.joint_names]
    np.testing.assert_array_equal(legs.posture[held], b1_z1.config["leg_standing_posture"])
    np.testing.assert_array_equal(legs.posture[np.logical_not(held)], 0.0)


def test_a_spec_fully_determines_the_run_and_cannot_change(gen3):
    spec = SimulatorSpec(gen3, dumbbell_for(gen3, 1.81), SimConfig(noise_tau=0.2, noise_dq=0.01),
                         seed=5)
    first = _run(spec)
    np.testing.assert_array_equal(first, _run(spec))           # bit for bit, same spec
    other_seed = _run(dataclasses.replace(spec, seed=6))
    assert np.any(first != other_seed)                          # only the noise differs
    np.testing.assert_array_equal(first[:, 0], other_seed[:, 0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.seed = 7                                           # type: ignore[misc]
    for name in ("theta_e", "friction", "hold_kp", "home", "posture", "noise_tau"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(spec, name)[0] = 1.0
    # a payload swap changes the simulator, never the spec it started from
    sim = Simulator(spec)
    before = spec.theta_e.copy()
    sim.set_payload(None)
    np.testing.assert_array_equal(spec.theta_e, before)
    np.testing.assert_allclose(sim.true_theta_e(), gen3.theta_e(), atol=1e-12)
    # replace() resolves again: the new payload's θ_e
    np.testing.assert_allclose(dataclasses.replace(spec, payload=None).theta_e, gen3.theta_e())


def test_hardware_like_spec_simulates_the_drawn_truth_with_its_payload(gen3):
    payload = dumbbell_for(gen3, 2.27)
    drawn = sim_truth(gen3, 3)                                  # drawn without the payload
    profile = HardwareProfile.from_robot(gen3)
    spec = SimulatorSpec.hardware_like(gen3, payload, profile, drawn, seed=2)
    assert spec.truth is not None
    np.testing.assert_allclose(spec.truth.theta_e, gen3.theta_e() + payload.theta(), rtol=1e-12)
    np.testing.assert_array_equal(spec.truth.friction, drawn.friction)
    np.testing.assert_array_equal(spec.friction, drawn.friction)
    assert spec.physics_dt == profile.physics_step and spec.config.coulomb == "mujoco"
    np.testing.assert_array_equal(spec.noise_tau, 0.0)
    assert spec.config.quantize is False
    # the compiled model carries the truth: joint dry friction, damping, armature, EE body
    sim = Simulator(spec)
    adr = sim.mj.dof_adr
    np.testing.assert_allclose(sim.model.dof_frictionloss[adr], drawn.friction[:, 0])
    np.testing.assert_allclose(sim.model.dof_damping[adr], drawn.friction[:, 1])
    np.testing.assert_allclose(sim.model.dof_armature[adr], drawn.friction[:, 2])
    np.testing.assert_allclose(mj_body_theta(sim.model, sim.mj.ee_body), spec.truth.theta_e,
                               rtol=1e-9, atol=1e-12)


def test_bad_settings_are_refused_when_the_spec_is_built(gen3):
    def with_simulation(**changes):
        config = copy.deepcopy(gen3.config)
        config["simulation"].update(changes)
        return dataclasses.replace(gen3, config=config)

    cases = [
        (gen3, SimConfig(integrator="RK4"), "integrator"),
        (gen3, SimConfig(coulomb="soft"), "coulomb"),
        (gen3, SimConfig(hold_kp=[1.0, 2.0]), "hold_kp"),
        (with_simulation(home=[0.0, 0.1]), SimConfig(), "simulation.home"),
        (with_simulation(physics_dt=0.01), SimConfig(physics_dt=0.0), "simulation.physics_dt"),
        (dataclasses.replace(gen3, config={**gen3.config, "arm_joints": ["joint_1", "wrist"]}),
         SimConfig(), "arm_joints"),
        (dataclasses.replace(gen3, config={**gen3.config, "arm_joints": ["joint_1"]}),
         SimConfig(), "leg_standing_posture"),
    ]
    for robot, config, match in cases:
        with pytest.raises(SimConfigError, match=match):
            SimulatorSpec(robot, config=config)
    with pytest.raises(TypeError, match="SimulatorSpec"):
        Simulator(gen3)                                         # type: ignore[arg-type]
    z1_truth = random_hardware_truth(load_robot("z1"), np.random.default_rng(0))
    with pytest.raises(SimConfigError, match="friction has shape"):
        SimulatorSpec(gen3, truth=z1_truth)
