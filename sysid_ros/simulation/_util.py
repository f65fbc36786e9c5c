"""Small helpers shared by the simulator modules (per-joint settings, encoder model)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sysid_ros.model.robots import Robot
from sysid_ros.simulation.errors import SimConfigError

__all__ = ["per_joint", "encoder_resolution", "quantize"]


def per_joint(value: float | Sequence[float], n: int, name: str) -> np.ndarray:
    """A non-negative scalar (all joints) or ``n`` values → (n,) array; SimConfigError naming
    ``name`` otherwise."""
    arr = np.asarray(value, dtype=float)
    arr = np.full(n, float(arr)) if arr.ndim == 0 else arr.copy()
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise SimConfigError(f"{name} must be a non-negative number or {n} of them, got {value!r}")
    return arr


def encoder_resolution(robot: Robot) -> np.ndarray:
    """(nj,) encoder resolution in rad from ``simulation.encoder_resolution_deg`` (0 = exact)."""
    section = robot.config.get("simulation", {}) or {}
    res_deg = section.get("encoder_resolution_deg")
    if res_deg is None:
        return np.zeros(robot.nj)
    return per_joint(np.deg2rad(np.asarray(res_deg, float)), robot.nj,
                     "simulation.encoder_resolution_deg")


def quantize(q: np.ndarray, resolution: np.ndarray) -> np.ndarray:
    """Round joint angles (..., nj) to the nearest encoder count (joints with 0 stay exact)."""
    res = np.asarray(resolution, dtype=float)
    return np.where(res > 0, np.round(q / np.where(res > 0, res, 1.0)) * res, q)
