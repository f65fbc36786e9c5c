"""Noise and uncertainty model of the identifier: what "the bounds hold" assumes.

Read from the ``identification:`` section of the robot facts file (``config/<robot>.yaml``),
then overridden by CLI flags / node parameters. Keys (all optional except ``prior``):

- ``torque_noise_abs`` (N·m, scalar or one per joint) and ``torque_noise_rel`` (fraction of the
  true |τ|): the measured torque τ̂ satisfies |τ̂ − τ| ≤ a + r·|τ| at every sample. Because only
  τ̂ is known, the bound is turned into one on measured quantities: |τ| ≤ |τ̂| + |τ̂ − τ| gives
  |τ̂ − τ| ≤ (a + r·|τ̂|)/(1 − r), which is what the per-row radius uses (requires r < 1).
- ``robot_uncertainty_rel``: θ_r box, radius = rel·|nominal| per parameter of every non-end-effector
  body (scalar, or one value per such body in model order). Default: the robot's
  ``model_uncertainty.links_rel``.
- friction: nominal and box from the robot's ``friction`` section; ``friction: none`` (CLI
  ``--friction none``) declares the torques link-side, so no friction/armature term enters.
- ``window`` h (samples, default 400) and ``stride`` s (default 100): windows [k·s, k·s + h].
  s must be even and divide h, so every window boundary is an even sample index where the
  coarse (every-other-sample) trapezoid used for the quadrature check is available.
- ``quadrature_safety``: factor on the trapezoid-vs-Simpson difference added to every row
  radius (0 switches the allowance off; the trapezoid rule is then trusted).
- ``max_sample_gap`` (s, default 0.005): consecutive samples further apart than this split the
  integration — no window spans the gap — because one trapezoid across missing samples (a
  dropped best-effort message, a stalled driver) is bounded by nothing the identifier states.
- ``prior``: ``lower`` / ``upper`` (10 values each, Pinocchio order) — the prior box B₀ of θ_e.
- ``cut_rounds`` / ``max_cuts`` (method ``lp-cuts``): cut-and-resolve rounds per coordinate
  bound and the cap on pseudo-inertia cuts kept (see :mod:`bounds`); they trade CPU for width,
  never soundness.
- ``online_max_rows``: the online identifier keeps only this many most recent rows (its previous
  box is the prior), so an update costs the same after an hour as after a minute.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from sysid_ros.identification.errors import IdentificationConfigError
from sysid_ros.model.robots import Robot

__all__ = ["IdentificationConfig", "load_identification_config", "payload_prior_box",
           "FRICTION_MODES"]

FRICTION_MODES = ("config", "none")


@dataclass(frozen=True)
class IdentificationConfig:
    """Every bound the identifier relies on (see module docstring). Arrays are per joint."""

    torque_noise_abs: np.ndarray
    torque_noise_rel: float
    robot_uncertainty_rel: np.ndarray          # one per non-EE body
    friction: str                              # "config" | "none"
    friction_nominal: np.ndarray               # (nj, 4) [Fc, Fv, Ia, β]
    friction_radius: np.ndarray                # (nj, 4)
    prior_lower: np.ndarray
    prior_upper: np.ndarray
    window: int = 400
    stride: int = 100
    quadrature_safety: float = 5.0
    max_sample_gap: float = 0.005
    online_max_rows: int = 1400
    cut_rounds: int = 8
    max_cuts: int = 200
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        _check(self)

    def with_overrides(self, **kw: Any) -> "IdentificationConfig":
        """A copy with some fields replaced (scalars broadcast to per-joint arrays)."""
        if "torque_noise_abs" in kw:
            kw["torque_noise_abs"] = np.broadcast_to(
                np.asarray(kw["torque_noise_abs"], float), self.torque_noise_abs.shape).copy()
        if "robot_uncertainty_rel" in kw:
            kw["robot_uncertainty_rel"] = np.broadcast_to(
                np.asarray(kw["robot_uncertainty_rel"], float),
                self.robot_uncertainty_rel.shape).copy()
        if kw.get("friction") == "none":
            kw["friction_nominal"] = np.zeros_like(self.friction_nominal)
            kw["friction_radius"] = np.zeros_like(self.friction_radius)
        return replace(self, **kw)

    def assumptions(self) -> dict[str, Any]:
        """Every bound used, JSON-ready (for result files and diagnostics)."""
        return {
            "torque_noise_abs_Nm": self.torque_noise_abs.tolist(),
            "torque_noise_rel": self.torque_noise_rel,
            "torque_noise_model": "|tau_meas - tau| <= abs + rel*|tau| per sample and joint",
            "robot_uncertainty_rel": self.robot_uncertainty_rel.tolist(),
            "friction": self.friction,
            "friction_nominal_Fc_Fv_Ia_beta": self.friction_nominal.tolist(),
            "friction_radius_Fc_Fv_Ia_beta": self.friction_radius.tolist(),
            "prior_lower": self.prior_lower.tolist(),
            "prior_upper": self.prior_upper.tolist(),
            "window": self.window,
            "stride": self.stride,
            "quadrature_safety": self.quadrature_safety,
            "max_sample_gap_s": self.max_sample_gap,
            "sampling": "windows only over runs of samples at most max_sample_gap apart",
            "positions_velocities": "exact (no noise on q, dq)",
            "velocity_sign": "dq changes sign at most once between consecutive samples",
            "rigid_grasp": "payload rigidly attached and unchanged during the data",
        }


def _fail(key: str, why: str) -> IdentificationConfigError:
    return IdentificationConfigError(f"identification.{key}: {why}")


def _check(c: IdentificationConfig) -> None:
    if np.any(~np.isfinite(c.torque_noise_abs)) or np.any(c.torque_noise_abs < 0):
        raise _fail("torque_noise_abs", "must be finite and >= 0")
    if not 0.0 <= c.torque_noise_rel < 1.0:
        raise _fail("torque_noise_rel", f"{c.torque_noise_rel} is not a fraction in [0, 1)")
    if np.all(c.torque_noise_abs == 0) and c.torque_noise_rel == 0:
        raise _fail("torque_noise_abs", "both noise bounds are zero; give a positive bound")
    if np.any(~np.isfinite(c.robot_uncertainty_rel)) or np.any(c.robot_uncertainty_rel < 0):
        raise _fail("robot_uncertainty_rel", "must be finite and >= 0")
    if c.friction not in FRICTION_MODES:
        raise _fail("friction", f"{c.friction!r} is not one of {FRICTION_MODES}")
    if c.window < 4 or c.stride < 2 or c.stride % 2 or c.window % c.stride:
        raise _fail("window", f"window={c.window}, stride={c.stride}: stride must be even, "
                    "at least 2, and divide window")
    if c.quadrature_safety < 0:
        raise _fail("quadrature_safety", "must be >= 0")
    if not c.max_sample_gap > 0:
        raise _fail("max_sample_gap", "must be > 0 (seconds)")
    if c.cut_rounds < 0 or c.max_cuts < 0:
        raise _fail("cut_rounds", f"cut_rounds={c.cut_rounds}, max_cuts={c.max_cuts}: must be >= 0")
    if c.online_max_rows < 10:
        raise _fail("online_max_rows", "must be >= 10")
    lo, hi = c.prior_lower, c.prior_upper
    if lo.shape != (10,) or hi.shape != (10,) or np.any(~np.isfinite(lo)) \
            or np.any(~np.isfinite(hi)) or np.any(lo >= hi):
        raise _fail("prior", "lower/upper must be 10 finite values each with lower < upper")


def _per_joint(raw: Any, n: int, key: str) -> np.ndarray:
    arr = np.asarray(raw, float)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    if arr.shape != (n,):
        raise _fail(key, f"expected a number or {n} numbers, got {raw!r}")
    return arr


def load_identification_config(robot: Robot, **overrides: Any) -> IdentificationConfig:
    """The robot's ``identification:`` section with ``overrides`` (None values ignored).

    Raises IdentificationConfigError naming the key for anything missing or malformed.
    """
    sec = robot.config.get("identification")
    if not isinstance(sec, dict):
        raise IdentificationConfigError(
            f"{robot.config_path}: no 'identification:' section (prior box, noise bounds)")
    prior = sec.get("prior")
    if not isinstance(prior, dict) or "lower" not in prior or "upper" not in prior:
        raise _fail("prior", "expected a mapping with 'lower' and 'upper' (10 values each)")
    n_other = robot.n_bodies - 1
    try:
        cfg = IdentificationConfig(
            torque_noise_abs=_per_joint(sec.get("torque_noise_abs", 0.0), robot.nj,
                                        "torque_noise_abs"),
            torque_noise_rel=float(sec.get("torque_noise_rel", 0.0)),
            robot_uncertainty_rel=_per_joint(
                sec.get("robot_uncertainty_rel", robot.links_rel_uncertainty), n_other,
                "robot_uncertainty_rel"),
            friction=str(sec.get("friction", "config")),
            friction_nominal=robot.friction.nominal.copy(),
            friction_radius=robot.friction.radius.copy(),
            prior_lower=np.asarray(prior["lower"], float),
            prior_upper=np.asarray(prior["upper"], float),
            window=int(sec.get("window", 400)),
            stride=int(sec.get("stride", 100)),
            quadrature_safety=float(sec.get("quadrature_safety", 5.0)),
            max_sample_gap=float(sec.get("max_sample_gap", 0.005)),
            online_max_rows=int(sec.get("online_max_rows", 1400)),
            cut_rounds=int(sec.get("cut_rounds", 8)),
            max_cuts=int(sec.get("max_cuts", 200)),
        )
    except (TypeError, ValueError) as exc:
        if isinstance(exc, IdentificationConfigError):
            raise
        raise IdentificationConfigError(f"{robot.config_path}: identification: {exc}") from exc
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if cfg.friction == "none" and "friction" not in overrides:
        overrides["friction"] = "none"
    return cfg.with_overrides(**overrides) if overrides else cfg


def payload_prior_box(theta_ee: np.ndarray, mass_max: float, com_lower: np.ndarray,
                      com_upper: np.ndarray, gyration_max: float) -> tuple[np.ndarray, np.ndarray]:
    """Box containing θ_ee + θ_payload for every rigid payload with mass in [0, mass_max],
    centre of mass in the box [com_lower, com_upper] (EE frame) and inertia about its CoM with
    eigenvalues ≤ mass·gyration_max² (a body within that radius of gyration).

    Used to derive and check the prior B₀ written in the robot configs: θ is affine in
    (m_p, m_p·c, I_c) and I_o = I_e + I_c + m_p(|c|²·1 − c·cᵀ), so each entry is bounded term by
    term (|I_c,ij| ≤ λ_max/2 off the diagonal for a PSD matrix with λ ≤ λ_max).
    """
    th = np.asarray(theta_ee, float)
    lo_c, hi_c = np.asarray(com_lower, float), np.asarray(com_upper, float)
    cmax = np.maximum(np.abs(lo_c), np.abs(hi_c))
    lam = mass_max * gyration_max**2
    lower, upper = th.copy(), th.copy()
    upper[0] += mass_max
    lower[1:4] += mass_max * np.minimum(0.0, lo_c)
    upper[1:4] += mass_max * np.maximum(0.0, hi_c)
    for k, (a, b) in {4: (0, 0), 5: (0, 1), 6: (1, 1), 7: (0, 2), 8: (1, 2), 9: (2, 2)}.items():
        if a == b:
            others = [i for i in range(3) if i != a]
            # the lower end stays at θ_ee: I_c ⪰ 0 and m_p·|c_⊥|² ≥ 0 only add
            upper[k] += lam + mass_max * float(np.sum(cmax[others] ** 2))
        else:
            span = lam / 2 + mass_max * cmax[a] * cmax[b]
            lower[k] -= span
            upper[k] += span
    return lower, upper
