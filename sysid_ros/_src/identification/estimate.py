"""Physically consistent point estimate θ_0 = P(η*) (S3-25) by Ipopt (cyipopt).

η* = argmin_η ½‖D(Y·P(η) − U^c)‖² + ½λ‖P(η) − θ_ref‖², with P the log-Cholesky map (every η
gives a physically consistent θ), D = diag(1/r) (rows weighted by their uncertainty radius) and a
small λ = 1e-6·‖DY‖²_F/10 that only decides the directions the data do not excite (θ_ref: the
nominal EE body). Gradient exact: Jᵀ(YᵀD²(YP − U) + λ(P − θ_ref)) with J = ∂P/∂η; the Hessian
is the central difference of that exact gradient (10 evaluations of a 10×10 problem, accurate to
~1e-8 relative, which is what Newton steps need; the problem is only 10-dimensional).
``least_squares_reference`` solves the same problem
with SciPy (trust-region reflective on the stacked residual) for cross-checking.

With ``bounds`` (the prior B₀, a stated assumption every box rests on) an η* whose θ falls outside
B₀ is re-solved with lower ≤ P(η) ≤ upper as Ipopt constraints, so the estimate uses the same
knowledge as the box; inside B₀ the two problems coincide.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sysid_ros._src.model.parameters import is_physically_consistent, log_cholesky, \
    log_cholesky_inverse, log_cholesky_jacobian

__all__ = ["PointEstimate", "estimate_theta", "least_squares_reference", "ls_objective"]


@dataclass(frozen=True)
class PointEstimate:
    theta: np.ndarray
    eta: np.ndarray
    cost: float
    success: bool


def _weighted(Y: np.ndarray, U: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    d = 1.0 / np.maximum(r, 1e-12)
    A, b = Y * d[:, None], U * d
    lam = 1e-6 * float(np.sum(A * A)) / 10.0
    return A, b, max(lam, 1e-12)


def _start(theta_ref: np.ndarray) -> np.ndarray:
    ref = np.asarray(theta_ref, float)
    if not is_physically_consistent(ref, 1e-12):
        ref = np.array([1.0, 0, 0, 0, 1e-2, 0, 1e-2, 0, 0, 1e-2])
    return log_cholesky_inverse(ref)


def ls_objective(A: np.ndarray, b: np.ndarray, lam: float, theta_ref: np.ndarray
                 ) -> tuple[Callable[[np.ndarray], float], Callable[[np.ndarray], np.ndarray]]:
    """(f, ∇f) of the weighted problem in η (exact gradient)."""
    def f(eta: np.ndarray) -> float:
        with np.errstate(over="ignore", invalid="ignore"):
            th = log_cholesky(eta)
        res = A @ th - b
        reg = th - theta_ref
        return 0.5 * float(res @ res) + 0.5 * lam * float(reg @ reg)

    def grad(eta: np.ndarray) -> np.ndarray:
        th = log_cholesky(eta)
        J = log_cholesky_jacobian(eta)
        return J.T @ (A.T @ (A @ th - b) + lam * (th - theta_ref))

    return f, grad


class _GramProblem:
    """Ipopt's callbacks for the weighted problem in η, in Gram form (G = AᵀA, g = Aᵀb, c0 = bᵀb:
    each evaluation O(100) whatever the number of rows). With ``bounds`` set, θ = P(η) itself is
    the constraint vector (m = 10, dense Jacobian ∂P/∂η)."""

    def __init__(self, G: np.ndarray, g: np.ndarray, c0: float, lam: float,
                 theta_ref: np.ndarray) -> None:
        self.G, self.g, self.c0, self.lam, self.theta_ref = G, g, c0, lam, theta_ref
        self.bounds: tuple[np.ndarray, np.ndarray] | None = None

    def objective(self, eta: np.ndarray) -> float:
        th = log_cholesky(eta)
        reg = th - self.theta_ref
        return (0.5 * float(th @ self.G @ th - 2 * self.g @ th + self.c0)
                + 0.5 * self.lam * float(reg @ reg))

    def gradient(self, eta: np.ndarray) -> np.ndarray:
        """∇f at η, or at each row of a (k, 10) batch of η (log_cholesky works on batches)."""
        th = log_cholesky(eta)
        v = th @ self.G - self.g + self.lam * (th - self.theta_ref)        # G symmetric
        return np.einsum("...ji,...j->...i", log_cholesky_jacobian(eta), v)

    def constraints(self, eta: np.ndarray) -> np.ndarray:
        return log_cholesky(eta)

    def jacobian(self, eta: np.ndarray) -> np.ndarray:
        return log_cholesky_jacobian(eta).ravel()

    def hessianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return np.tril_indices(10)

    def hessian(self, eta: np.ndarray, lagrange: np.ndarray, obj_factor: float) -> np.ndarray:
        """Central differences of the Lagrangian's exact gradient, the 20 points in one batched
        evaluation (the identifier's update worker calls this on every nominal update)."""
        eps = 1e-6 * np.maximum(1.0, np.abs(eta))
        step = np.diag(eps)
        points = np.concatenate([eta + step, eta - step])
        g = obj_factor * self.gradient(points)
        if self.bounds is not None:
            g = g + np.einsum("kji,j->ki", log_cholesky_jacobian(points), lagrange)
        H = (g[:10] - g[10:]) / (2 * eps[:, None])
        H = 0.5 * (H + H.T)
        return H[np.tril_indices(10)]


def estimate_theta(Y: np.ndarray, U: np.ndarray, r: np.ndarray, theta_ref: np.ndarray,
                   max_iter: int = 200, tol: float = 1e-10,
                   bounds: tuple[np.ndarray, np.ndarray] | None = None) -> PointEstimate:
    """Solve for η* with Ipopt; falls back to the start point if Ipopt fails to move. With
    ``bounds`` (lower, upper) on θ, an estimate outside them is re-solved within them."""
    A, b, lam = _weighted(Y, U, r)
    theta_ref = np.asarray(theta_ref, float)
    f, _ = ls_objective(A, b, lam, theta_ref)
    problem = _GramProblem(A.T @ A, A.T @ b, float(b @ b), lam, theta_ref)
    eta, ok = _solve(problem, _start(theta_ref), max_iter, tol)
    theta = log_cholesky(eta)
    if bounds is not None and not (np.all(theta >= bounds[0]) and np.all(theta <= bounds[1])):
        problem.bounds = (np.asarray(bounds[0], float), np.asarray(bounds[1], float))
        start = _start(np.clip(theta, *problem.bounds))
        eta, ok = _solve(problem, start, max_iter, tol)
        theta = log_cholesky(eta)
    return PointEstimate(theta, eta, f(eta), ok)


def _solve(problem: _GramProblem, eta0: np.ndarray, max_iter: int, tol: float
           ) -> tuple[np.ndarray, bool]:
    import cyipopt

    lo, hi = problem.bounds if problem.bounds is not None else (np.zeros(0), np.zeros(0))
    nlp = cyipopt.Problem(n=10, m=lo.size, problem_obj=problem, lb=np.full(10, -1e19),
                          ub=np.full(10, 1e19), cl=lo, cu=hi)
    nlp.add_option("print_level", 0)
    nlp.add_option("sb", "yes")
    nlp.add_option("max_iter", max_iter)
    nlp.add_option("tol", tol)
    with np.errstate(over="ignore", invalid="ignore"):
        eta, info = nlp.solve(eta0)
    return np.asarray(eta), info["status"] in (0, 1)


def least_squares_reference(Y: np.ndarray, U: np.ndarray, r: np.ndarray,
                            theta_ref: np.ndarray, eta0: np.ndarray | None = None
                            ) -> PointEstimate:
    """Same problem with ``scipy.optimize.least_squares`` (Levenberg–Marquardt; for tests)."""
    from scipy.optimize import least_squares

    A, b, lam = _weighted(Y, U, r)
    theta_ref = np.asarray(theta_ref, float)
    s = np.sqrt(lam)

    def res(eta: np.ndarray) -> np.ndarray:
        th = log_cholesky(eta)
        return np.concatenate([A @ th - b, s * (th - theta_ref)])

    def jac(eta: np.ndarray) -> np.ndarray:
        J = log_cholesky_jacobian(eta)
        return np.vstack([A @ J, s * J])

    with np.errstate(over="ignore", invalid="ignore"):
        sol = least_squares(res, _start(theta_ref) if eta0 is None else eta0, jac=jac, method="lm",
                            xtol=1e-15, ftol=1e-15,
                            gtol=1e-15, max_nfev=20000)
    f, _ = ls_objective(A, b, lam, theta_ref)
    return PointEstimate(log_cholesky(sol.x), sol.x, f(sol.x), bool(sol.success))
