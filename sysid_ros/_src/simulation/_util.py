"""Small helpers shared by the simulator modules (per-joint settings, encoder model, a
zero-phase derivative of sampled positions, read-only copies)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.simulation.errors import SimConfigError

__all__ = ["per_joint", "readonly", "encoder_resolution", "quantize", "centred_derivative"]


def per_joint(value: float | Sequence[float] | np.ndarray, n: int, name: str) -> np.ndarray:
    """A non-negative scalar (all joints) or ``n`` values → (n,) array; SimConfigError naming
    ``name`` otherwise."""
    arr = np.asarray(value, dtype=float)
    arr = np.full(n, float(arr)) if arr.ndim == 0 else arr.copy()
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise SimConfigError(f"{name} must be a non-negative number or {n} of them, got {value!r}")
    return arr


def readonly(a: np.ndarray | Sequence[float]) -> np.ndarray:
    """A read-only float copy of ``a`` (frozen records share no writable arrays)."""
    out = np.array(a, dtype=float)
    out.setflags(write=False)
    return out


def encoder_resolution(robot: Robot) -> np.ndarray:
    """(nj,) encoder resolution in rad from ``simulation.encoder_resolution_deg`` (0 = exact)."""
    res_deg = simulation_section(robot).encoder_resolution_deg
    if res_deg is None:
        return np.zeros(robot.nj)
    return per_joint(np.deg2rad(np.asarray(res_deg, float)), robot.nj,
                     "simulation.encoder_resolution_deg")


def quantize(q: np.ndarray, resolution: np.ndarray) -> np.ndarray:
    """Round joint angles (..., nj) to the nearest encoder count (joints with 0 stay exact)."""
    res = np.asarray(resolution, dtype=float)
    return np.where(res > 0, np.round(q / np.where(res > 0, res, 1.0)) * res, q)


def centred_derivative(t: np.ndarray, x: np.ndarray, half_window: int,
                       max_step: float) -> np.ndarray:
    """Zero-phase derivative of samples ``x`` (N, n) at increasing stamps ``t`` (N,).

    The central difference (x[i+1] − x[i−1]) / (t[i+1] − t[i−1]), averaged over the 2r+1
    samples centred on i (r = ``half_window``): symmetric, so no phase lag. Consecutive stamps
    more than ``max_step`` apart split the samples into segments that are differentiated on their
    own; near a segment's ends the window shrinks so that it stays centred, and its first / last
    sample takes the one-sided difference with its neighbour (a lone sample gets 0).
    """
    n = t.shape[0]
    out = np.zeros_like(x)
    if n == 0:
        return out
    i = np.arange(n)
    breaks = np.flatnonzero(np.diff(t) > max_step) + 1
    segment = np.searchsorted(breaks, i, side="right")
    first = np.concatenate([[0], breaks])[segment]
    last = np.concatenate([breaks - 1, [n - 1]])[segment]
    prev, nxt = np.maximum(i - 1, first), np.minimum(i + 1, last)
    dt = (t[nxt] - t[prev])[:, None]
    diff = np.divide(x[nxt] - x[prev], dt, out=out, where=dt > 0)
    r = np.minimum(np.minimum(i - first, last - i), half_window)
    csum = np.vstack([np.zeros((1, x.shape[1])), np.cumsum(diff, axis=0)])
    return (csum[i + r + 1] - csum[i - r]) / (2 * r + 1)[:, None]
