"""The online box LPs, kept alive between updates (docs/theory/identification.md#online-operation).

An online update adds about a tenth new rows to Θ. Solved from scratch, each of its 20 box LPs
(min and max of every θ_e coordinate) takes ~60 dual-simplex iterations over all rows. Here the
20 LPs are 20 HiGHS models that live as long as the payload does:

- new rows are appended to every model; their slacks enter the basis, so each model's last
  optimal basis stays valid and only the rows the new data violate cost iterations;
- the column box (the previous sound box for θ_e) is changed in place;
- each model restarts from its own optimum, not from another objective's.

Which rows are kept (the cap ``max_rows``): a row is dropped only when its multiplier (dual
value) is zero at all 20 optima, oldest first. Dropping a row only enlarges Θ, so the box stays
sound; an optimum's dual certificate does not use a row of zero multiplier, so every optimum
stays optimal and the box is also unchanged (dropping the oldest rows, as a FIFO does, throws
away the very rows that define the box). Slack rows have zero multipliers and basic slacks, so
deleting them leaves every basis valid; so do most rows that merely touch an optimum
(degenerate: pseudo-inertia cuts pass through it by the hundred). Deleting the rare nonbasic row
of zero multiplier makes HiGHS repair that basis. Cuts (``lp-cuts``) are rows of the same models
under the same rule with their own cap.

Soundness does not depend on any of this bookkeeping: every LP solved is a relaxation of Θ
(a subset of its rows), so its optimum bounds the coordinate; the pad and the fallback to the
prior side are those of :func:`.feasible_set.polytope_box`.
"""
from __future__ import annotations

import highspy
import numpy as np
from scipy import sparse

from sysid_ros._src.identification.feasible_set import INCONSISTENT, INSUFFICIENT, N_BOX, OK, BoxResult, \
    cap_iterations, informative_rows, lp_model, normalise_rows, psd_cuts_at
from sysid_ros._src.identification.problem import PayloadRows
from sysid_ros._src.model.box import theta_e_box

__all__ = ["IncrementalBox"]

_INF = highspy.kHighsInf
_OPTIMAL = highspy.HighsModelStatus.kOptimal
_INFEASIBLE = highspy.HighsModelStatus.kInfeasible
_ERROR = highspy.HighsStatus.kError
_DATA, _PINNED, _CUT = 0, 1, 2      # row kinds: payload data, calibration (never dropped), cut
# A row whose multiplier exceeds this (relative to the largest) is in an optimum's certificate.
_DUAL_TOL = 1e-12


class IncrementalBox:
    """θ_e box of Θ = {x ∈ [x_lo, x_hi] : |A·x − c| ≤ r} over the rows added so far (at most
    ``max_rows`` payload rows and ``max_cuts`` cuts kept, by the rule of the module docstring).

    ``pinned`` rows (the calibration's) are part of every LP and never dropped. ``pad_rel``: each
    side is widened by this fraction of the prior width (solver tolerances)."""

    def __init__(self, n_x: int, max_rows: int, pad_rel: float = 1e-6, max_cuts: int = 200,
                 pinned: PayloadRows | None = None) -> None:
        self.n_x, self.max_rows, self.max_cuts, self.pad_rel = n_x, max_rows, max_cuts, pad_rel
        self._models = [self._model(k) for k in range(2 * N_BOX)]
        self._kind = np.zeros(0, np.int8)            # per model row, in model order
        self._keys: list[bytes] = []                 # per model row: a cut's bytes, else b""
        self._rows = PayloadRows.concat([], n_x)     # the kept payload rows, in model order
        self._cut_keys: set[bytes] = set()
        self._violated = False                       # a zero row outside its band: Θ empty
        #: LP solves that ended neither optimal nor infeasible (iteration cap, numerical
        #: trouble): their side fell back to the prior — sound, not tight
        self.stalled = 0
        if pinned is not None and len(pinned):
            self._add(pinned, _PINNED)

    def _model(self, k: int) -> highspy.Highs:
        h = lp_model()                   # warm re-solves, unscaled (its docstring)
        n = self.n_x
        h.addCols(n, np.zeros(n), np.full(n, -_INF), np.full(n, _INF), 0,
                  np.array([], np.int32), np.array([], np.int32), np.array([]))
        cost = np.zeros(n)
        cost[k // 2] = 1.0
        h.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize if k % 2 else
                               highspy.ObjSense.kMinimize)
        return h

    @property
    def rows(self) -> PayloadRows:
        """The payload rows kept (a snapshot: never modified in place)."""
        return self._rows

    def add(self, rows: PayloadRows) -> None:
        """Append payload rows to every LP."""
        self._add(rows, _DATA)

    def add_cuts(self, cuts: np.ndarray | None) -> None:
        """Append the pseudo-inertia cuts a·θ_e ≥ 0 not already in the LPs."""
        if cuts is None:
            return
        new = [a for a in np.asarray(cuts, float).reshape(-1, N_BOX)
               if a.tobytes() not in self._cut_keys]
        if new:
            self._append_cuts(np.array(new))

    def _add(self, rows: PayloadRows, kind: int) -> None:
        if rows.A.ndim != 2 or rows.A.shape[1] != self.n_x:
            raise ValueError(f"rows: {rows.A.shape[-1]} columns, the LPs have {self.n_x}")
        A, c, rad, violated = normalise_rows(rows.A, rows.c, rows.r)
        self._violated |= violated
        if kind == _DATA:      # the rows as given, minus the all-zero ones normalise_rows drops
            self._rows = PayloadRows.concat([self._rows, rows.take(informative_rows(rows.A)[0])],
                                            self.n_x)
        self._append(A, c - rad, c + rad, kind)

    def _append_cuts(self, cuts: np.ndarray) -> None:
        self._cut_keys.update(a.tobytes() for a in cuts)
        A = np.zeros((len(cuts), self.n_x))
        A[:, :N_BOX] = cuts
        self._append(A, np.zeros(len(cuts)), np.full(len(cuts), _INF), _CUT)

    def _append(self, A: np.ndarray, lo: np.ndarray, hi: np.ndarray, kind: int) -> None:
        if not len(A):
            return
        csr = sparse.csr_matrix(A)
        start, index = csr.indptr[:-1].astype(np.int32), csr.indices.astype(np.int32)
        for h in self._models:
            if h.addRows(len(A), lo, hi, csr.nnz, start, index, csr.data) == _ERROR:
                raise RuntimeError(f"HiGHS refused {len(A)} rows (non-finite entries?)")
        self._kind = np.concatenate([self._kind, np.full(len(A), kind, np.int8)])
        self._keys += [a[:N_BOX].tobytes() if kind == _CUT else b"" for a in A]

    def solve(self, x_lo: np.ndarray, x_hi: np.ndarray, cut_rounds: int = 0) -> BoxResult:
        """The θ_e box over the kept rows within the box [x_lo, x_hi] of x (θ_e part: the
        previous sound box), with up to ``cut_rounds`` pseudo-inertia cut rounds per LP; then
        rows slack at every optimum are dropped down to the caps."""
        x_lo, x_hi = np.asarray(x_lo, float), np.asarray(x_hi, float)
        if self._violated:
            return BoxResult(INCONSISTENT, None)
        if not len(self._rows):
            return BoxResult(INSUFFICIENT, theta_e_box(x_lo[:N_BOX], x_hi[:N_BOX]))
        idx = np.arange(self.n_x, dtype=np.int32)
        out = np.empty((2, N_BOX))
        active = np.zeros(self._kind.size, bool)
        for k, h in enumerate(self._models):
            i, side = k // 2, k % 2
            h.changeColsBounds(self.n_x, idx, x_lo, x_hi)
            for rnd in range(cut_rounds + 1):
                cap_iterations(h)
                h.run()
                status = h.getModelStatus()
                if status != _OPTIMAL:
                    break
                sol = h.getSolution()
                x = np.asarray(sol.col_value)
                if rnd == cut_rounds:
                    break
                new = psd_cuts_at(x[:N_BOX])
                if not len(new):
                    break
                self._append_cuts(new)
                active = np.concatenate([active, np.zeros(len(new), bool)])
            if status == _INFEASIBLE:
                return BoxResult(INCONSISTENT, None)
            if status != _OPTIMAL:
                # Sound, not tight: the prior side; nothing is known about its rows' slack.
                self.stalled += 1
                out[side, i] = x_hi[i] if side else x_lo[i]
                active[:] = True
                continue
            out[side, i] = x[i]
            dual = np.abs(np.asarray(sol.row_dual))
            active |= dual > _DUAL_TOL * max(1.0, float(dual.max(initial=0.0)))
        pad = self.pad_rel * (x_hi[:N_BOX] - x_lo[:N_BOX])
        lower = np.maximum(out[0] - pad, x_lo[:N_BOX])
        upper = np.minimum(out[1] + pad, x_hi[:N_BOX])
        self._drop_slack(active)
        return BoxResult(OK, theta_e_box(lower, upper))

    def _drop_slack(self, active: np.ndarray) -> None:
        drop = np.zeros(self._kind.size, bool)
        for kind, cap in ((_DATA, self.max_rows), (_CUT, self.max_cuts)):
            rows = np.flatnonzero(self._kind == kind)
            excess = rows.size - cap
            if excess > 0:
                drop[rows[~active[rows]][:excess]] = True      # oldest slack rows first
        if not drop.any():
            return
        gone = np.flatnonzero(drop).astype(np.int32)
        for h in self._models:
            h.deleteRows(gone.size, gone)
        data = self._kind == _DATA
        self._rows = self._rows.take(~drop[data])
        self._cut_keys.difference_update(self._keys[k] for k in gone)
        keep = ~drop
        self._keys = [key for key, kept in zip(self._keys, keep) if kept]
        self._kind = self._kind[keep]
