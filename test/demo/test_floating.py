"""The demo's floating-base check: the trunk motion read back from a recorded /imu equals the
simulator's truth, a calm stance holds the assumed bound, and an arm whose torque chatters (as
the robust input does in the closed loop) violates it and fails the run with the value. The
exact base disturbance (control.arm_view.DisturbanceRows) equals Pinocchio's full-body RNEA, and a
trunk pushed beyond its bound takes |d| beyond d̄, which fails the run loudly too."""
from __future__ import annotations

import re

import numpy as np
import pytest

from sysid_ros._src.bagio import BagWriter, default_typestore
from sysid_ros._src.demo.floating import (COMMAND_TOPIC, floating_base_findings,
                                      robot_file_with_prior_box)
import pinocchio as pin

from sysid_ros._src.control.arm_view import DisturbanceRows, arm_view
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec

_TS = default_typestore()


def imu_msg(stamp_ns: int, vals) -> object:
    t = _TS.types
    vec = t["geometry_msgs/msg/Vector3"]
    return t["sensor_msgs/msg/Imu"](
        header=t["std_msgs/msg/Header"](
            stamp=t["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9,
                                                   nanosec=stamp_ns % 10**9),
            frame_id="imu_link"),
        orientation=t["geometry_msgs/msg/Quaternion"](x=vals[0], y=vals[1], z=vals[2], w=vals[3]),
        orientation_covariance=np.zeros(9),
        angular_velocity=vec(x=vals[4], y=vals[5], z=vals[6]),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=vec(x=vals[7], y=vals[8], z=vals[9]),
        linear_acceleration_covariance=np.zeros(9))


def joint_msg(stamp_ns: int, names, q, dq, tau) -> object:
    t = _TS.types
    return t["sensor_msgs/msg/JointState"](
        header=t["std_msgs/msg/Header"](
            stamp=t["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9,
                                                   nanosec=stamp_ns % 10**9), frame_id=""),
        name=list(names), position=np.asarray(q, float), velocity=np.asarray(dq, float),
        effort=np.asarray(tau, float))


@pytest.fixture(scope="module")
def b1_z1():
    return load_robot("b1_z1")


def command_msg(values) -> object:
    return _TS.types["std_msgs/msg/Float64MultiArray"](
        layout=_TS.types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0),
        data=np.asarray(values, float))


def _record(robot, tmp_path, name: str, chatter: float,
            command_scale: float = 1.0) -> tuple[object, float]:
    """1.5 s of the standing robot (arm holding; ``chatter`` N·m alternating on joint 1 each
    ms after 0.5 s) with its IMU and the arm's command (× ``command_scale``: 0 records a calm
    command beside the chattering torque) written to a bag; returns the bag and the truth's
    max ‖ω‖."""
    sim = Simulator(SimulatorSpec(robot, config=SimConfig(physics_dt=1e-3), seed=0))
    sim.step(None, n_steps=1000)
    hold = sim.q[12:]
    bag = tmp_path / name
    omega_truth = 0.0
    with BagWriter(bag) as w:
        for k in range(1500):
            tau = 30.0 * (hold - sim.q[12:]) - 1.0 * sim.dq[12:]
            if k < 500 or chatter == 0.0:
                sim.step(None, n_steps=1)
            else:
                tau[0] += chatter * (1 if k % 2 else -1)
                sim.step(tau, n_steps=1)
            m = sim.measure()
            vals = [*m.imu.orientation_xyzw, *m.imu.angular_velocity, *m.imu.linear_acceleration]
            stamp = int(round(m.t * 1e9))
            w.write("/imu", imu_msg(stamp, vals), stamp)
            w.write("/joint_states", joint_msg(stamp, robot.joint_names, m.q, m.dq,
                                                 m.tau_measured), stamp)
            w.write(COMMAND_TOPIC, command_msg(command_scale * tau), stamp)
            omega_truth = max(omega_truth, float(np.linalg.norm(sim.state().v[3:6])))
    return bag, omega_truth


def test_calm_stance_holds_the_bound_and_the_report_matches_the_truth(b1_z1, tmp_path):
    bag, omega = _record(b1_z1, tmp_path, "calm", 0.0)
    header, violations = floating_base_findings(b1_z1, arm_view(b1_z1), bag, (1.0, np.inf))
    assert violations == []
    line = header["trunk motion (IMU, max over the closed loop)"]
    assert ": held;" in line
    seen = float(re.search(r"‖ω‖ ([0-9.e-]+) rad/s", line).group(1))
    assert seen == pytest.approx(omega, rel=0.01)  # the gyro is the trunk's ω (3 digits)
    assert "trunk frame" in header["not guaranteed on a moving base"]
    assert header["base disturbance of the recorded trunk motion, max |d_j|/d̄_j"].endswith(
        "held)")
    assert "longest 1 ms" in line
    assert "trunk α above the bound, against the arm's command" not in header
    assert header["legs' contract (arm_view.legs)"].endswith("(held)")


def test_chattering_arm_violates_the_bound_and_fails_the_run(b1_z1, tmp_path):
    bag, omega = _record(b1_z1, tmp_path, "chatter", 8.0)
    header, violations = floating_base_findings(b1_z1, arm_view(b1_z1), bag, (1.0, np.inf))
    assert any("alpha" in v for v in violations)
    assert all(v.startswith("floating base: ") for v in violations)
    # 8 N·m alternating on joint 1 each ms: the exact disturbance exceeds d̄ as well, loudly
    assert any("base disturbance on joint" in v and "> d̄" in v for v in violations)
    assert "exceeded" in header["base disturbance of the recorded trunk motion, max |d_j|/d̄_j"]
    assert "the guarantee does not cover this run" in header["what a violation means"]
    # joint 1 is a held joint of the legs' contract: driven out of its Coulomb band, it fails
    # the run too (a friction jump the contract's trunk bound excludes), with its speed
    assert any(v.startswith("floating base: held joint joint1 reached |q̇|") for v in violations)
    assert "(exceeded)" in header["legs' contract (arm_view.legs)"]
    # the report's why, from the run: every block above the bound is one where the command
    # switched (8 N·m each ms)
    why = header["trunk α above the bound, against the arm's command"]
    n_hot, n_over = map(int, re.match(r"(\d+) of (\d+) 50-ms blocks", why).groups())
    assert n_over > 0 and n_hot == n_over
    assert ": violated;" in header["trunk motion (IMU, max over the closed loop)"]
    line = header["trunk motion (IMU, max over the closed loop)"]
    seen = float(re.search(r"‖ω‖ ([0-9.e-]+) rad/s", line).group(1))
    assert seen == pytest.approx(omega, rel=0.01)  # gyro = the trunk's angular velocity


def test_attribution_does_not_blame_a_calm_command(b1_z1, tmp_path):
    """The same chattering torque with a calm command on record: the trunk still leaves its
    bound, and the report says the command did not switch there (0 of N), rather than
    attributing by default."""
    bag, _ = _record(b1_z1, tmp_path, "calm_command", 8.0, command_scale=0.0)
    header, violations = floating_base_findings(b1_z1, arm_view(b1_z1), bag, (1.0, np.inf))
    assert any("alpha" in v for v in violations)
    why = header["trunk α above the bound, against the arm's command"]
    assert re.match(r"0 of [1-9]\d* 50-ms blocks", why), why


def test_run_robot_file_carries_the_demo_prior_box(b1_z1, tmp_path):
    path = robot_file_with_prior_box(b1_z1, tmp_path)
    run = load_robot(path)
    box = b1_z1.config["demo"]["prior_box"]
    assert run.config["identification"]["prior"] == {"lower": box["lower"], "upper": box["upper"]}
    assert load_robot("b1_z1").config["identification"]["prior"] != run.config[
        "identification"]["prior"]                 # the robot file itself is untouched


def test_disturbance_rows_equal_the_full_body_rnea(b1_z1):
    """d = Y_d θ from the IMU quantities only (trunk twist, α, specific force) equals the view's
    RNEA minus the floating robot's arm rows (Pinocchio, trunk tilted, rotating, accelerating),
    and the run-level ratio is 0 for a trunk at rest."""
    view = arm_view(b1_z1)
    rows = DisturbanceRows(b1_z1, view)
    rng = np.random.default_rng(3)
    arm = [b1_z1.joint_names.index(n) for n in view.joint_names]
    cols = b1_z1.v_index[arm]
    for _ in range(5):
        qa, dqa = rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6)
        q = b1_z1.neutral()
        q[b1_z1.q_index[arm]] = qa
        rot = pin.exp3(rng.uniform(-0.05, 0.05, 3))
        q[3:7] = pin.Quaternion(rot).coeffs()
        w, al, acc = rng.normal(size=3) * 0.1, rng.normal(size=3), rng.normal(size=3) * 0.3
        v, a = np.zeros(b1_z1.nv), np.zeros(b1_z1.nv)
        v[3:6], v[cols], a[0:3], a[3:6] = w, dqa, acc, al
        exact = (pin.rnea(view.model, view.model.createData(), qa, dqa, np.zeros(6))
                 - pin.rnea(b1_z1.model, b1_z1.model.createData(), q, v, a)[cols])
        # the IMU at the trunk origin: specific force = a_origin − Rᵀg (v_lin = 0 here)
        f = acc - rot.T @ np.array([0.0, 0.0, -9.81])
        np.testing.assert_allclose(rows(qa, dqa, w, al, f) @ view.theta(), exact, atol=1e-9)
        assert np.abs(exact).max() > 1e-3                   # the motion does load the arm
