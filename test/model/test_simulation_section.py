"""The robot file's ``simulation:`` section is read in one place (model/simulation_section.py):
its defaults hold when a key is absent, every reader sees the same values, and no other module
reads the section itself."""
from __future__ import annotations

import ast
import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src.identification.base_motion import imu_mount
from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.model.simulation_section import SimulationSection, home_posture, \
    simulation_section
from sysid_ros._src.simulation import SimulatorSpec
from sysid_ros._src.simulation.mjmodel import build_mujoco_model

ROOT = Path(__file__).resolve().parents[2]


def _without(robot, *keys):
    config = copy.deepcopy(robot.config)
    for key in keys:
        config["simulation"].pop(key, None)
    return dataclasses.replace(robot, config=config)


def test_absent_keys_take_the_one_set_of_defaults():
    gen3 = load_robot("gen3")
    bare = dataclasses.replace(gen3, config={k: v for k, v in gen3.config.items()
                                             if k != "simulation"})
    assert simulation_section(bare) == SimulationSection()
    np.testing.assert_array_equal(home_posture(bare), gen3.neutral()[gen3.q_index])
    # the file's values where it gives them
    sec = simulation_section(gen3)
    np.testing.assert_array_equal(home_posture(gen3), gen3.config["simulation"]["home"])
    assert sec.payload_grip_point == tuple(gen3.config["simulation"]["payload_grip"]["point"])
    with pytest.raises(RobotConfigError, match="simulation.home needs 7 angles"):
        home_posture(dataclasses.replace(gen3, config={
            **gen3.config, "simulation": {**gen3.config["simulation"], "home": [0.0]}}))


def test_the_imu_body_is_the_same_for_the_simulator_and_the_identifier():
    """The B1's file names imu_link: the identifier's mount is that frame's placement and
    MuJoCo carries the IMU on the body it is fused into (the trunk); without the key both take
    the root body."""
    b1 = load_robot("b1_z1")
    assert simulation_section(b1).imu_body == "imu_link"
    frame = b1.model.frames[b1.model.getFrameId("imu_link")]
    mount = imu_mount(b1)
    np.testing.assert_array_equal(mount.position, frame.placement.translation)
    np.testing.assert_array_equal(mount.rotation, frame.placement.rotation)
    root = _without(b1, "imu_body")
    assert simulation_section(root).imu_body == ""
    np.testing.assert_array_equal(imu_mount(root).position, np.zeros(3))
    for robot in (b1, root):
        mj = build_mujoco_model(robot, None, 1e-3)
        assert mj.imu_body is not None
        assert mj.model.body(mj.imu_body).name == mj.model.body(1).name      # the trunk
    assert SimulatorSpec(root, None).home.shape == (b1.nj,)


def test_no_other_module_reads_the_simulation_section():
    """Every ``config["simulation"]`` / ``config.get("simulation")`` lives in
    model/simulation_section.py: a second reader would bring a second default."""
    readers = []
    for path in sorted((ROOT / "sysid_ros").rglob("*.py")):
        if path.name == "simulation_section.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                key = node.args[0].value
            if key == "simulation":
                readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not readers, f"read the simulation section through simulation_section(): {readers}"
