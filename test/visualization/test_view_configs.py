"""The shipped RViz2 config and Foxglove layout point at the topics, frames and array indices the
graph really uses; config/markers.yaml documents exactly the node's parameters."""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.nodes.messages import BOUND_LABELS
from sysid_ros._src.visualization.geometry import base_frame

ROOT = Path(__file__).resolve().parents[2]
TOPICS = {"/sysid/markers/obstacles", "/sysid/markers/robot", "/sysid/markers/plan",
          "/sysid/markers/payload"}
LATCHED = TOPICS - {"/sysid/markers/robot"}


def test_rviz_config():
    cfg = yaml.safe_load((ROOT / "config" / "sysid.rviz").read_text())
    vm = cfg["Visualization Manager"]
    assert vm["Global Options"]["Fixed Frame"] == base_frame(load_robot("gen3"))
    markers = [d for d in vm["Displays"] if d["Class"] == "rviz_default_plugins/MarkerArray"]
    assert {d["Topic"]["Value"] for d in markers} == TOPICS
    for d in markers:
        # a latched publisher reaches a late RViz only through a transient-local subscription
        want = "Transient Local" if d["Topic"]["Value"] in LATCHED else "Volatile"
        assert d["Topic"]["Durability Policy"] == want
        assert d["Topic"]["Reliability Policy"] == "Reliable"
    model = next(d for d in vm["Displays"] if d["Class"] == "rviz_default_plugins/RobotModel")
    assert model["Description Topic"]["Value"] == "/robot_description"


def _leaves(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    return _leaves(node["first"]) + _leaves(node["second"])


def test_foxglove_layout():
    layout = json.loads((ROOT / "config" / "foxglove_layout.json").read_text())
    panels = layout["configById"]
    assert sorted(_leaves(layout["layout"])) == sorted(panels)
    three_d = panels["3D!sysid"]
    assert TOPICS <= set(three_d["topics"]) and three_d["followTf"] == "gen3_base_link"
    bound_plots = 0
    for pid, cfg in panels.items():
        for path in cfg.get("paths", []):
            m = re.fullmatch(r"/sysid/payload_bounds\.data\[(\d+)\]", path["value"])
            # data = [lower(10), nominal(10), upper(10)] (docs/theory/ros-interfaces.md#topics-types-and-qos)
            if m:
                bound, param = divmod(int(m.group(1)), 10)
                assert path["label"] == f"{PARAM_NAMES[param]} {BOUND_LABELS[bound]}", pid
                bound_plots += 1
            else:
                assert re.fullmatch(r"/joint_states\.(position|effort)\[[0-6]\]", path["value"])
    assert bound_plots == 9
