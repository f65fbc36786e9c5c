"""Calibration rows (:class:`~sysid_ros._src.identification.calibration_constraints.CalibrationRows`)
built from momentum windows: two one-sided linear constraints on every parameter.

Each :class:`~sysid_ros._src.identification.windows.MomentumRows` row (window w, joint j) states

    W·θ + Fc_j·S + Fv_j·Δq + Ia_j·Δq̇ + β_j·T = ∫τ̂ dt − E,      S ∈ [s − s_r, s + s_r],

where θ holds *every* body's 10 parameters (calibration runs without payload, or with a known
one that is part of the end-effector body), S = ∫σ(q̇)dt is only known to the interval its
Coulomb band leaves, and E is the error of the window: the torque noise integral plus everything
the integral form does not model (sensor non-idealities, velocity noise through the armature
term, soft dry friction outside the band, stamp jitter). The calibration measures a per-joint
bound δ_j on the window-averaged error, |E| ≤ r_fixed + δ_j·T', with

- r_fixed = ``quadrature_safety``·(|Simpson − trapezoid| of ∫τ̂ and of every ∫W_c column at
  the prior's largest |θ|) + rel·∫|τ̂|/(1 − rel) + the bridged gaps' allowance (``gap_rad``):
  the identifier's own allowances, so that δ_j
  means exactly what ``identification.torque_noise_abs`` means to it (same windows, same extra
  radii);
- T' = T/(1 − rel) (the identifier's conversion of a bound on the true torque).

Because Fc ≥ 0, Fc·S ranges over [Fc·(s − s_r), Fc·(s + s_r)], so the row is *exactly*

    A_up·x ≤ c + r_fixed + δ_j·T'     (Fc column s − s_r)
    A_lo·x ≥ c − r_fixed − δ_j·T'     (Fc column s + s_r)

with x = [θ (10·n_bodies) | φ (4·nj, per joint [Fc, Fv, Ia, β]) | ψ | v] and c = ∫τ̂. ψ holds the
coefficients of the extra friction terms the calibration adopted (none by default; per joint the
terms' columns, :mod:`sysid_ros._src.model.friction_terms`): their columns are ∫feature dt over the
window, and their quadrature allowance at |ψ|max joins r_fixed. v holds the torque reading's gain
unknowns (below); they come last because they belong to the reading, not to the model: the
model's columns [θ | φ | ψ] are what the identifier's rows share. Both sides are linear, so every
set the calibration computes is a polytope. No accelerations are needed anywhere.

A recording that carried a known payload θ_p (``Recording.payload_theta``) has the payload's
share W_e·θ_p (its end-effector columns) moved to the right-hand side: c = ∫τ̂ − W_e·θ_p
(``known``), so θ stays the robot without payload, the same unknowns as in the other
recordings; the payload's quadrature allowance joins r_fixed, and so does |W_e|·rad for a
payload known to within a box (θ_p ± rad).

A stated gain bound of the torque reading (``identification.torque_gain_rel`` g_j > 0: the true
torque is (1 + g_j·v_j)·τ̂, |v_j| ≤ 1, after the rescaling by ``torque_gain``) appends one unknown
v_j per such joint to x, with the column −g_j·c: one constant for every row of the joint, so it
cannot absorb noise that varies from window to window. The torque bounds are on the reading, so
r_fixed and T' are multiplied by the largest gain torque_gain_j·(1 + g_j) (δ_j stays a bound on
the reading, what the identifier reads it as).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sysid_ros._src.identification.calibration_constraints import CalibrationRows, \
    friction_column
from sysid_ros._src.identification.windows import MomentumRows

__all__ = ["build_rows"]


def build_rows(m: MomentumRows, nj: int, theta_abs_max: np.ndarray, quadrature_safety: float,
               torque_noise_rel: float = 0.0, source: int = 0,
               lag_radius: np.ndarray | None = None,
               term_abs_max: np.ndarray | None = None, gain_rel: np.ndarray | None = None,
               gain: np.ndarray | None = None, payload_theta: np.ndarray | None = None,
               ee_columns: slice | None = None, payload_radius: np.ndarray | None = None
               ) -> CalibrationRows:
    """Calibration rows of momentum rows ``m`` (all body columns).

    Args:
        m: rows from :class:`~sysid_ros._src.identification.windows.MomentumWindows`.
        nj: number of actuated joints (4 friction columns each).
        theta_abs_max: (n_theta,) the largest |θ| in the prior (for the quadrature allowance of
            ∫W_c·θ, as the identifier takes it at the edge of its boxes).
        quadrature_safety: factor on |Simpson − trapezoid| (the identifier's setting).
        torque_noise_rel: the fraction of |τ| the noise bound also has (the rest, δ_j, is
            what the calibration measures).
        source: recording index stored with every row (diagnostics, cross-validation).
        lag_radius: (nj,) s, the uncertainty of the compensated torque lag (``r_timing``).
        term_abs_max: (nj, width) the largest |ψ| of the extra terms' prior box, when the
            windows carry their integrals (``m.terms``; the ψ columns follow φ).
        gain_rel, gain: (nj,) the stated gain bound g_j and the gain the reading was rescaled by
            (module docstring; None: exact gain 1). The v columns follow ψ.
        payload_theta, ee_columns: a known payload this recording carried and the end-effector
            body's columns of θ (module docstring); ``payload_radius`` its box's radius.
    """
    n = len(m)
    n_theta = m.W.shape[1]
    if not 0.0 <= torque_noise_rel < 1.0:
        raise ValueError(f"torque_noise_rel {torque_noise_rel} is not a fraction in [0, 1)")
    cols = friction_column(0, m.joint[:, None], np.arange(4)[None])      # (n, 4) within φ
    W = sp.csr_matrix(np.where(np.abs(m.W) > 0.0, m.W, 0.0))
    F = sp.csr_matrix((m.fric.reshape(-1), (np.repeat(np.arange(n), 4), cols.reshape(-1))),
                      shape=(n, 4 * nj))
    width = m.terms.shape[1]
    blocks = [W, F]
    r_fixed = quadrature_safety * (m.quad_tau + m.quad_W @ theta_abs_max) + m.gap_rad
    if width:
        if term_abs_max is None or np.shape(term_abs_max) != (nj, width):
            raise ValueError(f"build_rows: the rows carry {width} term columns per joint; "
                             f"term_abs_max must be ({nj}, {width})")
        t_cols = m.joint[:, None] * width + np.arange(width)[None]
        blocks.append(sp.csr_matrix((m.terms.reshape(-1), (np.repeat(np.arange(n), width),
                                                           t_cols.reshape(-1))),
                                    shape=(n, width * nj)))
        r_fixed = r_fixed + quadrature_safety * np.sum(
            m.quad_terms * np.asarray(term_abs_max, float)[m.joint], axis=1)
    g_rel = np.zeros(nj) if gain_rel is None else np.asarray(gain_rel, float)
    big = ((np.ones(nj) if gain is None else np.asarray(gain, float)) * (1.0 + g_rel))[m.joint]
    gains = np.flatnonzero(g_rel > 0)
    index = np.full(nj, -1)
    index[gains] = np.arange(gains.size)
    has = np.flatnonzero(index[m.joint] >= 0)
    blocks.append(sp.csr_matrix((-g_rel[m.joint[has]] * m.tau[has], (has, index[m.joint[has]])),
                                shape=(n, gains.size)))
    A = sp.hstack(blocks).tocsr()
    known = np.zeros(n)
    if payload_theta is not None:
        if ee_columns is None:
            raise ValueError("build_rows: a known payload needs the end-effector columns")
        known = m.W[:, ee_columns] @ payload_theta
        p_abs = np.abs(payload_theta)
        if payload_radius is not None:
            p_abs = p_abs + payload_radius
            r_fixed = r_fixed + np.abs(m.W[:, ee_columns]) @ payload_radius
        r_fixed = r_fixed + quadrature_safety * (m.quad_W[:, ee_columns] @ p_abs)
    r_fixed = big * (r_fixed + torque_noise_rel * m.tau_abs / (1.0 - torque_noise_rel))
    r_timing = (np.zeros(n) if lag_radius is None
                else big * np.asarray(lag_radius, float)[m.joint] * np.abs(m.tau_end - m.tau_start))
    return CalibrationRows(A, m.sign_rad.copy(), m.tau - known, r_fixed,
                           big * m.duration / (1.0 - torque_noise_rel), m.joint.copy(),
                           m.t_start.copy(), m.t_end.copy(), m.start.copy(), m.end.copy(),
                           np.full(n, source), n_theta, r_timing,
                           big * quadrature_safety * m.quad_tau, known, m.speed_abs.copy())
