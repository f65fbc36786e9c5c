"""The identifiability floor (identification.floor) against independent references.

- The witnesses are robots no data can tell apart from the truth: Pinocchio's RNEA on models
  carrying the witness inertias, plus the friction law evaluated directly, gives the truth's
  torques at fresh random states (not the floor's regressor or its states).
- They lie in the stated boxes and are physically consistent, so every sound box contains the
  floor: the identifier's box on near noise-free simulated data (Pinocchio ABA + RK4) does, and
  on data simulated *from a witness* it still contains the truth's mass.
- With exact links and friction every θ_e coordinate is identifiable (floor of zero width).
- A task holding joints (``moved``): its witnesses give the truth's torques while the others
  rest and not once another joint moves; on the standing B1 + Z1 (floating model, trunk at
  rest) joint 2 alone keeps most of the demo class's mass width.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.identification.floor import identifiability_floor
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.model.robots import load_robot


def _robot_of(robot, x):
    """A copy of ``robot`` whose bodies carry θ = x[:10·n_bodies] and friction x's φ."""
    model = robot.model.copy()
    nb = robot.n_bodies
    for b in range(nb):
        model.inertias[b + 1] = pin.Inertia.FromDynamicParameters(x[10 * b:10 * b + 10])
    return model, x[10 * nb:10 * nb + 4 * robot.nj].reshape(robot.nj, 4)


def _torques(robot, model, phi, q, dq, ddq):
    tau = pin.rnea(model, model.createData(), q, dq, ddq)
    return tau + phi[:, 0] * np.sign(dq) + phi[:, 1] * dq + phi[:, 2] * ddq + phi[:, 3]


@pytest.mark.parametrize("name", ["gen3", "z1"])
def test_witnesses_are_indistinguishable_consistent_robots_in_the_boxes(name):
    robot = load_robot(name)
    cfg = load_identification_config(robot)
    floor = identifiability_floor(robot, cfg)
    # the link box leaves the EE body's mass free by a few per cent of the prior: not vacuous
    assert 0.01 * cfg.prior.width[0] < floor.width[0] < 0.2 * cfg.prior.width[0]
    truth_model, truth_phi = _robot_of(robot, floor.truth)
    rng = np.random.default_rng(42)
    lo_r, hi_r = cfg.theta_r_box
    mask = np.ones(10 * robot.n_bodies, bool)
    mask[robot.ee_columns] = False
    for side in (0, 1):
        w = floor.witnesses[side, 0]                      # the mass's extreme
        assert w[robot.ee_columns][0] == pytest.approx(
            floor.box.lower[0] if side == 0 else floor.box.upper[0], abs=1e-12)
        model, phi = _robot_of(robot, w)
        for b in range(robot.n_bodies):
            assert is_physically_consistent(w[10 * b:10 * b + 10], -1e-9)
        theta = w[:10 * robot.n_bodies]
        assert cfg.prior.contains(theta[robot.ee_columns], tol=1e-7)
        assert np.all(theta[mask] >= lo_r - 1e-7) and np.all(theta[mask] <= hi_r + 1e-7)
        assert np.all(phi >= cfg.friction_lower - 1e-7) and np.all(phi <= cfg.friction_upper + 1e-7)
        for _ in range(30):
            q = robot.random_configuration(rng)
            dq = rng.uniform(-1, 1, robot.nv) * robot.limits.dq_max
            ddq = rng.uniform(-5, 5, robot.nv)
            ref = _torques(robot, truth_model, truth_phi, q, dq, ddq)
            got = _torques(robot, model, phi, q, dq, ddq)
            assert np.max(np.abs(got - ref)) <= 1e-7 * max(1.0, np.max(np.abs(ref)))
    assert floor.consistent and floor.residual < 1e-7


def test_witnesses_with_a_calibrated_ripple_term_are_indistinguishable(gen3):
    """With calibrated extra terms (a sin/cos(2q) ripple box per joint) the floor's unknowns
    include their coefficients ψ: each witness, its ripple evaluated by hand, gives the truth's
    torques at fresh states, with ψ inside its box."""
    terms = FrictionTerms(("harmonic 2",), np.zeros((gen3.nj, 2)), -np.ones((gen3.nj, 2)),
                          np.ones((gen3.nj, 2)))
    robot = dataclasses.replace(gen3, friction=dataclasses.replace(gen3.friction, terms=terms))
    cfg = load_identification_config(robot, friction="config")     # the calibrated box's mode
    floor = identifiability_floor(robot, cfg)
    n_phi = 10 * robot.n_bodies + 4 * robot.nj
    assert floor.truth.size == n_phi + 2 * robot.nj
    rng = np.random.default_rng(7)

    def torques(x, q, dq, ddq):
        model, phi = _robot_of(robot, x)
        psi = x[n_phi:].reshape(robot.nj, 2)
        return (_torques(robot, model, phi, q, dq, ddq)
                + psi[:, 0] * np.sin(2 * q) + psi[:, 1] * np.cos(2 * q))

    for side in (0, 1):
        w = floor.witnesses[side, 0]
        assert np.all(np.abs(w[n_phi:]) <= 1.0 + 1e-7)
        for _ in range(20):
            q = robot.random_configuration(rng)
            dq = rng.uniform(-1, 1, robot.nv) * robot.limits.dq_max
            ddq = rng.uniform(-5, 5, robot.nv)
            ref = torques(floor.truth, q, dq, ddq)
            assert np.max(np.abs(torques(w, q, dq, ddq) - ref)) <= 1e-7 * max(
                1.0, np.max(np.abs(ref)))
    assert floor.consistent


def test_exact_links_and_friction_leave_no_floor(gen3):
    lo, hi = gen3.theta_r(), gen3.theta_r()
    cfg = load_identification_config(gen3).with_overrides(
        theta_r_lower=lo, theta_r_upper=hi,
        friction_lower=gen3.friction.nominal, friction_upper=gen3.friction.nominal)
    floor = identifiability_floor(gen3, cfg)
    assert np.all(floor.width <= 1e-6 * np.maximum(1.0, cfg.prior.width))


@pytest.mark.slow
def test_exact_calibration_narrows_the_mass_floor_to_the_calibration_body_box(gen3):
    cfg = load_identification_config(gen3)
    ee = gen3.theta_e()
    rad = 0.03 * np.abs(ee)
    plain = identifiability_floor(gen3, cfg)
    cal = identifiability_floor(gen3, cfg, calibration_ee=theta_e_box(ee - rad, ee + rad, ee))
    assert cal.width[0] < plain.width[0]
    # the calibration body's mass box (±3 %) is what a perfect calibration leaves of the mass
    assert cal.width[0] <= 2 * rad[0] + 1e-6
    assert cal.residual < 1e-7 and cal.consistent


def test_every_sound_box_contains_the_floor_and_a_witness_hides_the_truth(gen3):
    """Simulated data (Pinocchio ABA, not the floor's regressor) with a small noise bound: the
    identifier's box contains the floor's interval; data simulated from the upper-mass witness
    give a box that still contains the truth's mass, which lies a floor-width below."""
    rng = np.random.default_rng(3)
    theta = gen3.theta_e() + random_payload_theta(rng, 4.0)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.002,
                                     torque_noise_rel=0.0).with_overrides(theta_r_unknowns=True)
    floor = identifiability_floor(gen3, cfg, theta)
    run = simulate(gen3, np.random.default_rng(5), theta_e=theta, duration=2.0, noise_abs=0.002,
                   robot_rel=0.0, friction_true=cfg.friction_nominal)
    res = identify(gen3, cfg, run.t, run.q, run.dq, run.tau_meas, "lp", point_estimate=False)
    assert res.status == "ok"
    assert np.all(res.lower <= floor.box.lower + 1e-9) and np.all(res.upper >= floor.box.upper - 1e-9)
    # the data narrowed the box to within 2x of the floor: the floor is what limits it here
    assert res.upper[0] - res.lower[0] < 2.0 * floor.width[0]

    witness = floor.witnesses[1, 0]
    model, phi = _robot_of(gen3, witness)
    other = dataclasses.replace(gen3, model=model)
    run_w = simulate(other, np.random.default_rng(5), theta_e=witness[gen3.ee_columns],
                     duration=2.0, noise_abs=0.002, robot_rel=0.0, friction_true=phi)
    res_w = identify(gen3, cfg, run_w.t, run_w.q, run_w.dq, run_w.tau_meas, "lp",
                     point_estimate=False)
    assert res_w.status == "ok"
    assert res_w.lower[0] <= theta[0] <= res_w.upper[0]
    assert res_w.lower[0] <= witness[gen3.ee_columns][0] <= res_w.upper[0]


def test_bad_inputs_are_refused(gen3):
    cfg = load_identification_config(gen3)
    with pytest.raises(IdentificationConfigError, match="prior box"):
        identifiability_floor(gen3, cfg, cfg.prior.upper + 1.0)
    with pytest.raises(IdentificationConfigError, match="10 entries"):
        identifiability_floor(gen3, cfg, np.zeros(3))
    with pytest.raises(IdentificationConfigError, match="moved"):
        identifiability_floor(gen3, cfg, moved=[gen3.nj])
    with pytest.raises(IdentificationConfigError, match="pose"):
        identifiability_floor(gen3, cfg, moved=[1], pose=np.zeros(2))


def _rest_states(robot, rng, moved, pose, n):
    """States where only ``moved`` move (others at rest at ``pose``; a floating trunk upright
    at rest), independently of the floor's own sampler."""
    for _ in range(n):
        q = robot.neutral()
        q[robot.q_index] = pose
        dq, ddq = np.zeros(robot.nv), np.zeros(robot.nv)
        for j in moved:
            q[robot.q_index[j]] = rng.uniform(robot.limits.q_lower[j], robot.limits.q_upper[j])
            dq[robot.v_index[j]] = rng.uniform(-1, 1) * robot.limits.dq_max[j]
            ddq[robot.v_index[j]] = rng.uniform(-5, 5)
        yield q, dq, ddq


def _friction_torque(robot, phi, dq, ddq):
    v = robot.v_index
    return phi[:, 0] * np.sign(dq[v]) + phi[:, 1] * dq[v] + phi[:, 2] * ddq[v] + phi[:, 3]


@pytest.mark.slow     # ~18 s: two floors (40 SDPs)
def test_a_task_holding_joints_leaves_a_wider_floor_its_witnesses_hidden_while_held():
    """Z1 moving joint 2 alone: the floor contains the every-motion floor, and its mass witnesses
    give the truth's torques (Pinocchio RNEA + the friction law) at fresh states moving joint 2
    only, but not once joint 3 moves too: the held joints are what hides them."""
    z1 = load_robot("z1")
    cfg = load_identification_config(z1)
    pose = np.asarray(z1.config["demo"]["start"], float)
    held = identifiability_floor(z1, cfg, moved=[1], pose=pose)
    every = identifiability_floor(z1, cfg)
    assert held.width[0] > 1.5 * every.width[0]
    assert np.all(held.box.lower <= every.box.lower + 1e-9)
    assert np.all(held.box.upper >= every.box.upper - 1e-9)
    assert held.consistent and held.residual < 1e-7
    truth_model, truth_phi = _robot_of(z1, held.truth)
    rng = np.random.default_rng(7)
    worst_moved, worst_two = 0.0, 0.0
    for side in (0, 1):
        model, phi = _robot_of(z1, held.witnesses[side, 0])
        for moved, _ in (([1], "held"), ([1, 2], "two")):
            for q, dq, ddq in _rest_states(z1, rng, moved, pose, 20):
                ref = pin.rnea(truth_model, truth_model.createData(), q, dq, ddq) \
                    + _friction_torque(z1, truth_phi, dq, ddq)
                got = pin.rnea(model, model.createData(), q, dq, ddq) \
                    + _friction_torque(z1, phi, dq, ddq)
                err = np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref)))
                if moved == [1]:
                    worst_moved = max(worst_moved, err)
                else:
                    worst_two = max(worst_two, err)
    assert worst_moved <= 1e-7
    assert worst_two > 100 * 1e-7


@pytest.mark.slow     # ~25 s: the floating model's SDPs
def test_the_standing_b1_moving_joint_2_alone_cannot_narrow_its_demo_class():
    """B1 + Z1, the demo's payload class (CAD ± 3 %) and the robot file's link box (± 5 %): noise-
    free data of joint 2 alone, trunk at rest, leave most of the class's mass width; the mass
    witnesses give the truth's arm torques (Pinocchio RNEA of the floating model) at fresh such
    states. Moving every arm joint and the trunk narrows the floor."""
    b1 = load_robot("b1_z1")
    box = b1.config["demo"]["prior_box"]
    klass = theta_e_box(np.asarray(box["lower"], float), np.asarray(box["upper"], float))
    cfg = load_identification_config(b1).with_overrides(prior=klass)
    from sysid_ros._src.control.legs import standing_configuration

    pose = standing_configuration(b1)[b1.q_index]
    arm = [b1.joint_names.index(n) for n in b1.config["arm_joints"]]
    pose[arm] = b1.config["demo"]["start"]
    theta = 0.5 * (klass.lower + klass.upper)
    j2 = b1.joint_names.index("joint2")
    floor = identifiability_floor(b1, cfg, theta, moved=[j2], pose=pose)
    assert floor.width[0] > 0.8 * klass.width[0]
    assert floor.consistent and floor.residual < 1e-7
    every = identifiability_floor(b1, cfg, theta)
    assert every.width[0] < 0.8 * floor.width[0]
    truth_model, truth_phi = _robot_of(b1, floor.truth)
    rng = np.random.default_rng(3)
    rows = b1.v_index[arm]
    for side in (0, 1):
        model, phi = _robot_of(b1, floor.witnesses[side, 0])
        for q, dq, ddq in _rest_states(b1, rng, [j2], pose, 20):
            ref = pin.rnea(truth_model, truth_model.createData(), q, dq, ddq)[rows] \
                + _friction_torque(b1, truth_phi, dq, ddq)[arm]
            got = pin.rnea(model, model.createData(), q, dq, ddq)[rows] \
                + _friction_torque(b1, phi, dq, ddq)[arm]
            assert np.max(np.abs(got - ref)) <= 1e-7 * max(1.0, np.max(np.abs(ref)))


@pytest.mark.slow     # ~8 s: three floors of the Z1
def test_an_unloaded_arm_calibration_leaves_the_b1_class_mass_at_the_ee_link_box():
    """The arm view of the standing B1 + Z1 (the Z1, whose links and friction the b1_z1 model's arm
    carries: checked on the two Pinocchio models), its demo class and pose, joint 2 alone. Noise-free
    rows of a no-payload calibration pin every combination the task sees except the end-effector
    link's own mass, grouped with its parent's parameters in every unloaded motion: the mass floor
    is exactly that link's mass box (its prior ± links_rel: no unloaded data narrow it), most of
    the class at ± 5 %, a fifth at ± 1 %."""
    z1, b1 = load_robot("z1"), load_robot("b1_z1")
    for name in b1.config["arm_joints"]:
        arm_body = b1.model.inertias[b1.model.getJointId(name)].toDynamicParameters()
        assert np.allclose(arm_body, z1.model.inertias[z1.model.getJointId(name)]
                           .toDynamicParameters(), rtol=0, atol=1e-12)
    arm = [b1.joint_names.index(n) for n in b1.config["arm_joints"]]
    assert np.array_equal(b1.friction.nominal[arm], z1.friction.nominal)
    box = b1.config["demo"]["prior_box"]
    klass = theta_e_box(np.asarray(box["lower"], float), np.asarray(box["upper"], float))
    cfg = load_identification_config(z1).with_overrides(prior=klass)
    theta = 0.5 * (klass.lower + klass.upper)
    pose = np.asarray(b1.config["demo"]["start"], float)
    plain = identifiability_floor(z1, cfg, theta, moved=[1], pose=pose, states=100)
    ee, width = z1.theta_e(), {}
    for rel in (b1.config["model_uncertainty"]["links_rel"], 0.01):
        rad = rel * np.abs(ee)
        cal = identifiability_floor(z1, cfg, theta, moved=[1], pose=pose, states=100,
                                    calibration_ee=theta_e_box(ee - rad, ee + rad, ee))
        assert cal.width[0] == pytest.approx(2 * rad[0], rel=1e-4)
        assert cal.width[0] <= plain.width[0] + 1e-9
        assert cal.consistent and cal.residual < 1e-7
        width[rel] = cal.width[0]
    assert width[b1.config["model_uncertainty"]["links_rel"]] > 0.8 * klass.width[0]
    assert width[0.01] < 0.2 * klass.width[0]
