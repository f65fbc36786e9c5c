"""Sound enclosure of the torque a moving trunk induces on an arm, over a box of joint angles.

``control.arm_view`` carries the trunk's motion into the fixed-base arm view as a disturbance
d with |d_j| ≤ d̄_j. Its closed-form bound never looks at the configuration; this module
bounds the two parts of d that dominate it over a *workspace* box Q of the arm's joints (the
view's position limits, which the planner certifies every motion stays in):

    d = J_a(q, θ) a + J_α(q, θ) α + d_ω(q, q̇, ω)

(the fictitious forces of a frame accelerating linearly at a, angularly at α, rotating at ω:
linear in a and α, no cross terms,
docs/theory/simulation.md#the-arm-view-of-a-floating-base-robot). Column k of J_a is the arm's
inverse dynamics with q̇ = q̈ = 0, no gravity and the base frame accelerating at e_k (linear);
of J_α, at e_k (angular) — RNEA with the base's spatial acceleration in place of −g
(``chain.forward_pass(base=…)``). For ‖a‖ ≤ a̅ and ‖α‖ ≤ α̅,

    |J_a,j a + J_α,j α| ≤ a̅ ‖J_a,j‖₂ + α̅ ‖J_α,j‖₂,   ‖J_j‖₂ ≤ (Σ_k mag(J_jk)²)^½,

with mag the interval magnitude of the enclosure over a sub-box of Q and the parameter box
Θ (every body's 10 parameters in an interval). For a per-axis bound |α_k| ≤ α̅_k (trunk
frame) the α part is Σ_k α̅_k mag(J_α,jk) instead. The bound is the largest over a grid of
sub-boxes covering Q. Sound by the interval arithmetic's guarantee (``enclosures.interval``);
loose only by the dependency effect inside a sub-box, which shrinks with the sub-box.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from sysid_ros._src.enclosures.affine import Affine, affine_cos_sin
from sysid_ros._src.enclosures.chain import SerialChain, forward_pass, passivity_torque
from sysid_ros._src.enclosures.interval import Interval

__all__ = ["trunk_acceleration_bound", "workspace_grid"]

_CHUNK = 2048           # sub-boxes per vectorised pass (memory: ~1e3 arrays of this length)


def workspace_grid(lower: np.ndarray, upper: np.ndarray, max_boxes: int) -> list[np.ndarray]:
    """Edges per joint of a grid of at most ``max_boxes`` sub-boxes covering [lower, upper]:
    the same largest sub-box width on every joint that has one (a joint of zero width gets one
    cell), the smallest such width the budget allows."""
    width = np.asarray(upper, float) - np.asarray(lower, float)
    if np.any(width < 0) or max_boxes < 1:
        raise ValueError("workspace_grid: need lower ≤ upper and max_boxes ≥ 1")

    def cells(w: float) -> np.ndarray:
        return np.maximum(1, np.ceil(width / w - 1e-9)).astype(int)

    lo, hi = 1e-6, max(float(width.max()), 1e-6)     # cells(hi) is all ones
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if np.prod(cells(mid).astype(float)) <= max_boxes:
            hi = mid
        else:
            lo = mid
    return [np.linspace(a, b, n + 1) for a, b, n in zip(lower, upper, cells(hi))]


def _norm_columns(chain: SerialChain, cs: list, theta: list, linear: bool,
                  weights: np.ndarray | None = None) -> np.ndarray:
    """(N, nb) upper bounds of ‖J_j‖₂ over the sub-boxes, J = J_a (linear) or J_α; with
    ``weights`` (3,), of Σ_k weights_k |J_jk| instead (a per-axis box of the input)."""
    zero3 = (0.0, 0.0, 0.0)
    zeros = [0.0] * chain.nb
    total = np.zeros(())
    for k in range(3):
        if weights is not None and weights[k] == 0.0:
            continue
        unit = tuple(1.0 if i == k else 0.0 for i in range(3))
        base = (unit, zero3) if linear else (zero3, unit)
        fwd = forward_pass(chain, cs, zeros, zeros, zeros, base=base)
        tau = passivity_torque(chain, cs, zeros, zeros, zeros, theta, forward=fwd)
        mag = np.stack([t.mag() for t in tau], axis=-1)
        total = total + (mag ** 2 if weights is None else weights[k] * mag)     # (N, nb)
    if weights is not None:          # (some weight > 0: the caller's)
        return total * (1.0 + 1e-12)
    return np.sqrt(total) * (1.0 + 1e-12)       # the root's rounding, outward


def trunk_acceleration_bound(model: pin.Model, name: str, theta_lower: np.ndarray,
                             theta_upper: np.ndarray, q_lower: np.ndarray,
                             q_upper: np.ndarray, accel: float, alpha: float | np.ndarray,
                             max_boxes: int = 20000) -> np.ndarray:
    """(nb,) N·m: max over q ∈ [q_lower, q_upper] and θ in the box of |J_a,j a + J_α,j α| for
    ‖a‖ ≤ ``accel`` (m/s²) and ‖α‖ ≤ ``alpha`` (rad/s²), or |α_k| ≤ ``alpha[k]`` for three
    per-axis bounds in the trunk frame (module doc). ``model``: the fixed-base
    arm (revolute chain, base = the trunk frame); ``theta_lower/upper`` (nb, 10): each body's
    Pinocchio parameters [m, mc, I about the joint origin] in an interval."""
    chain = SerialChain.from_model(model, name)
    edges = workspace_grid(q_lower, q_upper, max_boxes)
    index = np.stack(np.meshgrid(*[np.arange(e.size - 1) for e in edges], indexing="ij"),
                     axis=-1).reshape(-1, chain.nb)
    theta = [tuple(Interval.from_bounds(theta_lower[i, c], theta_upper[i, c]) for c in range(10))
             for i in range(chain.nb)]
    worst = np.zeros(chain.nb)
    for start in range(0, len(index), _CHUNK):
        rows = index[start:start + _CHUNK]
        # each joint angle its own noise symbol: affine forms keep the rotations' correlation
        # (plain intervals re-box at every joint and were 4x looser here)
        cs = [affine_cos_sin(Affine.from_interval(
            Interval.from_bounds(edges[j][rows[:, j]], edges[j][rows[:, j] + 1]),
            np.full(len(rows), j), chain.nb)) for j in range(chain.nb)]
        part = np.zeros((len(rows), chain.nb))
        if accel > 0:
            part += accel * _norm_columns(chain, cs, theta, linear=True)
        if np.ndim(alpha) == 1:
            if np.any(np.asarray(alpha) > 0):
                part += _norm_columns(chain, cs, theta, False, np.asarray(alpha, float))
        elif alpha > 0:
            part += alpha * _norm_columns(chain, cs, theta, linear=False)
        worst = np.maximum(worst, part.max(axis=0))
    return worst
