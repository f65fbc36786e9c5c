"""``visualization_msgs/MarkerArray`` builders for the live view (message types only, no rclpy).

Every marker is in the robot's base frame (``geometry.base_frame``) with a fixed namespace, so
RViz2 and Foxglove can toggle each layer; ids are stable so an update replaces the previous one.
Arrays whose size can change (plan, payload) start with a ``DELETEALL`` marker, which clears
what the previous array drew on that topic.

| topic (default) | namespace | marker | what |
|---|---|---|---|
| ``/sysid/markers/obstacles`` | ``obstacles`` | CUBE per box | planner obstacles |
| | ``obstacle_names`` | TEXT_VIEW_FACING per box | their names |
| ``/sysid/markers/robot`` | ``collision_spheres`` | SPHERE per sphere | ``Robot.spheres`` at the joint state |
| ``/sysid/markers/plan`` | ``plan_spheres`` | SPHERE per (sample, sphere) | swept spheres, radius + margin |
| | ``plan_tool_path`` | LINE_STRIP | tool-frame path of the plan |
| ``/sysid/markers/payload`` | ``payload_ellipsoid`` | SPHERE (scaled, oriented) | box centre's equivalent ellipsoid |
| | ``payload_com`` | SPHERE | its centre of mass |
| | ``payload_com_box`` | CUBE (EE-frame axes) | CoM box implied by the bounds |
| | ``payload_mass`` | 2 SPHEREs | mass interval: steel spheres of m_lo (solid) and m_hi (faint) |
| | ``payload_label`` | TEXT_VIEW_FACING | ``m ∈ [lo, hi] kg`` and the CoM box size |
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from sysid_ros._src.planning.obstacles import BoxObstacle
from sysid_ros._src.visualization.geometry import RobotGeometry, com_box, equivalent_ellipsoid

__all__ = [
    "NS_OBSTACLES", "NS_OBSTACLE_NAMES", "NS_SPHERES", "NS_PLAN", "NS_PLAN_PATH",
    "NS_PAYLOAD_ELLIPSOID", "NS_PAYLOAD_COM", "NS_PAYLOAD_COM_BOX", "NS_PAYLOAD_MASS",
    "NS_PAYLOAD_LABEL", "STEEL_DENSITY",
    "obstacle_markers", "robot_markers", "plan_markers", "payload_markers",
]

NS_OBSTACLES = "obstacles"
NS_OBSTACLE_NAMES = "obstacle_names"
NS_SPHERES = "collision_spheres"
NS_PLAN = "plan_spheres"
NS_PLAN_PATH = "plan_tool_path"
NS_PAYLOAD_ELLIPSOID = "payload_ellipsoid"
NS_PAYLOAD_COM = "payload_com"
NS_PAYLOAD_COM_BOX = "payload_com_box"
NS_PAYLOAD_MASS = "payload_mass"
NS_PAYLOAD_LABEL = "payload_label"

#: kg/m³: the mass glyph draws m as a steel sphere (the demo's dumbbells are steel).
STEEL_DENSITY = 7850.0

Stamp = tuple[int, int]          # (sec, nanosec)

_OBSTACLE = (0.85, 0.35, 0.2, 0.5)
_SPHERE = (0.2, 0.6, 1.0, 0.6)
_PLAN = (0.1, 0.85, 0.3, 0.12)
_PATH = (0.1, 0.85, 0.3, 1.0)
_ELLIPSOID = (1.0, 0.8, 0.0, 0.6)
_INCONSISTENT = (1.0, 0.1, 0.1, 0.6)
_COM_BOX = (1.0, 0.5, 0.0, 0.3)
_MASS_LO = (0.55, 0.55, 0.6, 0.9)
_MASS_HI = (0.55, 0.55, 0.6, 0.2)
_TEXT = (1.0, 1.0, 1.0, 1.0)


def _marker(frame: str, stamp: Stamp, ns: str, mid: int, kind: int,
            color: tuple[float, float, float, float]) -> Marker:
    m = Marker()
    m.header.frame_id = frame
    m.header.stamp.sec, m.header.stamp.nanosec = int(stamp[0]), int(stamp[1])
    m.ns, m.id, m.type, m.action = ns, int(mid), kind, Marker.ADD
    m.pose.orientation.w = 1.0
    m.color = ColorRGBA(r=float(color[0]), g=float(color[1]), b=float(color[2]),
                        a=float(color[3]))
    return m


def _place(m: Marker, position: np.ndarray, rotation: np.ndarray | None = None) -> Marker:
    m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(v) for v in position)
    if rotation is not None:
        x, y, z, w = pin.Quaternion(np.asarray(rotation, float)).normalized().coeffs()
        m.pose.orientation.x, m.pose.orientation.y = float(x), float(y)
        m.pose.orientation.z, m.pose.orientation.w = float(z), float(w)
    return m


def _scale(m: Marker, sx: float, sy: float | None = None, sz: float | None = None) -> Marker:
    m.scale.x = float(sx)
    m.scale.y = float(sx if sy is None else sy)
    m.scale.z = float(sx if sz is None else sz)
    return m


def _delete_all(frame: str) -> Marker:
    m = Marker()
    m.header.frame_id = frame
    m.action = Marker.DELETEALL
    return m


def obstacle_markers(boxes: Sequence[BoxObstacle], frame: str) -> MarkerArray:
    """One translucent CUBE (full size = 2 × half_extents) and one name label per box."""
    arr = MarkerArray()
    for i, box in enumerate(boxes):
        cube = _marker(frame, (0, 0), NS_OBSTACLES, i, Marker.CUBE, _OBSTACLE)
        arr.markers.append(_scale(_place(cube, box.center, box.rotation),
                                  *(2.0 * box.half_extents)))
        top = box.center + box.rotation @ np.array([0.0, 0.0, box.half_extents[2] + 0.05])
        label = _marker(frame, (0, 0), NS_OBSTACLE_NAMES, i, Marker.TEXT_VIEW_FACING, _TEXT)
        label.text = box.name
        arr.markers.append(_scale(_place(label, top), 0.05))
    return arr


def _spheres(arr: MarkerArray, frame: str, stamp: Stamp, ns: str, centres: np.ndarray,
             radii: np.ndarray, color: tuple[float, float, float, float],
             first_id: int = 0) -> None:
    for k, (c, r) in enumerate(zip(np.asarray(centres).reshape(-1, 3), radii)):
        arr.markers.append(_scale(_place(_marker(frame, stamp, ns, first_id + k, Marker.SPHERE,
                                                 color), c), 2.0 * float(r)))


def robot_markers(geom: RobotGeometry, q: np.ndarray, stamp: Stamp) -> MarkerArray:
    """The collision spheres at joint angles ``q`` (robot order, rad), ids = sphere index."""
    arr = MarkerArray()
    _spheres(arr, geom.frame, stamp, NS_SPHERES, geom.sphere_centres(q), geom.radii, _SPHERE)
    return arr


def plan_markers(geom: RobotGeometry, q_samples: np.ndarray, margins: np.ndarray,
                 q_path: np.ndarray | None = None) -> MarkerArray:
    """Swept spheres of a plan: every collision sphere at each sampled pose ``q_samples``
    (K, nj), radius + ``margins`` (n_spheres,) m; id = k·n_spheres + s. ``q_path`` (M, nj):
    finer samples for the tool-frame LINE_STRIP (default ``q_samples``)."""
    arr = MarkerArray(markers=[_delete_all(geom.frame)])
    ns_count = len(geom.radii)
    radii = geom.radii + np.asarray(margins, float)
    for k, centres in enumerate(geom.sphere_centres(np.atleast_2d(q_samples))):
        _spheres(arr, geom.frame, (0, 0), NS_PLAN, centres, radii, _PLAN, k * ns_count)
    path = _scale(_marker(geom.frame, (0, 0), NS_PLAN_PATH, 0, Marker.LINE_STRIP, _PATH), 0.006)
    path.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                   for p in geom.tool_positions(q_samples if q_path is None else q_path)]
    arr.markers.append(path)
    return arr


def payload_markers(geom: RobotGeometry, q: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                    nominal: np.ndarray | None, stamp: Stamp) -> MarkerArray:
    """The identified θ_e box (each (10,), EE joint frame) drawn at joint angles ``q``.

    The ellipsoid is the box centre's. The box encloses the physically consistent set but its
    centre need not be consistent itself (e.g. principal moments breaking the triangle
    inequality): the point estimate ``nominal`` is then drawn instead when it is consistent,
    else the centre's clipped ellipsoid in red; the label says which.
    """
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    rot, pos = geom.joint_pose(q)
    frame = geom.frame
    arr = MarkerArray(markers=[_delete_all(frame)])
    ell = equivalent_ellipsoid(0.5 * (lower + upper))
    source = "box centre"
    if not ell.consistent and nominal is not None:
        alt = equivalent_ellipsoid(nominal)
        if alt.consistent:
            ell, source = alt, "estimate (box centre not physical)"
    com_base = rot @ ell.com + pos
    body = _marker(frame, stamp, NS_PAYLOAD_ELLIPSOID, 0, Marker.SPHERE,
                   _ELLIPSOID if ell.consistent else _INCONSISTENT)
    arr.markers.append(_scale(_place(body, com_base, rot @ ell.rotation),
                              *np.maximum(2.0 * ell.semi_axes, 1e-3)))
    arr.markers.append(_scale(_place(_marker(frame, stamp, NS_PAYLOAD_COM, 0, Marker.SPHERE,
                                             _TEXT), com_base), 0.015))
    box = com_box(lower, upper)
    size_txt = "CoM unbounded (m may be 0)"
    if box is not None:
        lo, hi = box
        cube = _marker(frame, stamp, NS_PAYLOAD_COM_BOX, 0, Marker.CUBE, _COM_BOX)
        arr.markers.append(_scale(_place(cube, rot @ (0.5 * (lo + hi)) + pos, rot),
                                  *np.maximum(hi - lo, 1e-3)))
        size_txt = "CoM box " + " x ".join(f"{1e3 * v:.0f}" for v in hi - lo) + " mm"
    for k, (m, color) in enumerate(((lower[0], _MASS_LO), (upper[0], _MASS_HI))):
        radius = (3.0 * max(float(m), 0.0) / (4.0 * np.pi * STEEL_DENSITY)) ** (1.0 / 3.0)
        glyph = _marker(frame, stamp, NS_PAYLOAD_MASS, k, Marker.SPHERE, color)
        arr.markers.append(_scale(_place(glyph, com_base), max(2.0 * radius, 1e-3)))
    label = _marker(frame, stamp, NS_PAYLOAD_LABEL, 0, Marker.TEXT_VIEW_FACING, _TEXT)
    label.text = (f"m \u2208 [{lower[0]:.2f}, {upper[0]:.2f}] kg\n{size_txt}\n"
                  f"ellipsoid: {source}")
    arr.markers.append(_scale(_place(label, com_base + np.array([0.0, 0.0, 0.15])), 0.04))
    return arr
