"""The seed paper's bound (S3 Theorem 13), kept for comparison — not a sound method.

θ*(m) = P(η*(m)) with η* the minimiser of the weighted least squares of :mod:`estimate`; by the
implicit-function theorem ∂η*/∂U = H⁻¹(∂P/∂η)ᵀYᵀD² (S3-42/44 with the transposes fixed), H the
Hessian at η*. The mean-value form evaluated at the nominal point gives
θ ∈ θ* ± |∂θ*/∂U|·r, treating each row's uncertainty (radius r from :mod:`windows`) as an
independent perturbation of U. It linearises at one point, so it can miss the truth; the
benchmark reports how often.

Simplification against S3 (documented, not fixed): the paper differentiates with respect to the
primitive uncertain quantities m = (τ samples, θ_r) and bounds |∂θ*/∂m|·rad(m). Here each row's
radius r_w is treated as its own independent perturbation of U_w, i.e. |∂θ*/∂U|·r. Overlapping
windows share torque samples and every row shares θ_r, so shared sources are counted once per
row instead of once (larger radius where the row sensitivities have the same sign, while
sign-cancellations the chain rule through m would expose are lost). Either way it is a
first-order (mean-value at one point) estimate without the sound guarantee of ``lp``/``lp-cuts``.
"""
from __future__ import annotations

import numpy as np

from sysid_ros._src.identification.feasible_set import OK, INSUFFICIENT, BoxResult
from sysid_ros._src.identification.estimate import _weighted, estimate_theta, ls_objective
from sysid_ros._src.identification.problem import PayloadRows
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.parameters import log_cholesky_jacobian

__all__ = ["sensitivity_box"]


def sensitivity_box(rows: PayloadRows, prior: ParameterBox, theta_ref: np.ndarray) -> BoxResult:
    """θ* ± |∂θ*/∂U|·r within the θ_e box ``prior``; the box's nominal is θ* (clipped into the
    box, which it leaves only when θ* is outside the prior), its frame the prior's. Insufficient
    data: the prior, nominal its centre."""
    if len(rows) == 0:
        return BoxResult(INSUFFICIENT, theta_e_box(prior.lower, prior.upper, frame=prior.frame))
    est = estimate_theta(rows.A, rows.c, rows.r, theta_ref)
    A, b, lam = _weighted(rows.A, rows.c, rows.r)
    _, grad = ls_objective(A, b, lam, np.asarray(theta_ref, float))
    eta = est.eta
    eps = 1e-6 * np.maximum(1.0, np.abs(eta))
    H = np.array([(grad(eta + e) - grad(eta - e)) / (2 * e[k])
                  for k, e in enumerate(np.diag(eps))])
    H = 0.5 * (H + H.T)
    J = log_cholesky_jacobian(eta)
    d2 = 1.0 / np.maximum(rows.r, 1e-12) ** 2
    sens = J @ np.linalg.solve(H, J.T @ (rows.A * d2[:, None]).T)     # ∂θ*/∂U (10, rows)
    rad = np.abs(sens) @ rows.r
    lower = np.maximum(est.theta - rad, prior.lower)
    upper = np.minimum(est.theta + rad, prior.upper)
    return BoxResult(OK, theta_e_box(lower, upper, np.clip(est.theta, lower, upper),
                                     frame=prior.frame))
