"""The hardware launch file for the Unitree robots, and the bridge contract in
docs/guide/hardware.md checked against the robot files and the SDK's motor order."""
from __future__ import annotations

import re

import pytest

from sysid_ros._src.launcher import load_launch
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.paths import package_share

#: unitree_legged_sdk's motor index: leg FR 0, FL 1, RR 2, RL 3 (×3) + hip 0, thigh 1, calf 2
_SDK_LEG = {"FR": 0, "FL": 1, "RR": 2, "RL": 3}
_SDK_PART = {"hip": 0, "thigh": 1, "calf": 2}


@pytest.mark.parametrize("robot", ["z1", "b1_z1"])
def test_hardware_launch_runs_the_graph_on_the_bridge_topics(robot):
    desc = load_launch("hardware", {"robot": robot, "joint_states_topic": "/bridge/joint_states",
                                    "command_topic": "/bridge/effort_cmd",
                                    "imu_topic": "/bridge/imu"})
    names = [p.name for p in desc.processes if p.name != "robot_state_publisher"]
    assert names == ["identifier", "exciting_planner", "robust_controller"]
    for proc in desc.processes:
        if proc.name == "robot_state_publisher":
            continue
        assert f"robot:={robot}" in proc.cmd
        assert "use_sim_time:=false" in proc.cmd
        assert "/joint_states:=/bridge/joint_states" in proc.cmd
    by_name = {p.name: p for p in desc.processes}
    assert "/effort_controller/commands:=/bridge/effort_cmd" in by_name["robust_controller"].cmd
    assert "/imu:=/bridge/imu" in by_name["identifier"].cmd
    load_robot(robot)            # the robot file the nodes will load is valid


def _doc() -> str:
    return (package_share() / "docs" / "guide" / "hardware.md").read_text()


def test_b1_bridge_table_matches_robot_file_and_sdk_order():
    """Every row of the B1 mapping table: the joint_states index is the robot file's order and
    the motorState index is the SDK's FR/FL/RR/RL × hip/thigh/calf numbering."""
    robot = load_robot("b1_z1")
    rows = re.findall(r"^\| (\d+) \| `(\w+)_(hip|thigh|calf)_joint` \| (\d+) \|$", _doc(), re.M)
    assert len(rows) == 12
    for index, leg, part, motor in rows:
        assert robot.joint_names[int(index)] == f"{leg}_{part}_joint"
        assert int(motor) == 3 * _SDK_LEG[leg] + _SDK_PART[part]
    arm = robot.config["arm_joints"]
    assert list(robot.joint_names[12:]) == arm == [f"joint{k}" for k in range(1, 7)]
    assert f"| 12–17 | `{arm[0]} … {arm[-1]}` |" in _doc()


def test_z1_bridge_names_are_the_robot_files():
    robot = load_robot("z1")
    assert list(robot.joint_names) == [f"joint{k}" for k in range(1, 7)]
    assert "| `name` | `joint1 … joint6` |" in _doc()
    assert "jointGripper" in robot.config["model"]["locked_joints"]
