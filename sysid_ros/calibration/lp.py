"""Linear programs over the calibration polytope, in box-scaled coordinates.

Every parameter x_k with a prior interval [lo_k, hi_k] of positive width is written
x_k = mid_k + rad_k·z_k with z_k ∈ [−1, 1]; zero-width entries (a URDF product of inertia that is
exactly 0 keeps a zero relative box) are constants moved to the right-hand side. Rows are then
scaled to unit norm. Inertias (1e-3 kg·m²) and armatures (10 kg·m²) thus enter the solver on
the same scale, which HiGHS's own scaling does not guarantee.

Two programs, each one HiGHS model whose objective alone changes between solves (warm starts
from the previous basis):

- :func:`min_noise`: min Σ_j δ_j over (z, δ) — the smallest per-joint noise bounds that make
  every row consistent with *some* parameters in the prior;
- :class:`BoxLP`: with δ fixed, min and max of chosen coordinates — the tightest box around
  the polytope.

Solvers stop within tolerances; results are padded by ``PAD`` of the prior width (far above
HiGHS's primal feasibility tolerance on the unit-scaled problem) and clipped to the prior, and an
LP that does not reach optimality falls back to the prior side (sound, not tight).
"""
from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from sysid_ros.calibration.rows import CalibrationRows

__all__ = ["ScaledRows", "scale_rows", "min_noise", "BoxLP", "PAD"]

PAD = 1e-6
_INF = highspy.kHighsInf


@dataclass(frozen=True)
class ScaledRows:
    """A_up·z ≤ b_up + t·δ_j and A_lo·z ≥ b_lo − t·δ_j in z ∈ [−1, 1]^k (rows unit-scaled)."""

    A_up: sp.csr_matrix
    A_lo: sp.csr_matrix
    b_up: np.ndarray
    b_lo: np.ndarray
    t: np.ndarray           # scaled T' of each row
    joint: np.ndarray
    free: np.ndarray        # indices of x that are LP columns
    mid: np.ndarray         # (n_x,) prior centre
    rad: np.ndarray         # (n_x,) prior radius

    def x_of(self, z: np.ndarray) -> np.ndarray:
        x = self.mid.copy()
        x[self.free] += self.rad[self.free] * z
        return x


def scale_rows(rows: CalibrationRows, lower: np.ndarray, upper: np.ndarray) -> ScaledRows:
    """The rows of ``rows`` in box-scaled coordinates of the prior [lower, upper]."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    if np.any(lower > upper):
        raise ValueError("prior box has lower > upper")
    mid, rad = 0.5 * (lower + upper), 0.5 * (upper - lower)
    scale_ref = np.maximum(np.abs(mid), 1.0)
    free = np.flatnonzero(rad > 1e-12 * scale_ref)
    A_up, A_lo = rows.sides()
    off_up, off_lo = A_up @ mid, A_lo @ mid
    D = sp.diags(rad[free])
    Zu, Zl = (A_up[:, free] @ D).tocsr(), (A_lo[:, free] @ D).tocsr()
    norm = np.sqrt(np.asarray(Zu.multiply(Zu).sum(axis=1)).ravel())
    norm = np.maximum(norm, 1e-12 * max(float(norm.max(initial=0.0)), 1e-300))
    s = sp.diags(1.0 / norm)
    return ScaledRows((s @ Zu).tocsr(), (s @ Zl).tocsr(),
                      (rows.c + rows.r_fixed - off_up) / norm,
                      (rows.c - rows.r_fixed - off_lo) / norm,
                      rows.t_noise / norm, rows.joint.copy(), free, mid, rad)


def _add_sparse_rows(h: highspy.Highs, M: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> None:
    M = M.tocsr()
    M.sort_indices()
    h.addRows(M.shape[0], lo, hi, M.nnz, M.indptr[:-1].astype(np.int32),
              M.indices.astype(np.int32), M.data.astype(float))


def _new_highs() -> highspy.Highs:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def min_noise(s: ScaledRows, nj: int, weights: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """min Σ_j w_j·δ_j s.t. every row holds with noise bound δ_j, z ∈ [−1, 1].

    Returns (δ (nj,) in N·m, z at the optimum), or None if the LP fails (it is always feasible:
    δ is unbounded above)."""
    k = s.free.size
    w = np.ones(nj) if weights is None else np.asarray(weights, float)
    h = _new_highs()
    h.addCols(k + nj, np.concatenate([np.zeros(k), w]),
              np.concatenate([-np.ones(k), np.zeros(nj)]),
              np.concatenate([np.ones(k), np.full(nj, _INF)]),
              0, np.array([], np.int32), np.array([], np.int32), np.array([]))
    n = len(s.b_up)
    T = sp.csr_matrix((s.t, (np.arange(n), s.joint)), shape=(n, nj))
    # A_up z − t δ ≤ b_up ;  A_lo z + t δ ≥ b_lo
    _add_sparse_rows(h, sp.hstack([s.A_up, -T]), np.full(n, -_INF), s.b_up)
    _add_sparse_rows(h, sp.hstack([s.A_lo, T]), s.b_lo, np.full(n, _INF))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    sol = np.asarray(h.getSolution().col_value)
    return np.maximum(sol[k:], 0.0), sol[:k]


class BoxLP:
    """The polytope at fixed noise bounds δ (N·m per joint); min/max of coordinates of x.

    ``feasible`` is False when the rows contradict the prior at this δ (then no box)."""

    def __init__(self, s: ScaledRows, delta: np.ndarray) -> None:
        self.s = s
        k = s.free.size
        self.k = k
        h = _new_highs()
        h.setOptionValue("presolve", "off")      # re-solves warm-start from the basis
        h.addCols(k, np.zeros(k), -np.ones(k), np.ones(k), 0, np.array([], np.int32),
                  np.array([], np.int32), np.array([]))
        slack = s.t * np.asarray(delta, float)[s.joint]
        n = len(s.b_up)
        _add_sparse_rows(h, s.A_up, np.full(n, -_INF), s.b_up + slack)
        _add_sparse_rows(h, s.A_lo, s.b_lo - slack, np.full(n, _INF))
        self.h = h
        self._idx = np.arange(k, dtype=np.int32)
        self._pos = {int(c): i for i, c in enumerate(s.free)}
        h.run()
        self.feasible = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        self.z_feasible = np.asarray(h.getSolution().col_value) if self.feasible else None

    def _extreme(self, i: int, maximise: bool) -> float | None:
        cost = np.zeros(self.k)
        cost[i] = 1.0
        h = self.h
        h.changeColsCost(self.k, self._idx, cost)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize if maximise
                               else highspy.ObjSense.kMinimize)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return float(h.getSolution().col_value[i])

    def box(self, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of x at ``columns`` over the polytope (prior where a column is not an
        LP variable or a solve fails), padded by PAD of the prior width and clipped to it."""
        if not self.feasible:
            raise RuntimeError("BoxLP.box: the rows are infeasible at this noise bound")
        s = self.s
        columns = np.asarray(columns, int)
        lo = s.mid[columns] - s.rad[columns]
        hi = s.mid[columns] + s.rad[columns]
        for o, c in enumerate(columns):
            i = self._pos.get(int(c))
            if i is None:
                continue
            zl, zh = self._extreme(i, False), self._extreme(i, True)
            if zl is not None:
                lo[o] = s.mid[c] + s.rad[c] * max(-1.0, zl - 2 * PAD)
            if zh is not None:
                hi[o] = s.mid[c] + s.rad[c] * min(1.0, zh + 2 * PAD)
        return lo, hi
