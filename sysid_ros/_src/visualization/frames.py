"""Obstacles given in any frame, brought into the robot's base frame (no rclpy here).

An obstacle entry is the planner's box (``planning.obstacles``: ``{name, center, half_extents,
rpy}``, metres / radians) plus an optional ``frame`` (default: the base frame). Entries in the
base frame are used as they are; the others need a *lookup* ``(target, source) -> (R, p)`` that
maps points of ``source`` into ``target`` (x_target = R x_source + p). With a full ROS install
that lookup is a ``tf2_ros.Buffer`` (:class:`BufferLookup`, :func:`make_tf2_lookup`); without
``tf2_ros`` there is none and only base-frame entries are drawn — the others are reported as
pending with the reason, never silently moved.

The planner reads base-frame boxes only (its config rejects a ``frame`` key), so frames other
than the base frame concern the display.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.planning.obstacles import BoxObstacle

__all__ = [
    "BufferLookup",
    "FrameLookup",
    "ResolvedObstacles",
    "make_tf2_lookup",
    "quaternion_matrix",
    "resolve_obstacles",
]

#: (target_frame, source_frame) -> (R (3, 3), p (3,)) with x_target = R x_source + p.
FrameLookup = Callable[[str, str], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class ResolvedObstacles:
    """Boxes in the base frame and the entries that could not be placed yet (name, reason)."""

    boxes: tuple[BoxObstacle, ...]
    pending: tuple[tuple[str, str], ...]


def quaternion_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """Rotation matrix of a (not necessarily normalised) quaternion (x, y, z, w)."""
    q = np.array([w, x, y, z], float)
    n = float(q @ q)
    if not n > 0:
        raise ValueError("zero quaternion")
    w, x, y, z = q * np.sqrt(2.0 / n)
    return np.array([[1 - y * y - z * z, x * y - z * w, x * z + y * w],
                     [x * y + z * w, 1 - x * x - z * z, y * z - x * w],
                     [x * z - y * w, y * z + x * w, 1 - x * x - y * y]])


def resolve_obstacles(items: Sequence[Mapping[str, Any]], base_frame: str,
                      lookup: FrameLookup | None) -> ResolvedObstacles:
    """Boxes of ``items`` in ``base_frame``; entries in other frames go through ``lookup``.

    Raises ``PlannerConfigError`` (from ``BoxObstacle.from_dict``) for a malformed entry; a
    missing transform (no lookup, or the lookup raised) leaves the entry in ``pending``.
    """
    boxes: list[BoxObstacle] = []
    pending: list[tuple[str, str]] = []
    for i, raw in enumerate(items):
        item = dict(raw)
        frame = str(item.pop("frame", "") or base_frame).lstrip("/")
        box = BoxObstacle.from_dict(item, i)
        if frame == base_frame:
            boxes.append(box)
            continue
        if lookup is None:
            pending.append((box.name, f"frame {frame!r} needs tf2_ros (not importable): only "
                                      f"boxes in {base_frame!r} are drawn"))
            continue
        try:
            rot, pos = lookup(base_frame, frame)
        except Exception as exc:  # tf2's Lookup/Connectivity/Extrapolation errors and the like
            pending.append((box.name, f"no transform {frame} -> {base_frame}: {exc}"))
            continue
        boxes.append(BoxObstacle(box.name, rot @ box.center + pos, box.half_extents,
                                 rot @ box.rotation))
    return ResolvedObstacles(tuple(boxes), tuple(pending))


class BufferLookup:
    """A :data:`FrameLookup` over a ``tf2_ros.Buffer`` (or anything with its
    ``lookup_transform(target, source, time)`` returning a ``TransformStamped``).

    Args:
        buffer: the tf2 buffer.
        time: the time argument of ``lookup_transform`` (``rclpy.time.Time()`` = latest).
        keep: objects to keep alive with the lookup (the ``TransformListener``).
    """

    def __init__(self, buffer: Any, time: Any, keep: Any = None) -> None:
        self.buffer = buffer
        self.time = time
        self._keep = keep

    def __call__(self, target: str, source: str) -> tuple[np.ndarray, np.ndarray]:
        tf = self.buffer.lookup_transform(target, source, self.time).transform
        r, t = tf.rotation, tf.translation
        return quaternion_matrix(r.x, r.y, r.z, r.w), np.array([t.x, t.y, t.z], float)


def make_tf2_lookup(node: Any) -> BufferLookup | None:
    """A tf2 lookup listening on ``node`` (an rclpy node), or None when ``tf2_ros`` is not
    importable (the ``ros-jazzy-*`` wheels do not ship it; a full ROS install does)."""
    try:
        import tf2_ros
        from rclpy.time import Time
    except ImportError:
        return None
    buffer = tf2_ros.Buffer()
    listener = tf2_ros.TransformListener(buffer, node)
    return BufferLookup(buffer, Time(), keep=listener)
