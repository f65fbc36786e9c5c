"""Fixtures of the node tests."""
from __future__ import annotations

import os

import pytest


@pytest.fixture
def ros_node():
    """(node, executor): an rclpy node in the test process, to publish to and listen to the
    nodes under test over DDS; the context is shut down afterwards."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    rclpy.init()
    node = rclpy.create_node(f"test_probe_{os.getpid()}")
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    yield node, ex
    node.destroy_node()
    ex.shutdown()
    rclpy.try_shutdown()
