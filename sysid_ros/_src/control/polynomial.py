"""Exact ranges of polynomials on an interval (batched): the admission check's building block.

The extremes of a polynomial p on [0, T] are at the interval's ends or at real roots of p′ inside
it. Each polynomial is rescaled to s = x/T ∈ [0, 1] (roots then lie in a unit interval, which
keeps the companion-matrix eigenvalues well conditioned), the roots of p′ are the eigenvalues of
its companion matrix, and p is evaluated at 0, 1 and every root's real part clipped into [0, 1].

Soundness: evaluating p at extra points inside [0, 1] can only lower the reported maximum towards
the true one, never above it, so every eigenvalue whose imaginary part is small (a near-double
root split into a complex pair by rounding) is kept as a candidate too. The remaining error is
floating-point rounding of the root (its effect on p is second order, p′ vanishes there) —
admission adds no margin for it; the limits it checks against are the robot's own.
"""
from __future__ import annotations

import numpy as np

__all__ = ["polynomial_range", "polynomial_derivative"]

# |Im λ| below which an eigenvalue is treated as a (perturbed) real root; extra candidates are
# harmless (module doc), so this is generous.
_IMAG_TOL = 1e-6


def polynomial_derivative(coef: np.ndarray) -> np.ndarray:
    """Coefficients (…, D) of p′ from p's ascending coefficients (…, D+1)."""
    degree = coef.shape[-1] - 1
    return coef[..., 1:] * np.arange(1, degree + 1, dtype=float)


def _unit_roots(coef: np.ndarray) -> np.ndarray:
    """Real parts of the (near-)real roots in [0, 1] of each row's polynomial (ascending
    coefficients (N, d+1)); (N, d), NaN where there is no such root."""
    n, d1 = coef.shape
    d = d1 - 1
    out = np.full((n, max(d, 0)), np.nan)
    if d < 1:
        return out
    scale = np.max(np.abs(coef), axis=1)
    lead = coef[:, -1]
    regular = np.abs(lead) > 1e-12 * np.maximum(scale, 1e-300)
    if np.any(regular):
        a = coef[regular] / lead[regular, None]
        comp = np.zeros((a.shape[0], d, d))
        comp[:, np.arange(1, d), np.arange(d - 1)] = 1.0        # sub-diagonal
        comp[:, :, -1] = -a[:, :-1]
        lam = np.linalg.eigvals(comp)
        keep = np.abs(lam.imag) <= _IMAG_TOL * np.maximum(1.0, np.abs(lam.real))
        out[regular] = np.where(keep, lam.real, np.nan)
    # a vanishing leading coefficient: the polynomial has lower degree (np.roots trims it)
    for i in np.flatnonzero(~regular):
        if scale[i] == 0.0:
            continue
        z = np.roots(coef[i, ::-1]).astype(complex)
        real = z[np.abs(z.imag) <= _IMAG_TOL * np.maximum(1.0, np.abs(z.real))].real
        out[i, :real.size] = real
    out[(out < 0.0) | (out > 1.0)] = np.nan
    return out


def polynomial_range(coef: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum and maximum of p(x) = Σ_k coef[…, k] x^k over x ∈ [0, length] (module doc).

    Args:
        coef: ascending coefficients (N, D+1).
        length: interval lengths (N,), > 0.

    Returns:
        (lo, hi), each (N,).
    """
    coef = np.asarray(coef, float)
    length = np.asarray(length, float)
    degree = coef.shape[1] - 1
    unit = coef * length[:, None] ** np.arange(degree + 1)     # p(T s) in powers of s
    roots = _unit_roots(polynomial_derivative(unit))
    s = np.concatenate([np.zeros((coef.shape[0], 1)), np.ones((coef.shape[0], 1)),
                        np.nan_to_num(roots, nan=0.0)], axis=1)
    values = np.einsum("nk,nmk->nm", unit, s[:, :, None] ** np.arange(degree + 1))
    return values.min(axis=1), values.max(axis=1)
