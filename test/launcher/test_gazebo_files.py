"""Gazebo files (for a full ROS install; Gazebo cannot run here): the ros2_control xacro, the
controllers YAML and launch/gazebo.launch.yaml agree with the Gen3 robot facts (config/gen3.yaml)
and with the topics our nodes use."""
from __future__ import annotations

import importlib.util
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from sysid_ros._src.launcher import LaunchError, load_launch
from sysid_ros._src.model.robots import load_robot

ROOT = Path(__file__).resolve().parents[2]
XACRO = ROOT / "urdf" / "kinova_gen3.ros2_control.urdf.xacro"
CONTROLLERS = ROOT / "config" / "gazebo_controllers.yaml"
LAUNCH = ROOT / "launch" / "gazebo.launch.yaml"
COMMAND_TOPIC = "/effort_controller/commands"


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def _script():
    spec = importlib.util.spec_from_file_location("make_gen3_urdf",
                                                  ROOT / "scripts" / "make_gen3_urdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _expanded() -> str:
    """The xacro as xacro would expand it (it uses nothing but ``$(find sysid_ros)``)."""
    text = XACRO.read_text()
    assert set(re.findall(r"\$\([^)]*\)", text)) == {"$(find sysid_ros)"}
    return text.replace("$(find sysid_ros)", str(ROOT))


def test_xacro_is_generated_from_the_urdf_and_facts():
    robot_cfg = yaml.safe_load((ROOT / "config" / "gen3.yaml").read_text())
    want = _script().build_ros2_control_xacro((ROOT / "urdf" / "kinova_gen3.urdf").read_text(),
                                              robot_cfg)
    assert XACRO.read_text() == want, \
        "regenerate with: python scripts/make_gen3_urdf.py --ros2-control"


def test_ros2_control_tags_match_the_robot_facts(gen3):
    root = ET.fromstring(_expanded())
    (system,) = root.findall("ros2_control")
    assert system.get("type") == "system"
    assert system.find("hardware/plugin").text == "gz_ros2_control/GazeboSimSystem"
    joints = system.findall("joint")
    assert tuple(j.get("name") for j in joints) == gen3.joint_names
    home = gen3.config["simulation"]["home"]
    for j, tau, q0 in zip(joints, gen3.limits.tau_max, home):
        (cmd,) = j.findall("command_interface")
        assert cmd.get("name") == "effort"
        params = {p.get("name"): float(p.text) for p in cmd.findall("param")}
        assert params == {"min": -tau, "max": tau}
        states = j.findall("state_interface")
        assert [s.get("name") for s in states] == ["position", "velocity", "effort"]
        assert float(states[0].find("param[@name='initial_value']").text) == q0
    plugin = root.find("gazebo/plugin")
    assert plugin.get("filename") == "gz_ros2_control-system"
    assert plugin.get("name") == "gz_ros2_control::GazeboSimROS2ControlPlugin"
    assert Path(plugin.find("parameters").text) == CONTROLLERS


def test_xacro_model_is_the_robot_with_the_robot_files_limits(gen3):
    """Same bodies as the identifier's model; Gazebo's limits are the ones the planner uses."""
    model = pin.buildModelFromXML(_expanded())
    assert tuple(model.names[1:]) == gen3.joint_names
    for i in range(1, model.njoints):
        np.testing.assert_allclose(model.inertias[i].toDynamicParameters(),
                                   gen3.model.inertias[i].toDynamicParameters(), atol=1e-12)
        assert model.jointPlacements[i].isApprox(gen3.model.jointPlacements[i])
    np.testing.assert_allclose(model.effortLimit, gen3.limits.tau_max)
    np.testing.assert_allclose(model.velocityLimit, gen3.limits.dq_max, rtol=1e-6)
    assert root_link(_expanded()) == "world"
    # ros2 launch passes the xacro output through a YAML parser: it must stay one string
    assert isinstance(yaml.safe_load(XACRO.read_text()), str)


def root_link(text: str) -> str:
    root = ET.fromstring(text)
    children = {j.find("child").get("link") for j in root.findall("joint")}
    (name,) = [lk.get("name") for lk in root.findall("link") if lk.get("name") not in children]
    return name


def test_controllers_yaml(gen3):
    cfg = yaml.safe_load(CONTROLLERS.read_text())
    cm = cfg["controller_manager"]["ros__parameters"]
    assert cm["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert cm["effort_controller"]["type"] == "forward_command_controller/ForwardCommandController"
    ec = cfg["effort_controller"]["ros__parameters"]
    # ForwardCommandController reads Float64MultiArray in this joint order on ~/commands
    assert tuple(ec["joints"]) == gen3.joint_names and ec["interface_name"] == "effort"
    rc = yaml.safe_load((ROOT / "config" / "robust_controller.yaml").read_text())
    from sysid_ros._src.control.settings import ControllerSettings  # the parameter's default
    assert next(iter(rc.values()))["ros__parameters"].get(
        "command_topic", ControllerSettings().command_topic) == COMMAND_TOPIC
    assert COMMAND_TOPIC == "/effort_controller/commands"


def _nodes(doc) -> dict[str, dict]:
    return {e["node"]["name"]: e["node"] for e in doc["launch"] if "node" in e}


def _params(node: dict) -> dict[str, str]:
    return {p["name"]: str(p["value"]) for p in node.get("param", []) if "name" in p}


def test_gazebo_launch_file(gen3):
    doc = yaml.safe_load(LAUNCH.read_text())
    (include,) = [e["include"] for e in doc["launch"] if "include" in e]
    assert include["file"] == "$(find-pkg-share ros_gz_sim)/launch/gz_sim.launch.py"
    assert {a["name"] for a in include["arg"]} == {"gz_args"}
    nodes = _nodes(doc)
    rsp = nodes["robot_state_publisher"]
    desc = _params(rsp)["robot_description"]
    m = re.fullmatch(r"\$\(command 'xacro \$\(find-pkg-share sysid_ros\)/(\S+)'\)", desc)
    assert m and ROOT / m.group(1) == XACRO
    assert nodes["spawn_gen3"]["pkg"] == "ros_gz_sim" and "-topic robot_description" in \
        nodes["spawn_gen3"]["args"]
    assert "/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock" in nodes["clock_bridge"]["args"]
    controllers = yaml.safe_load(CONTROLLERS.read_text())["controller_manager"]["ros__parameters"]
    spawned = [a for a in nodes["spawner"]["args"].split() if not a.startswith("-")
               and not a.startswith("/")]
    assert set(spawned) == {"joint_state_broadcaster", "effort_controller"} <= set(controllers)
    assert _params(nodes["robust_controller"])["command_topic"] == COMMAND_TOPIC
    assert _params(nodes["identifier"])["friction"] == "none"
    scripts = set(re.findall(r'"(\w+) = sysid_ros\._src\.nodes', (ROOT / "setup.py").read_text()))
    for name, node in nodes.items():
        if node["pkg"] == "sysid_ros":
            assert node["exec"] in scripts
            p = _params(node)
            assert p["robot"] == "gen3" and p["use_sim_time"] == "true", name
            # the joint states come from joint_state_broadcaster on /joint_states: no remap
            assert "remap" not in node
    # sysid-launch refuses it in one clear line (it is for ros2 launch on a full install)
    with pytest.raises(LaunchError, match=r"gazebo\.launch\.yaml: launch\[\d+\]\.include: "
                                          r"unsupported entry 'include'"):
        load_launch("gazebo")
