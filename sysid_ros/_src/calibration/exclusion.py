"""The exclusion rule: which windows no plausible model explains, decided from states alone.

Real drives clamp joint speed (a Gen3's at 100 °/s on the large actuators and 120 °/s on the
small ones). While a joint rides its clamp the reported torque departs from any rigid-body +
friction law by up to 30 N·m on real Gen3 logs, and it does so again right after a recording
starts. Such windows are dropped, by a rule that looks only at observables — never at
residuals — so that it cannot select rows to agree with a wrong hypothesis, and a payload change
(which moves every row) still shows in the rows it keeps:

- ``exclude_speed_rad_s``: the rows of joint j of every window holding a sample with
  |q̇_j| ≥ frac·clamp_j. The clamp is detected in the calibration data as a plateau: the
  largest |q̇_j| seen, held within 2 % for at least ``min_plateau_s`` without a break (a
  sinusoid's crest at that speed passes in well under that); no plateau, no rule for that joint.
- ``exclude_after_start_s``: every row of a window that starts this soon after a run starts
  (the recording's start, a gap, a restart).

Both are written to calib.yaml's identification section; the identifier applies the same rule
(:meth:`sysid_ros._src.identification.windows.MomentumWindows._excluded`) online and offline, and
both report how many rows it dropped, where and why. Dropping rows never makes a box exclude
the truth: it only removes constraints.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sysid_ros._src.calibration.data import Recording

__all__ = ["speed_clamps", "PLATEAU_NEAR"]

#: A sample is on the plateau when its speed is within this fraction of the largest one.
PLATEAU_NEAR = 0.98


def _longest_run(mask: np.ndarray, t: np.ndarray) -> float:
    """Longest time span (s) of consecutive True samples."""
    if not mask.any():
        return 0.0
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
    return max(float(t[e - 1] - t[a]) for a, e in zip(edges[::2], edges[1::2]))


def speed_clamps(recordings: Sequence[Recording], nj: int, min_plateau_s: float = 0.25
                 ) -> np.ndarray:
    """(nj,) the speed each joint is clamped at in ``recordings`` (rad/s), inf where no
    plateau shows (module docstring)."""
    out = np.full(nj, np.inf)
    with_dq = [r for r in recordings if r.dq is not None]
    if not with_dq:
        return out
    for j in range(nj):
        top = max(float(np.max(np.abs(r.dq[:, j]))) for r in with_dq)  # type: ignore[index]
        if top <= 0:
            continue
        held = max(_longest_run(np.abs(r.dq[:, j]) >= PLATEAU_NEAR * top, r.t)  # type: ignore[index]
                   for r in with_dq)
        if held >= min_plateau_s:
            out[j] = top
    return out
