"""Results that say why: a data summary, the consistency margin / the noise scale the data need,
the joints and time spans that break consistency, and warnings on suspicious ``ok`` boxes.

- **Noise scale** s*: the smallest factor on every row's torque-noise radius for which the
  rows are still consistent, min s s.t. |A·x − c| ≤ r_fixed + s·r_noise, x in its prior (one LP).
  s* ≤ 1 ⇔ consistent; the consistency margin is 1 − s* (0.4: the data would stay consistent
  with noise bounds 40 % smaller). When inconsistent, a per-joint LP
  min Σ_j s_j s.t. s_j ≥ 1 and joint j's rows within r_fixed + s_j·r_noise names the joints
  whose bound must grow and by how much; a third LP, min Σ_i e_i s.t. each row within
  r + e_i·r_noise (an L1 penalty: sparse excesses on the rows that really break the bound)
  gives the time spans (merged per joint).
- **Warnings** on an ``ok`` box: a coordinate pinned to one face of the prior (the data push
  against B₀ — e.g. a lighter tool than the prior assumes — so the box may hold only because
  the prior cuts it), and a least-squares estimate outside the sound box.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

import highspy
import numpy as np

from sysid_ros._src.identification.feasible_set import _highs, normalise_rows
from sysid_ros._src.identification.config import SamplingPlan
from sysid_ros._src.identification.problem import PayloadRows
from sysid_ros._src.model.parameters import PARAM_NAMES

__all__ = ["DataSummary", "summarize", "insufficient_reason", "Consistency", "ViolationSpan",
           "consistency", "box_warnings", "PinnedFace", "pinned_faces", "physical_face_notes"]

_S_MAX = 1e6       # a scale beyond this means "no noise bound explains the data"


@dataclass(frozen=True)
class DataSummary:
    """What a stream looks like, for the one-line summary printed first."""

    samples: int
    joints: tuple[str, ...]
    span: float                    # s
    median_step: float             # s
    steps_over_gap: int            # consecutive samples further apart than max_sample_gap
    longest_gap: float             # s
    max_sample_gap: float          # s
    has_velocity: bool = True
    bridged: int = 0               # of those, steps short enough to bridge (max_bridged_gap)

    @property
    def rate_hz(self) -> float:
        return 1.0 / self.median_step if self.median_step > 0 else float("nan")

    def describe(self) -> str:
        vel = "" if self.has_velocity else ", NO velocities"
        return (f"{self.samples} samples of {len(self.joints)} joints over {self.span:.2f} s, "
                f"median rate {self.rate_hz:.0f} Hz ({self.median_step * 1e3:.2f} ms), "
                f"{self.steps_over_gap} gaps > {self.max_sample_gap * 1e3:.1f} ms "
                f"(longest {self.longest_gap * 1e3:.1f} ms"
                f"{f', {self.bridged} bridged' if self.bridged else ''}){vel}")

    def as_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "joints": list(self.joints), "span_s": self.span,
                "median_step_s": self.median_step, "rate_hz": self.rate_hz,
                "steps_over_gap": self.steps_over_gap, "longest_gap_s": self.longest_gap,
                "max_sample_gap_s": self.max_sample_gap, "has_velocity": self.has_velocity,
                "bridged_steps": self.bridged}


def summarize(t: np.ndarray, joints: Sequence[str], plan: SamplingPlan,
              has_velocity: bool = True) -> DataSummary:
    t = np.asarray(t, float)
    steps = np.diff(t)
    over = steps > plan.max_sample_gap
    bridged = over & (steps <= plan.max_bridged_gap)
    return DataSummary(int(t.size), tuple(joints), float(t[-1] - t[0]) if t.size else 0.0,
                       plan.dt, int(over.sum()), float(steps.max(initial=0.0)),
                       plan.max_sample_gap, has_velocity, int(bridged.sum()))


def insufficient_reason(t: np.ndarray, plan: SamplingPlan) -> str:
    """Why no window formed, in the data's own terms."""
    t = np.asarray(t, float)
    if t.size < 2:
        return f"only {t.size} sample(s)"
    steps = np.diff(t)
    limit = max(plan.max_sample_gap, plan.max_bridged_gap)
    over = steps > limit
    breaks = np.concatenate([[0], np.flatnonzero(over) + 1, [t.size]])
    longest_run = int(np.max(np.diff(breaks)))
    if over.all():
        lo, hi = steps.min(), steps.max()
        spread = f"{lo * 1e3:.1f} ms" if np.isclose(lo, hi, rtol=0.05) else \
            f"{lo * 1e3:.1f}–{hi * 1e3:.1f} ms"
        return (f"every step is {spread} apart > max_sample_gap "
                f"{limit * 1e3:.1f} ms, so no window can form (raise "
                "--max-sample-gap or leave it 0 = max(gap_factor x median step, gap_floor))")
    return (f"the longest run of samples without a gap > {limit * 1e3:.1f} ms has "
            f"{longest_run} samples ({over.sum()} gaps in {t.size} samples), fewer than one "
            f"window of {plan.window + 1} samples ({plan.window * plan.dt * 1e3:.0f} ms)")


@dataclass(frozen=True)
class ViolationSpan:
    """Rows of ``joint`` between ``t_start`` and ``t_end`` (s) that need ``scale`` × the
    stated torque-noise bound to be consistent."""

    joint: int
    t_start: float
    t_end: float
    scale: float
    rows: int


@dataclass(frozen=True)
class Consistency:
    """``noise_scale`` s* (≤ 1: consistent; ``inf``: no noise bound explains the data — the
    θ_r/friction/prior boxes themselves contradict it); per-joint scales and violating spans
    when inconsistent."""

    noise_scale: float
    joint_scale: np.ndarray | None = None
    spans: list[ViolationSpan] = field(default_factory=list)

    @property
    def margin(self) -> float:
        return 1.0 - self.noise_scale

    def describe(self, joints: Sequence[str], t0: float = 0.0, max_spans: int = 4) -> str:
        if self.noise_scale <= 1.0:
            return (f"consistency margin {self.margin:.2f} (data consistent down to "
                    f"{self.noise_scale:.2f} x the stated torque-noise bound)")
        if not np.isfinite(self.noise_scale):
            return ("no torque-noise bound makes the data consistent: the theta_r, friction or "
                    "prior boxes contradict them (or the payload changed)")
        parts = [f"data need {self.noise_scale:.2f} x the stated torque-noise bound on every "
                 "joint"]
        if self.joint_scale is not None:
            bad = [f"{joints[j]} x{s:.2f}" for j, s in enumerate(self.joint_scale) if s > 1.0001]
            if bad:
                parts.append("or, joint by joint: " + ", ".join(bad))
        if self.spans:
            worst = sorted(self.spans, key=lambda s: -s.scale)[:max_spans]
            parts.append("worst spans: " + "; ".join(
                f"{joints[s.joint]} {s.t_start - t0:.2f}–{s.t_end - t0:.2f} s (x{s.scale:.2f})"
                for s in worst))
        return "; ".join(parts)

    def as_dict(self, joints: Sequence[str], t0: float = 0.0) -> dict[str, Any]:
        finite = float(self.noise_scale) if np.isfinite(self.noise_scale) else None
        return {
            "noise_scale": finite,
            "margin": None if finite is None else 1.0 - finite,
            "joint_scale": None if self.joint_scale is None else
            {joints[j]: float(s) for j, s in enumerate(self.joint_scale)},
            "violations": [{"joint": joints[s.joint], "t_start_s": s.t_start - t0,
                            "t_end_s": s.t_end - t0, "noise_scale": s.scale, "rows": s.rows}
                           for s in self.spans],
            "summary": self.describe(joints, t0),
        }


def _scale_lp(A: np.ndarray, c: np.ndarray, r_fixed: np.ndarray, S: np.ndarray,
              lower: np.ndarray, upper: np.ndarray, s_lower: float
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """min Σ s s.t. |A x − c| ≤ r_fixed + S·s, x ∈ [lower, upper], s ∈ [s_lower, _S_MAX].
    S (n, k) maps the k scale variables to each row's noise radius. Returns (x, s) or None."""
    n, nx = A.shape
    k = S.shape[1]
    # A x − S s ≤ c + r_fixed  and  A x + S s ≥ c − r_fixed, on the identifier's own LP builder
    inf = highspy.kHighsInf
    h = _highs(np.vstack([np.hstack([A, -S]), np.hstack([A, S])]),
               np.concatenate([np.full(n, -inf), c - r_fixed]),
               np.concatenate([c + r_fixed, np.full(n, inf)]),
               np.concatenate([lower, np.full(k, s_lower)]),
               np.concatenate([upper, np.full(k, _S_MAX)]))
    cost = np.concatenate([np.zeros(nx), np.ones(k)])
    h.changeColsCost(nx + k, np.arange(nx + k, dtype=np.int32), cost)
    h.changeObjectiveSense(highspy.ObjSense.kMinimize)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    sol = np.asarray(h.getSolution().col_value)
    return sol[:nx], sol[nx:]


def consistency(rows: PayloadRows, lower: np.ndarray, upper: np.ndarray, nj: int,
                per_joint: bool) -> Consistency:
    """Noise scale s* of ``rows`` (one LP) and, with ``per_joint``, the joint scales and the
    violating spans (a second LP). Rows are normalised as in :func:`feasible_set.normalise_rows`."""
    if len(rows) == 0:
        return Consistency(0.0)
    norm = np.linalg.norm(rows.A, axis=1)
    keep = norm > 1e-12 * max(1.0, float(norm.max()))
    scale = 1.0 / np.where(keep, norm, 1.0)
    A, c = rows.A * scale[:, None], rows.c * scale
    rf, rn = rows.r_fixed * scale, rows.r_noise * scale
    # Rows without θ/φ columns still constrain the scale: |c| ≤ rf + s·rn, i.e. A = 0 rows.
    res = _scale_lp(A, c, rf, rn[:, None], lower, upper, 0.0)
    if res is None:
        return Consistency(float("inf"))
    s_global = float(res[1][0])
    if not per_joint or s_global <= 1.0:
        return Consistency(s_global)
    S = np.zeros((len(rows), nj))
    S[np.arange(len(rows)), rows.joint] = rn
    res_j = _scale_lp(A, c, rf, S, lower, upper, 1.0)
    if res_j is None:
        return Consistency(s_global)
    # Where: the fewest, smallest excesses that explain the data (min Σ e_i/r_noise,i with
    # |A x − c| ≤ r + e_i) concentrate on the rows that really break the bound — the L1
    # penalty's sparsity, as in least-absolute-deviation outlier detection — whereas the rows
    # tight at the scale LP's optimum depend on which vertex the solver returns.
    S_l1 = np.diag(rn)
    l1 = _scale_lp(A, c, rf + rn, S_l1, lower, upper, 0.0) if len(rows) <= 6000 else None
    if l1 is None:
        x = res_j[0]
        need = np.maximum(np.abs(A @ x - c) - rf, 0.0) / np.maximum(rn, 1e-300)
    else:
        need = 1.0 + l1[1]
    return Consistency(s_global, res_j[1], _spans(rows, need))


def _spans(rows: PayloadRows, need: np.ndarray, tol: float = 1.0 + 1e-6) -> list[ViolationSpan]:
    """Merge overlapping violating windows of each joint into spans."""
    out: list[ViolationSpan] = []
    # rows without a payload time span (the calibration's rows) name their joint in the
    # per-joint scales, not a span
    bad = np.flatnonzero((need > tol) & np.isfinite(rows.t_start))
    for j in np.unique(rows.joint[bad]):
        idx = bad[rows.joint[bad] == j]
        idx = idx[np.argsort(rows.t_start[idx])]
        i = idx[0]
        start, end, scale, count = float(rows.t_start[i]), float(rows.t_end[i]), float(need[i]), 1
        for i in idx[1:]:
            if rows.t_start[i] <= end:
                end = max(end, float(rows.t_end[i]))
                scale = max(scale, float(need[i]))
                count += 1
            else:
                out.append(ViolationSpan(int(j), start, end, scale, count))
                start, end, scale = float(rows.t_start[i]), float(rows.t_end[i]), float(need[i])
                count = 1
        out.append(ViolationSpan(int(j), start, end, scale, count))
    return out


@dataclass(frozen=True)
class PinnedFace:
    """Coordinate ``index`` of θ_e whose sound interval (width ``inside``) sits on the prior's
    ``face`` while the data alone would allow values up to ``beyond`` past that face."""

    index: int
    face: str
    value: float
    inside: float
    beyond: float


def pinned_faces(rows: PayloadRows, x_lower: np.ndarray, x_upper: np.ndarray,
                 lower: np.ndarray, upper: np.ndarray, narrow: float = 0.5) -> list[PinnedFace]:
    """Coordinates of an ``ok`` θ_e box held up by the prior rather than by the data.

    A coordinate qualifies when its interval touches exactly one face of the prior, is narrower
    than ``narrow`` × the prior's width, and the rows alone (that face moved out by one prior
    width, one extra LP) reach further beyond the face than the interval is wide — more of the
    data-consistent values lie outside the prior than inside. A merely unidentified coordinate
    (spanning the prior) or a wide interval that the prior trims a little is not flagged.
    """
    n = len(lower)
    width = x_upper[:n] - x_lower[:n]
    tol = 1e-3 * width
    at_lo = lower <= x_lower[:n] + tol
    at_hi = upper >= x_upper[:n] - tol
    cand = np.flatnonzero((at_lo ^ at_hi) & (upper - lower < narrow * width))
    if cand.size == 0 or len(rows) == 0:
        return []
    An, cn, rn, _ = normalise_rows(rows.A, rows.c, rows.r)
    out = []
    nx = An.shape[1]
    for i in cand:
        lo2, hi2 = x_lower.copy(), x_upper.copy()
        lo_face = bool(at_lo[i])
        if lo_face:
            lo2[i] -= width[i]
        else:
            hi2[i] += width[i]
        h = _highs(An, cn - rn, cn + rn, lo2, hi2)
        cost = np.zeros(nx)
        cost[i] = 1.0
        h.changeColsCost(nx, np.arange(nx, dtype=np.int32), cost)
        h.changeObjectiveSense(highspy.ObjSense.kMinimize if lo_face
                               else highspy.ObjSense.kMaximize)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            continue
        opt = float(h.getSolution().col_value[i])
        beyond = (x_lower[i] - opt) if lo_face else (opt - x_upper[i])
        inside = float(upper[i] - lower[i])
        if beyond > inside:
            out.append(PinnedFace(int(i), "lower" if lo_face else "upper",
                                  float(lower[i] if lo_face else upper[i]), inside, beyond))
    return out


def physical_face_notes(pinned: Sequence[PinnedFace],
                        physical: Sequence[tuple[int, str]]) -> list[str]:
    """Note lines for the pinned faces the prior declares physical (its ``physical_faces``)."""
    return [f"{PARAM_NAMES[p.index]} rests on the prior's physical {p.face} face ({p.value:.4g}); "
            f"the data alone would allow {p.beyond:.3g} beyond it"
            for p in pinned if (p.index, p.face) in physical]


def box_warnings(pinned: Sequence[PinnedFace], estimate_outside: bool = False,
                 prior_name: str = "", physical: Sequence[tuple[int, str]] = ()) -> list[str]:
    """Warning lines for an ``ok`` box (see :func:`pinned_faces`); faces the prior declares
    physical are notes instead (:func:`physical_face_notes`)."""
    pinned = [p for p in pinned if (p.index, p.face) not in physical]
    out = []
    if pinned:
        faces = ", ".join(f"{PARAM_NAMES[p.index]} on its {p.face} face ({p.value:.4g}; the "
                          f"data reach {p.beyond:.3g} beyond it, the box is {p.inside:.3g} wide)"
                          for p in pinned)
        out.append(f"box pinned to the prior{f' {prior_name!r}' if prior_name else ''}: "
                   f"{faces} — it may hold only because the prior cuts it (wrong tool or "
                   "prior, offsets or friction outside their boxes?)")
    if estimate_outside:
        out.append("least-squares estimate outside the sound box (nominal = Chebyshev centre): "
                   "the data and the box disagree — check the assumptions")
    return out
