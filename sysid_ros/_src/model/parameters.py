"""Inertial-parameter conventions, physical consistency and the log-Cholesky map.

θ (one body) in Pinocchio order ``[m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``: mass, first
moment h = m·c, and the rotational inertia Ī about the body's joint-frame origin, in that frame
(``pin.Inertia.toDynamicParameters``). The seed paper (S3) orders them
``[m, mpx, mpy, mpz, XX, YY, ZZ, XY, YZ, XZ]``; convert at the boundary only, by name.

Physical consistency (S3-31): the pseudo-inertia J = [[½tr(Ī)·1₃ − Ī, h], [hᵀ, m]] is positive
definite. The log-Cholesky map θ = P(η), η ∈ ℝ¹⁰ (S3-16; Rucker & Wensing), parametrises exactly
the consistent θ: with η = (α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃) and

    U = e^α · [[e^d₁, s₁₂, s₁₃, t₁], [0, e^d₂, s₂₃, t₂], [0, 0, e^d₃, t₃], [0, 0, 0, 1]],

J = U·Uᵀ is positive definite for every η. (The paper prints MᵀM; U·Uᵀ is the form whose
(4,4) entry is the mass e^{2α}, which is the one we implement and test.) Pinocchio's own
``LogCholeskyParameters`` uses another η order and formula; do not mix them.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "PARAM_NAMES",
    "PAPER_NAMES",
    "to_paper_order",
    "from_paper_order",
    "pseudo_inertia",
    "theta_from_pseudo_inertia",
    "is_physically_consistent",
    "log_cholesky",
    "log_cholesky_jacobian",
    "log_cholesky_inverse",
    "theta_from_com_inertia",
    "com_inertia_from_theta",
]

PARAM_NAMES: tuple[str, ...] = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
PAPER_NAMES: tuple[str, ...] = ("m", "mpx", "mpy", "mpz", "XX", "YY", "ZZ", "XY", "YZ", "XZ")
# Name correspondence between the two conventions (same physical quantity, same frame).
_PAPER_TO_OURS = {"m": "m", "mpx": "mcx", "mpy": "mcy", "mpz": "mcz", "XX": "Ixx", "YY": "Iyy",
                  "ZZ": "Izz", "XY": "Ixy", "YZ": "Iyz", "XZ": "Ixz"}
_TO_PAPER = np.array([PARAM_NAMES.index(_PAPER_TO_OURS[p]) for p in PAPER_NAMES])
_FROM_PAPER = np.array([PAPER_NAMES.index(p) for p in
                        ({v: k for k, v in _PAPER_TO_OURS.items()}[o] for o in PARAM_NAMES)])


def to_paper_order(theta: np.ndarray) -> np.ndarray:
    """Reorder (..., 10) parameters from Pinocchio order to the seed paper's order, by name."""
    return np.asarray(theta)[..., _TO_PAPER]


def from_paper_order(theta_paper: np.ndarray) -> np.ndarray:
    """Reorder (..., 10) parameters from the seed paper's order to Pinocchio order, by name."""
    return np.asarray(theta_paper)[..., _FROM_PAPER]


def _rot_inertia(theta: np.ndarray) -> np.ndarray:
    """Ī (..., 3, 3) from θ (..., 10)."""
    ixx, ixy, iyy, ixz, iyz, izz = (theta[..., k] for k in range(4, 10))
    return np.stack([np.stack([ixx, ixy, ixz], -1),
                     np.stack([ixy, iyy, iyz], -1),
                     np.stack([ixz, iyz, izz], -1)], -2)


def pseudo_inertia(theta: np.ndarray) -> np.ndarray:
    """Pseudo-inertia J (..., 4, 4) of θ (..., 10)."""
    theta = np.asarray(theta, float)
    inertia = _rot_inertia(theta)
    sigma = 0.5 * np.trace(inertia, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - inertia
    out = np.zeros(theta.shape[:-1] + (4, 4))
    out[..., :3, :3] = sigma
    out[..., :3, 3] = theta[..., 1:4]
    out[..., 3, :3] = theta[..., 1:4]
    out[..., 3, 3] = theta[..., 0]
    return out


def theta_from_pseudo_inertia(j: np.ndarray) -> np.ndarray:
    """Inverse of ``pseudo_inertia``: θ (..., 10) from J (..., 4, 4)."""
    j = np.asarray(j, float)
    sigma = j[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    return np.stack([j[..., 3, 3], j[..., 0, 3], j[..., 1, 3], j[..., 2, 3],
                     inertia[..., 0, 0], inertia[..., 0, 1], inertia[..., 1, 1],
                     inertia[..., 0, 2], inertia[..., 1, 2], inertia[..., 2, 2]], -1)


def is_physically_consistent(theta: np.ndarray, tol: float = 0.0) -> np.ndarray | bool:
    """True where the pseudo-inertia's smallest eigenvalue exceeds ``tol`` (strict consistency)."""
    eig = np.linalg.eigvalsh(pseudo_inertia(theta))[..., 0]
    out = eig > tol
    return bool(out) if np.ndim(out) == 0 else out


def _upper_factor(eta: np.ndarray) -> np.ndarray:
    """U(η) (..., 4, 4) before the e^α scale."""
    eta = np.asarray(eta, float)
    _, d1, d2, d3, s12, s23, s13, t1, t2, t3 = np.moveaxis(eta, -1, 0)
    u = np.zeros(eta.shape[:-1] + (4, 4))
    u[..., 0, 0], u[..., 1, 1], u[..., 2, 2], u[..., 3, 3] = np.exp(d1), np.exp(d2), np.exp(d3), 1.0
    u[..., 0, 1], u[..., 1, 2], u[..., 0, 2] = s12, s23, s13
    u[..., 0, 3], u[..., 1, 3], u[..., 2, 3] = t1, t2, t3
    return u


def log_cholesky(eta: np.ndarray) -> np.ndarray:
    """θ = P(η) for η (..., 10); always physically consistent."""
    eta = np.asarray(eta, float)
    u = _upper_factor(eta)
    j = np.exp(2.0 * eta[..., 0])[..., None, None] * (u @ np.swapaxes(u, -1, -2))
    return theta_from_pseudo_inertia(j)


# ∂U/∂η_k for the entries that are linear in η (k ≥ 4): a fixed position in U.
_LINEAR_POS = {4: (0, 1), 5: (1, 2), 6: (0, 2), 7: (0, 3), 8: (1, 3), 9: (2, 3)}


def log_cholesky_jacobian(eta: np.ndarray) -> np.ndarray:
    """∂P/∂η (..., 10, 10), exact: J = e^{2α} U Uᵀ, dJ = e^{2α}(dU Uᵀ + U dUᵀ) (+ 2 J dα)."""
    eta = np.asarray(eta, float)
    u = _upper_factor(eta)
    scale = np.exp(2.0 * eta[..., 0])[..., None, None]
    d_u = np.zeros(eta.shape[:-1] + (10, 4, 4))
    for k, diag in ((1, 0), (2, 1), (3, 2)):
        d_u[..., k, diag, diag] = np.exp(eta[..., k])
    for k, (r, c) in _LINEAR_POS.items():
        d_u[..., k, r, c] = 1.0
    u_b = u[..., None, :, :]
    d_j = scale[..., None, :, :] * (d_u @ np.swapaxes(u_b, -1, -2)
                                    + u_b @ np.swapaxes(d_u, -1, -2))
    d_j[..., 0, :, :] = 2.0 * scale * (u @ np.swapaxes(u, -1, -2))
    # θ is linear in J, so ∂θ/∂η_k = θ(∂J/∂η_k).
    return np.moveaxis(theta_from_pseudo_inertia(d_j), -2, -1)


def log_cholesky_inverse(theta: np.ndarray) -> np.ndarray:
    """η with P(η) = θ for a strictly consistent θ (..., 10). Raises if J is not positive definite.

    J = U Uᵀ with U upper triangular: the "reverse" Cholesky factor, obtained from the ordinary
    lower Cholesky factor of the index-reversed matrix.
    """
    j = pseudo_inertia(theta)
    flip = j[..., ::-1, ::-1]
    try:
        lower = np.linalg.cholesky(flip)
    except np.linalg.LinAlgError as exc:
        raise ValueError("θ is not strictly physically consistent (pseudo-inertia not ≻ 0)") \
            from exc
    u = lower[..., ::-1, ::-1]
    alpha = np.log(u[..., 3, 3])
    un = u / u[..., 3, 3][..., None, None]
    return np.stack([alpha, np.log(un[..., 0, 0]), np.log(un[..., 1, 1]), np.log(un[..., 2, 2]),
                     un[..., 0, 1], un[..., 1, 2], un[..., 0, 2],
                     un[..., 0, 3], un[..., 1, 3], un[..., 2, 3]], -1)


def theta_from_com_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """θ (Pinocchio order, inertia about the frame origin) from mass, centre of mass and the
    3×3 inertia about the centre of mass (the ROS/URDF convention): parallel-axis theorem."""
    c = np.asarray(com, float)
    i_o = np.asarray(inertia_com, float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([mass, *(mass * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2],
                     i_o[2, 2]])


def com_inertia_from_theta(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, 3×3 inertia about the centre of mass) from θ; the inverse of
    ``theta_from_com_inertia`` (centre of mass 0 for a massless θ)."""
    theta = np.asarray(theta, float)
    m = float(theta[0])
    c = theta[1:4] / m if m > 0 else np.zeros(3)
    return m, c, _rot_inertia(theta) - m * (c @ c * np.eye(3) - np.outer(c, c))

