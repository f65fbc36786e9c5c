"""Energy (power-balance) rows for the point estimate (S0's energy observations).

Over a window [a, b] the measured input work equals the change of mechanical energy plus the
work of the joint friction law (β is a sensor offset: it shifts the measured power by β·q̇):

    ∫ Σ_j τ̂_j q̇_j dt = ΔK + ΔU + Σ_j [Fc_j ∫|q̇_j| + Fv_j ∫q̇_j² + Ia_j Δ(½q̇_j²) + β_j Δq_j]

K and U are linear in θ (``Regressors.kinetic``/``potential`` at the two ends), so the row is
linear in x = [θ | φ]. It weighs the joints by their velocity, which the momentum rows do not,
and so helps separate friction from inertia. Inside the Coulomb band σ(q̇)·q̇ is taken as |q̇|
(harmless for a least-squares row, which is why these rows never enter the sound bounds: a
per-window torque-error bound does not bound the error of ∫τ̂·q̇).

Row scale for weighting: Σ_j δ_j·∫|q̇_j| dt (the work the noise bound could do) + 1e-6 J.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.map_estimate import LinearRows
from sysid_ros._src.identification.calibration_constraints import CalibrationRows
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot

__all__ = ["energy_rows", "prefix_trapezoid"]


def prefix_trapezoid(t: np.ndarray, f: np.ndarray) -> np.ndarray:
    """∫ f dt from t[0] to every t[k] (trapezoid), (N, …)."""
    inc = 0.5 * np.diff(t)[(...,) + (None,) * (f.ndim - 1)] * (f[1:] + f[:-1])
    return np.concatenate([np.zeros((1,) + f.shape[1:]), np.cumsum(inc, axis=0)])


def _unwrapped(robot: Robot, q: np.ndarray) -> np.ndarray:
    cont = ~np.isfinite(robot.limits.q_lower) & ~np.isfinite(robot.limits.q_upper)
    if not cont.any():
        return q
    q = q.copy()
    q[:, cont] = np.unwrap(q[:, cont], axis=0)
    return q


def energy_rows(robot: Robot, rows: CalibrationRows, recordings: list[Recording],
                delta: np.ndarray) -> LinearRows:
    """One energy row per calibration window (module docstring)."""
    reg = Regressors(robot)
    n_theta = rows.n_theta
    keys = np.unique(np.stack([rows.source, rows.start, rows.end], axis=1), axis=0)
    A_parts, c_parts, s_parts = [], [], []
    for src in np.unique(keys[:, 0]):
        rec = recordings[int(src)]
        k = keys[keys[:, 0] == src]
        a, b = k[:, 1], k[:, 2]
        t, q, dq, tau = rec.t, _unwrapped(robot, rec.q), rec.dq, rec.tau
        assert dq is not None  # calibrate() estimates velocities before building rows
        pts = np.unique(np.concatenate([a, b]))
        q_full = np.tile(robot.neutral(), (pts.size, 1))
        q_full[:, robot.q_index] = rec.q[pts]
        dq_full = np.zeros((pts.size, robot.nv))
        dq_full[:, robot.v_index] = dq[pts]
        energy = reg.kinetic(q_full, dq_full) + reg.potential(q_full)       # (P, n_theta)
        at = {int(p): i for i, p in enumerate(pts)}
        ia, ib = np.array([at[int(x)] for x in a]), np.array([at[int(x)] for x in b])
        power = prefix_trapezoid(t, np.sum(tau * dq, axis=1))
        absv = prefix_trapezoid(t, np.abs(dq))
        sq = prefix_trapezoid(t, dq * dq)
        # the columns of adopted terms and gain unknowns (if any) stay 0: these are
        # point-estimate rows, never in a bound, and x keeps the rows' layout [θ | φ | ψ | v]
        A = np.zeros((len(k), rows.n_x))
        A[:, :n_theta] = energy[ib] - energy[ia]
        fr = np.stack([absv[b] - absv[a], sq[b] - sq[a], 0.5 * (dq[b] ** 2 - dq[a] ** 2),
                       q[b] - q[a]], axis=2)                                  # (w, nj, 4)
        A[:, n_theta:n_theta + fr[0].size] = fr.reshape(len(k), -1)
        A_parts.append(A)
        c_parts.append(power[b] - power[a])
        s_parts.append((absv[b] - absv[a]) @ delta + 1e-6)
    return LinearRows(sp.csr_matrix(np.vstack(A_parts)), np.concatenate(c_parts),
                      np.concatenate(s_parts))
