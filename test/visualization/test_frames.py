"""Frames without a full ROS install: obstacles in other frames through a tf2-like buffer (a fake
one here, the transform math is the same), the markers node's base-frame-only fallback, and
the launch files' robot_state_publisher (started where installed, a one-line notice where not)."""
from __future__ import annotations

import importlib.util
import stat
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from sysid_ros._src.launcher import Graph, load_launch
from sysid_ros._src.planning.obstacles import BoxObstacle
from sysid_ros._src.visualization.frames import (BufferLookup, make_tf2_lookup, quaternion_matrix,
                                            resolve_obstacles)

ROOT = Path(__file__).resolve().parents[2]
HAS_TF2 = importlib.util.find_spec("tf2_ros") is not None
ITEMS = [
    {"name": "table", "center": [0.5, 0.0, 0.1], "half_extents": [0.2, 0.3, 0.1]},
    {"name": "shelf", "frame": "camera", "center": [0.1, 0.2, 0.9],
     "half_extents": [0.1, 0.2, 0.3], "rpy": [0.0, 0.0, 0.3]},
]


class _FakeBuffer:
    """``lookup_transform`` as tf2_ros.Buffer has it, answering from a dict of transforms."""

    def __init__(self, transforms: dict) -> None:
        self.transforms = transforms
        self.calls: list = []

    def lookup_transform(self, target, source, time):
        from geometry_msgs.msg import TransformStamped

        self.calls.append((target, source, time))
        if (target, source) not in self.transforms:
            raise LookupError(f'"{source}" passed to lookupTransform does not exist')
        rot, pos = self.transforms[(target, source)]
        msg = TransformStamped()
        msg.header.frame_id, msg.child_frame_id = target, source
        t = msg.transform
        t.translation.x, t.translation.y, t.translation.z = (float(v) for v in pos)
        x, y, z, w = pin.Quaternion(rot).coeffs()
        t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = float(x), float(y), float(z), \
            float(w)
        return msg


def _corners(box: BoxObstacle) -> np.ndarray:
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return box.center + (signs * box.half_extents) @ box.rotation.T


def test_quaternion_matrix():
    rot = pin.rpy.rpyToMatrix(0.3, -1.1, 2.0)
    x, y, z, w = pin.Quaternion(rot).coeffs()
    np.testing.assert_allclose(quaternion_matrix(2 * x, 2 * y, 2 * z, 2 * w), rot, atol=1e-12)


def test_obstacles_in_other_frames_are_transformed():
    rot, pos = pin.rpy.rpyToMatrix(0.1, 0.2, -0.7), np.array([0.3, -0.4, 1.2])
    buf = _FakeBuffer({("base", "camera"): (rot, pos)})
    res = resolve_obstacles(ITEMS, "base", BufferLookup(buf, time="latest"))
    assert res.pending == ()
    assert [b.name for b in res.boxes] == ["table", "shelf"]
    assert buf.calls == [("base", "camera", "latest")]        # only the non-base box is looked up
    local = BoxObstacle.from_dict({k: v for k, v in ITEMS[1].items() if k != "frame"})
    np.testing.assert_allclose(_corners(res.boxes[1]), _corners(local) @ rot.T + pos, atol=1e-12)
    np.testing.assert_allclose(res.boxes[0].center, ITEMS[0]["center"])


def test_without_tf2_only_base_frame_boxes():
    res = resolve_obstacles(ITEMS, "base", None)
    assert [b.name for b in res.boxes] == ["table"]
    assert res.pending[0][0] == "shelf" and "tf2_ros" in res.pending[0][1]
    res = resolve_obstacles(ITEMS, "base", BufferLookup(_FakeBuffer({}), time=None))
    assert res.pending[0][0] == "shelf" and "camera -> base" in res.pending[0][1]
    if not HAS_TF2:
        assert make_tf2_lookup(object()) is None


def test_markers_node_draws_base_frame_boxes_without_tf2(tmp_path, monkeypatch):
    """In-process node: with tf2 missing the camera-frame box is pending, the other drawn."""
    import sys

    import rclpy
    monkeypatch.setitem(sys.modules, "tf2_ros", None)     # unimportable even on a full install

    from sysid_ros._src.nodes.markers import MarkersNode

    f = tmp_path / "obstacles.yaml"
    f.write_text(yaml.safe_dump({"obstacles": [dict(ITEMS[0], frame="gen3_base_link"),
                                               ITEMS[1]]}))
    rclpy.init(args=["markers", "--ros-args", "-p", f"obstacles:={f}"])
    try:
        node = MarkersNode()
        assert node._obstacle_count == 1
        assert [name for name, _ in node._pending] == ["shelf"]
        node.destroy_node()
    finally:
        rclpy.try_shutdown()


def _fake_rsp(tmp_path: Path) -> Path:
    exe = tmp_path / "lib" / "robot_state_publisher" / "robot_state_publisher"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return tmp_path


@pytest.mark.parametrize("launch", ["sim", "hardware"])
def test_robot_state_publisher_optional(launch, tmp_path, monkeypatch):
    desc = load_launch(launch, {"markers": "true"})
    names = [p.name for p in desc.processes]
    assert "markers" in names
    markers = desc.processes[names.index("markers")]
    assert markers.param_files[0].endswith("config/markers.yaml")
    if "robot_state_publisher" not in names:        # not installed here: one-line notice
        assert len(desc.notices) == 1 and "\n" not in desc.notices[0]
        assert "robot_state_publisher" in desc.notices[0] and "not installed" in desc.notices[0]
    assert load_launch(launch, {"robot_state_publisher": "false"}).notices == ()
    # installed (a stand-in under AMENT_PREFIX_PATH): started with the URDF's content
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(_fake_rsp(tmp_path)))
    desc = load_launch(launch)
    rsp = next(p for p in desc.processes if p.name == "robot_state_publisher")
    urdf = (ROOT / "urdf" / "kinova_gen3.urdf").read_text()
    assert f"robot_description:={urdf}" in rsp.cmd and desc.notices == ()
    if launch == "hardware":
        assert load_launch(launch, {"joint_states_topic": "/arm/js"}).processes[-1].cmd[-1] == \
            "/joint_states:=/arm/js"


def test_runner_prints_the_notice(tmp_path):
    f = tmp_path / "rsp.launch.yaml"
    f.write_text("launch:\n- node: {pkg: robot_state_publisher, exec: robot_state_publisher, "
                 "param: [{name: robot_description, value: '$(file-content /nonexistent)'}]}\n")
    lines: list[str] = []
    with Graph(f, output=lines.append) as graph:
        assert graph.wait(timeout=5.0) == 0
    notices = [line for line in lines if line.startswith("[launch] notice: ")]
    assert len(notices) == 1 and "robot_state_publisher" in notices[0]


def test_file_content_and_nesting(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text("a b $(var x)\nc")             # content is never substituted again
    f = tmp_path / "n.launch.yaml"
    f.write_text(f"launch:\n- arg: {{name: p, default: {data}}}\n"
                 "- executable: {cmd: 'echo x', name: e}\n"
                 "- node: {pkg: sysid_ros, exec: replay, param: "
                 "[{name: s, value: '$(file-content $(var p))'}]}\n")
    cmd = load_launch(f).processes[1].cmd
    assert "s:=a b $(var x)\nc" in cmd
