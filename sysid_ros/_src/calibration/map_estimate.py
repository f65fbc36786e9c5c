"""Point estimate of every calibrated quantity: MAP least squares with physical consistency.

On the same momentum rows as the bounds (no accelerations), optionally with energy rows:

    min_x  Σ_i w_i·(A_i·x − c_i)²  +  Σ_k ((x_k − x0_k)/σ_k)²
    s.t.   x inside the sound box (so the nominal the calibration writes lies in its own box),
           J(θ_b) ⪰ 0 for every body b (pseudo-inertia LMI: a rigid body's parameters),

with w_i = 1/ρ_i², ρ_i the row's radius under the calibrated noise bound (rows are weighted by
how uncertain they are), x0 the URDF / catalogue prior and σ its half-width (S0's Gaussian prior
on the URDF). Solved with cvxpy + Clarabel (SCS if Clarabel fails) in box-scaled coordinates; the data term is reduced
to its k×k Cholesky factor first, so the conic problem does not grow with the recording.

Outliers (S1's iteratively reweighted least squares): with ``robust='huber'`` the weights are
multiplied by Huber's ψ(u)/u of the standardised residuals u (scale = 1.4826·MAD, k = 1.345)
and the problem is re-solved a few times; ``'cauchy'`` uses 1/(1 + (u/2.385)²); ``'none'``
solves once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sysid_ros._src.model.parameters import pseudo_inertia

__all__ = ["LinearRows", "MapEstimate", "map_estimate", "ROBUST_LOSSES"]

ROBUST_LOSSES = ("huber", "cauchy", "none")
_J_BASIS = pseudo_inertia(np.eye(10))      # J(θ) = Σ_k θ_k·_J_BASIS[k]
# J ⪰ margin·m·1 rather than ⪰ 0: the solver's tolerance must not leave the written nominal a
# hair outside the consistent set (apply_calibration checks it strictly)
_PSD_MARGIN = 1e-7


@dataclass(frozen=True)
class LinearRows:
    """A·x ≈ c with per-row scale ρ (same units as c): the least-squares view of any row set."""

    A: sp.csr_matrix
    c: np.ndarray
    scale: np.ndarray

    @staticmethod
    def stack(parts: list[LinearRows]) -> LinearRows:
        return LinearRows(sp.vstack([p.A for p in parts]).tocsr(),
                          np.concatenate([p.c for p in parts]),
                          np.concatenate([p.scale for p in parts]))


@dataclass(frozen=True)
class MapEstimate:
    """``x`` the estimate; ``weights`` the final robust weights (1 = full weight) per row;
    ``iterations`` of IRLS; ``status`` the last solver status; ``standardised`` the final
    residuals in units of their row scale."""

    x: np.ndarray
    weights: np.ndarray
    iterations: int
    status: str
    standardised: np.ndarray


def _robust_weights(u: np.ndarray, loss: str) -> np.ndarray:
    s = 1.4826 * float(np.median(np.abs(u - np.median(u))))
    if not s > 0:
        return np.ones_like(u)
    v = np.abs(u) / s
    if loss == "huber":
        k = 1.345
        return np.where(v <= k, 1.0, k / np.maximum(v, 1e-300))
    if loss == "cauchy":
        return 1.0 / (1.0 + (v / 2.385) ** 2)
    return np.ones_like(u)


def _solve(prob) -> str:
    """Clarabel, and SCS when Clarabel fails numerically (it does on some small, badly scaled
    arms such as the Z1's wrist); returns the status or ``solver error: …``."""
    import cvxpy as cp

    last = ""
    for solver, options in ((cp.CLARABEL, {"max_threads": 1}), (cp.SCS, {})):
        try:
            # one thread: Clarabel's own pool would compete with a batch's other workers, and
            # a worker forked after it started would wait for it forever
            prob.solve(solver=solver, **options)
        except cp.SolverError as err:
            last = f"solver error: {err}"
            continue
        if prob.status in ("optimal", "optimal_inaccurate"):
            return str(prob.status)
        last = str(prob.status)
    return last


def map_estimate(rows: LinearRows, lower: np.ndarray, upper: np.ndarray, x0: np.ndarray,
                 sigma: np.ndarray, bodies: list[slice], robust: str = "huber",
                 iterations: int = 4) -> MapEstimate:
    """MAP estimate (module docstring).

    Args:
        rows: least-squares rows in x.
        lower, upper: the box x must stay in (zero-width entries are held fixed).
        x0, sigma: Gaussian prior (σ > 0 where the box has width).
        bodies: slices of x holding one body's 10 parameters each (LMI J ⪰ 0 on each).
        robust: ``huber`` | ``cauchy`` | ``none`` (IRLS loss).
        iterations: IRLS solves at most (1 when ``robust`` is none).
    """
    import cvxpy as cp

    if robust not in ROBUST_LOSSES:
        raise ValueError(f"robust loss {robust!r} is not one of {ROBUST_LOSSES}")
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    mid, rad = 0.5 * (lower + upper), 0.5 * (upper - lower)
    free = np.flatnonzero(rad > 1e-12 * np.maximum(np.abs(mid), 1.0))
    k = free.size
    Az = (rows.A[:, free] @ sp.diags(rad[free])).tocsr()
    bz = rows.c - rows.A @ mid
    inv_scale = 1.0 / np.maximum(rows.scale, 1e-300)
    sig = np.maximum(np.asarray(sigma, float)[free], 1e-300)
    P = rad[free] / sig
    p0 = (np.asarray(x0, float)[free] - mid[free]) / sig

    z = cp.Variable(k)
    L = cp.Parameter((k, k))
    y = cp.Parameter(k)
    cons = [z >= -1.0, z <= 1.0]
    for sl in bodies:
        idx = np.arange(sl.start, sl.stop)
        terms = []
        for i, col in enumerate(idx):
            pos = int(np.searchsorted(free, col))
            if pos < k and free[pos] == col:
                terms.append(z[pos] * (rad[col] * _J_BASIS[i]))
        if not terms:
            continue             # a fully fixed body: nothing to constrain
        J = cp.Constant(pseudo_inertia(mid[idx])) + cp.sum(terms) if len(terms) > 1 else \
            cp.Constant(pseudo_inertia(mid[idx])) + terms[0]
        cons.append(J >> _PSD_MARGIN * max(float(mid[sl.start]), 1e-6) * np.eye(4))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(L @ z - y) + cp.sum_squares(cp.multiply(P, z)
                                                                             - p0)), cons)
    w = np.ones(len(rows.c))
    n_iter = 1 if robust == "none" else max(1, iterations)
    status, zv, u = "not solved", np.zeros(k), np.zeros(len(rows.c))
    done = 0
    for it in range(n_iter):
        d = np.sqrt(w) * inv_scale
        M = sp.diags(d) @ Az
        G = (M.T @ M).toarray()
        g = M.T @ (d * bz)
        ridge = 1e-12 * max(float(np.trace(G)), 1e-300) / max(k, 1)
        C = np.linalg.cholesky(G + ridge * np.eye(k))        # G = C·Cᵀ
        L.value = C.T
        y.value = np.linalg.solve(C, g)
        status = _solve(prob)
        if status.startswith("solver error"):
            break
        done = it + 1
        if z.value is None:
            break
        zv = np.clip(np.asarray(z.value), -1.0, 1.0)
        u = (Az @ zv - bz) * inv_scale
        if robust == "none":
            break
        w_new = _robust_weights(u, robust)
        if np.max(np.abs(w_new - w)) < 1e-3:
            w = w_new
            break
        w = w_new
    x = mid.copy()
    x[free] += rad[free] * zv
    return MapEstimate(np.clip(x, lower, upper), w, done, status, u)
