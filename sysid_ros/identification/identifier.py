"""Offline (whole recording) and online (streaming) payload identification.

Methods: ``lp`` (box of the polytope Θ), ``lp-cuts`` (Θ plus cutting planes vᵀJ(θ)v ≥ 0 of the
pseudo-inertia constraint: LP cost, tightens the inertia entries — see :mod:`bounds`),
``lp-lmi`` (Θ ∩ {J ⪰ 0} exactly, 20 SDPs: slow), ``sensitivity`` (comparison only).

Guarantee ("the box contains the true θ_e"), for methods ``lp``, ``lp-cuts`` and ``lp-lmi``, holds when all
of these hold (they are repeated in every result's ``assumptions``):

1. every torque sample's error is within the configured bound |τ̂ − τ| ≤ abs + rel·|τ|;
2. q and q̇ are exact at the sample instants and q̇ changes sign at most once between samples;
3. the other bodies' θ_r and the friction/armature coefficients lie in their configured boxes,
   and τ_f = Fc·sign q̇ + Fv·q̇ + Ia·q̈ + β is the friction law (``--friction none``: τ̂ is
   the link-side torque);
4. the trapezoid rule's error on each window is within ``quadrature_safety``·|Simpson − trapezoid|
   (true for smooth signals sampled fast, e.g. 4 kHz; switch off only with that understanding);
5. the payload is rigid, rigidly held and unchanged over the data, and the truth is in B₀.

If the data contradict these, Θ is usually empty and the status is ``inconsistent``: no box is
fabricated. Method ``sensitivity`` (the seed paper's mean-value bound) carries no such guarantee;
it is there for comparison.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sysid_ros.identification.bounds import INCONSISTENT, INSUFFICIENT, OK, BoxResult, \
    chebyshev_center, polytope_box
from sysid_ros.identification.config import IdentificationConfig
from sysid_ros.identification.errors import IdentificationConfigError
from sysid_ros.identification.windows import MomentumWindows, WindowRows
from sysid_ros.model.regressors import Regressors
from sysid_ros.model.robots import Robot

__all__ = ["IdentificationResult", "METHODS", "identify", "OnlineIdentifier"]

METHODS = ("lp", "lp-cuts", "lp-lmi", "sensitivity")
ONLINE_METHODS = ("lp", "lp-cuts", "lp-lmi")


@dataclass(frozen=True)
class IdentificationResult:
    """A box [lower, upper] on θ_e and a point estimate ``nominal`` (each (10,) or None)."""

    status: str
    lower: np.ndarray | None
    nominal: np.ndarray | None
    upper: np.ndarray | None
    samples_used: int
    windows_used: int
    method: str
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def contains(self, theta: np.ndarray, tol: float = 0.0) -> bool:
        if self.lower is None or self.upper is None:
            return False
        theta = np.asarray(theta)
        return bool(np.all(theta >= self.lower - tol) and np.all(theta <= self.upper + tol))


def _point_estimate(rows: WindowRows, lower: np.ndarray, upper: np.ndarray,
                    theta_ref: np.ndarray, notes: list[str]) -> np.ndarray:
    """θ_0 by log-Cholesky least squares; the box's Chebyshev centre if θ_0 is outside it."""
    from sysid_ros.identification.estimate import estimate_theta

    theta0 = estimate_theta(rows.Y, rows.U, rows.r, theta_ref).theta
    if np.all(theta0 >= lower) and np.all(theta0 <= upper):
        return theta0
    notes.append("least-squares estimate outside the sound box; nominal = Chebyshev centre")
    centre = chebyshev_center(rows.Y, rows.U, rows.r, lower, upper)
    return 0.5 * (lower + upper) if centre is None else centre


def identify(robot: Robot, config: IdentificationConfig, t: np.ndarray, q: np.ndarray,
             dq: np.ndarray, tau: np.ndarray, method: str = "lp", *,
             point_estimate: bool = True, chunk: int = 4000,
             progress=None) -> IdentificationResult:
    """Identify θ_e from a whole recording (arrays in ``robot.joint_names`` order)."""
    if method not in METHODS:
        raise IdentificationConfigError(f"method {method!r} is not one of {METHODS}")
    clock = time.perf_counter()
    win = MomentumWindows(robot, config)
    parts = []
    n = len(t)
    for s in range(0, n, chunk):
        parts.append(win.extend(t[s:s + chunk], q[s:s + chunk], dq[s:s + chunk],
                                tau[s:s + chunk]))
        if progress is not None:
            progress(min(s + chunk, n), n)
    rows = WindowRows.concat(parts)
    t_reg = time.perf_counter() - clock
    clock = time.perf_counter()
    notes: list[str] = []
    if method == "sensitivity":
        from sysid_ros.identification.sensitivity import sensitivity_box

        box = sensitivity_box(rows, config.prior_lower, config.prior_upper, robot.theta_e())
    else:
        box = polytope_box(rows.Y, rows.U, rows.r, config.prior_lower, config.prior_upper,
                           lmi=(method == "lp-lmi"), psd_cuts=(method == "lp-cuts"),
                           cut_rounds=config.cut_rounds, max_cuts=config.max_cuts)
    t_box = time.perf_counter() - clock
    clock = time.perf_counter()
    nominal = None
    if box.status == OK and point_estimate:
        if method == "sensitivity":
            nominal = box.nominal  # type: ignore[attr-defined]
        else:
            nominal = _point_estimate(rows, box.lower, box.upper, robot.theta_e(), notes)
    elif box.status == INSUFFICIENT:
        notes.append(f"fewer samples than one window ({config.window}); box = prior")
    return IdentificationResult(box.status, box.lower, nominal, box.upper, win.n_samples,
                                win.n_windows, method,
                                {"regressors": t_reg, "bounds": t_box,
                                 "estimate": time.perf_counter() - clock}, notes)


class OnlineIdentifier:
    """Streaming identifier: bounds only shrink and an update's cost does not grow with run time.

    Each :meth:`update` intersects the previous sound box (the prior of this update) with the
    polytope of the most recent ``config.online_max_rows`` rows: the truth is in the previous
    box and satisfies every row, so it stays in the new box, and the LP size is bounded. An empty
    intersection sets status ``inconsistent`` and keeps the last sound box until :meth:`reset`.

    With ``lp-cuts`` the pseudo-inertia cut pool is carried from update to update (cuts hold
    for every rigid body whatever the data). With ``background_cuts=True`` :meth:`update` only
    re-uses the pool (one LP box over ``online_max_rows`` + ``max_cuts`` rows) and the
    cut-generating rounds run in :meth:`tighten`, which another thread may call at its own,
    slower cadence: it solves on a snapshot without holding the lock and then intersects its
    box with the current one — both contain the truth, so the intersection does too (an empty
    intersection means the assumptions failed: ``inconsistent``).
    """

    def __init__(self, robot: Robot, config: IdentificationConfig, method: str = "lp",
                 point_estimate: bool = True, background_cuts: bool = False) -> None:
        if method not in ONLINE_METHODS:
            raise IdentificationConfigError(f"online method {method!r}: use one of "
                                            f"{ONLINE_METHODS}")
        self.robot, self.config, self.method = robot, config, method
        self.point_estimate = point_estimate
        self.background_cuts = background_cuts and method == "lp-cuts"
        self.windows = MomentumWindows(robot, config, Regressors(robot))
        self._lock = threading.Lock()     # guards box/rows/cuts against tighten()'s thread
        self._epoch = 0
        self.reset()

    def reset(self) -> None:
        """New payload: back to the prior box, all samples forgotten."""
        with self._lock:
            self._epoch += 1              # a tighten() started before this is discarded
            self.windows.reset()
            self.lower = self.config.prior_lower.copy()
            self.upper = self.config.prior_upper.copy()
            self.nominal = np.clip(self.robot.theta_e(), self.lower, self.upper)
            self.status = INSUFFICIENT
            self._rows: list[WindowRows] = []
            self._cuts: np.ndarray | None = None
            self._new_rows = 0
            self.windows_used = 0

    @property
    def samples(self) -> int:
        return self.windows.n_samples

    def add_samples(self, t, q, dq, tau) -> int:
        """Append samples (raises SampleError, state unchanged); returns new rows formed."""
        rows = self.windows.extend(t, q, dq, tau)
        with self._lock:
            return self._append(rows)

    def _append(self, rows: WindowRows) -> int:
        if len(rows):
            keep = self.config.online_max_rows
            both = WindowRows.concat(self._rows + [rows])
            self._rows = [WindowRows(*(getattr(both, f)[-keep:]
                                       for f in ("Y", "U", "r", "start", "end", "joint")))]
            self._new_rows += len(rows)
            self.windows_used += len(rows) // self.robot.nj
        return len(rows)

    def update(self) -> str:
        """Recompute the box from the recent rows; returns the status."""
        if self.status == INCONSISTENT or self._new_rows == 0:
            return self.status
        with self._lock:
            rows = WindowRows.concat(self._rows)
            self._new_rows = 0
            prior, cuts, epoch = (self.lower, self.upper), self._cuts, self._epoch
        rounds = 0 if self.background_cuts else self.config.cut_rounds
        box: BoxResult = polytope_box(rows.Y, rows.U, rows.r, *prior,
                                      lmi=self.method == "lp-lmi",
                                      psd_cuts=self.method == "lp-cuts", cuts=cuts,
                                      cut_rounds=rounds, max_cuts=self.config.max_cuts)
        self._merge(box, epoch, keep_cuts=not self.background_cuts)
        if self.status == OK:
            self._update_nominal(rows)
        return self.status

    def tighten(self) -> bool:
        """Pseudo-inertia cut rounds on the current rows and box (``lp-cuts`` only; safe to
        call from a second thread). Returns True when the box was intersected with the result."""
        if self.method != "lp-cuts":
            return False
        with self._lock:
            if self.status != OK:
                return False
            rows = WindowRows.concat(self._rows)
            prior, cuts, epoch = (self.lower.copy(), self.upper.copy()), self._cuts, self._epoch
        box = polytope_box(rows.Y, rows.U, rows.r, *prior, psd_cuts=True, cuts=cuts,
                           cut_rounds=self.config.cut_rounds, max_cuts=self.config.max_cuts)
        return self._merge(box, epoch, keep_cuts=True)

    def _merge(self, box: BoxResult, epoch: int, keep_cuts: bool) -> bool:
        with self._lock:
            if epoch != self._epoch or self.status == INCONSISTENT:
                return False
            if box.status == INCONSISTENT:
                self.status = INCONSISTENT
                return False
            lower, upper = np.maximum(self.lower, box.lower), np.minimum(self.upper, box.upper)
            if np.any(lower > upper):      # two sound boxes that miss each other
                self.status = INCONSISTENT
                return False
            self.lower, self.upper = lower, upper
            if keep_cuts and box.cuts is not None:
                self._cuts = box.cuts
            self.status = OK
            return True

    def _update_nominal(self, rows: WindowRows) -> None:
        lower, upper = self.lower.copy(), self.upper.copy()
        if self.point_estimate:
            self.nominal = _point_estimate(rows, lower, upper, self.nominal
                                           if np.all(np.isfinite(self.nominal)) else
                                           self.robot.theta_e(), [])
        else:
            self.nominal = 0.5 * (lower + upper)
        # tighten() may have shrunk the box meanwhile: keep the nominal inside it
        self.nominal = np.clip(self.nominal, self.lower, self.upper)

    def summary(self) -> dict[str, Any]:
        return {"status": self.status, "samples": self.samples, "windows": self.windows_used,
                "rows": sum(len(r) for r in self._rows), "gaps": self.windows.n_gaps}
