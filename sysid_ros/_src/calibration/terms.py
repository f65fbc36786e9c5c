"""Extra friction/actuation terms, kept only where held-out data show they earn their place.

The calibrated law τ_f = Fc·sign(q̇) + Fv·q̇ + Ia·q̈ + β is what the identifier's bounds rest on.
Real joints may carry more: a smooth Coulomb shape, gear ripple or cable drag that depends on
the position, a slowly drifting sensor offset, quadratic drag. Each candidate here is linear in
one coefficient per joint and column (a harmonic order h brings sin(h·q) and cos(h·q) as one
candidate), so on a momentum row it integrates, like every other column, to a number:
∫feature dt over the row's window with the trapezoid over the recording's samples (the same
rule and sample span as the rows' torque integral c).

Any extra column lowers the residual of the data it is fitted to; only a prediction of data the
fit has not seen tells structure from noise. So each candidate is judged by cross-validation:

- folds: leave one recording out (≥ 2 recordings); a single recording is split into two
  halves at its middle stamp, windows across the split left out of both (said in ``folds``);
- base law: the rows' columns with the Coulomb column ∫sign(q̇) dt of the measured velocities.
  The rows themselves only know ∫σ(q̇) to an interval (σ is set-valued inside the Coulomb
  band), and the centre of that interval counts σ = 0 inside the band: a soundness allowance,
  not a prediction. Against that centre a smooth sign "wins" by filling in the band — on
  hardware-like Gen3 data (MuJoCo's stiff dry friction) tanh(q̇/0.01) cut the held-out RMS by
  20–30 %, and by nothing against sign(q̇);
- fit: the MAP least-squares fit of the training rows under the prior (:class:`.timing._Fit`:
  Gaussian, centred on the prior's nominal, σ = the box half-width), the candidate's
  coefficients with a zero-mean Gaussian of σ = ``TERM_SIGMA_NM`` per unit of the feature's
  RMS over all samples (features only, never torques; wide: a term that moves the torque by
  10 N·m is still allowed, but a column the data do not determine stays near 0 instead of
  making the fit singular);
- score: each joint's RMS of the window-averaged residual (A·x − c)/(t_end − t_start) of the
  held-out rows (N·m), every row predicted once over the folds;
- selection: greedy forward — add the candidate whose relative RMS reduction, averaged over the
  joints, is largest if it exceeds ``min_gain``; repeat from the enlarged law until none does.

A candidate is one term for *every* joint, so it has to pay for the coefficients it gives the
joints that do not need it. Position-dependent terms pay the most: fitted to one recording's
positions and predicting another's, a spurious harmonic is extrapolated. On 2 × 8 s of
hardware-like Gen3 data (excursions of a few tenths of a rad; ten random robots)
1.5·sin(2q) added to two joints cut those joints' held-out RMS by 30–90 % and still lost
overall; added to every joint a harmonic was selected (+70–85 %), harmonic 2 in 7 of 10, the
orders 1–3 being nearly interchangeable over such excursions.
``candidate_rms`` keeps the per-joint evidence for such cases.

The result is the evidence (:class:`TermSelection`). The calibration adopts the selected terms
that are functions of the joint's state (:func:`adoptable`; a drift is a property of one
recording and is only reported): their columns join the rows the sound bounds are computed
from, each coefficient in the prior box of :func:`term_prior`, and the boxes it gets there are
written to calib.yaml for the identifier (:mod:`sysid_ros._src.model.friction_terms`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve

from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.energy import prefix_trapezoid
from sysid_ros._src.calibration.prior import Prior
from sysid_ros._src.identification.calibration_constraints import CalibrationRows, friction_column
from sysid_ros._src.calibration.timing import _Fit, _rms_by
from sysid_ros._src.model.friction_terms import TERM_KINDS, TermKind

__all__ = ["CANDIDATES", "Candidate", "TermSelection", "select_terms", "term_columns",
           "TERM_SIGMA_NM", "MIN_GAIN", "adoptable", "term_prior"]

#: Prior σ of a candidate coefficient times the feature's RMS (N·m): wide, so the data decide.
TERM_SIGMA_NM = 10.0
#: Default relative held-out RMS reduction (mean over joints) a candidate must bring.
MIN_GAIN = 0.05

#: f(t, q_j, q̇_j) per sample of one joint of one recording → (N,) or (N, width).
Feature = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Candidate:
    """One extra term: ``feature`` gives its ``width`` columns per sample (each with its own
    coefficient per joint); ``meaning`` says which effect it stands for (reports)."""

    name: str
    feature: Feature
    width: int = 1
    meaning: str = ""


def _of_state(kind: TermKind) -> Feature:
    def f(t: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        return kind.feature(q, dq)
    return f


def _drift(t: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    return t - t[0]


def _sign(t: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    return np.sign(dq)


_STATE = {k.name: Candidate(k.name, _of_state(k), k.width, k.meaning) for k in TERM_KINDS.values()}
#: The candidates, in report order. Shape constants (v0, h) are fixed: every candidate stays
#: linear in its coefficients, so one Cholesky factorisation per fold and term set suffices.
#: All but the drift are functions of the joint's state (:data:`TERM_KINDS`) and can be adopted.
CANDIDATES: tuple[Candidate, ...] = (
    *(c for n, c in _STATE.items() if n != "dq*|dq|"),
    Candidate("drift", _drift, 1, "t - t0: slow offset drift (t0 = the recording's first stamp)"),
    _STATE["dq*|dq|"],
)
_SIGN = Candidate("sign", _sign, 1, "the base law's Coulomb shape at the measured velocities")


def _feature(candidate: Candidate, rec: Recording, j: int) -> np.ndarray:
    """(N, width) the candidate's feature of joint j over recording ``rec``."""
    if rec.dq is None:
        raise ValueError(f"{rec.name}: no joint velocities (the candidates need q̇)")
    f = np.asarray(candidate.feature(rec.t, rec.q[:, j], rec.dq[:, j]), float)
    f = f.reshape(f.shape[0], -1)
    if f.shape != (len(rec), candidate.width):
        raise ValueError(f"candidate {candidate.name!r}: feature shape {f.shape}, expected "
                         f"({len(rec)}, {candidate.width})")
    return f


def term_columns(rows: CalibrationRows, recordings: Sequence[Recording],
                 candidate: Candidate) -> np.ndarray:
    """(n_rows, width) ∫feature dt of every row's own joint over its window (trapezoid over the
    samples start..end of its recording, as the rows' c = ∫τ̂ dt)."""
    out = np.zeros((len(rows), candidate.width))
    for k, rec in enumerate(recordings):
        in_rec = np.flatnonzero(rows.source == k)
        for j in np.unique(rows.joint[in_rec]):
            sel = in_rec[rows.joint[in_rec] == j]
            prefix = prefix_trapezoid(rec.t, _feature(candidate, rec, int(j)))
            out[sel] = prefix[rows.end[sel]] - prefix[rows.start[sel]]
    return out


def _with_sign(rows: CalibrationRows, recordings: Sequence[Recording]) -> CalibrationRows:
    """The rows with their Coulomb column at ∫sign(q̇) dt instead of the centre of its interval
    (the base law as a prediction; module docstring), the interval's radius set to 0."""
    n = len(rows)
    fc = friction_column(rows.n_theta, rows.joint, 0)
    centre = np.asarray(rows.A[np.arange(n), fc]).reshape(-1)
    s = term_columns(rows, recordings, _SIGN)[:, 0]
    shift = sp.csr_matrix((s - centre, (np.arange(n), fc)), shape=rows.A.shape)
    return replace(rows, A=(rows.A + shift).tocsr(), sign_rad=np.zeros(n))


def adoptable(selection: TermSelection) -> tuple[str, ...]:
    """The selected terms a calibration adopts: those that are functions of the joint's state
    (:data:`TERM_KINDS`). A drift is a property of one recording (time since its start), not
    of the robot, so it is reported and left to the noise bound."""
    return tuple(n for n in selection.selected if n in TERM_KINDS)


def term_prior(recordings: Sequence[Recording], names: Sequence[str], nj: int) -> np.ndarray:
    """(nj, width) the half-width of the prior box of the coefficients of terms ``names``
    (columns in :class:`FrictionTerms` order): ``TERM_SIGMA_NM`` over each feature's RMS over
    the recordings — the same scale the cross-validation's prior uses, stated as a box: no
    term moves a joint's torque by more than TERM_SIGMA_NM per unit of its feature's RMS."""
    return np.concatenate([_coefficient_sigma(recordings, _STATE[n], nj).reshape(nj, -1)
                           for n in names], axis=1)


def _coefficient_sigma(recordings: Sequence[Recording], candidate: Candidate,
                       nj: int) -> np.ndarray:
    """(nj·width,) prior σ of the candidate's coefficients, joint-major: TERM_SIGMA_NM over the
    feature's RMS over all samples (a feature that is 0 everywhere gets σ = TERM_SIGMA_NM: its
    column is 0, so the data say nothing and the prior keeps the coefficient at 0)."""
    ms = np.zeros((nj, candidate.width))
    n = sum(len(rec) for rec in recordings)
    for rec in recordings:
        for j in range(nj):
            ms[j] += np.sum(_feature(candidate, rec, j) ** 2, axis=0) / n
    rms = np.sqrt(ms).reshape(-1)
    return TERM_SIGMA_NM / np.where(rms > 0.0, rms, 1.0)


def _extended(rows: CalibrationRows, prior: Prior, blocks: Sequence[tuple[np.ndarray, np.ndarray]],
              nj: int) -> tuple[CalibrationRows, Prior]:
    """Rows and prior with the candidates' coefficients appended to x (joint-major per
    candidate); each block is (term columns (n, width), σ (nj·width,)). The prior box ±σ around
    0 is what :class:`_Fit` reads as a zero-mean Gaussian of that σ."""
    if not blocks:
        return rows, prior
    n = len(rows)
    mats = []
    for cols, _ in blocks:
        width = cols.shape[1]
        col = rows.joint[:, None] * width + np.arange(width)[None]
        mats.append(sp.csr_matrix((cols.reshape(-1), (np.repeat(np.arange(n), width),
                                                      col.reshape(-1))), shape=(n, nj * width)))
    s = np.concatenate([sigma for _, sigma in blocks])
    ext_rows = replace(rows, A=sp.hstack([rows.A, *mats]).tocsr())
    ext_prior = replace(prior, lower=np.concatenate([prior.lower, -s]),
                        upper=np.concatenate([prior.upper, s]),
                        nominal=np.concatenate([prior.nominal, np.zeros_like(s)]))
    return ext_rows, ext_prior


def _map_x(rows: CalibrationRows, prior: Prior) -> np.ndarray:
    """The full MAP x of ``rows`` under ``prior`` (fixed parameters at their box)."""
    fit = _Fit(rows, prior)
    x = prior.lower.copy()
    b = rows.c * fit.inv_T - fit.A_fixed
    x[fit.free] = cho_solve(fit.chol, fit.A.T @ b + fit.prior_term)
    return x


def _folds(rows: CalibrationRows, recordings: Sequence[Recording]
           ) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """(train, held-out) row masks and how they were made (module docstring)."""
    if len(recordings) >= 2:
        folds = [(rows.source != k, rows.source == k) for k in range(len(recordings))]
        how = f"leave-one-recording-out over {len(recordings)} recordings"
    else:
        t = recordings[0].t
        mid = 0.5 * (float(t[0]) + float(t[-1]))
        first, second = rows.t_end <= mid, rows.t_start >= mid
        folds = [(first, second), (second, first)]
        how = (f"one recording, split into two halves at {mid - float(t[0]):.1f} s "
               "(windows across the split left out)")
    folds = [(train, test) for train, test in folds if train.any() and test.any()]
    if not folds:
        raise ValueError("term selection: no fold has both training and held-out rows")
    return folds, how


def _held_out_rms(rows: CalibrationRows, prior: Prior,
                  folds: Sequence[tuple[np.ndarray, np.ndarray]], nj: int) -> np.ndarray:
    """(nj,) RMS per joint of the held-out window-averaged residuals over all folds (N·m)."""
    resid, joint = [], []
    for train, test in folds:
        x = _map_x(rows.take(train), prior)
        held = rows.take(test)
        resid.append((held.A @ x - held.c) / (held.t_end - held.t_start))
        joint.append(held.joint)
    return _rms_by(np.concatenate(resid), np.concatenate(joint), nj)


def _gain(before: np.ndarray, after: np.ndarray) -> float:
    """Relative held-out RMS reduction, averaged over the joints that have held-out rows."""
    ok = np.isfinite(before) & np.isfinite(after) & (before > 0)
    return float(np.mean(1.0 - after[ok] / before[ok])) if ok.any() else 0.0


@dataclass(frozen=True)
class TermSelection:
    """What the cross-validation measured (module docstring). RMS arrays are per joint (N·m).

    Attributes:
        names: the candidates' names, in the order they were given.
        base_rms: (nj,) held-out RMS of the base law.
        candidate_rms: (n_candidates, nj) held-out RMS of the base law + that candidate alone.
        candidate_gain: (n_candidates,) its relative reduction of base_rms, mean over joints.
        selected: the names the greedy selection added, in order.
        step_gain: each selected term's gain over the law before it was added.
        selected_rms: (nj,) held-out RMS with every selected term (base_rms if none).
        folds: how the held-out data were made.
        min_gain: the gain a term had to exceed.
    """

    names: tuple[str, ...]
    base_rms: np.ndarray
    candidate_rms: np.ndarray
    candidate_gain: np.ndarray
    selected: tuple[str, ...]
    step_gain: tuple[float, ...]
    selected_rms: np.ndarray
    folds: str
    min_gain: float

    def describe(self) -> str:
        best = int(np.argmax(self.candidate_gain))
        chosen = ", ".join(f"{n} ({100 * g:+.0f} %)" for n, g in zip(self.selected, self.step_gain))
        return (f"extra friction terms by {self.folds}: {chosen or 'none'} selected (min gain "
                f"{100 * self.min_gain:g} %); held-out RMS {np.nanmean(self.base_rms):.3f} -> "
                f"{np.nanmean(self.selected_rms):.3f} N*m (mean over joints); best alone: "
                f"{self.names[best]} {100 * self.candidate_gain[best]:+.1f} %")

    def as_dict(self) -> dict[str, Any]:
        return {"folds": self.folds, "min_gain": self.min_gain,
                "base_rms": self.base_rms.tolist(),
                "candidates": {n: {"rms": r.tolist(), "gain": float(g)} for n, r, g in
                               zip(self.names, self.candidate_rms, self.candidate_gain)},
                "selected": list(self.selected), "step_gain": list(self.step_gain),
                "selected_rms": self.selected_rms.tolist()}


def select_terms(rows: CalibrationRows, recordings: Sequence[Recording], prior: Prior, nj: int,
                 min_gain: float = MIN_GAIN,
                 candidates: Sequence[Candidate] = CANDIDATES) -> TermSelection:
    """Greedy forward selection of ``candidates`` by cross-validated held-out RMS (module
    docstring). ``rows`` come from ``recordings`` (their ``source`` indices) without extra
    columns; ``prior`` is the box of their x."""
    if not 0.0 <= min_gain < 1.0:
        raise ValueError(f"min_gain {min_gain} is not a fraction in [0, 1)")
    if not recordings:
        raise ValueError("term selection: no recordings")
    if len({c.name for c in candidates}) != len(candidates):
        raise ValueError("term selection: candidate names are not unique")
    rows = _with_sign(rows, recordings)
    folds, how = _folds(rows, recordings)
    blocks = {c.name: (term_columns(rows, recordings, c), _coefficient_sigma(recordings, c, nj))
              for c in candidates}

    def rms_with(names: Sequence[str]) -> np.ndarray:
        ext_rows, ext_prior = _extended(rows, prior, [blocks[n] for n in names], nj)
        return _held_out_rms(ext_rows, ext_prior, folds, nj)

    base = rms_with([])
    alone = {n: rms_with([n]) for n in blocks}
    selected: list[str] = []
    steps: list[float] = []
    current, trial = base, alone
    while trial:
        gains = {n: _gain(current, r) for n, r in trial.items()}
        best = max(gains, key=gains.__getitem__)
        if not gains[best] > min_gain:
            break
        selected.append(best)
        steps.append(gains[best])
        current = trial[best]
        trial = {n: rms_with([*selected, n]) for n in blocks if n not in selected}
    names = tuple(blocks)
    return TermSelection(names, base, np.array([alone[n] for n in names]),
                         np.array([_gain(base, alone[n]) for n in names]), tuple(selected),
                         tuple(steps), current, how, float(min_gain))
