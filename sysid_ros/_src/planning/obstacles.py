"""Box obstacles (axis-aligned or oriented, in the robot base frame) and sphere clearances.

Two uses:

- ``interval_clearance``: a SOUND lower bound on (distance from a sphere to a box) − radius when
  the sphere's centre is anywhere in an axis-aligned interval box [c]. In the obstacle's frame the
  centre box is R ᵀ([c] − o), enclosed by its mid ± |Rᵀ|·rad; the distance between two boxes is
  ‖max(0, |m_c − m_o| − r_c − h_o)‖ component-wise, exact for the two boxes. Positive clearance
  for every sub-interval and sphere means no contact.
- ``signed_distance``: distance from a point to the box (negative inside, the penetration depth),
  with its gradient, for the optimiser's smooth-enough sampled constraints.

Config format (``planner.obstacles`` in config/<robot>.yaml, or a list passed in code)::

    - {name: platform, center: [x, y, z], half_extents: [hx, hy, hz], rpy: [r, p, y]}  # rpy optional (rad)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.planning.errors import PlannerConfigError
from sysid_ros._src.enclosures.interval import Interval

__all__ = ["BoxObstacle", "obstacles_from_config", "interval_clearance", "signed_distance"]

_SLACK = 1e-12


def _rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


@dataclass(frozen=True)
class BoxObstacle:
    """A box: ``center`` (3,), ``half_extents`` (3,) > 0, ``rotation`` (3, 3) box → base frame."""

    name: str
    center: np.ndarray
    half_extents: np.ndarray
    rotation: np.ndarray

    @classmethod
    def from_dict(cls, item: dict[str, Any], index: int = 0) -> BoxObstacle:
        where = f"planner.obstacles[{index}]"
        if not isinstance(item, dict):
            raise PlannerConfigError(f"{where}: expected a mapping with center and half_extents")
        unknown = set(item) - {"name", "center", "half_extents", "rpy"}
        if unknown:
            raise PlannerConfigError(f"{where}: unknown keys {sorted(unknown)}")

        def vec(key: str, default: Any = None) -> np.ndarray:
            raw = item.get(key, default)
            try:
                arr = np.asarray(raw, float)
            except (TypeError, ValueError):
                arr = np.empty(0)
            if arr.shape != (3,) or not np.all(np.isfinite(arr)):
                raise PlannerConfigError(f"{where}.{key}: expected 3 finite numbers, got {raw!r}")
            return arr

        half = vec("half_extents")
        if np.any(half <= 0):
            raise PlannerConfigError(f"{where}.half_extents: must be positive (metres)")
        return cls(str(item.get("name", f"box{index}")), vec("center"), half,
                   _rpy_matrix(vec("rpy", [0.0, 0.0, 0.0])))

    @property
    def axis_aligned(self) -> bool:
        return bool(np.allclose(self.rotation, np.eye(3), atol=0.0, rtol=0.0))


def obstacles_from_config(items: Sequence[dict[str, Any]] | None) -> tuple[BoxObstacle, ...]:
    if items is None:
        return ()
    if not isinstance(items, (list, tuple)):
        raise PlannerConfigError("planner.obstacles: expected a list of boxes")
    return tuple(BoxObstacle.from_dict(item, i) for i, item in enumerate(items))


def interval_clearance(centres: Sequence[tuple[Interval, Interval, Interval]],
                       radii: np.ndarray, obstacles: Sequence[BoxObstacle]) -> np.ndarray:
    """Sound lower bound of distance − radius, shape (batch..., n_spheres, n_obstacles).

    ``centres[s]`` is sphere s's centre as 3 Intervals over the batch (e.g. time sub-intervals).
    """
    if not obstacles:
        shape = centres[0][0].shape if centres else ()
        return np.full(shape + (len(centres), 0), np.inf)
    mid = np.stack([np.stack(np.broadcast_arrays(*(c.mid for c in cen)), -1) for cen in centres],
                   -2)                                            # (..., ns, 3)
    rad = np.stack([np.stack(np.broadcast_arrays(*(c.rad for c in cen)), -1) for cen in centres],
                   -2)
    out = []
    for ob in obstacles:
        rt = ob.rotation.T
        m_loc = (mid - ob.center) @ rt.T
        r_loc = rad @ np.abs(rt).T
        gap = np.maximum(np.abs(m_loc) - r_loc - ob.half_extents, 0.0)
        dist = np.sqrt(np.sum(gap * gap, axis=-1))
        out.append(dist * (1.0 - _SLACK) - _SLACK - radii)
    return np.stack(out, -1)


def signed_distance(points: np.ndarray, obstacle: BoxObstacle) -> tuple[np.ndarray, np.ndarray]:
    """Signed distance (..., ) of points (..., 3) to the box and its gradient (..., 3)."""
    local = (points - obstacle.center) @ obstacle.rotation
    q = np.abs(local) - obstacle.half_extents
    outside = np.maximum(q, 0.0)
    norm_out = np.sqrt(np.sum(outside * outside, axis=-1))
    inner = np.max(q, axis=-1)
    is_out = inner > 0.0
    d = np.where(is_out, norm_out, inner)
    sgn = np.where(local >= 0.0, 1.0, -1.0)
    g_out = sgn * outside / np.where(norm_out > 0, norm_out, 1.0)[..., None]
    g_in = sgn * (np.arange(3) == np.argmax(q, axis=-1)[..., None])
    g_local = np.where(is_out[..., None], g_out, g_in)
    return d, g_local @ obstacle.rotation.T
