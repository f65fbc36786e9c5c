"""Fixtures of the live-view tests: the node tests' rclpy probe (test/nodes/conftest.py)."""
from __future__ import annotations

from nodes.conftest import ros_node  # noqa: F401  (pytest puts test/ on sys.path)
