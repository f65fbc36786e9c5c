"""Torque transients: samples the stated bounds do not explain, which the quadrature allowance
absorbs without a word unless they are reported.

A one-sample spike in a torque stream (a bus glitch, a sensor's overflow) moves ∫τ over every
window containing it by the spike times its trapezoid weight. The windows' trapezoid-vs-Simpson
allowance (``quadrature_safety`` × |Simpson − trapezoid|) sees the spike as curvature and grows
with it, so the box stays sound: but the user should know the recording had one.

A sample k of joint j is a transient when it departs from the chord of its two neighbours by
more than the stated bounds allow (and by more than its neighbours do, whose chords a spike
pulls by half):

    |τ̂_k − chord_k| > 2·(ε_j + rel·max|τ̂|) / (1 − rel) + allowance_j,

the first term the three samples' noise bound (the chord's weights sum to one), the second what
the applied torque itself may do over the two steps: L_j·(h + Δ) with a stated torque-rate bound
L_j (``torque_rate_abs``, :mod:`.config`), otherwise ``spread`` × the joint's median |τ̂_k −
chord_k| over the recording (a data-driven scale, stated as such). Each transient is reported
with its joint, time and excess, and its share of the radius: the largest fraction of the radius
of a row containing it that is quadrature allowance.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Transient", "TransientStream", "departures", "find_transients",
           "with_radius_share", "transient_summary", "transient_note"]

#: without a stated torque-rate bound: the multiple of the joint's median chord departure
SPREAD = 20.0
#: transients listed by time in reports (the count covers all)
MAX_LISTED = 10


@dataclass(frozen=True)
class Transient:
    """One torque sample beyond the stated bounds: ``excess`` (N·m) past its threshold,
    ``share`` the largest fraction of a containing row's radius that is quadrature allowance
    (NaN until :func:`with_radius_share`; 0 when no row contains it)."""

    joint: str
    time: float
    excess: float
    share: float = float("nan")
    recording: str = ""

    def as_dict(self) -> dict[str, object]:
        return {**({"recording": self.recording} if self.recording else {}),
                "joint": self.joint, "time": round(self.time, 4),
                "excess_Nm": round(self.excess, 3),
                "radius_share": None if np.isnan(self.share) else round(self.share, 3)}


def find_transients(t: np.ndarray, tau: np.ndarray, joint_names: Sequence[str],
                    noise_abs: np.ndarray, noise_rel: float, rate_abs: np.ndarray,
                    max_gap: float, recording: str = "", scale: np.ndarray | None = None,
                    dt: float | None = None) -> list[Transient]:
    """Transients of a torque stream (t (N,) s; τ̂ (N, nj)), module docstring. Samples next to
    a step longer than ``max_gap`` (a gap: its own allowance) are not judged. ``scale`` (nj,)
    and ``dt`` replace the recording's median departure and median step (a stream's)."""
    t = np.asarray(t, float)
    tau = np.asarray(tau, float)
    if t.size < 3:
        return []
    h1, h2 = np.diff(t)[:-1], np.diff(t)[1:]
    dev = departures(t, tau)
    mag = np.maximum(np.abs(tau[:-2]), np.maximum(np.abs(tau[1:-1]), np.abs(tau[2:])))
    noise = 2.0 * (noise_abs[None, :] + noise_rel * mag) / (1.0 - noise_rel)
    step = float(np.median(np.diff(t))) if dt is None else dt
    rate = np.asarray(rate_abs, float)
    stated = rate * (np.maximum(h1, h2)[:, None] + step)
    data = SPREAD * (np.median(dev, axis=0) if scale is None else scale)[None, :]
    allowance = np.where(rate[None, :] > 0, stated, data)
    excess = dev - noise - allowance
    judged = (h1 <= max_gap) & (h2 <= max_gap)
    flagged = (excess > 0) & judged[:, None]
    # a spike also pulls its neighbours' chords (by half): report the sample itself only
    bigger = np.zeros_like(flagged)
    bigger[1:] |= dev[:-1] > dev[1:]
    bigger[:-1] |= dev[1:] > dev[:-1]
    k, j = np.nonzero(flagged & ~bigger)
    return [Transient(joint_names[int(jj)], float(t[kk + 1]), float(excess[kk, jj]),
                      recording=recording) for kk, jj in zip(k, j)]


def departures(t: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """(N − 2, nj): |τ̂_k − chord of its two neighbours| for the inner samples (N·m)."""
    h1, h2 = np.diff(t)[:-1], np.diff(t)[1:]
    w = (h1 / (h1 + h2))[:, None]
    return np.abs(tau[1:-1] - ((1.0 - w) * tau[:-2] + w * tau[2:]))


class TransientStream:
    """:func:`find_transients` over a stream fed in batches (the identifier node): each sample
    is judged once, when the samples two steps after it have arrived (its neighbours' chords
    decide whether it or a neighbour is the spike). Without a stated torque rate the scale is
    the median departure of the last ``history`` samples. ``found`` keeps the first
    :data:`MAX_LISTED`; ``count`` and ``by_joint`` count all."""

    def __init__(self, joint_names: Sequence[str], noise_abs: np.ndarray, noise_rel: float,
                 rate_abs: np.ndarray, max_gap: float, dt: float, history: int = 2000) -> None:
        self.joint_names = tuple(joint_names)
        self._args = (np.asarray(noise_abs, float), float(noise_rel),
                      np.asarray(rate_abs, float), float(max_gap))
        self._dt, self._history = float(dt), history
        self.found: list[Transient] = []
        self.count = 0
        self.by_joint: dict[str, int] = {}
        self.reset()

    def reset(self) -> None:
        """A new run (a jump in time): no chord spans it."""
        self._t = np.zeros(0)
        self._tau = np.zeros((0, len(self.joint_names)))
        self._dev = np.zeros((0, len(self.joint_names)))
        self._judged = -np.inf            # stamp of the last sample judged

    def push(self, t: np.ndarray, tau: np.ndarray) -> list[Transient]:
        """Add samples (strictly after the previous ones); returns the transients judged now."""
        self._t = np.concatenate([self._t, np.asarray(t, float)])
        self._tau = np.concatenate([self._tau, np.asarray(tau, float)])
        n = self._t.size
        if n < 5:
            return []
        new_dev = departures(self._t[-min(n, t.size + 2):], self._tau[-min(n, t.size + 2):])
        self._dev = np.concatenate([self._dev, new_dev])[-self._history:]
        noise_abs, noise_rel, rate, max_gap = self._args
        found = find_transients(self._t, self._tau, self.joint_names, noise_abs, noise_rel,
                                rate, max_gap, scale=np.median(self._dev, axis=0), dt=self._dt)
        # judged now: samples 1 .. n−3 of the held ones (sample n−2 waits for its right
        # neighbour's chord); the held tail keeps the last four for the next batch
        done_until = float(self._t[n - 3])
        out = [tr for tr in found if self._judged < tr.time <= done_until]
        self._judged = done_until
        self._t, self._tau = self._t[n - 4:], self._tau[n - 4:]
        for tr in out:
            self.count += 1
            self.by_joint[tr.joint] = self.by_joint.get(tr.joint, 0) + 1
            if len(self.found) < MAX_LISTED:
                self.found.append(tr)
        return out


def with_radius_share(found: Sequence[Transient], joint_names: Sequence[str],
                      row_joint: np.ndarray, t_start: np.ndarray, t_end: np.ndarray,
                      quad: np.ndarray, radius: np.ndarray, lag: np.ndarray | None = None
                      ) -> list[Transient]:
    """Each transient with its share: max over the rows of its joint whose window contains it
    (the torque stream's time minus the compensated lag, per joint) of quad / radius."""
    index = {name: k for k, name in enumerate(joint_names)}
    share = np.where(radius > 0, quad / np.maximum(radius, 1e-300), 0.0)
    out = []
    for tr in found:
        j = index[tr.joint]
        at = tr.time - (0.0 if lag is None else float(lag[j]))
        hit = (row_joint == j) & (t_start <= at) & (t_end >= at)
        out.append(Transient(tr.joint, tr.time, tr.excess,
                             float(share[hit].max()) if hit.any() else 0.0, tr.recording))
    return out


def transient_summary(found: Sequence[Transient]) -> dict[str, object]:
    """JSON-ready: count, per joint, and the first :data:`MAX_LISTED` by time."""
    per_joint: dict[str, int] = {}
    for tr in found:
        per_joint[tr.joint] = per_joint.get(tr.joint, 0) + 1
    return {"count": len(found), "by_joint": per_joint,
            "first": [tr.as_dict() for tr in sorted(found, key=lambda x: x.time)[:MAX_LISTED]],
            "rule": "a torque sample departs from the chord of its neighbours by more than "
                    "the noise bound and the stated torque rate (or, unstated, "
                    f"{SPREAD:g} x the joint's median departure) allow"}


def transient_note(found: Sequence[Transient]) -> str:
    """One line: how many transients, where, and their largest share of a row's radius."""
    shares = [tr.share for tr in found if not np.isnan(tr.share)]
    first = ", ".join(f"{tr.joint} {tr.time:.3f} s (+{tr.excess:.1f} N*m)"
                      for tr in sorted(found, key=lambda x: x.time)[:3])
    joints = sorted({tr.joint for tr in found})
    return (f"torque transients beyond the stated bounds: {len(found)} samples on "
            f"{', '.join(joints)} (first: {first}); absorbed by the quadrature allowance, up "
            f"to {100 * max(shares, default=0.0):.0f}% of a row's radius")
