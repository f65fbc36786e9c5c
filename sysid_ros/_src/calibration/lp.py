"""Linear programs over the calibration polytope, in box-scaled coordinates.

Every parameter x_k with a prior interval [lo_k, hi_k] of positive width is written
x_k = mid_k + rad_k·z_k with z_k ∈ [−1, 1]; zero-width entries (a URDF product of inertia that is
exactly 0 keeps a zero relative box) are constants moved to the right-hand side. Rows are then
scaled to unit norm. Inertias (1e-3 kg·m²) and armatures (10 kg·m²) thus enter the solver on
the same scale, which HiGHS's own scaling does not guarantee.

Two kinds of programs, each one HiGHS model whose objective alone changes between solves (warm starts
from the previous basis):

- :func:`min_noise`: the smallest per-joint noise bounds (min Σ_j δ_j) that make every row
  consistent with *some* parameters in the prior, each at least the joint's mean error in the
  best L1 fit (:func:`noise_profile`);
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

from sysid_ros._src.identification.calibration_constraints import CalibrationRows

__all__ = ["ScaledRows", "scale_rows", "min_noise", "noise_profile", "noise_speed_shape",
           "common_scale", "BoxLP", "PAD"]

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


def _scale_lp(s: ScaledRows, S: sp.csr_matrix, cost: np.ndarray,
              lower: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """min cost·σ over (z, σ ≥ lower) s.t. A_up z − S σ ≤ b_up and A_lo z + S σ ≥ b_lo,
    z ∈ [−1, 1]. S (n, m) maps the m noise variables σ to each row's noise radius.
    Returns (σ, z) or None."""
    k, m = s.free.size, S.shape[1]
    h = _new_highs()
    h.addCols(k + m, np.concatenate([np.zeros(k), cost]),
              np.concatenate([-np.ones(k), np.zeros(m) if lower is None else lower]),
              np.concatenate([np.ones(k), np.full(m, _INF)]),
              0, np.array([], np.int32), np.array([], np.int32), np.array([]))
    n = S.shape[0]
    _add_sparse_rows(h, sp.hstack([s.A_up, -S]), np.full(n, -_INF), s.b_up)
    _add_sparse_rows(h, sp.hstack([s.A_lo, S]), s.b_lo, np.full(n, _INF))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    sol = np.asarray(h.getSolution().col_value)
    return np.maximum(sol[k:], 0.0), sol[:k]


def noise_profile(s: ScaledRows, nj: int) -> np.ndarray:
    """Per joint, the mean window-averaged excess (N·m) of the least-absolute-deviation fit of
    all rows together: min Σ_i e_i over z ∈ [−1, 1], e ≥ 0 with every row holding at noise
    e_i (one LP; the Coulomb interval is used exactly, which a least-squares fit at its centre
    would not). It says how the error is spread over the joints, from a fit that has no reason
    to trade one joint's rows against another's; 0 for a joint means its rows are fitted
    exactly."""
    # The LP has one variable per row and its cost grows faster than linearly; the profile is
    # only a floor, so at most ``_PROFILE_WINDOWS`` evenly spread windows per joint are used.
    per_joint = [np.flatnonzero(s.joint == j) for j in range(nj)]
    step = max(1, int(np.ceil(max(len(i) for i in per_joint) / _PROFILE_WINDOWS)))
    sub = _take(s, np.sort(np.concatenate([i[::step] for i in per_joint])))
    res = _scale_lp(sub, sp.diags(sub.t).tocsr(), np.ones(len(sub.b_up)))
    if res is None:
        return np.zeros(nj)
    e = res[0]
    return np.array([float(np.mean(e[sub.joint == j])) if np.any(sub.joint == j) else 0.0
                     for j in range(nj)])


_PROFILE_WINDOWS = 300


def _take(s: ScaledRows, rows: np.ndarray) -> ScaledRows:
    return ScaledRows(s.A_up[rows], s.A_lo[rows], s.b_up[rows], s.b_lo[rows], s.t[rows],
                      s.joint[rows], s.free, s.mid, s.rad)


def min_noise(s: ScaledRows, nj: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The smallest per-joint noise bounds δ (N·m) that make every row consistent with some
    z ∈ [−1, 1]: one LP, min Σ_j δ_j s.t. the rows and δ_j ≥ p_j, with p the joint profile of
    :func:`noise_profile`.

    Why the lower bound: all joints share the parameters, so min Σ_j δ_j alone may buy an exact
    fit of some joints (δ_j = 0) with a larger bound on another — one glitchy joint would leave
    the others with no measured bound at all. A bound on the largest window error is not below
    the mean error of the best L1 fit; on ordinary data the largest is several times the mean
    and the constraint is inactive.

    Returns (δ, p), or None if the LP fails (it is always feasible)."""
    profile = noise_profile(s, nj)
    n = len(s.b_up)
    S = sp.csr_matrix((s.t, (np.arange(n), s.joint)), shape=(n, nj))
    res = _scale_lp(s, S, np.ones(nj), lower=profile)
    if res is None:
        return None
    return np.maximum(res[0], profile), profile


def noise_speed_shape(s: ScaledRows, speed: np.ndarray, nj: int) -> np.ndarray:
    """(nj,) κ_j (s/rad): the shape of the smallest speed-dependent envelope of the rows, a
    bound δ0_j + δ1_j·v_w on the window-averaged error of window w of mean |speed| v_w
    (rad/s), κ_j = δ1_j/δ0_j. One LP over the parameters and (δ0, δ1): minimise every joint's
    bound averaged over its windows, Σ_j (δ0_j + δ1_j·mean_w v_w), with every row consistent
    and δ0_j at least the joint's mean error in the best L1 fit (:func:`noise_profile`, the
    same floor as :func:`min_noise`: no joint's bound at rest is traded down to zero); κ_j = 0
    where that floor is zero."""
    speed = np.abs(np.asarray(speed, float))
    n = len(s.b_up)
    profile = noise_profile(s, nj)
    S = sp.csr_matrix((np.concatenate([s.t, s.t * speed]),
                       (np.tile(np.arange(n), 2), np.concatenate([s.joint, nj + s.joint]))),
                      shape=(n, 2 * nj))
    mean_speed = np.array([float(np.mean(speed[s.joint == j])) if np.any(s.joint == j) else 0.0
                           for j in range(nj)])
    res = _scale_lp(s, S, np.concatenate([np.ones(nj), mean_speed]),
                    lower=np.concatenate([profile, np.zeros(nj)]))
    if res is None:
        return np.zeros(nj)
    d0, d1 = np.maximum(res[0][:nj], profile), res[0][nj:]
    return np.where(d0 > 0, d1 / np.where(d0 > 0, d0, 1.0), 0.0)


def common_scale(s: ScaledRows, delta: np.ndarray) -> float:
    """The smallest factor σ such that every row is consistent with the noise bounds σ·δ (one
    LP; ≤ 1: consistent at δ). ``inf`` if the LP fails."""
    res = _scale_lp(s, sp.csr_matrix((s.t * np.asarray(delta, float)[s.joint])[:, None]),
                    np.ones(1))
    return float("inf") if res is None else float(res[0][0])


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
