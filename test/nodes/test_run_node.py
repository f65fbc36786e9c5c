"""``run_node`` with a node whose constructor refuses its parameters: exit code 1, the error
named after the node, and the half-built rcl node destroyed before rclpy shuts down (a real
rclpy process)."""
from __future__ import annotations

import os

import pytest

from .processes import finish, start

pytestmark = pytest.mark.ros

_SCRIPT = '''
from rclpy.node import Node
from sysid_ros._src.nodes._common import run_node
built = []
class Refuses(Node):
    def __init__(self, argv):
        super().__init__("refuses")
        built.append(self)
        raise ValueError("parameter x refused")
code = run_node(Refuses, ["prog"])
try:
    built[0].get_name()
    print("half-built node still alive")
except Exception as err:
    print("half-built node destroyed:", type(err).__name__)
raise SystemExit(code)
'''


def test_half_built_node_is_destroyed_and_exit_code_is_1(tmp_path):
    (tmp_path / "refuses_node.py").write_text(_SCRIPT)
    # start() puts the source tree first; keep whatever else the environment had on the path
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    proc = start("refuses_node", env_extra={"PYTHONPATH": path})
    out = finish(proc, 30)
    assert proc.returncode == 1, out
    assert "[refuses] error: parameter x refused" in out, out
    assert "half-built node destroyed: InvalidHandle" in out, out
