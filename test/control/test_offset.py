"""Where the offset β acts (controller.torque_offset): the controller's box against a drawn
hardware-like Z1 whose β shifts only its torque reading, torques from Pinocchio's RNEA."""
from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.controller import ControllerGains, RobustController
from sysid_ros._src.control.errors import ControllerConfigError
from sysid_ros._src.control.offset import controller_friction, friction_premise_violations
from sysid_ros._src.demo.plant_premise import simulated_friction_violations
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import sim_truth

SEED = 1          # its wrist roll reads β = 0.48 N·m


def _calibrated(robot, truth, offset):
    """``robot`` as a calibration of the drawn one leaves it: its friction box around the
    drawn values (β: the reading's), and ``controller.torque_offset`` = ``offset``."""
    f = truth.friction
    rad = 0.05 * np.abs(f) + 0.02
    rad[:, 2] = 0.0
    lower = f - rad
    lower[:, :2] = np.maximum(lower[:, :2], 0.0)        # Fc, Fv ≥ 0
    fr = dataclasses.replace(robot.friction, nominal=f.copy(), lower=lower, upper=f + rad)
    config = {**robot.config, "controller": {**robot.config["controller"],
                                             "torque_offset": offset}}
    return dataclasses.replace(robot, friction=fr, config=config)


@pytest.fixture(scope="module")
def z1():
    return load_robot("z1")


def test_either_takes_the_hull_with_zero_and_arm_keeps_the_box(z1):
    truth = sim_truth(z1, SEED)
    arm, either = (_calibrated(z1, truth, o) for o in ("arm", "either"))
    assert controller_friction(arm) is arm.friction
    fa, fe = arm.friction, controller_friction(either)
    np.testing.assert_array_equal(fe.lower[:, :3], fa.lower[:, :3])
    np.testing.assert_array_equal(fe.upper[:, :3], fa.upper[:, :3])
    np.testing.assert_array_equal(fe.lower[:, 3], np.minimum(fa.lower[:, 3], 0.0))
    np.testing.assert_array_equal(fe.upper[:, 3], np.maximum(fa.upper[:, 3], 0.0))
    np.testing.assert_allclose(fe.nominal[:, 3], 0.5 * (fe.lower[:, 3] + fe.upper[:, 3]))
    bad = dataclasses.replace(arm, config={**arm.config, "controller": {
        **arm.config["controller"], "torque_offset": "sensor"}})
    with pytest.raises(ControllerConfigError, match="torque_offset"):
        controller_friction(bad)


def test_the_arm_offset_premise_is_named_when_broken(z1):
    """The drawn arm (β_arm = 0: the simulator's offset is the reading's) against the box: with
    ``arm`` every joint whose reading's offset box excludes 0 is named with its distance; with
    ``either`` nothing is; the demo's check draws the same arm."""
    truth = sim_truth(z1, SEED)
    plant = truth.friction.copy()
    plant[:, 3] = 0.0
    arm, either = (_calibrated(z1, truth, o) for o in ("arm", "either"))
    named = friction_premise_violations(arm, plant)
    lo = arm.friction.lower[:, 3]
    hi = arm.friction.upper[:, 3]
    outside = [z1.joint_names[j] for j in range(z1.nj) if lo[j] > 0 or hi[j] < 0]
    assert outside and [n.split()[0] for n in named] == outside
    assert all(" beta 0 " in n for n in named)
    assert friction_premise_violations(either, plant) == []
    assert simulated_friction_violations(z1, arm, SEED) == named
    assert simulated_friction_violations(z1, either, SEED) == []


def test_the_law_encloses_the_arm_torque_only_with_either(z1):
    """τ of the drawn arm (RNEA, its friction with β_arm = 0, moving joints) lies in the
    controller's interval with ``either``; with ``arm`` it misses on a joint whose reading's
    offset box excludes 0, by that distance."""
    truth = sim_truth(z1, SEED)
    arm, either = (_calibrated(z1, truth, o) for o in ("arm", "either"))
    rng = np.random.default_rng(0)
    q = pin.neutral(z1.model) + rng.uniform(-0.5, 0.5, z1.nv)
    dq = rng.choice([-1.0, 1.0], z1.nv) * rng.uniform(0.3, 0.6, z1.nv)   # beyond the band
    ddq_a = rng.uniform(-1, 1, z1.nv)
    data = z1.model.createData()
    f = truth.friction
    # the robot file's own links: the controller's θ_r box is centred on them
    tau = (pin.rnea(z1.model, data, q, dq, ddq_a) + f[:, 0] * np.sign(dq) + f[:, 1] * dq
           + f[:, 2] * ddq_a)
    th_e = z1.theta_e()       # the model's own end body, without payload
    box = theta_e_box(th_e - 1e-6, th_e + 1e-6, th_e)
    gains = ControllerGains(10.0, 20.0, 1e-4, metric="mass", coulomb_band=0.02)
    inside = {}
    for name, robot in (("arm", arm), ("either", either)):
        ctl = RobustController(robot, gains, prior=box)
        itv = ctl.torque_interval(q, dq, dq, ddq_a)
        inside[name] = (itv.lower - 1e-9 <= tau) & (tau <= itv.upper + 1e-9)
        if name == "arm":
            miss = np.maximum(itv.lower - tau, tau - itv.upper)
            rest = itv.radius - ctl.fric_radius[:, 3]        # the radius but β's
    assert inside["either"].all()
    lo, hi = arm.friction.lower[:, 3], arm.friction.upper[:, 3]
    gap = np.maximum(np.maximum(lo, -hi), 0.0)               # from 0 to the reading's β box
    # missed wherever the gap exceeds the rest of the radius (the wrist roll: no gravity),
    # by at most the gap
    beyond = gap > rest + 1e-6
    assert beyond[5] and not inside["arm"][beyond].any()
    assert np.all(miss <= gap + 1e-9)
