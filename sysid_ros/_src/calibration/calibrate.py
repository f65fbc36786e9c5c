"""The calibration: bags of the robot moving without payload → bounds the identifier can rest on.

Steps (each an assumption-carrying result, see :class:`CalibrationResult.assumptions`):

1. **Rows.** Momentum windows (:mod:`sysid_ros._src.identification.windows`) of every recording with
   the identifier's own window length, stride, Coulomb band and quadrature allowance, turned into
   two-sided linear rows in all body parameters θ and all friction coefficients φ
   (:mod:`.rows`). No accelerations.
2. **Noise bound.** δ* = the smallest per-joint bounds on the window-averaged torque error that
   make *all* rows consistent with some (θ, φ) in the prior box (:mod:`.prior`; one LP,
   min Σ δ_j with δ_j ≥ p_j, p the joints' mean errors in the best L1 fit —
   :func:`.lp.min_noise`: without that floor the LP could trade joints against each other
   through the shared parameters down to δ_j = 0). The written bound is δ = margin·δ* + floor: δ* is a *lower* bound of
   what the truth needs (the LP picks the parameters that explain the data best, which fit part
   of the noise), and new data reach further into the tails than the calibration data did. If
   some δ*_j exceeds ``max_noise_frac`` of the joint's torque limit, the prior boxes cannot
   explain the data: :class:`~.errors.CalibrationInconsistentError`. With ``noise_speed`` the
   rows' noise term is δ_j·(1 + κ_j·v) at the window's mean |speed| v, κ the shape of the
   smallest speed-dependent envelope (:func:`.lp.noise_speed_shape`): δ*, margin and floor then
   apply to it as above, and the file carries δ0 = δ and δ1 = margin·δ*·κ.
3. **Boxes.** Under δ, min and max of every friction coefficient over the polytope (2·4·nj LPs,
   one warm-started HiGHS model) and, with ``link_boxes``, of every body parameter except the
   end effector's (which is identified online). Where the data do not tighten a body's box
   beyond ``link_tighten`` of its width, the prior box stays and the body is not written.
4. **Nominal.** MAP estimate inside those boxes with pseudo-inertia LMIs and robust (IRLS)
   weights (:mod:`.map_estimate`), optionally with energy rows (:mod:`.energy`); the Stribeck
   law (:mod:`.stribeck`) is fitted afterwards for prediction only.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.errors import CalibrationInconsistentError, CalibrationInputError
from sysid_ros._src.calibration.exclusion import speed_clamps
from sysid_ros._src.calibration.lp import BoxLP, scale_rows, min_noise, noise_speed_shape
from sysid_ros._src.calibration.map_estimate import ROBUST_LOSSES, LinearRows, map_estimate
from sysid_ros._src.calibration.prior import FRICTION_PRIORS, Prior, calibration_prior
from sysid_ros._src.calibration.rows import build_rows
from sysid_ros._src.calibration.terms import TermSelection, adoptable, select_terms, term_prior
from sysid_ros._src.calibration.timing import LagEstimate, estimate_torque_lag, \
    estimate_velocity_lag
from sysid_ros._src.identification.calibration_constraints import CalibrationConstraints, \
    CalibrationRows, column_names, friction_column
from sysid_ros._src.identification.config import IdentificationConfig, load_identification_config
from sysid_ros._src.identification.errors import IdentificationError
from sysid_ros._src.identification.transients import Transient, find_transients, transient_note, \
    with_radius_share
from sysid_ros._src.identification.windows import MomentumWindows
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.parameters import is_physically_consistent
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot

__all__ = ["CalibrationOptions", "CalibrationResult", "calibrate", "calibration_stages",
           "calibration_rows", "TORQUE_LAG_MODES", "FRICTION_LAWS", "window_config",
           "exported_rows"]

FRICTION_LAWS = ("linear", "stribeck")
_LP_SLACK = 1e-6


TORQUE_LAG_MODES = ("estimate", "none")


@dataclass(frozen=True)
class CalibrationOptions:
    """Every setting of a calibration run (units in the names; None = the robot file's value).

    Attributes:
        window_s, stride_s: momentum windows (s). The noise bound is only meaningful for the
            same windows, so they are written into the calibration file and the identifier
            uses them. Default 0.4 s every 0.1 s rather than the robot file's 0.1/0.025: the
            error a window must allow is dominated by velocity noise through the large
            armature (Ia·Δq̇ error, independent of the window's length), so longer windows
            make it a smaller fraction of the signal — measured on hardware-like Gen3 data
            (docs/guide/calibrate.md): narrower payload boxes, a smaller margin needed, 3-4x
            less LP work. None = the robot file's value.
        coulomb_band, quadrature_safety: the identifier's allowances (None: robot file).
        torque_noise_rel: the relative part of the noise model kept from the robot file; the
            calibration measures the absolute part per joint.
        link_rel: prior half-width of every body parameter, relative (default: the robot file's
            ``model_uncertainty.links_rel``).
        friction_prior: ``wide`` (uncalibrated box) or ``config`` (catalogue box).
        margin, noise_floor: δ = margin·δ* + noise_floor (N·m).
        max_noise_frac: δ*_j above this fraction of joint j's torque limit means the prior
            cannot explain the data (inconsistent).
        link_boxes: compute the LP box of every body parameter (2 LPs each).
        link_tighten: a body is written only if some parameter's box shrank below
            (1 − link_tighten) of its prior width.
        friction_law: ``linear`` (boxes and nominal) or ``stribeck`` (additionally a smooth
            Stribeck fit used for prediction).
        energy: add energy (power-balance) rows to the point estimate.
        robust: IRLS loss of the point estimate (``huber``, ``cauchy``, ``none``).
        payload_theta: (10,) a known payload in the end-effector body (None: no payload).
        ee_prior: a prior name or file whose box is the end-effector body's (an unknown tool;
            excludes ``payload_theta``).
        torque_lag: ``estimate`` (per-joint lag of the torque stream behind the states, with
            its radius: :mod:`.timing`) or ``none`` (the streams are taken as aligned).
        velocity_lag: ``estimate`` (per-joint lag of the measured velocity behind the positions,
            :func:`.timing.estimate_velocity_lag`), ``none``, or (nj,) known lags (s) of the
            driver's velocity filter.
        exclude_speed: ``auto`` (clamp plateaus found in the data, :mod:`.exclusion`),
            ``none``, or (nj,) speeds (rad/s) at which each joint's rows are dropped.
        exclude_speed_frac: with ``auto``, rows are dropped from this fraction of the clamp.
        exclude_after_start_s: rows of windows starting this soon after a run's start are
            dropped (s).
        terms: judge the extra friction/actuation terms by cross-validation (:mod:`.terms`),
            report which earned their place and adopt those that are functions of the joint's
            state: their coefficients are calibrated with boxes like the four of the law.
        torque_gain_rel: the stated bound g_j on the torque reading's gain error (scalar or
            per joint; None: the robot file's ``identification.torque_gain_rel``). Each joint
            with g_j > 0 gets one gain unknown shared by all its rows (:mod:`.rows`). Without a
            payload its box stays near the stated bound (scaling every parameter fits unloaded
            data as well); with a known one (``payload_theta`` or ``ee_prior`` a catalogued
            payload's box) the data measure it, and the file carries the measured box.
        noise_speed: a speed-dependent noise bound δ0_j + δ1_j·v_w, v_w the window's mean
            |speed| (∫|q̇| dt/T), instead of a constant one: its shape κ_j = δ1_j/δ0_j is the smallest
            envelope of the rows (:func:`.lp.noise_speed_shape`), its scale is measured and
            given its margin as the constant bound's is (κ = 0 is the constant bound).
    """

    window_s: float | None = 0.4
    stride_s: float | None = 0.1
    coulomb_band: float | None = None
    quadrature_safety: float | None = None
    torque_noise_rel: float | None = None
    link_rel: float | None = None
    friction_prior: str = "wide"
    margin: float = 1.25
    noise_floor: float = 0.02
    max_noise_frac: float = 0.1
    link_boxes: bool = True
    link_tighten: float = 0.01
    friction_law: str = "linear"
    energy: bool = False
    robust: str = "huber"
    payload_theta: np.ndarray | None = None
    ee_prior: str | None = None
    torque_lag: str = "estimate"
    velocity_lag: str | np.ndarray = "estimate"
    exclude_speed: str | np.ndarray = "auto"
    exclude_speed_frac: float = 0.9
    exclude_after_start_s: float = 0.2
    terms: bool = True
    torque_gain_rel: float | np.ndarray | None = None
    noise_speed: bool = False

    def check(self) -> None:
        if self.torque_lag not in TORQUE_LAG_MODES:
            raise CalibrationInputError(f"torque lag {self.torque_lag!r} is not one of "
                                        f"{TORQUE_LAG_MODES}")
        if isinstance(self.velocity_lag, str) and self.velocity_lag not in ("estimate", "none"):
            raise CalibrationInputError(f"velocity lag {self.velocity_lag!r}: expected estimate, "
                                        "none or one lag per joint (s)")
        if isinstance(self.exclude_speed, str) and self.exclude_speed not in ("auto", "none"):
            raise CalibrationInputError(f"exclude speed {self.exclude_speed!r}: expected auto, "
                                        "none or one speed per joint (rad/s)")
        if not 0.0 < self.exclude_speed_frac <= 1.0:
            raise CalibrationInputError(f"exclude speed fraction {self.exclude_speed_frac} must "
                                        "be in (0, 1]")
        if not (np.isfinite(self.exclude_after_start_s) and self.exclude_after_start_s >= 0):
            raise CalibrationInputError(f"exclude after start {self.exclude_after_start_s} s "
                                        "must be >= 0")
        if not self.margin >= 1.0:
            raise CalibrationInputError(f"margin {self.margin} must be >= 1")
        if not self.noise_floor >= 0.0:
            raise CalibrationInputError(f"noise floor {self.noise_floor} must be >= 0 N·m")
        if not 0.0 < self.max_noise_frac:
            raise CalibrationInputError("max_noise_frac must be > 0")
        if self.friction_prior not in FRICTION_PRIORS:
            raise CalibrationInputError(f"friction prior {self.friction_prior!r} is not one of "
                                        f"{FRICTION_PRIORS}")
        if self.friction_law not in FRICTION_LAWS:
            raise CalibrationInputError(f"friction law {self.friction_law!r} is not one of "
                                        f"{FRICTION_LAWS}")
        if self.robust not in ROBUST_LOSSES:
            raise CalibrationInputError(f"robust loss {self.robust!r} is not one of "
                                        f"{ROBUST_LOSSES}")


@dataclass
class CalibrationResult:
    """What a calibration measured. Friction arrays are (nj, 4) [Fc, Fv, Ia, β]; link arrays
    are (10·n_bodies,) in Pinocchio order (the end-effector body's entries are its prior)."""

    robot: Robot
    options: CalibrationOptions
    config: IdentificationConfig           # the windows/allowances the rows were built with
    prior: Prior
    rows: CalibrationRows
    recordings: list[Recording]
    noise_min: np.ndarray                  # δ* (N·m)
    noise_profile: np.ndarray              # mean window error per joint, best L1 fit (N·m)
    noise: np.ndarray                      # δ written (N·m)
    friction_lower: np.ndarray
    friction_upper: np.ndarray
    friction_nominal: np.ndarray
    link_lower: np.ndarray
    link_upper: np.ndarray
    link_nominal: np.ndarray
    links_written: list[str]
    x_nominal: np.ndarray
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stribeck: Any = None                   # stribeck.StribeckFit or None
    robust_weights: np.ndarray | None = None
    torque_lag: LagEstimate | None = None  # the torque stream's lag, when estimated
    excluded: dict[str, Any] = field(default_factory=dict)  # rows the exclusion rule dropped
    margin: np.ndarray | None = None       # (nj,) factor on δ*: options.margin or hold-out
    #: (nj,) δ1 written (N·m per rad/s): the bound is noise + noise_speed·mean |speed|
    noise_speed: np.ndarray | None = None
    terms: Any = None                      # terms.TermSelection or None
    friction_terms: FrictionTerms | None = None  # adopted extra terms with calibrated boxes
    #: torque samples beyond the stated bounds, absorbed by the quadrature allowance
    transients: list[Transient] = field(default_factory=list)
    #: (lower, upper) of the gain unknowns v (one per ``prior.gain_joints``), or None
    gain_box: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def torque_gain_box(self) -> tuple[np.ndarray, np.ndarray]:
        """(nj,) lower and upper bounds of the true gain k_j of the torque reading (true torque
        = k_j·τ̂): torque_gain_j·(1 + g_j·v_j) over the calibrated box of v; the stated gain
        where no bound was stated."""
        c = self.config
        lo, hi = c.torque_gain.copy(), c.torque_gain.copy()
        if self.gain_box is not None:
            j = self.prior.gain_joints
            g = c.torque_gain_rel[j]
            lo[j] = c.torque_gain[j] * (1.0 + g * self.gain_box[0])
            hi[j] = c.torque_gain[j] * (1.0 + g * self.gain_box[1])
        return lo, hi

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of the whole x = [θ | φ | ψ | v] as calibrated (:mod:`.rows`)."""
        lo = [self.link_lower, self.friction_lower.reshape(-1)]
        hi = [self.link_upper, self.friction_upper.reshape(-1)]
        if self.friction_terms is not None:
            lo.append(self.friction_terms.lower.reshape(-1))
            hi.append(self.friction_terms.upper.reshape(-1))
        if self.gain_box is not None:
            lo.append(self.gain_box[0])
            hi.append(self.gain_box[1])
        return np.concatenate(lo), np.concatenate(hi)

    @property
    def joint_names(self) -> list[str]:
        return list(self.robot.joint_names)

    def document(self) -> dict[str, Any]:
        """The calib.yaml mapping ``sysid-calibrate`` writes: pass it (or the written file) to
        ``sysid_ros.apply_calibration`` or ``load_robot(name, calibration=...)``."""
        return calibration_document(self)

    def assumptions(self) -> list[str]:
        """The statements the written bounds rest on (copied into the file's provenance)."""
        o, c = self.options, self.config
        return [
            f"prior: {self.prior.describe()}; the truth lies inside it",
            "friction law tau_f = Fc*sigma(dq) + Fv*dq + Ia*ddq + beta with Fc >= 0"
            + ("" if c.friction_terms is None else
               " + the adopted terms " + " + ".join(f"psi*{col}" for col in c.friction_terms.columns)
               + " (one coefficient psi per joint and column)")
            + f"; sigma = sign(dq) outside |dq| <= {c.coulomb_band} rad/s, anything in [-1, 1] "
            "inside",
            f"torque_noise_abs bounds the window-averaged torque error |int (tau_meas - tau) dt|"
            f"/T over windows of {c.window_s} s beyond the quadrature allowance "
            f"({c.quadrature_safety} x |Simpson - trapezoid|) and the relative part "
            f"{c.torque_noise_rel} x |tau|: it is NOT a per-sample bound, so use it only with "
            "the window_s/stride_s written next to it",
            *(["the window-averaged torque error is within torque_noise_abs + "
               "torque_noise_speed x the mean |speed| over the window (a speed-dependent bound "
               "whose shape is the smallest envelope of the calibration windows: speeds beyond "
               "theirs extrapolate it)"] if self.noise_speed is not None else []),
            f"noise bound = {o.margin} x the smallest consistent bound + {o.noise_floor} N*m: "
            "an empirical margin for parameter fitting and for tails the calibration data did "
            "not reach, not a proof",
            "the bound absorbs every unmodelled effect present in the calibration data "
            "(velocity noise through the armature term, soft dry friction, stamp jitter, "
            "sensor non-linearity); data with larger such effects (other speeds, temperatures, "
            "a different velocity filter) can exceed it",
            f"velocities: {', '.join(sorted({r.velocity_source for r in self.recordings}))} "
            "(the identifier must be fed velocities from the same source)",
            "rigid bodies, no payload other than the stated one, no contact with the "
            "environment during the calibration motions",
            "torque reading's gain: true torque = k_j x tau_meas with k_j in "
            f"{c.torque_gain.tolist()} x (1 +- {c.torque_gain_rel.tolist()}) (one constant per "
            "joint); an unstated gain error is absorbed into scaled parameters without a trace",
        ]


def exported_rows(result: CalibrationResult) -> CalibrationConstraints:
    """The calibration's rows with the written noise bound (its speed part included), for the
    identifier's LP (:mod:`sysid_ros._src.identification.calibration_constraints`;
    ``sysid-calibrate --export-rows``): the
    rows keep what the boxes forget — base-parameter combinations of the links and the offsets
    jointly with link gravity. The end-effector body's box is the calibration prior's (with a
    stated payload, if any)."""
    robot, rows, prior = result.robot, result.rows.with_timing(), result.prior
    if result.noise_speed is not None:
        # the written bound δ0 + δ1·v at each window's mean |speed| v, as the rows were solved
        rows = rows.with_noise_speed(np.divide(result.noise_speed, result.noise,
                                               out=np.zeros(robot.nj), where=result.noise > 0))
    # the identifier's calibration-time end-effector body is the one without a payload: rows of
    # recordings that carried a known payload stay behind
    loaded = [k for k, r in enumerate(result.recordings) if r.payload_theta is not None]
    rows = rows.take(~np.isin(rows.source, loaded))
    ee = robot.ee_columns
    c = result.config
    # the reading as recorded, its bounds on the reading: the identifier applies its own gain
    # (the same robot's, with the calibrated box) and the gain unknowns are its
    gain, big = c.torque_gain[rows.joint], c.gain_max[rows.joint]
    n_cols = prior.n_model                    # [θ | φ | ψ]: the gain unknowns stay behind
    info = {"window_s": c.window_s, "stride_s": c.stride_s, "coulomb_band": c.coulomb_band,
            "quadrature_safety": c.quadrature_safety, "torque_noise_rel": c.torque_noise_rel,
            "recordings": [r.name for r in result.recordings],
            "noise_min_Nm": result.noise_min.tolist(), "prior": prior.describe(),
            "assumptions": result.assumptions()}
    model_rows = replace(rows, A=rows.A[:, :n_cols].tocsr(), c=rows.c / gain,
                         r_fixed=rows.r_fixed / big, t_noise=rows.t_noise / big,
                         r_quad=rows.r_quad / big, known=rows.known / gain)
    return CalibrationConstraints(
        robot.name, tuple(column_names(robot, result.friction_terms)), model_rows,
        result.noise.copy(), prior.lower[ee].copy(), prior.upper[ee].copy(), info)


def window_config(robot: Robot, options: CalibrationOptions) -> IdentificationConfig:
    """The identification config whose sampling plan and allowances the rows use."""
    try:
        return load_identification_config(
            robot, friction=options.friction_prior, window_s=options.window_s,
            stride_s=options.stride_s, coulomb_band=options.coulomb_band,
            quadrature_safety=options.quadrature_safety,
            torque_noise_rel=options.torque_noise_rel,
            torque_gain_rel=options.torque_gain_rel)
    except IdentificationError as err:
        raise CalibrationInputError(str(err)) from err


def calibration_rows(robot: Robot, config: IdentificationConfig, prior: Prior,
                     recordings: Sequence[Recording],
                     windows: list[tuple[str, MomentumWindows]] | None = None
                     ) -> CalibrationRows:
    """Rows of every recording (one MomentumWindows stream each, so windows never span two);
    ``windows``, when given, receives each recording's name and windows (their exclusion
    counts)."""
    reg = Regressors(robot)
    parts = []
    for k, rec in enumerate(recordings):
        rec.check_robot(robot)
        if rec.dq is None:
            raise CalibrationInputError(
                f"{rec.name}: no joint velocities; run with --state-estimate (never assumed 0)")
        win = MomentumWindows(robot, config, reg, rate_hz=rec.rate_hz)
        try:
            m = win.extend(rec.t, rec.q, rec.dq, rec.tau)
        except IdentificationError as err:
            raise CalibrationInputError(f"{rec.name}: {err}") from err
        if windows is not None:
            windows.append((rec.name, win))
        if len(m):
            terms = config.friction_terms
            parts.append(build_rows(m, robot.nj, prior.theta_abs_max, config.quadrature_safety,
                                    config.torque_noise_rel, source=k,
                                    lag_radius=config.torque_lag_radius_s,
                                    term_abs_max=None if terms is None else
                                    np.maximum(np.abs(terms.lower), np.abs(terms.upper)),
                                    gain_rel=config.torque_gain_rel,
                                    gain=config.torque_gain, payload_theta=rec.payload_theta,
                                    ee_columns=robot.ee_columns,
                                    payload_radius=rec.payload_radius))
    if not parts:
        plan = config.sampling_plan(1.0 / recordings[0].rate_hz)
        raise CalibrationInputError(
            f"no momentum window formed in {len(recordings)} recording(s): each needs a run of "
            f"{plan.window + 1} samples without a gap > "
            f"{max(plan.max_sample_gap, plan.max_bridged_gap) * 1e3:.1f} ms")
    return CalibrationRows.concat(parts)


def _velocity_lag(robot: Robot, recordings: Sequence[Recording],
                  options: CalibrationOptions) -> tuple[np.ndarray, np.ndarray]:
    """(nj,) the velocity stream's lag (s) to compensate and its radius, from the options (a
    known lag has none)."""
    spec = options.velocity_lag
    if isinstance(spec, str):
        if spec == "estimate":
            found = estimate_velocity_lag(recordings, robot.nj)
            return found.lag, found.radius
        return np.zeros(robot.nj), np.zeros(robot.nj)
    lags = np.asarray(spec, float).reshape(-1)
    if lags.shape != (robot.nj,) or not np.all(np.isfinite(lags)) or np.any(np.abs(lags) > 0.5):
        raise CalibrationInputError(f"velocity lag: expected {robot.nj} lags within +-0.5 s")
    return lags, np.zeros(robot.nj)


def _exclusion_speeds(robot: Robot, recordings: Sequence[Recording],
                      options: CalibrationOptions) -> np.ndarray:
    """(nj,) the exclusion rule's speeds (rad/s; inf = no rule) from the options."""
    spec = options.exclude_speed
    if isinstance(spec, str):
        if spec == "none":
            return np.full(robot.nj, np.inf)
        return options.exclude_speed_frac * speed_clamps(recordings, robot.nj)
    speeds = np.asarray(spec, float).reshape(-1)
    if speeds.shape != (robot.nj,) or np.any(np.isnan(speeds)) or np.any(speeds <= 0):
        raise CalibrationInputError(f"exclude speed: expected {robot.nj} speeds > 0 rad/s "
                                    "(inf: no rule for that joint)")
    return speeds


def _excluded_summary(robot: Robot, config: IdentificationConfig,
                      windows: Sequence[tuple[str, MomentumWindows]]) -> dict[str, Any]:
    """What the exclusion rule dropped: the rule, row counts by reason and by joint, and the
    first examples (recording, joint, reason, window span)."""
    by_reason: dict[str, int] = {}
    by_joint = np.zeros(robot.nj, int)
    examples: list[dict[str, Any]] = []
    for name, win in windows:
        for k, v in win.excluded.items():
            by_reason[k] = by_reason.get(k, 0) + v
        by_joint[win.row_joints] += win.excluded_by_joint
        for reason, joint, t_a, t_b in win.excluded_examples:
            if len(examples) < 12:
                examples.append({"recording": name, "joint": joint, "reason": reason,
                                 "t_start": round(t_a, 3), "t_end": round(t_b, 3)})
    return {"rule": config.assumptions()["excluded_windows"], "rows_by_reason": by_reason,
            "rows_by_joint": dict(zip(robot.joint_names, by_joint.tolist())),
            "examples": examples,
            # short gaps carried by the stated torque-rate bound, and those the data refused
            "bridged_gaps": sum(w.n_bridged for _, w in windows),
            "bridges_refused": sum(w.n_bridge_refused for _, w in windows)}


def _holdout_margin(rows: CalibrationRows, prior: Prior, delta_min: np.ndarray, nj: int,
                    margin: float) -> np.ndarray:
    """(nj,) the noise margin: at least ``margin``, and at least what each recording, held out,
    raised the smallest consistent bound by — δ*_j(all) / δ*_j(all but k), the largest over k.
    A single recording is split into its first and second half in time.

    A margin on δ* is a guess at what data the calibration did not see will need. With several
    recordings (or halves) it is measured instead: each one, added last, is such unseen data,
    and the written bound must have covered it."""
    out = np.full(nj, float(margin))
    group = rows.source.copy()
    if np.unique(group).size < 2:
        group = (rows.t_start > np.median(rows.t_start)).astype(int)
    for k in np.unique(group):
        rest = rows.take(group != k)
        if len(rest) == 0:
            continue
        res = min_noise(scale_rows(rest, prior.lower, prior.upper), nj)
        if res is None:
            continue
        seen = res[0] > 0
        out[seen] = np.maximum(out[seen], delta_min[seen] / res[0][seen])
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den where den > 0, else 0 (a zero bound has no speed part: num is 0 there too)."""
    return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)


def _inconsistency(robot: Robot, delta: np.ndarray, limit: np.ndarray) -> str:
    bad = np.flatnonzero(delta > limit)
    parts = [f"{robot.joint_names[j]} needs a window-averaged torque error of "
             f"{delta[j]:.3g} N*m (> {limit[j]:.3g} N*m allowed)" for j in bad]
    return ("no plausible noise bound explains the calibration data with the prior boxes: "
            + "; ".join(parts) + " — the bag may not be of this robot, carry an unknown "
            "payload or contact, or the links/friction lie outside their prior boxes "
            "(--link-rel, --friction-prior)")


def _check_measured(robot: Robot, rows: CalibrationRows, unknowns: int) -> None:
    """Refuse data that cannot measure a noise bound: with fewer than two rows per unknown the
    prior's parameters could nearly interpolate the windows, and the smallest consistent bound
    would say nothing about the error."""
    if len(rows) < 2 * unknowns:
        per_joint = min(_joint_rows(rows, robot.nj))
        raise CalibrationInputError(
            f"insufficient data: {len(rows)} rows ({per_joint} windows per joint) for "
            f"{unknowns} unknowns; record longer or more exciting motion without gaps "
            f"(at least {2 * unknowns} rows)")


def _joint_rows(rows: CalibrationRows, nj: int) -> list[int]:
    return [int(np.sum(rows.joint == j)) for j in range(nj)]


def calibration_stages(options: CalibrationOptions) -> list[str]:
    """The stages :func:`calibrate` runs with ``options``, in order (its ``stage`` calls)."""
    return (["rows"] + (["torque lag"] if options.torque_lag == "estimate" else [])
            + ["noise bound", "friction box"] + (["link box"] if options.link_boxes else [])
            + ["estimate"] + (["stribeck"] if options.friction_law == "stribeck" else [])
            + (["terms"] if options.terms else []))


@dataclass
class _Run:
    """What the calibration's stages share, each refining it in turn: the rows everything rests
    on are rebuilt whenever the window plan, the lag or the friction law changes."""

    robot: Robot
    recordings: Sequence[Recording]
    options: CalibrationOptions
    enter: Callable[[str], None]
    config: IdentificationConfig
    prior: Prior
    rows: CalibrationRows
    windows: list[tuple[str, MomentumWindows]]
    seconds: dict[str, float] = field(default_factory=dict)
    lag: LagEstimate | None = None
    selection: TermSelection | None = None
    notes_terms: list[str] = field(default_factory=list)

    def rebuild_rows(self) -> None:
        self.windows = []
        self.rows = calibration_rows(self.robot, self.config, self.prior, self.recordings,
                                     self.windows)


@dataclass
class _Noise:
    """The noise bound: δ* and its profile, the held-out margin, δ (δ0) and δ1."""

    delta_min: np.ndarray
    profile: np.ndarray
    margin: np.ndarray
    delta: np.ndarray
    delta_speed: np.ndarray


@dataclass
class _Boxes:
    """The calibrated boxes of every column, and where φ, ψ and the gains sit in them."""

    timed: CalibrationRows
    lower: np.ndarray
    upper: np.ndarray
    f_cols: np.ndarray
    t_cols: np.ndarray
    gain_box: tuple[np.ndarray, np.ndarray] | None


def calibrate(robot: Robot, recordings: Sequence[Recording],
              options: CalibrationOptions | None = None,
              stage: Callable[[str], None] | None = None) -> CalibrationResult:
    """Calibrate ``robot`` from ``recordings`` (module docstring). Raises
    :class:`CalibrationInputError` on unusable input and :class:`CalibrationInconsistentError`
    when the prior boxes cannot explain the data. ``stage(name)`` is called as each stage of
    :func:`calibration_stages` starts (e.g. for a progress bar)."""
    options = options or CalibrationOptions()
    options.check()
    run = _start(robot, recordings, options, stage or (lambda name: None))
    if options.torque_lag == "estimate":
        _estimate_lag(run)
    if options.terms:
        _judge_terms(run)
    excluded = _excluded_summary(robot, run.config, run.windows)
    noise = _noise_bound(run)
    boxes = _calibrated_boxes(run, noise.delta)
    config, prior, rows, nj, n_theta = run.config, run.prior, run.rows, robot.nj, run.prior.n_theta
    lower, upper, f_cols, t_cols = boxes.lower, boxes.upper, boxes.f_cols, boxes.t_cols
    run.enter("estimate")
    clock = time.perf_counter()
    est, notes = _nominal(robot, boxes.timed, prior, noise.delta, lower, upper, options,
                          recordings)
    run.seconds["estimate"] = time.perf_counter() - clock
    x_nom = (est.x if est is not None else np.clip(prior.nominal, lower, upper)).copy()
    written = _links_to_write(robot, prior, lower, upper, options)
    written = _consistent_links(robot, prior, written, x_nom, lower, upper, notes)
    if not written:
        notes.append("links: no body parameter box shrank by more than "
                     f"{100 * options.link_tighten:g} % of its prior width"
                     + ("" if options.link_boxes else " (link boxes not computed)")
                     + f": the prior box (URDF ± {100 * prior.link_rel:g} %) stays, no "
                     "'links' section written")
    stribeck = _stribeck(run, x_nom, noise.delta, notes)
    notes += run.notes_terms
    adopted = None
    if config.friction_terms is not None:
        tr = lambda v: v[t_cols].reshape(nj, -1)  # noqa: E731
        adopted = FrictionTerms(config.friction_terms.names, tr(np.clip(x_nom, lower, upper)),
                                tr(lower), tr(upper))
    fr = lambda v: v[f_cols].reshape(nj, 4)  # noqa: E731
    notes.append(f"rows per joint: {_joint_rows(rows, nj)} from {len(recordings)} recording(s)")
    if boxes.gain_box is not None:
        notes.append(_gain_note(robot, config, prior, boxes.gain_box))
    transients = _transients(robot, config, recordings, rows, noise.delta)
    if transients:
        notes.append(transient_note(transients))
    return CalibrationResult(
        robot=robot, options=options, config=config, prior=prior, rows=rows,
        recordings=list(recordings), noise_min=noise.delta_min, noise_profile=noise.profile,
        noise=noise.delta,
        friction_lower=fr(lower), friction_upper=fr(upper), friction_nominal=fr(x_nom),
        link_lower=lower[:n_theta], link_upper=upper[:n_theta], link_nominal=x_nom[:n_theta],
        links_written=written, x_nominal=x_nom, seconds=run.seconds, notes=notes,
        stribeck=stribeck, robust_weights=None if est is None else est.weights,
        torque_lag=run.lag, excluded=excluded, margin=noise.margin, terms=run.selection,
        noise_speed=noise.delta_speed if options.noise_speed else None,
        friction_terms=adopted, transients=transients, gain_box=boxes.gain_box)


def _start(robot: Robot, recordings: Sequence[Recording], options: CalibrationOptions,
           enter: Callable[[str], None]) -> _Run:
    """Checks, the window plan, the prior, the exclusion rule and the first rows."""
    if robot.floating_base:
        raise CalibrationInputError(f"{robot.name}: floating-base robots are not calibrated "
                                    "(the momentum rows need base wrenches)")
    if not recordings:
        raise CalibrationInputError("no recording given")
    clock = time.perf_counter()
    config = window_config(robot, options)
    try:
        prior = calibration_prior(robot, options.link_rel, options.friction_prior,
                                  options.payload_theta, options.ee_prior,
                                  config.torque_gain_rel)
    except (ValueError, IdentificationError) as err:
        raise CalibrationInputError(str(err)) from err
    v_lag, v_radius = _velocity_lag(robot, recordings, options)
    config = config.with_overrides(exclude_speed_rad_s=_exclusion_speeds(robot, recordings,
                                                                         options),
                                   exclude_after_start_s=options.exclude_after_start_s,
                                   velocity_lag_s=v_lag, velocity_lag_radius_s=v_radius)
    windows: list[tuple[str, MomentumWindows]] = []
    enter("rows")
    rows = calibration_rows(robot, config, prior, recordings, windows)
    run = _Run(robot, recordings, options, enter, config, prior, rows, windows)
    run.seconds["rows"] = time.perf_counter() - clock
    return run


def _estimate_lag(run: _Run) -> None:
    """The torque stream's lag per joint, compensated in the rows from here on."""
    run.enter("torque lag")
    clock = time.perf_counter()
    run.lag = estimate_torque_lag(run.rows, run.recordings, run.prior, run.robot.nj)
    run.config = run.config.with_overrides(torque_lag_s=run.lag.lag,
                                           torque_lag_radius_s=run.lag.radius)
    run.rebuild_rows()
    run.seconds["torque_lag"] = time.perf_counter() - clock


def _judge_terms(run: _Run) -> None:
    """Extra friction terms judged by cross-validation; those of the joint's state adopted into
    the prior, the law and the rows everything below rests on (module docstring)."""
    run.enter("terms")
    clock = time.perf_counter()
    nj = run.robot.nj
    try:
        run.selection = select_terms(run.rows, run.recordings, run.prior, nj)
    except ValueError as err:
        # too little data to hold any out (e.g. one short run): nothing judged, the law
        # stays linear, and the rest of the calibration says whether the data suffice
        run.notes_terms.append(f"extra friction terms not judged: {err}")
        return
    selection = run.selection
    run.notes_terms.append(selection.describe())
    names = adoptable(selection)
    if names:
        half = term_prior(run.recordings, names, nj)
        run.prior = run.prior.with_terms(names, half)
        run.config = run.config.with_overrides(friction_terms=FrictionTerms(
            names, np.zeros_like(half), -half, half))
        if run.lag is not None:
            # a term the lag estimate did not know biases it (a ripple's residual looks
            # like a timing error): estimated again with the term, from unlagged rows
            unlagged = run.config.with_overrides(torque_lag_s=0.0, torque_lag_radius_s=0.0)
            run.lag = estimate_torque_lag(
                calibration_rows(run.robot, unlagged, run.prior, run.recordings),
                run.recordings, run.prior, nj)
            run.config = run.config.with_overrides(torque_lag_s=run.lag.lag,
                                                   torque_lag_radius_s=run.lag.radius)
        run.rebuild_rows()
        run.notes_terms.append(f"adopted friction terms: {', '.join(names)} (their "
                               "coefficients are calibrated and written with boxes like Fc, "
                               "Fv, Ia, beta)")
    rest = [n for n in selection.selected if n not in names]
    if rest:
        run.notes_terms.append(f"selected but not adopted: {', '.join(rest)} (not a function "
                               "of the joint's state: its effect stays in the measured noise "
                               "bound)")
    run.seconds["terms"] = time.perf_counter() - clock


def _noise_bound(run: _Run) -> _Noise:
    """δ* by LP, refused above the torque limit's share, given its held-out margin and floor;
    with ``noise_speed`` the envelope's shape first (module docstring, step 2)."""
    run.enter("noise bound")
    clock = time.perf_counter()
    robot, prior, options, nj = run.robot, run.prior, run.options, run.robot.nj
    rows = plain = run.rows
    scaled = scale_rows(rows, prior.lower, prior.upper)
    kappa = np.zeros(nj)
    if options.noise_speed:
        # the envelope's shape first, then its scale measured and given its margin on the
        # shaped rows exactly as a constant bound's
        kappa = noise_speed_shape(scaled, rows.mean_speed(), nj)
        rows = rows.with_noise_speed(kappa)
        scaled = scale_rows(rows, prior.lower, prior.upper)
    res = min_noise(scaled, nj)
    if res is None:
        raise CalibrationInconsistentError("the noise-bound LP failed (HiGHS did not reach "
                                           "optimality); the rows may be degenerate")
    delta_min, profile = res
    limit = options.max_noise_frac * robot.limits.tau_max
    if np.any(delta_min > limit):
        raise CalibrationInconsistentError(_inconsistency(robot, delta_min, limit))
    _check_measured(robot, rows, scaled.free.size)
    margin = _holdout_margin(rows, prior, delta_min, nj, options.margin)
    delta = margin * delta_min + options.noise_floor
    delta_speed = margin * delta_min * kappa
    if options.noise_speed:
        # the floor joins δ0 only: the rows below carry δ0 + δ1·v exactly, with δ = δ0
        rows = plain.with_noise_speed(_ratio(delta_speed, delta))
    run.rows = rows
    run.seconds["noise"] = time.perf_counter() - clock
    return _Noise(delta_min, profile, margin, delta, delta_speed)


def _calibrated_boxes(run: _Run, delta: np.ndarray) -> _Boxes:
    """Min and max of every friction coefficient, term coefficient, gain and (optionally) link
    parameter over the polytope the rows leave under δ."""
    run.enter("friction box")
    clock = time.perf_counter()
    prior, nj, n_theta = run.prior, run.robot.nj, run.prior.n_theta
    # the boxes rest on the rows with the lag's radius (δ was measured without it: it holds both)
    timed = run.rows.with_timing()
    scaled = scale_rows(timed, prior.lower, prior.upper)
    # δ may equal δ* (margin 1, no floor), where the polytope is a single point up to solver
    # tolerance: the LP gets a hair more (a larger δ only widens the boxes, so they stay sound)
    lp = BoxLP(scaled, delta * (1.0 + _LP_SLACK) + _LP_SLACK * np.max(delta))
    if not lp.feasible:   # cannot happen for δ ≥ δ*, unless the solver failed
        raise CalibrationInconsistentError("the rows are infeasible at the written noise bound "
                                           "(solver failure)")
    f_cols = friction_column(n_theta, np.arange(nj)[:, None], np.arange(4)[None]).reshape(-1)
    t_cols = np.arange(n_theta + 4 * nj, prior.n_model)             # ψ, joint-major
    f_lo, f_hi = lp.box(np.concatenate([f_cols, t_cols]))
    lower, upper = prior.lower.copy(), prior.upper.copy()
    lower[f_cols], upper[f_cols] = f_lo[:f_cols.size], f_hi[:f_cols.size]
    lower[t_cols], upper[t_cols] = f_lo[f_cols.size:], f_hi[f_cols.size:]
    gain_box = None
    if prior.n_gain:
        g_cols = np.arange(prior.n_model, prior.lower.size)               # v, after ψ
        gain_box = lp.box(g_cols)
        lower[g_cols], upper[g_cols] = gain_box
    run.seconds["friction_box"] = time.perf_counter() - clock
    clock = time.perf_counter()
    ee = np.arange(run.robot.ee_columns.start, run.robot.ee_columns.stop)
    link_cols = np.setdiff1d(np.arange(n_theta), ee)
    if run.options.link_boxes:
        run.enter("link box")
        l_lo, l_hi = lp.box(link_cols)
        lower[link_cols], upper[link_cols] = l_lo, l_hi
    run.seconds["link_box"] = time.perf_counter() - clock
    return _Boxes(timed, lower, upper, f_cols, t_cols, gain_box)


def _stribeck(run: _Run, x_nom: np.ndarray, delta: np.ndarray, notes: list[str]) -> Any:
    """S0's smooth friction law fitted for prediction (``--friction-law stribeck``), or None."""
    if run.options.friction_law != "stribeck":
        return None
    from sysid_ros._src.calibration.stribeck import fit_stribeck

    run.enter("stribeck")
    clock = time.perf_counter()
    band = run.config.coulomb_band
    stribeck = fit_stribeck(run.rows, list(run.recordings), x_nom, delta, run.robot.nj,
                            band=band)
    run.seconds["stribeck"] = time.perf_counter() - clock
    notes += _law_warnings(run.robot, stribeck, band)
    return stribeck


def _gain_note(robot: Robot, config: IdentificationConfig, prior: Prior,
               box: tuple[np.ndarray, np.ndarray]) -> str:
    """What the data said about the torque reading's gain: its box per joint, and whether it
    narrowed the stated bound (only a known payload lets it, :class:`CalibrationOptions`)."""
    j = prior.gain_joints
    k0, g = config.torque_gain[j], config.torque_gain_rel[j]
    lo, hi = k0 * (1.0 + g * box[0]), k0 * (1.0 + g * box[1])
    parts = [f"{robot.joint_names[i]} [{a:.3f}, {b:.3f}]" for i, a, b in zip(j, lo, hi)]
    shrunk = (box[1] - box[0]) < 1.9
    how = ("measured" if np.all(shrunk) else
           "not measured on " + ", ".join(robot.joint_names[i] for i in j[~shrunk])
           + " (data without a known payload cannot separate a gain from scaled parameters)")
    return "torque gain boxes: " + "; ".join(parts) + f" — {how}"


def _transients(robot: Robot, config: IdentificationConfig, recordings: Sequence[Recording],
                rows: CalibrationRows, delta: np.ndarray) -> list[Transient]:
    """Each recording's torque transients with their share of the calibrated rows' radius."""
    radius = rows.r_fixed + rows.r_timing + delta[rows.joint] * rows.t_noise
    out: list[Transient] = []
    for k, rec in enumerate(recordings):
        plan = config.sampling_plan(1.0 / rec.rate_hz)
        found = find_transients(rec.t, rec.tau, robot.joint_names,
                                np.maximum(config.torque_noise_abs, delta),
                                config.torque_noise_rel, config.torque_rate_abs,
                                plan.max_sample_gap, rec.name)
        mine = rows.source == k
        out += with_radius_share(found, robot.joint_names, rows.joint[mine],
                                 rows.t_start[mine], rows.t_end[mine], rows.r_quad[mine],
                                 radius[mine], config.torque_lag_s)
    return out


def _consistent_links(robot: Robot, prior: Prior, written: list[str], x_nom: np.ndarray,
                      lower: np.ndarray, upper: np.ndarray, notes: list[str]) -> list[str]:
    """The bodies to write, each with a strictly consistent nominal (``x_nom`` is fixed in
    place): a solver's inaccuracy must not leave a written body a hair outside the consistent
    set. Falls back to the URDF value if it lies in the box, else drops the body."""
    out = []
    for name in written:
        jid = robot.model.getJointId(name)
        sl = slice(10 * (jid - 1), 10 * jid)
        if is_physically_consistent(x_nom[sl]):
            out.append(name)
            continue
        urdf = prior.nominal[sl]
        if np.all(urdf >= lower[sl]) and np.all(urdf <= upper[sl]):
            x_nom[sl] = urdf
            out.append(name)
            notes.append(f"links.{name}: estimate not strictly consistent, URDF value kept")
        else:
            notes.append(f"links.{name}: no consistent nominal inside the box found; body not "
                         "written (its prior box applies)")
    return out


def _law_warnings(robot: Robot, stribeck, band: float) -> list[str]:
    """Joints whose fitted dry friction saturates far above the Coulomb band: there the sign
    law with a set-valued band misdescribes the data (soft or Stribeck-like friction), which
    the noise bound then has to absorb."""
    out = []
    for j, g4 in enumerate(stribeck.params[:, 4]):
        speed = 2.0 / max(float(g4), 1e-9)        # tanh(2) = 0.96 of the dry-friction level
        if speed > 5.0 * band and stribeck.params[j, 3] > 1e-3:
            out.append(f"{robot.joint_names[j]}: the fitted dry friction reaches 96 % of its "
                       f"level only at {speed:.2g} rad/s (Coulomb band {band} rad/s): the sign "
                       "law misdescribes it; consider a wider --coulomb-band")
    return out


def _links_to_write(robot: Robot, prior: Prior, lower: np.ndarray, upper: np.ndarray,
                    options: CalibrationOptions) -> list[str]:
    """Joint names of the bodies whose box the file must carry: those the data tightened, or
    all of them when the prior's relative box differs from the robot file's."""
    n_theta = prior.n_theta
    width_p = prior.upper[:n_theta] - prior.lower[:n_theta]
    width = upper[:n_theta] - lower[:n_theta]
    out = []
    changed_rel = not np.isclose(prior.link_rel, robot.links_rel_uncertainty)
    for jid in range(1, robot.model.njoints):
        if jid == robot.ee_joint_id:
            continue
        sl = slice(10 * (jid - 1), 10 * jid)
        tight = np.any(width[sl] < (1.0 - options.link_tighten) * width_p[sl])
        if tight or changed_rel:
            out.append(robot.model.names[jid])
    return out


def _nominal(robot, rows, prior, delta, lower, upper, options, recordings):
    """MAP estimate inside [lower, upper] (module docstring step 4)."""
    scale = rows.r_fixed + delta[rows.joint] * rows.t_noise
    parts = [LinearRows(rows.A, rows.c, scale)]
    notes = []
    if options.energy:
        from sysid_ros._src.calibration.energy import energy_rows

        parts.append(energy_rows(robot, rows, recordings, delta))
        notes.append(f"point estimate with {len(parts[-1].c)} energy rows")
    sigma = np.maximum(0.5 * (prior.upper - prior.lower), 1e-12)
    bodies = [slice(10 * b, 10 * b + 10) for b in range(prior.n_theta // 10)]
    est = map_estimate(LinearRows.stack(parts), lower, upper, prior.nominal, sigma, bodies,
                       robust=options.robust)
    if est.status not in ("optimal", "optimal_inaccurate"):
        notes.append(f"point estimate failed ({est.status}): nominal = prior nominal clipped "
                     "to the box")
        return None, notes
    low_w = int(np.sum(est.weights < 0.5))
    notes.append(f"point estimate: MAP with URDF prior, LMI-consistent bodies, {options.robust} "
                 f"IRLS ({est.iterations} solves, {low_w} rows down-weighted below 0.5)")
    return est, notes
