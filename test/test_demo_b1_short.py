"""The B1 + Z1 demo through the real graph (slow): sim (standing B1, real foot contacts),
identifier, arm-view controller and recorder as separate processes; two exciting trajectories,
the return and the task, inside the operating envelope (sysid_ros._src.demo.envelope: joint 2 moves,
the others are held in their Coulomb band, the legs' contract bounds the trunk per axis).
Checked independently of the report: the recorded bounds contain the truth and are no
narrower than the report's identifiability floor of moving joint 2 alone, the controller
commanded the six arm joints within their limits, the legs stood (posture, trunk height), the
held joints stayed in their band, and the report's trunk-motion verdict is the one the
recorded /imu gives over the closed loop (from the first desired trajectory on) against
arm_view.trunk_motion, per axis. Every premise holds in this run, so it ends Result: success.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src.bagio import default_typestore, open_bag, read_imu, read_joint_states
from sysid_ros._src.control.arm_view import TrunkMotionBound, trunk_motion_report
from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.model.robots import load_robot

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def _messages(bag: Path, topic: str) -> list:
    reader = open_bag(bag)
    store = default_typestore()
    try:
        conns = [c for c in reader.connections if c.topic == topic]
        assert conns, f"{topic} was not recorded"
        return [store.deserialize_cdr(raw, c.msgtype) for c, _, raw in reader.messages(conns)]
    finally:
        reader.close()


def test_b1_z1_demo_reports_the_trunk_motion_the_imu_recorded(tmp_path):
    out = tmp_path / "demo"
    exe = Path(sys.executable).with_name("sysid-demo")
    proc = subprocess.run(
        [str(exe), "--robot", "b1_z1", "--trajectories", "2", "--timeout", "520",
         "--out", str(out)], capture_output=True, text=True, timeout=580,
        env={**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"})
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    text = (out / "report.md").read_text()
    robot = load_robot(out / "b1_z1.yaml")            # the run's facts (demo prior box)
    bag = next(p for p in (out / "bag").iterdir() if p.is_dir())

    js = read_joint_states(bag, "/joint_states", list(robot.joint_names))
    assert js.t[-1] - js.t[0] > 5.0, "the run is too short to have executed the task"
    legs = np.asarray(robot.config["leg_standing_posture"])
    assert np.abs(js.position[:, :12] - legs).max() < 0.05

    truth_msg = _messages(bag, "/sim/payload_truth")[-1].inertia
    bounds = [np.asarray(b.data).reshape(3, 10) for b in _messages(bag, "/sysid/payload_bounds")]
    assert bounds and all(b[0, 0] <= truth_msg.m <= b[2, 0] for b in bounds)
    # the simulated payload is one of the class, off its centre, and the report says where
    klass = prior_box(robot)
    assert 0.3 <= abs(truth_msg.m - klass.centre[0]) / klass.radius[0] <= 0.8
    assert "drawn inside the class 'demo.prior_box'" in text
    assert "## The payload class, the truth and the identified box" in text
    # the floor of the task's motions (joint 2 alone): a sound published box is never narrower
    floor = re.search(r"identifiability floor of the stated boxes: mass ([0-9.e+-]+) kg of the "
                      r"final box's [0-9.e+-]+ kg — what noise-free data from any motion of "
                      r"joint2 alone", text)
    assert floor is not None
    assert float(floor.group(1)) <= (bounds[-1][2, 0] - bounds[-1][0, 0]) * 1.001

    cmds = np.array([c.data for c in _messages(bag, "/effort_controller/commands")])
    arm = [robot.joint_names.index(n) for n in robot.config["arm_joints"]]
    assert cmds.shape[1] == 6 and np.all(np.abs(cmds).max(axis=0) <= robot.limits.tau_max[arm])

    starts = [p.header.stamp.sec + 1e-9 * p.header.stamp.nanosec
              for p in _messages(bag, "/sysid/desired_trajectory")]
    imu = read_imu(bag, "/imu")
    keep = imu.t >= min(starts)
    rep = trunk_motion_report(imu.t[keep], imu.orientation[keep], imu.angular_velocity[keep],
                              imu.linear_acceleration[keep], TrunkMotionBound.from_robot(robot))
    line = next(ln for ln in text.splitlines() if "trunk motion (IMU" in ln)
    alpha = float(re.search(r"‖α‖ ([0-9.e+-]+) rad/s²", line).group(1))
    assert alpha == pytest.approx(rep.alpha, rel=0.01)
    verdict = "violated" if rep.violations else "held"
    assert f": {verdict};" in line
    result = next(ln for ln in text.splitlines() if ln.startswith("Result: "))
    assert not rep.violations and result == "Result: success", text[-3000:]
    assert proc.returncode == 0
    per_axis = [float(x) for x in re.search(r"per trunk axis ([0-9.e+-]+), ([0-9.e+-]+), "
                                            r"([0-9.e+-]+)", line).groups()]
    assert per_axis == pytest.approx(rep.alpha_axes, rel=0.01)
    # the held joints stayed in their Coulomb band (no friction jump the contract excludes)
    band = float(robot.config["controller"]["coulomb_band"])
    first = min(starts)
    for name in robot.config["arm_view"]["legs"]["held_joints"]:
        j = robot.joint_names.index(name)
        assert np.abs(js.velocity[js.t >= first, j]).max() <= band
    assert "held joints max |q̇|" in text and "(held)" in text
    assert "trunk frame" in text and "base disturbance bound" in text
    # what does hold: V ≤ V_max (true θ), no clipping, positive clearance
    v_line = next(ln for ln in text.splitlines() if ln.startswith("- max V (true θ)"))
    v_seen, v_max = (float(x) for x in re.findall(r"= ([0-9.e+-]+) J", v_line))
    assert v_seen <= v_max
    assert "tracking bound" not in result and "clipped" not in text.split("Result: ")[-1]
    clear = next(ln for ln in text.splitlines() if "minimum clearance" in ln)
    assert float(re.search(r"([0-9.]+) mm", clear).group(1)) > 0.0
    # the exact disturbance line and its verdict agree with the failure list
    d_line = next(ln for ln in text.splitlines() if "max |d_j|/d̄_j" in ln)
    ratios = [float(x) for x in d_line.split(": ", 1)[1].split(" (")[0].split(", ")]
    assert (max(ratios) > 1.0) == ("base disturbance on joint" in text.split("Result: ")[-1])
