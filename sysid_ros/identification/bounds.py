"""The feasible set Θ of θ_e and the boxes around it (DESIGN §4).

Θ = {θ_e ∈ B₀ : U^c − r ≤ Y·θ_e ≤ U^c + r} contains the true θ_e whenever every row's radius
bound holds (see :mod:`windows`). Its tightest enclosing box is 2×10 LPs (min/max of each
coordinate), solved with HiGHS on one model whose objective alone changes, so each solve warm
starts from the previous basis. With ``lmi=True`` the pseudo-inertia constraint J(θ_e) ⪰ 0
(true for every rigid body, S3-31) is added and the 20 problems are SDPs (cvxpy + Clarabel).

With ``psd_cuts`` (method ``lp-cuts``) J(θ) ⪰ 0 enters the LP as cutting planes instead:
for any vector v ∈ ℝ⁴, vᵀJ(θ)v ≥ 0 is a *linear* inequality in θ (J is linear in θ) that every
rigid body satisfies, so adding it never removes the truth. Whenever an LP optimum θ* has
λ_min(J(θ*)) < 0, its negative eigenvectors give cuts that θ* violates (Kelley's method); the
LP is re-solved warm from its basis. v = e_i with e_i ⊥ h gives the triangle inequalities
(Σ_ii ≥ 0 ⇔ I_jj + I_kk ≥ I_ii), v = e_i − a·e_4 the tangent planes of Σ_ii ≥ h_i²/m, and so on.
Each LP with any subset of these cuts is a relaxation of Θ ∩ {J ⪰ 0}, so its optimum is a sound
bound however few rounds run (``cut_rounds`` caps the work); with enough rounds it approaches
the SDP's box. Cuts do not depend on the data, so a pool is returned and can seed the next
(online) update.

Soundness of the numbers: HiGHS/Clarabel stop within tolerances, so the reported box is widened
by ``pad`` = 1e-6 (LP) / 1e-5 (SDP) of the prior width per side and clipped to B₀ — far above
the solvers' tolerances on the row-normalised problem. An infeasible Θ means the data contradict
the assumptions: status ``inconsistent`` and no box.
"""
from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from sysid_ros.model.parameters import pseudo_inertia

__all__ = ["BoxResult", "polytope_box", "chebyshev_center", "normalise_rows", "psd_cuts_at"]

OK, INCONSISTENT, INSUFFICIENT = "ok", "inconsistent", "insufficient_data"


@dataclass(frozen=True)
class BoxResult:
    """``status`` ok | inconsistent | insufficient_data; ``lower``/``upper`` (10,) or None."""

    status: str
    lower: np.ndarray | None
    upper: np.ndarray | None
    cuts: np.ndarray | None = None     # (k, 10) pseudo-inertia cuts a·θ ≥ 0 (lp-cuts only)


def normalise_rows(Y: np.ndarray, U: np.ndarray, r: np.ndarray):
    """Scale each row of |Yθ − U| ≤ r by 1/‖Y_row‖ (same set, better conditioned).

    Rows whose Y is (numerically) zero carry no information on θ_e but can still prove the data
    inconsistent: returned separately as a boolean "violated" flag.
    """
    norm = np.linalg.norm(Y, axis=1)
    keep = norm > 1e-12 * max(1.0, float(norm.max(initial=0.0)))
    violated = bool(np.any(np.abs(U[~keep]) > r[~keep]))
    s = 1.0 / norm[keep]
    return Y[keep] * s[:, None], U[keep] * s, r[keep] * s, violated


def _highs(Y: np.ndarray, lo: np.ndarray, hi: np.ndarray, x_lo: np.ndarray,
           x_hi: np.ndarray) -> highspy.Highs:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")   # re-solves warm-start from the basis instead
    n = Y.shape[1]
    h.addCols(n, np.zeros(n), x_lo, x_hi, 0, np.array([], np.int32), np.array([], np.int32),
              np.array([]))
    m = Y.shape[0]
    starts = (np.arange(m) * n).astype(np.int32)
    idx = np.tile(np.arange(n, dtype=np.int32), m)
    h.addRows(m, lo, hi, m * n, starts, idx, Y.reshape(-1))
    return h


_J_BASIS = pseudo_inertia(np.eye(10))          # J(θ) = Σ_k θ_k·_J_BASIS[k]


def psd_cuts_at(theta: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Cuts a·θ ≥ 0 (rows of unit norm) from the eigenvectors v of J(θ) with negative
    eigenvalue: a_k = vᵀJ(e_k)v. Every physically consistent θ satisfies them; ``theta``
    violates each by −λ/‖a‖. Empty (0, 10) when J(θ) ⪰ −tol·scale."""
    w, v = np.linalg.eigh(pseudo_inertia(theta))
    neg = w < -tol * max(1.0, float(np.abs(w).max()))
    vs = v[:, neg].T                                              # (k, 4)
    a = np.einsum("ci,kij,cj->ck", vs, _J_BASIS, vs)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def _lp_box(Y, lo, hi, x_lo, x_hi, pad, cuts=None, cut_rounds=0, max_cuts=200):
    h = _highs(Y, lo, hi, x_lo, x_hi)
    n = Y.shape[1]
    pool = [] if cuts is None else list(np.asarray(cuts, float).reshape(-1, n))
    idx = np.arange(n, dtype=np.int32)
    for a in pool:
        h.addRow(0.0, highspy.kHighsInf, n, idx, a)
    out = np.empty((2, n))
    added = 0
    for i in range(n):
        for side, sense in ((0, highspy.ObjSense.kMinimize), (1, highspy.ObjSense.kMaximize)):
            cost = np.zeros(n)
            cost[i] = 1.0
            h.changeColsCost(n, idx, cost)
            h.changeObjectiveSense(sense)
            for rnd in range(cut_rounds + 1):
                h.run()
                status = h.getModelStatus()
                if status == highspy.HighsModelStatus.kInfeasible:
                    return None
                if status != highspy.HighsModelStatus.kOptimal:
                    break
                x = np.asarray(h.getSolution().col_value)
                new = psd_cuts_at(x) if rnd < cut_rounds and added < max_cuts else ()
                for a in new:
                    h.addRow(0.0, highspy.kHighsInf, n, idx, a)
                    pool.append(a)
                added += len(new)
                if not len(new):
                    break
            if status != highspy.HighsModelStatus.kOptimal:
                # Fall back to the prior side: still sound, just not tight.
                out[side, i] = x_lo[i] if side == 0 else x_hi[i]
                continue
            # Any LP optimum of a relaxation bounds the coordinate, converged or not.
            out[side, i] = x[i]
    box = (np.maximum(out[0] - pad, x_lo), np.minimum(out[1] + pad, x_hi))
    # The newest cuts are the ones near the current box: keep those (FIFO) for the next call.
    return box, np.array(pool[-max_cuts:]).reshape(-1, n)


def _lmi_box(Y, lo, hi, x_lo, x_hi, pad):
    import cvxpy as cp

    n = Y.shape[1]
    theta = cp.Variable(n)
    c = cp.Parameter(n)
    basis = pseudo_inertia(np.eye(n))            # J is linear in θ: J(θ) = Σ θ_k J(e_k)
    J = sum(theta[k] * basis[k] for k in range(n))
    cons = [Y @ theta >= lo, Y @ theta <= hi, theta >= x_lo, theta <= x_hi, J >> 0]
    prob = cp.Problem(cp.Minimize(c @ theta), cons)
    out = np.empty((2, n))
    for i in range(n):
        for side, sgn in ((0, 1.0), (1, -1.0)):
            vec = np.zeros(n)
            vec[i] = sgn
            c.value = vec
            try:
                prob.solve(solver=cp.CLARABEL)
            except cp.SolverError:
                out[side, i] = x_lo[i] if side == 0 else x_hi[i]
                continue
            if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                return None
            if prob.status != cp.OPTIMAL:
                out[side, i] = x_lo[i] if side == 0 else x_hi[i]
                continue
            out[side, i] = theta.value[i]
    return np.maximum(out[0] - pad, x_lo), np.minimum(out[1] + pad, x_hi)


def polytope_box(Y: np.ndarray, U: np.ndarray, r: np.ndarray, prior_lower: np.ndarray,
                 prior_upper: np.ndarray, lmi: bool = False, psd_cuts: bool = False,
                 cuts: np.ndarray | None = None, cut_rounds: int = 8,
                 max_cuts: int = 200) -> BoxResult:
    """Tightest box around Θ (and, with ``lmi``, around Θ ∩ {J(θ) ⪰ 0}; with ``psd_cuts``,
    around Θ ∩ {vᵀJ(θ)v ≥ 0 for the generated cuts} — between the two).

    Args:
        Y, U, r: rows (n, 10), (n,), (n,) from :class:`~.windows.MomentumWindows`.
        prior_lower, prior_upper: B₀ (or the previous sound box, online).
        cuts: (k, 10) pseudo-inertia cuts to start from (a previous result's ``cuts``).
        cut_rounds: at most this many cut-and-resolve rounds per coordinate bound.
        max_cuts: cap on the cuts added per call and on the returned pool (bounds the LP size;
            fewer cuts only loosen the box, never make it unsound).
    """
    prior_lower = np.asarray(prior_lower, float)
    prior_upper = np.asarray(prior_upper, float)
    if len(U) == 0:
        return BoxResult(INSUFFICIENT, prior_lower.copy(), prior_upper.copy())
    Yn, Un, rn, violated = normalise_rows(Y, U, r)
    if violated:
        return BoxResult(INCONSISTENT, None, None)
    width = prior_upper - prior_lower
    pool = None
    if psd_cuts:
        # pad as for the SDP: cut rows add HiGHS feasibility-tolerance slack on unscaled θ
        res = _lp_box(Yn, Un - rn, Un + rn, prior_lower, prior_upper, 1e-5 * width,
                      cuts, cut_rounds, max_cuts)
    else:
        res = _lp_box(Yn, Un - rn, Un + rn, prior_lower, prior_upper, 1e-6 * width)
    if res is None:
        return BoxResult(INCONSISTENT, None, None)
    box, pool = res
    if lmi:
        tight = _lmi_box(Yn, Un - rn, Un + rn, box[0], box[1], 1e-5 * width)
        if tight is None:
            return BoxResult(INCONSISTENT, None, None)
        box = (np.maximum(tight[0], box[0]), np.minimum(tight[1], box[1]))
    return BoxResult(OK, box[0], box[1], pool if psd_cuts else None)


def chebyshev_center(Y: np.ndarray, U: np.ndarray, r: np.ndarray, lower: np.ndarray,
                     upper: np.ndarray) -> np.ndarray | None:
    """Centre of the largest ball (in box-width-scaled coordinates) inside Θ ∩ [lower, upper]."""
    Yn, Un, rn, violated = normalise_rows(Y, U, r)
    if violated:
        return None
    width = np.maximum(upper - lower, 1e-12)
    # θ = lower + width∘z: scaling makes "ball" mean the same relative size in every coordinate.
    A = Yn * width
    b_lo, b_hi = Un - rn - Yn @ lower, Un + rn - Yn @ lower
    an = np.linalg.norm(A, axis=1)
    n = Y.shape[1]
    # Variables (z, ρ): max ρ s.t. A z ± ‖a‖ρ within [b_lo, b_hi], ρ ≤ z_i ≤ 1 − ρ.
    rows = np.concatenate([np.hstack([A, an[:, None]]), np.hstack([A, -an[:, None]])])
    r_lo = np.concatenate([np.full(len(an), -np.inf), b_lo])
    r_hi = np.concatenate([b_hi, np.full(len(an), np.inf)])
    box_rows = np.concatenate([np.hstack([np.eye(n), -np.ones((n, 1))]),
                               np.hstack([np.eye(n), np.ones((n, 1))])])
    rows = np.concatenate([rows, box_rows])
    r_lo = np.concatenate([r_lo, np.zeros(n), np.full(n, -np.inf)])
    r_hi = np.concatenate([r_hi, np.full(n, np.inf), np.ones(n)])
    h = _highs(rows, r_lo, r_hi, np.concatenate([np.zeros(n), [0.0]]),
               np.concatenate([np.ones(n), [0.5]]))
    cost = np.zeros(n + 1)
    cost[-1] = 1.0
    h.changeColsCost(n + 1, np.arange(n + 1, dtype=np.int32), cost)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    z = np.asarray(h.getSolution().col_value[:n])
    return lower + width * z
