"""The ``width`` planner objective: the mass width of the sound box that the planned rows would
leave, predicted by the same kind of linear program the identifier solves.

The identifier's box is the box of a polytope {x : |a_i·x − c_i| ≤ r_i} ∩ B₀
(docs/theory/identification.md#the-feasible-set-and-its-boxes). Its width along the mass is an L1
question — the cheapest combination of rows, each
weighted by its radius, that isolates the mass — so it is decided by a few rows with a large
mass signal per unit radius, not by the sum of squares that a least-squares variance (the
``box`` and ``radius`` objectives) or cond(Y_e) measures. Measured (docs/results.md):
random excitation's rows carried 1.2–1.9× more mass per unit radius than the
plans, and its box was the narrower although its least-squares variance was not.

Prediction: the rows are the planned trajectory's inverse-dynamics samples (end-effector
columns Y_e) divided by their torque radius r (``NominalModel.row_weights``: noise bound,
|Y_r|·rad θ_r, the friction box), after the rows of the plans already executed. With the data
centred on the truth the polytope is symmetric about it, so the predicted half-width is

    h = max x_m  s.t.  |ã_i·x| ≤ 1 (ã_i = a_i / r_i),  |x_j| ≤ w_j / 2 (the current box),

one LP with ten unknowns (HiGHS). Its gradient in k is exact by the envelope theorem:
∂h/∂ã_i = −ν_i x*, ν_i the signed multiplier of row i's pair of inequalities, x* the maximiser;
with ∂ã_i/∂k from the complex-step samples. The objective is log h (piecewise smooth: the
multipliers change where the binding rows change).

What it leaves out, stated: the momentum windows the identifier integrates (inverse-dynamics
samples stand in for them), the friction columns that the LP carries as unknowns (their box
half-widths are in r instead), and the growth of r with the motion inside a solve (the weights
are frozen at the cycle's warm start, as for ``radius``).
"""
from __future__ import annotations

import highspy
import numpy as np

from sysid_ros._src.planning.nominal import cond_number, log_cond_with_history

__all__ = ["predicted_half_width", "half_width", "binding_rows", "keep_history", "MASS",
           "HISTORY_ROWS"]

#: θ_e index of the mass (PARAM_NAMES order)
MASS = 0
#: most executed rows the objective keeps (LP cost ~linear in rows: ~2 ms per 900)
HISTORY_ROWS = 2000
#: complex step of the samples (``nominal._H``)
_H = 1e-30


def _solve(rows: np.ndarray, width: np.ndarray, parameter: int
           ) -> tuple[float, np.ndarray, np.ndarray] | None:
    """(h, x*, ν) of max x_p s.t. −1 ≤ rows·x ≤ 1, |x| ≤ width/2; None unless optimal. HiGHS
    directly (boxed rows, no presolve): about 2 ms for 900 rows, 6× scipy's ``linprog``, which
    takes the two-sided rows as twice as many one-sided ones and presolves every call."""
    m, n = rows.shape
    half = 0.5 * np.maximum(np.asarray(width, float), 1e-12)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    cost = np.zeros(n)
    cost[parameter] = -1.0
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, -half, half
    lp.row_lower_, lp.row_upper_ = -np.ones(m), np.ones(m)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.arange(0, m * n + 1, n, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(n, dtype=np.int32), m)
    lp.a_matrix_.value_ = np.ascontiguousarray(rows, float).ravel()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.passModel(lp)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    sol = h.getSolution()
    # HiGHS's row duals y of the minimisation give ∂h/∂row_i = y_i·x* (h = −min): ν = −y
    # (the sign is checked against central differences, test/planning/test_width_objective.py)
    return (-float(h.getInfo().objective_function_value), np.asarray(sol.col_value, float),
            -np.asarray(sol.row_dual, float))


def predicted_half_width(y: np.ndarray, weights: np.ndarray, width: np.ndarray,
                         history: np.ndarray | None = None, parameter: int = MASS,
                         cond_weight: float = 0.0, gram: np.ndarray | None = None
                         ) -> tuple[float, np.ndarray, float]:
    """The ``width`` objective from complex-step samples: (log h, ∂ log h/∂k (nj,), cond Y_e).

    Args:
        y: (nj, n_rows, 10) complex Y_e samples, k perturbed along each joint (``_samples``).
        weights: (n_rows,) 1/r of each row (``NominalModel.row_weights``), fixed.
        width: (10,) the current box widths of θ_e.
        history: (n_hist, 10) rows already executed, already divided by their radius.
        parameter: the θ_e entry whose width is predicted (default the mass).
        cond_weight: adds cond_weight × log cond of [executed; planned] Y_e rows (unweighted:
            the reported cond(Y_e)), the executed ones given by ``gram`` = their Y_eᵀY_e.
    """
    y0 = y[0].real * weights[:, None]
    dy = (y.imag / _H) * weights[None, :, None]
    hist = np.zeros((0, 10)) if history is None else np.asarray(history, float)
    cond = cond_number(y[0].real)
    nj = y.shape[0]
    sol = _solve(np.vstack([hist, y0]), width, parameter)
    if sol is None or sol[0] <= 0.0:
        return float("inf"), np.zeros(nj), cond
    h, x, nu = sol
    value = float(np.log(h))
    grad = -np.einsum("i,kic,c->k", nu[hist.shape[0]:], dy, x) / h    # only the new rows move
    if cond_weight > 0.0:
        lc, dlc = log_cond_with_history(y[0].real, y.imag / _H,
                                        np.zeros((10, 10)) if gram is None else gram)
        value, grad = value + cond_weight * lc, grad + cond_weight * dlc
    return value, grad, cond


def half_width(rows: np.ndarray, width: np.ndarray, parameter: int = MASS) -> float:
    """h of the rows alone (no planned motion): max x_p s.t. |rows·x| ≤ 1, |x| ≤ width/2
    (inf if HiGHS fails)."""
    sol = _solve(np.asarray(rows, float), width, parameter)
    return float("inf") if sol is None else sol[0]


def binding_rows(rows: np.ndarray, width: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Indices of the rows that bind the predicted box along any θ_e entry (ten LPs). The
    polytope's box depends on these alone, so a history kept to them predicts the same box
    for the data so far (later rows may make others binding again: an approximation of the
    objective, never of the identifier, which keeps its own rows)."""
    keep: set[int] = set()
    for p in range(rows.shape[1]):
        sol = _solve(rows, width, p)
        if sol is not None:
            keep.update(np.flatnonzero(np.abs(sol[2]) > tol).tolist())
    return np.array(sorted(keep), dtype=int)


def keep_history(rows: np.ndarray, width: np.ndarray, limit: int = HISTORY_ROWS) -> np.ndarray:
    """The executed rows the objective keeps: all of them up to ``limit``; beyond, the rows
    that bind the predicted box now plus the most recent ones (a long receding-horizon run
    would otherwise grow the NLP's LP without bound)."""
    if rows.shape[0] <= limit:
        return rows
    bind = binding_rows(rows, width)
    recent = np.arange(rows.shape[0] - max(limit - bind.size, 0), rows.shape[0])
    return rows[np.union1d(bind, recent)]
