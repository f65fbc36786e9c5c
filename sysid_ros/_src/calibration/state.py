"""Joint velocity (and acceleration) estimates from positions, with or without measured velocity.

Two estimators, both per joint and both non-causal (offline), and the identifier's own
(:func:`slope_derivative`, for a calibration the identifier's estimate rests on):

- :func:`butterworth_derivative` — the baseline: central differences on the real stamps, then
  a zero-phase Butterworth low-pass (``filtfilt``) designed at the median rate; q̈ the same way
  from q̇.
- :func:`rts_smoother` — a Rauch–Tung–Striebel smoother (the linear-Gaussian special case of the
  Riccati-recursion smoother of S0, linear in the horizon): state [q, q̇, q̈] driven by white
  jerk of spectral density s_j, measured q (encoder quantisation, σ_q) and, when the log has
  them, q̇ (σ_v). It uses the real, non-uniform stamps and carries the state across dropped
  samples. σ_v is measured from the data (second differences of the measured velocity, where the
  motion contributes only ~q⃛·dt²); s_j is ``lag_factor`` × the value that maximises the
  filter's innovation likelihood over a decade grid on a stretch of the data. Default factor 1:
  on hardware-like Gen3 data without velocities, 10× and 100× (less smoothing, less lag in
  transients) made the payload identifier's data *less* often consistent with the calibrated
  bound than the likelihood's own choice (bench/bench_calibration.py, docs/guide/calibrate.md).

Neither error is bounded. The calibration therefore derives its noise bound from rows built
with the *same* estimator (the bound absorbs the estimator's error as it absorbs sensor noise),
and the identifier must be fed the same estimator's velocities (``sysid-calibrate
--state-estimate … --write-bag``), never raw ones with an estimator-derived bound or vice versa.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.model.simulation_section import simulation_section

__all__ = ["StateEstimate", "butterworth_derivative", "rts_smoother", "estimate_state",
           "encoder_sigma", "ESTIMATORS", "slope_derivative"]

ESTIMATORS = ("rts", "butterworth", "slope")


@dataclass(frozen=True)
class StateEstimate:
    """q, q̇, q̈ (N, nj) at the input stamps; ``method`` and its settings for the provenance."""

    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    method: str
    settings: dict


def encoder_sigma(robot) -> np.ndarray:
    """Position noise σ (rad) per joint: the robot file's ``simulation.encoder_resolution_deg``
    /√12 (quantisation), else 1e-4 rad."""
    res = simulation_section(robot).encoder_resolution_deg
    if res is None:
        return np.full(robot.nj, 1e-4)
    res = np.broadcast_to(np.asarray(res, float), (robot.nj,))
    return np.maximum(np.deg2rad(res) / np.sqrt(12.0), 1e-7)


def _central_diff(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.gradient(x, t, axis=0)


def butterworth_derivative(t: np.ndarray, q: np.ndarray, cutoff_hz: float = 20.0,
                           order: int = 4) -> StateEstimate:
    """Baseline: differences on the stamps + zero-phase Butterworth low-pass (``cutoff_hz``)."""
    from scipy.signal import butter, filtfilt

    t = np.asarray(t, float)
    q = np.asarray(q, float)
    fs = 1.0 / float(np.median(np.diff(t)))
    wn = min(0.99, cutoff_hz / (0.5 * fs))
    b, a = butter(order, wn)
    pad = min(3 * max(len(a), len(b)), t.size - 1)
    dq = filtfilt(b, a, _central_diff(t, q), axis=0, padlen=pad)
    ddq = filtfilt(b, a, _central_diff(t, dq), axis=0, padlen=pad)
    qf = filtfilt(b, a, q, axis=0, padlen=pad)
    return StateEstimate(qf, dq, ddq, "butterworth", {"cutoff_hz": cutoff_hz, "order": order})


def _velocity_noise(dq: np.ndarray) -> np.ndarray:
    """σ of white noise on measured velocities: robust std of second differences / √6."""
    d2 = np.diff(dq, n=2, axis=0)
    mad = np.median(np.abs(d2 - np.median(d2, axis=0)), axis=0)
    return 1.4826 * mad / np.sqrt(6.0)


def _transition(h: np.ndarray, s: np.ndarray):
    """F (n,3,3) and Q (n,nj,3,3) of the white-jerk model for steps h (n,), densities s (nj,)."""
    n = h.size
    F = np.zeros((n, 3, 3))
    F[:, 0, 0] = F[:, 1, 1] = F[:, 2, 2] = 1.0
    F[:, 0, 1] = F[:, 1, 2] = h
    F[:, 0, 2] = 0.5 * h * h
    Qb = np.empty((n, 3, 3))
    Qb[:, 0, 0] = h**5 / 20
    Qb[:, 0, 1] = Qb[:, 1, 0] = h**4 / 8
    Qb[:, 0, 2] = Qb[:, 2, 0] = h**3 / 6
    Qb[:, 1, 1] = h**3 / 3
    Qb[:, 1, 2] = Qb[:, 2, 1] = h**2 / 2
    Qb[:, 2, 2] = h
    return F, Qb[:, None] * s[None, :, None, None]


def _filter(t, z, R_diag, s, keep: bool):
    """Forward Kalman filter, all joints at once. z (N, nj, m) measurements of the first m
    state components with variances R_diag (nj, m). Returns filtered (x, P), predicted (x, P)
    (when ``keep``) and the innovation log-likelihood per joint."""
    N, nj, m = z.shape
    h = np.diff(t)
    F, Q = _transition(h, s)
    x = np.zeros((nj, 3))
    x[:, :m] = z[0]
    P = np.zeros((nj, 3, 3))
    P[:, 0, 0] = R_diag[:, 0]
    P[:, 1, 1] = R_diag[:, 1] if m > 1 else 1.0
    P[:, 2, 2] = 100.0
    if m == 1:
        P[:, 1, 1] = 1.0
    xs = np.empty((N, nj, 3)) if keep else None
    Ps = np.empty((N, nj, 3, 3)) if keep else None
    xp_all = np.empty((N, nj, 3)) if keep else None
    Pp_all = np.empty((N, nj, 3, 3)) if keep else None
    loglik = np.zeros(nj)
    eye_m = np.eye(m)
    for k in range(N):
        if k:
            Fk = F[k - 1]
            x = x @ Fk.T
            P = Fk @ P @ Fk.T + Q[k - 1]
        if keep:
            assert xp_all is not None and Pp_all is not None
            xp_all[k], Pp_all[k] = x, P
        S = P[:, :m, :m] + R_diag[:, :, None] * eye_m
        Sinv = np.linalg.inv(S)
        innov = z[k] - x[:, :m]
        K = P[:, :, :m] @ Sinv                                  # (nj, 3, m)
        x = x + (K @ innov[:, :, None])[..., 0]
        P = P - K @ P[:, :m, :]
        if k:
            loglik -= 0.5 * (np.einsum("ji,jik,jk->j", innov, Sinv, innov)
                             + np.log(np.linalg.det(S)))
        if keep:
            assert xs is not None and Ps is not None
            xs[k], Ps[k] = x, P
    return xs, Ps, xp_all, Pp_all, F, loglik


def rts_smoother(t: np.ndarray, q: np.ndarray, dq: np.ndarray | None = None,
                 sigma_q: np.ndarray | float = 1e-4, sigma_v: np.ndarray | float | None = None,
                 jerk_psd: np.ndarray | float | None = None,
                 tune_seconds: float = 3.0, lag_factor: float = 1.0) -> StateEstimate:
    """RTS smoother (module docstring).

    Args:
        t: (N,) stamps (s). q: (N, nj) positions (rad). dq: measured velocities or None.
        sigma_q: position noise σ (rad), e.g. encoder resolution/√12.
        sigma_v: velocity noise σ (rad/s); None = measured from ``dq``.
        jerk_psd: white-jerk spectral density per joint (rad²/s⁵); None = ``lag_factor`` ×
            the maximum-likelihood value over a log grid on the first ``tune_seconds`` of data.
    """
    t = np.asarray(t, float)
    q = np.asarray(q, float)
    N, nj = q.shape
    sq = np.broadcast_to(np.asarray(sigma_q, float), (nj,)).copy()
    if dq is not None:
        dq = np.asarray(dq, float)
        sv = _velocity_noise(dq) if sigma_v is None else \
            np.broadcast_to(np.asarray(sigma_v, float), (nj,)).copy()
        sv = np.maximum(sv, 1e-6)
        z = np.stack([q, dq], axis=2)
        R = np.stack([sq**2, sv**2], axis=1)
    else:
        sv = None
        z = q[:, :, None]
        R = (sq**2)[:, None]
    if jerk_psd is None:
        n_tune = int(np.searchsorted(t, t[0] + tune_seconds))
        n_tune = max(min(n_tune, N), min(N, 50))
        grid = 10.0 ** np.arange(-2.0, 5.01, 1.0)
        lls = np.array([_filter(t[:n_tune], z[:n_tune], R, np.full(nj, g), False)[5]
                        for g in grid])
        s = lag_factor * grid[np.argmax(lls, axis=0)]
    else:
        s = np.broadcast_to(np.asarray(jerk_psd, float), (nj,)).copy()
    xs, Ps, xp, Pp, F, _ = _filter(t, z, R, s, True)
    # RTS backward pass
    xb = xs.copy()
    Pb_next = Ps[-1]
    for k in range(N - 2, -1, -1):
        C = Ps[k] @ F[k].T @ np.linalg.inv(Pp[k + 1])               # (nj, 3, 3)
        xb[k] = xs[k] + (C @ (xb[k + 1] - xp[k + 1])[:, :, None])[..., 0]
        Pb_next = Ps[k] + C @ (Pb_next - Pp[k + 1]) @ np.swapaxes(C, -1, -2)
    settings = {"sigma_q_rad": sq.tolist(), "jerk_psd": s.tolist(), "lag_factor": lag_factor,
                "sigma_v_rad_s": None if sv is None else sv.tolist(),
                "measured_velocity": dq is not None}
    c = np.ascontiguousarray
    return StateEstimate(c(xb[..., 0]), c(xb[..., 1]), c(xb[..., 2]), "rts", settings)


def slope_derivative(t: np.ndarray, q: np.ndarray, half_width_s: float = 0.02) -> StateEstimate:
    """The identifier's own estimate of differenced velocities
    (:mod:`sysid_ros._src.identification.velocity_estimate`: the least-squares slope of the positions
    over ±``half_width_s``), so that a calibration can rest on the velocities the identifier
    will use; the central difference where it has no window (the ends, gaps)."""
    from sysid_ros._src.identification.velocity_estimate import VelocityEstimate

    t, q = np.asarray(t, float), np.asarray(q, float)
    nj = q.shape[1]
    est = VelocityEstimate(half_width_s, np.zeros(nj), 0.0, np.zeros(nj), np.zeros(nj))
    out = est.estimate(t, q, 2.5 * float(np.median(np.diff(t))))
    dq = np.where(np.isfinite(out.bound), out.dq, _central_diff(t, q))
    return StateEstimate(q, dq, _central_diff(t, dq), "slope", {"half_width_s": half_width_s})


def estimate_state(t: np.ndarray, q: np.ndarray, dq: np.ndarray | None, method: str = "rts",
                   sigma_q: np.ndarray | float = 1e-4, half_width_s: float = 0.02
                   ) -> StateEstimate:
    """Dispatch on ``method`` (``rts``, ``butterworth`` or ``slope``)."""
    if method == "slope":
        return slope_derivative(t, q, half_width_s)
    if method == "rts":
        return rts_smoother(t, q, dq, sigma_q=sigma_q)
    if method == "butterworth":
        return butterworth_derivative(t, q)
    raise ValueError(f"state estimator {method!r} is not one of {ESTIMATORS}")

