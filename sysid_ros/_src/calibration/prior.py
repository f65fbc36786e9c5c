"""The prior box of every calibrated quantity: what the calibration assumes before any data.

x = [θ (10 per body, Pinocchio order, all bodies) | φ (per joint [Fc, Fv, Ia, β]) | ψ (the
coefficients of adopted extra friction terms, :meth:`Prior.with_terms`; none by default) | v (one
per joint with a stated torque-gain bound)]:

- bodies: the URDF value ± ``link_rel``·|value| per parameter (the identifier's own convention
  for θ_r; default the robot file's ``model_uncertainty.links_rel``). A parameter that is 0 in
  the URDF keeps a zero-width box, as it does for the identifier. The end-effector body (with the
  known payload, if any, added to its URDF value) is in the same relative box: a calibration run
  carries no unknown payload. This is S0's prior turned into a set: the truth is assumed inside;
  a Gaussian prior centred on the URDF with σ = the half-width is what the point estimate uses.
- friction: the robot file's ``identification.friction_wide`` box (``friction_prior='wide'``,
  the box for a robot nobody has calibrated: Fc ∈ [0, abs], β ∈ ±abs, Fv and Ia ± rel) or its
  catalogue box (``'config'``). Fc, Fv and Ia are never negative.
- torque gain: v_j ∈ [−1, 1], the reading's gain error in units of its stated bound
  (``identification.torque_gain_rel``; :mod:`.rows`), nominal 0.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sysid_ros._src.identification.config import load_identification_config
from sysid_ros._src.model.robots import Robot

__all__ = ["Prior", "calibration_prior", "named_payload"]

FRICTION_PRIORS = ("wide", "config")


@dataclass(frozen=True)
class Prior:
    """Box [lower, upper] of x = [θ | φ | ψ | v] and what it was made of (for the provenance)."""

    lower: np.ndarray
    upper: np.ndarray
    nominal: np.ndarray
    n_theta: int
    link_rel: float
    friction_prior: str
    payload_theta: np.ndarray | None = None
    ee_prior: str | None = None        # name of the end-effector body's box (an unknown tool)
    terms: tuple[str, ...] = ()        # extra friction terms whose coefficients ψ follow φ
    gain_joints: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  # joints with v_j

    @property
    def n_gain(self) -> int:
        return int(self.gain_joints.size)

    @property
    def n_model(self) -> int:
        """Columns of the model [θ | φ | ψ]: the gain unknowns v follow them."""
        return int(self.lower.size) - self.n_gain

    def with_terms(self, names: Sequence[str], half_width: np.ndarray) -> Prior:
        """The prior with the coefficients of terms ``names`` appended to the model's columns
        (joint-major, the layout of :mod:`.rows`; before the gain unknowns), each in
        ±``half_width`` (nj, width) around 0."""
        h = np.asarray(half_width, float).reshape(-1)
        k = self.n_model
        ins = lambda v, x: np.concatenate([v[:k], x, v[k:]])  # noqa: E731
        return replace(self, lower=ins(self.lower, -h), upper=ins(self.upper, h),
                       nominal=ins(self.nominal, np.zeros_like(h)),
                       terms=(*self.terms, *names))

    @property
    def theta_abs_max(self) -> np.ndarray:
        """Largest |θ| in the box (the quadrature allowance uses θ at its box edge)."""
        n = self.n_theta
        return np.maximum(np.abs(self.lower[:n]), np.abs(self.upper[:n]))

    def describe(self) -> str:
        payload = "" if self.payload_theta is None else \
            f", known payload of {self.payload_theta[0]:.3f} kg in the end-effector body"
        ee = "" if self.ee_prior is None else \
            f", end-effector body (unknown tool) in the prior '{self.ee_prior}'"
        terms = "" if not self.terms else (
            f", extra friction terms {', '.join(self.terms)}, each coefficient within a torque "
            "scale per unit of its feature's RMS over the calibration data")
        gain = "" if not self.n_gain else \
            f", torque-reading gain error within its stated bound on {self.n_gain} joint(s)"
        return (f"links URDF ± {100 * self.link_rel:g} % per parameter, friction "
                f"'{self.friction_prior}' box{payload}{ee}{terms}{gain}")


def named_payload(robot: Robot, spec: str) -> tuple[np.ndarray, np.ndarray]:
    """A catalogued payload as (θ_p, radius): a prior of the robot file (or a YAML file), whose
    box holds the end-effector body *with* that payload, minus the URDF's end-effector body.
    Assumes, as such a prior does, that the end-effector body is the URDF's."""
    box = load_identification_config(robot, prior=spec).prior
    return 0.5 * (box.lower + box.upper) - robot.theta_e(), 0.5 * (box.upper - box.lower)


def calibration_prior(robot: Robot, link_rel: float | None = None, friction_prior: str = "wide",
                      payload_theta: np.ndarray | None = None,
                      ee_prior: str | None = None,
                      torque_gain_rel: np.ndarray | None = None) -> Prior:
    """The prior box (module docstring). ``payload_theta`` (10,): a known payload's parameters
    in the end-effector joint frame (Pinocchio order), added to that body's URDF value.
    ``ee_prior``: a prior name of the robot file or a YAML file (as ``sysid-identify --prior``)
    whose box replaces the end-effector body's, for a tool the URDF does not describe.
    ``torque_gain_rel`` (nj,): the stated gain bounds; joints with one > 0 get a gain unknown."""
    if ee_prior is not None and payload_theta is not None:
        raise ValueError("a known payload (payload_theta) and an end-effector prior box "
                         "exclude each other: the prior box already holds any tool and payload")
    if friction_prior not in FRICTION_PRIORS:
        raise ValueError(f"friction prior {friction_prior!r} is not one of {FRICTION_PRIORS}")
    rel = robot.links_rel_uncertainty if link_rel is None else float(link_rel)
    if not (np.isfinite(rel) and 0.0 <= rel < 1.0):
        raise ValueError(f"link prior: relative uncertainty {rel!r} is not in [0, 1)")
    theta = robot.theta().copy()
    if payload_theta is not None:
        payload_theta = np.asarray(payload_theta, float)
        if payload_theta.shape != (10,) or not np.all(np.isfinite(payload_theta)):
            raise ValueError("payload: expected 10 finite parameters")
        theta[robot.ee_columns] += payload_theta
    rad = rel * np.abs(theta)
    lower, upper = theta - rad, theta + rad
    cfg = load_identification_config(robot, friction=friction_prior, prior=ee_prior)
    if ee_prior is not None:
        ee = robot.ee_columns
        lower[ee], upper[ee] = cfg.prior.lower, cfg.prior.upper
        theta[ee] = np.clip(theta[ee], cfg.prior.lower, cfg.prior.upper)
    f_lo, f_hi = cfg.friction_lower.copy(), cfg.friction_upper.copy()
    f_lo[:, :3] = np.maximum(f_lo[:, :3], 0.0)
    f_nom = np.clip(robot.friction.nominal, f_lo, f_hi)
    gains = np.zeros(0, int) if torque_gain_rel is None else \
        np.flatnonzero(np.asarray(torque_gain_rel, float) > 0)
    unit = np.ones(gains.size)
    return Prior(np.concatenate([lower, f_lo.reshape(-1), -unit]),
                 np.concatenate([upper, f_hi.reshape(-1), unit]),
                 np.concatenate([theta, f_nom.reshape(-1), 0.0 * unit]), theta.size, rel,
                 friction_prior, payload_theta, None if ee_prior is None else cfg.prior_name,
                 gain_joints=gains)
