"""Live view of the identification graph (no rclpy): marker geometry in the robot's base frame
(:mod:`.geometry`), obstacles in other frames (:mod:`.frames`), ``MarkerArray`` builders
(:mod:`.markers`, needs the ``visualization_msgs`` message package) and the URDF path helper
(:mod:`.description`). The node is ``sysid_ros._src.nodes.markers``."""
from __future__ import annotations

from .frames import BufferLookup, ResolvedObstacles, make_tf2_lookup, resolve_obstacles
from .geometry import (Ellipsoid, RobotGeometry, base_frame, chain_lengths, com_box,
                       equivalent_ellipsoid, sample_trajectory, sphere_margins)

__all__ = [
    "BufferLookup",
    "Ellipsoid",
    "ResolvedObstacles",
    "RobotGeometry",
    "base_frame",
    "chain_lengths",
    "com_box",
    "equivalent_ellipsoid",
    "make_tf2_lookup",
    "resolve_obstacles",
    "sample_trajectory",
    "sphere_margins",
]
