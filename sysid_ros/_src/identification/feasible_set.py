"""The feasible set Θ of θ_e and the boxes around it (docs/theory/identification.md).

Θ = {x = [θ_e | φ] ∈ B₀ × Φ : c − r ≤ A·x ≤ c + r} contains the true θ_e (and friction
unknowns φ) whenever every row's radius bound holds (see :mod:`problem`). Its tightest box in
θ_e is 2×10 LPs (min/max of each θ_e coordinate over all unknowns), solved with HiGHS on one model
whose objective alone changes, so each solve warm
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
from scipy import sparse

from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.parameters import pseudo_inertia

__all__ = ["BoxResult", "polytope_box", "chebyshev_centre", "informative_rows",
           "normalise_rows", "prune_rows", "psd_cuts_at"]

OK, INCONSISTENT, INSUFFICIENT = "ok", "inconsistent", "insufficient_data"
N_BOX = 10          # θ_e: the first 10 unknowns are the box's


@dataclass(frozen=True)
class BoxResult:
    """``status`` ok | inconsistent | insufficient_data and the θ_e ``box`` (None when
    inconsistent; the prior when insufficient; nominal = its centre unless a method has a point
    estimate), with the pseudo-inertia ``cuts`` (lp-cuts only)."""

    status: str
    box: ParameterBox | None
    cuts: np.ndarray | None = None     # (k, 10) pseudo-inertia cuts a·θ ≥ 0 (lp-cuts only)


def informative_rows(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask of the rows whose Y is not numerically zero, every row's norm ‖Y_row‖)."""
    norm = np.linalg.norm(Y, axis=1)
    return norm > 1e-12 * max(1.0, float(norm.max(initial=0.0))), norm


def normalise_rows(Y: np.ndarray, U: np.ndarray, r: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Scale each row of |Yθ − U| ≤ r by 1/‖Y_row‖ (same set, better conditioned).

    Rows whose Y is (numerically) zero carry no information on θ_e but can still prove the data
    inconsistent: returned separately as a boolean "violated" flag.
    """
    keep, norm = informative_rows(Y)
    violated = bool(np.any(np.abs(U[~keep]) > r[~keep]))
    s = 1.0 / norm[keep]
    return Y[keep] * s[:, None], U[keep] * s, r[keep] * s, violated


def prune_rows(Y: np.ndarray, U: np.ndarray, r: np.ndarray, lower: np.ndarray,
               upper: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Drop the rows the box [lower, upper] already implies (sound: Θ is unchanged).

    Over the box, Y_i·x lies in [Y_i·m − |Y_i|·h, Y_i·m + |Y_i|·h] (m centre, h half-width,
    exact interval arithmetic). A row whose whole interval is inside [U_i − r_i, U_i + r_i]
    holds for every x of the box, so removing it leaves Θ = box ∩ rows unchanged — the LPs
    solve a smaller model with the same optimum. A row whose interval misses
    [U_i − r_i, U_i + r_i] entirely holds for no x of the box: ``violated`` (Θ empty).
    Online the box is the previous sound box, so rows fully explained by it (most rows once the
    box has shrunk) stop costing anything.
    """
    m, h = 0.5 * (lower + upper), 0.5 * (upper - lower)
    centre, spread = Y @ m, np.abs(Y) @ h
    implied = (centre - spread >= U - r) & (centre + spread <= U + r)
    # rounding slack before calling a row impossible (the LP path has its own tolerances)
    tol = 1e-9 * (np.abs(U) + r + spread + np.abs(centre))
    violated = bool(np.any((centre - spread > U + r + tol) | (centre + spread < U - r - tol)))
    keep = ~implied
    return Y[keep], U[keep], r[keep], violated


def cap_iterations(h: highspy.Highs) -> None:
    """Stop a stalled simplex. Warm-started dual simplex after cut rows were added has been seen
    to cycle: one 582-row, 84-column box LP took 14 million iterations (9 minutes) before ending
    optimal; healthy solves here take at most about two iterations per row. A capped LP ends
    with status "iteration limit" and its side falls back to the prior (sound, not tight)."""
    h.setOptionValue("simplex_iteration_limit", 2000 + 5 * (h.getNumRow() + h.getNumCol()))


def lp_model() -> highspy.Highs:
    """An empty HiGHS model set up for the box LPs: quiet; presolve off, so that re-solves (the
    next objective, appended rows, a changed column box) warm-start from the last basis; no
    scaling — the rows arrive normalised to unit norm (:func:`normalise_rows`), and with HiGHS's
    scaling on, warm re-solves after appended rows stalled at the iteration cap: 78 of 220 kept
    LPs with calibration rows in 11 online updates, one of the 59 LPs of a one-shot box with cut
    rounds (θ_r unknowns), their sides falling back to the prior (docs/theory/identification.md#online-operation)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("simplex_scale_strategy", 0)
    return h


def _highs(Y: np.ndarray, lo: np.ndarray, hi: np.ndarray, x_lo: np.ndarray,
           x_hi: np.ndarray) -> highspy.Highs:
    h = lp_model()
    n = Y.shape[1]
    h.addCols(n, np.zeros(n), x_lo, x_hi, 0, np.array([], np.int32), np.array([], np.int32),
              np.array([]))
    # Row-wise sparse: a row has the 10 θ_e entries plus only its own joint's friction
    # unknowns, so most of a (rows × (10 + 4·nj)) matrix is zeros HiGHS need not see.
    csr = sparse.csr_matrix(Y)
    h.addRows(Y.shape[0], lo, hi, csr.nnz, csr.indptr[:-1].astype(np.int32),
              csr.indices.astype(np.int32), csr.data)
    cap_iterations(h)
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


def _lp_box(Y: np.ndarray, lo: np.ndarray, hi: np.ndarray, x_lo: np.ndarray, x_hi: np.ndarray,
            pad: np.ndarray, n_box: int, cuts: np.ndarray | None = None, cut_rounds: int = 0,
            max_cuts: int = 200) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray] | None:
    """Box of the first ``n_box`` coordinates (θ_e) over the polytope in all columns; cuts act
    on θ_e = x[:10] and are padded with zeros for the other unknowns."""
    h = _highs(Y, lo, hi, x_lo, x_hi)
    n = Y.shape[1]
    pool = [] if cuts is None else list(np.asarray(cuts, float).reshape(-1, 10))
    idx = np.arange(n, dtype=np.int32)
    idx10 = np.arange(10, dtype=np.int32)
    for a in pool:
        h.addRow(0.0, highspy.kHighsInf, 10, idx10, a)
    out = np.empty((2, n_box))
    added = 0
    for i in range(n_box):
        for side, sense in ((0, highspy.ObjSense.kMinimize), (1, highspy.ObjSense.kMaximize)):
            cost = np.zeros(n)
            cost[i] = 1.0
            h.changeColsCost(n, idx, cost)
            h.changeObjectiveSense(sense)
            for rnd in range(cut_rounds + 1):
                cap_iterations(h)
                h.run()
                status = h.getModelStatus()
                if status == highspy.HighsModelStatus.kInfeasible:
                    return None
                if status != highspy.HighsModelStatus.kOptimal:
                    break
                x = np.asarray(h.getSolution().col_value)
                new = psd_cuts_at(x[:10]) if rnd < cut_rounds and added < max_cuts else ()
                for a in new:
                    h.addRow(0.0, highspy.kHighsInf, 10, idx10, a)
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
    box = (np.maximum(out[0] - pad, x_lo[:n_box]), np.minimum(out[1] + pad, x_hi[:n_box]))
    # The newest cuts are the ones near the current box: keep those (FIFO) for the next call.
    return box, np.array(pool[-max_cuts:]).reshape(-1, 10)


def _lmi_box(Y: np.ndarray, lo: np.ndarray, hi: np.ndarray, x_lo: np.ndarray, x_hi: np.ndarray,
             pad: np.ndarray, n_box: int) -> tuple[np.ndarray, np.ndarray] | None:
    import cvxpy as cp

    n = Y.shape[1]
    x = cp.Variable(n)
    c = cp.Parameter(n)
    basis = pseudo_inertia(np.eye(10))           # J is linear in θ: J(θ) = Σ θ_k J(e_k)
    J = sum(x[k] * basis[k] for k in range(10))
    cons = [Y @ x >= lo, Y @ x <= hi, x >= x_lo, x <= x_hi, J >> 0]
    prob = cp.Problem(cp.Minimize(c @ x), cons)
    out = np.empty((2, n_box))
    for i in range(n_box):
        for side, sgn in ((0, 1.0), (1, -1.0)):
            vec = np.zeros(n)
            vec[i] = sgn
            c.value = vec
            try:
                # one thread: Clarabel's own pool would compete with a batch's other workers,
                # and a worker forked after it started would wait for it forever
                prob.solve(solver=cp.CLARABEL, max_threads=1)
            except cp.SolverError:
                out[side, i] = x_lo[i] if side == 0 else x_hi[i]
                continue
            if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                return None
            if prob.status != cp.OPTIMAL:
                out[side, i] = x_lo[i] if side == 0 else x_hi[i]
                continue
            assert x.value is not None      # cvxpy sets it with an OPTIMAL status
            out[side, i] = x.value[i]
    return np.maximum(out[0] - pad, x_lo[:n_box]), np.minimum(out[1] + pad, x_hi[:n_box])


def polytope_box(A: np.ndarray, c: np.ndarray, r: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, lmi: bool = False, psd_cuts: bool = False,
                 cuts: np.ndarray | None = None, cut_rounds: int = 8,
                 max_cuts: int = 200) -> BoxResult:
    """Tightest box of the first 10 coordinates (θ_e) around
    Θ = {x ∈ [lower, upper] : |A·x − c| ≤ r}, as a θ_e :class:`ParameterBox` with its centre as
    nominal (and, with ``lmi``, around Θ ∩ {J(θ_e) ⪰ 0}; with ``psd_cuts``, around
    Θ ∩ {vᵀJ(θ_e)v ≥ 0 for the generated cuts} — between the two).

    Args:
        A, c, r: rows (n, n_x), (n,), (n,) — θ_e in the first 10 columns, other unknowns (the
            friction coefficients of :mod:`.problem`) after them.
        lower, upper: the prior box of x (θ_e part: B₀ or the previous sound box, online).
        cuts: (k, 10) pseudo-inertia cuts to start from (a previous result's ``cuts``).
        cut_rounds: at most this many cut-and-resolve rounds per coordinate bound.
        max_cuts: cap on the cuts added per call and on the returned pool (bounds the LP size;
            fewer cuts only loosen the box, never make it unsound).
    """
    lower = np.asarray(lower, float)
    upper = np.asarray(upper, float)
    n_box = N_BOX
    if len(c) == 0:
        return BoxResult(INSUFFICIENT, theta_e_box(lower[:n_box], upper[:n_box]))
    An, cn, rn, violated = normalise_rows(A, c, r)
    if violated:
        return BoxResult(INCONSISTENT, None)
    An, cn, rn, violated = prune_rows(An, cn, rn, lower, upper)
    if violated:
        return BoxResult(INCONSISTENT, None)
    width = upper[:n_box] - lower[:n_box]
    pool = None
    if psd_cuts:
        # pad as for the SDP: cut rows add HiGHS feasibility-tolerance slack on unscaled θ
        res = _lp_box(An, cn - rn, cn + rn, lower, upper, 1e-5 * width, n_box,
                      cuts, cut_rounds, max_cuts)
    else:
        res = _lp_box(An, cn - rn, cn + rn, lower, upper, 1e-6 * width, n_box)
    if res is None:
        return BoxResult(INCONSISTENT, None)
    box, pool = res
    if lmi:
        lo_x, hi_x = lower.copy(), upper.copy()
        lo_x[:n_box], hi_x[:n_box] = box
        tight = _lmi_box(An, cn - rn, cn + rn, lo_x, hi_x, 1e-5 * width, n_box)
        if tight is None:
            return BoxResult(INCONSISTENT, None)
        box = (np.maximum(tight[0], box[0]), np.minimum(tight[1], box[1]))
    return BoxResult(OK, theta_e_box(box[0], box[1]), pool if psd_cuts else None)


def chebyshev_centre(Y: np.ndarray, U: np.ndarray, r: np.ndarray, lower: np.ndarray,
                     upper: np.ndarray) -> np.ndarray | None:
    """Centre of the largest ball (in box-width-scaled coordinates) inside Θ ∩ [lower, upper]
    (all columns of ``Y``; callers take θ_e = the first 10)."""
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
