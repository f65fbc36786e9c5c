"""Noise, uncertainty and sampling model of the identifier: what "the bounds hold" assumes.

Read from the ``identification:`` section of the robot facts file (``config/<robot>.yaml``,
with a calibration overlay when one is loaded), then overridden by CLI flags / node parameters.
Keys (all optional except the prior):

- ``torque_noise_abs`` (N·m, scalar or one per joint) and ``torque_noise_rel`` (fraction of the
  true |τ|): the measured torque τ̂ satisfies |τ̂ − τ| ≤ a_j + r·|τ| at every sample. Because only
  τ̂ is known, the bound is turned into one on measured quantities: |τ| ≤ |τ̂| + |τ̂ − τ| gives
  |τ̂ − τ| ≤ (a_j + r·|τ̂|)/(1 − r), which is what the per-row radius uses (requires r < 1).
- ``torque_noise_speed`` (N·m per rad/s, scalar or one per joint; default 0): a calibrated
  speed-dependent part of the window-averaged bound, which is a_j + ``torque_noise_speed``_j·|v|
  over a window whose mean |speed| is v = ∫|q̇| dt/T (friction and actuation error growing with speed, as
  on real gears; :class:`sysid_ros._src.calibration.CalibrationOptions` ``noise_speed``).
- ``torque_gain`` (default 1) and ``torque_gain_rel`` (default 0), one value or one per joint:
  a constant gain error of the torque reading, as a current-based estimate has when its motor
  torque constant is off (commonly by 10–30 %). The true torque is k_j·τ̂ with
  k_j ∈ torque_gain_j·[1 − g_j, 1 + g_j], g_j = ``torque_gain_rel``. The measured torques are
  multiplied by ``torque_gain`` before anything else (:mod:`.windows`); the rest, k_j/torque_gain_j
  − 1 ∈ ±g_j, is one constant per joint: with ``friction_unknowns`` a shared LP unknown of the
  rows (column −g_j·∫τ̂), otherwise g_j·|∫τ̂| in each row's radius. Unloaded data cannot see it
  (every parameter scaled by k fits them as well); a calibration with a known payload measures
  it (``sysid-calibrate --payload-bag``, docs/guide/calibrate.md#torque-reading-gain). Every
  torque bound of this section (``torque_noise_abs/rel``, ``torque_rate_abs``) is on the
  measured torque: the rows multiply them by the largest gain, torque_gain_j·(1 + g_j).
- ``robot_uncertainty_rel``: θ_r box, radius = rel·|nominal| per parameter of every non-end-effector
  body (scalar, or one value per such body in model order). Default: the robot's link box
  (``model_uncertainty.links_rel``, or the calibrated link box).
- ``friction``: which box the per-joint coefficients [Fc, Fv, Ia, β] of
  τ_f = Fc·σ(q̇) + Fv·q̇ + Ia·q̈ + β lie in:
  ``config`` — the robot's ``friction`` section (catalogue values and their box, or the
  calibrated box when a calibration is loaded: the right choice for the built-in simulator,
  whose physics uses exactly these values, and for a calibrated robot);
  ``wide`` — ``friction_wide`` (radius = abs + rel·|nominal| around the catalogue values, with
  Fc, Fv, Ia ≥ 0): for a robot nobody has calibrated, whose friction and torque offsets may be
  far from the catalogue (the default in the robot files);
  ``none`` — the torques are link-side: no friction/armature term at all.
  With ``friction_unknowns`` (default) every coefficient whose box has width is an unknown of
  the linear program, shared by all windows of its joint (a constant torque offset β, a
  viscous Fv… are the same in every window), jointly with θ_e; otherwise they enter each row's
  radius independently (looser; kept for comparison and for the sensitivity method).
  With ``config`` on a calibrated robot whose calibration adopted extra terms
  (``friction.terms`` in calib.yaml, :mod:`sysid_ros._src.model.friction_terms`), their coefficients
  are treated the same way, each in its calibrated box (``friction_terms``).
- ``theta_r_unknowns`` (bool, default false): true makes the robot-link parameters θ_r (every
  body but the end effector) LP unknowns bounded by their box (``robot_uncertainty_rel`` or a
  calibration's ``links``), one vector shared by all windows; false puts |W_r|·rad(θ_r) into
  each row's radius (every window its own worst θ_r: sound, looser). Off by default for now:
  it narrows the mass ~10 % at twice the online cost, and it is stricter about the other
  assumptions — a calibration whose noise bound is only just right then reads as
  `inconsistent` (docs/theory/identification.md#unknowns-and-exact-radii).
- ``calibration_rows`` (path of a ``sysid-calibrate --export-rows`` file, relative to the
  calibration overlay or the robot file): the calibration's own momentum rows as further
  constraints on the shared θ_r and friction unknowns (:mod:`.calibration_constraints`); they turn
  ``theta_r_unknowns`` on and need ``friction_unknowns``. ``calibration_rows_max`` (int, 0 =
  all) keeps that many rows, evenly spread (sound, looser, cheaper).
- ``coulomb_band`` (rad/s): below this speed the Coulomb term is anywhere in [−Fc, Fc] (soft,
  Stribeck-like or stuck dry friction), above it Fc·sign(q̇).
- ``window_s`` / ``stride_s`` (s, default 0.1 / 0.025): windows [k·s, k·s + h], turned into
  sample counts from the stream's median step (the stride an even number ≥ 2 of samples, the
  window a multiple of it), so the defaults work from 100 Hz to 4 kHz. ``window`` / ``stride``
  (samples) fix the counts instead (0 = from seconds).
- ``max_sample_gap`` (s; 0 = max(``gap_factor`` × the median step, ``gap_floor``), defaults 2.5
  and 2.5 ms): consecutive samples further apart split the integration — no window spans the
  gap — because one trapezoid across many missing samples (a stalled driver) is bounded by
  nothing the identifier states. 2.5 carries a window across one dropped sample and splits it
  at two; the floor keeps a fast stream (4 kHz, oversampled against a 1 kHz controller's torque)
  from splitting at every pair of dropped messages.
- ``torque_rate_abs`` (N·m/s, one value or one per joint; default 0 = not stated) and
  ``bridge_factor`` (default 5): a stated bound L_j on how fast the applied torque changes:
  τ_j is within L_j·Δ/2 of a path whose rate never exceeds L_j, Δ the median step (a command
  slewing at most L_j and held over at most one step). With it, steps longer than
  ``max_sample_gap`` but at most
  ``bridge_factor`` × Δ (a few dropped samples) no longer split the run: the trapezoid across
  such a step of length h differs from ∫τ by at most L_j·(h²/4 + Δ·h), which enters the rows'
  radius (``MomentumRows.gap_rad``, :mod:`.windows`). A bridged step whose two end torques
  differ by more than the bound allows (L_j·(h + Δ) plus twice the noise bound) contradicts it
  and splits the run instead. Longer gaps always split; an explicit ``max_sample_gap`` turns
  bridging off.
- ``quadrature_safety``: factor on the trapezoid-vs-Simpson difference added to every row
  radius (0 switches the allowance off; the trapezoid rule is then trusted).
- ``velocity_noise_abs`` (rad/s, one value or one per joint; default 0 = exact): the measured
  q̇ is within this of the truth at every sample (a driver's filtered or differenced velocity).
  It enters at the window's ends through the momentum H(q)·q̇ (the worst case of |H(q)·e| over
  the boxes, :mod:`.windows`) and the armature term Ia·Δq̇ (2·|Ia|max·ε), along the window
  through Fv·∫q̇ (|Fv|max·ε·T), and it widens the Coulomb band by ε (a measured q̇ must clear
  the band by ε for the true one to be outside it). Its effect on the Coriolis terms (of order
  2·|C|·ε) is left to the torque-noise bound. On a floating base the arm joints' errors are
  error directions of the base motion's radius rows instead (:mod:`.base_motion`: momentum and
  the exact Coriolis/centrifugal terms, with the trunk rate's error).
- ``velocity_estimate`` (mapping, default none): the published velocities are replaced by a
  least-squares slope of the positions (:mod:`.velocity_estimate`) whose per-sample error
  bound follows from the stated encoder resolution, stamp delay, acceleration and jerk bounds;
  samples whose bound exceeds ``velocity_noise_abs`` are not used, and data that contradict the
  premises make the result ``inconsistent``. Fixed base only.
- ``velocity_noise_scope`` (``all``, default, or ``payload``): what of that error the rows
  carry. ``payload`` needs a calibration whose data came through the same velocities: its
  measured torque-error bound already absorbed the velocity error through the unloaded arm —
  the arm's momentum, the armature and viscous terms, none of which a payload changes — so only
  what the payload adds is stated, the momentum of θ_e − θ_ee at the window's ends, with θ_ee the
  calibration-time end-effector body (its nominal ± ``robot_uncertainty_rel``). This rests on the
  calibration's own premise (its bound covers the effects present in its data, at the speeds it
  saw) and is refused without a calibration.
- ``torque_delay_samples`` (default 0.5): the torque samples may be offset in time from the
  joint states by a constant δ per joint, |δ| ≤ this many median sample steps, either sign.
  0.5 covers a command held over the control period (the sample stands for the torque of the
  period after it, or before it as a simulator or a driver reports it); add a torque sensor's
  filter delay. Over a window the offset changes ∫τ by δ·(τ_end − τ_start) (:mod:`.windows`),
  which the trapezoid-vs-Simpson allowance does not see. With ``friction_unknowns`` each joint's
  δ is a shared LP unknown (one offset for the recording, like β), otherwise δ_max·|τ_end −
  τ_start| enters each row's radius; the noise of the two end samples enters r_noise. 0 trusts
  the stamps.
- ``prior`` (the name of an entry of ``priors:``, or a mapping ``lower``/``upper``): the prior box
  B₀ of θ_e (``IdentificationConfig.prior``, a :class:`~sysid_ros._src.model.box.ParameterBox` in the
  end-effector joint's frame, nominal its centre). ``priors: {name: {lower, upper,
  description}}`` lists one box per tool (the Gen3's ``2f85`` assumes the Robotiq gripper, so
  m ≥ 1.0 kg; ``none`` a bare flange); the result names the prior used.
- ``cut_rounds`` / ``max_cuts`` (method ``lp-cuts``): cut-and-resolve rounds per coordinate
  bound and the cap on pseudo-inertia cuts kept (see :mod:`feasible_set`); they trade CPU for width,
  never soundness.
- ``online_max_rows``: the online point estimate uses this many most recent rows.
- ``online_lp_rows``: the online box LPs keep this many payload rows plus those binding an LP
  optimum (:mod:`.incremental`; the previous box is the prior), so an update costs the same
  after an hour as after a minute. A cost knob: rows slack at every optimum go first, which
  leaves the box as it is.
- ``imu`` (floating-base robots, required there): per-axis bounds of the trunk IMU —
  ``gyro_bias_abs`` (rad/s) and ``accel_bias_abs`` (m/s²), constant over the recording (the
  accelerometer's is a shared LP unknown), ``gyro_noise_abs`` (rad/s) and ``accel_noise_abs``
  (m/s²) per sample — and the rate bounds used
  between IMU samples and for an off-origin mount, ``angular_accel_abs`` (rad/s²),
  ``jerk_abs`` (m/s³);
  ``max_gap`` (s): joint samples with no IMU sample within it form no window. See
  :mod:`.base_motion`. As an override of :func:`load_identification_config`, a mapping with
  every one of these keys (an IMU other than the catalogue's, e.g. hardware-like data's).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from sysid_ros._src.identification.base_motion import ImuBounds
from sysid_ros._src.identification.calibration_constraints import CalibrationConstraints
from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.identification.options import FRICTION_MODES, GAP_FACTOR, GAP_FLOOR, GAP_RULE, \
    VELOCITY_NOISE_SCOPES
from sysid_ros._src.identification.velocity_estimate import VelocityEstimate, slope_source
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.errors import BoxError
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import FRICTION_NAMES, Robot
from sysid_ros._src.schema import Section, read_yaml

__all__ = ["IdentificationConfig", "SamplingPlan", "load_identification_config",
           "payload_prior_box", "FRICTION_MODES", "VELOCITY_NOISE_SCOPES", "load_prior",
           "prior_physical_faces", "GAP_RULE", "PER_JOINT_DEFAULTS", "SECTION_DEFAULTS"]


@dataclass(frozen=True)
class SamplingPlan:
    """Windows of one stream in samples, from its median step ``dt`` (s)."""

    dt: float
    window: int
    stride: int
    max_sample_gap: float
    torque_delay: float = 0.0      # s: |offset| of the torque samples from the joint states
    #: s: longer steps up to this are bridged with the torque-rate allowance (.windows); equal
    #: to max_sample_gap when no torque-rate bound is stated
    max_bridged_gap: float = 0.0

    def describe(self) -> str:
        bridged = (f", gaps up to {self.max_bridged_gap * 1e3:.1f} ms bridged"
                   if self.max_bridged_gap > self.max_sample_gap else "")
        return (f"window {self.window} samples ({self.window * self.dt * 1e3:.0f} ms), stride "
                f"{self.stride} ({self.stride * self.dt * 1e3:.1f} ms), max_sample_gap "
                f"{self.max_sample_gap * 1e3:.1f} ms{bridged}")


#: The per-joint settings' defaults, one value for every joint (a field left empty takes it):
#: exact velocities, no stated lags, no excluded speeds, no torque-rate bound, the torque reading's
#: gain 1 exactly, no speed-dependent noise.
PER_JOINT_DEFAULTS: dict[str, float] = {
    "velocity_noise_abs": 0.0, "torque_lag_s": 0.0, "torque_lag_radius_s": 0.0,
    "velocity_lag_s": 0.0, "velocity_lag_radius_s": 0.0, "exclude_speed_rad_s": np.inf, "torque_rate_abs": 0.0,
    "torque_gain": 1.0, "torque_gain_rel": 0.0, "torque_noise_speed": 0.0}


@dataclass(frozen=True)
class IdentificationConfig:
    """Every bound the identifier relies on (see module docstring). Arrays are per joint;
    friction arrays are (nj, 4) in [Fc, Fv, Ia, β] order."""

    torque_noise_abs: np.ndarray
    torque_noise_rel: float
    theta_r_nominal: np.ndarray                # (10·(n_bodies − 1),) other bodies, model order
    robot_uncertainty_rel: np.ndarray          # one per non-EE body (the box when not calibrated)
    friction: str                              # "config" | "wide" | "none"
    friction_lower: np.ndarray                 # (nj, 4)
    friction_upper: np.ndarray                 # (nj, 4)
    prior: ParameterBox                        # B₀ of θ_e (the EE body's 10 parameters)
    # calibrated extra terms of the friction law with their boxes (None: the 4 coefficients)
    friction_terms: FrictionTerms | None = None
    prior_name: str = "custom"
    #: faces of ``prior`` that are physical facts, (index, "lower"|"upper") (prior_physical_faces)
    prior_physical_faces: tuple[tuple[int, str], ...] = ()
    theta_r_lower: np.ndarray | None = None    # explicit (calibrated) θ_r box; else rel box
    theta_r_upper: np.ndarray | None = None
    friction_unknowns: bool = True
    theta_r_unknowns: bool = False
    coulomb_band: float = 0.02
    window_s: float = 0.1
    stride_s: float = 0.025
    window: int = 0
    stride: int = 0
    max_sample_gap: float = 0.0
    gap_factor: float = GAP_FACTOR
    gap_floor: float = GAP_FLOOR
    # (nj,) N·m/s: stated torque-rate bound L_j (0 = unstated: no gap is bridged); steps up to
    # bridge_factor × the median step are then bridged (module docstring)
    torque_rate_abs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bridge_factor: float = 5.0
    quadrature_safety: float = 5.0
    torque_delay_samples: float = 0.5
    velocity_noise_abs: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (nj,) rad/s
    velocity_noise_scope: str = "all"          # "all" | "payload" (module docstring)
    velocity_estimate: VelocityEstimate | None = None   # dq from positions (module docstring)
    # (nj,) s: calibrated lag of the torque stream behind the states, compensated (.alignment)
    torque_lag_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # (nj,) s: how far the true lag may be from torque_lag_s (a bounded timing unknown)
    torque_lag_radius_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # (nj,) s: calibrated lag of the velocity stream (a driver's filter), compensated
    velocity_lag_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # (nj,) s: how far the data let that lag move (the premise check's tolerance, .velocity_lag)
    velocity_lag_radius_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # (nj,) the torque reading's gain: true torque = k·τ̂, k in torque_gain·[1 ± torque_gain_rel]
    torque_gain: np.ndarray = field(default_factory=lambda: np.zeros(0))
    torque_gain_rel: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # (nj,) N·m per rad/s: the window-averaged bound grows by this times the mean |speed|
    torque_noise_speed: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # (nj,) rad/s: rows of joint j whose window reaches |q̇_j| >= this are excluded (inf: off)
    exclude_speed_rad_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    exclude_after_start_s: float = 0.0         # s: windows starting this soon after a run start
    calibrated: bool = False                   # the robot carries a sysid-calibrate overlay
    online_max_rows: int = 1400
    online_lp_rows: int = 700
    cut_rounds: int = 8
    max_cuts: int = 200
    imu: ImuBounds | None = None               # trunk IMU bounds (floating base only)
    calibration_rows: CalibrationConstraints | None = field(default=None, repr=False)
    sources: tuple[str, ...] = ()              # where the values came from (robot file, calibration)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for key, fill in PER_JOINT_DEFAULTS.items():     # not given: the default for every joint
            if getattr(self, key).size == 0:
                object.__setattr__(self, key, np.full(self.torque_noise_abs.shape, fill))
        _check(self)

    @property
    def friction_nominal(self) -> np.ndarray:
        """Centre of the friction box (nj, 4)."""
        return 0.5 * (self.friction_lower + self.friction_upper)

    @property
    def friction_radius(self) -> np.ndarray:
        return 0.5 * (self.friction_upper - self.friction_lower)

    @property
    def theta_r_box(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of the other bodies' parameters."""
        if self.theta_r_lower is not None and self.theta_r_upper is not None:
            return self.theta_r_lower, self.theta_r_upper
        rad = np.repeat(self.robot_uncertainty_rel, 10) * np.abs(self.theta_r_nominal)
        return self.theta_r_nominal - rad, self.theta_r_nominal + rad

    def sampling_plan(self, dt: float) -> SamplingPlan:
        """Window/stride/gap in samples for a stream whose median step is ``dt`` seconds."""
        if not (np.isfinite(dt) and dt > 0):
            raise IdentificationConfigError(f"sampling: median step {dt!r} s is not positive")
        if self.window > 0:
            window, stride = self.window, self.stride
        else:
            stride = max(2, 2 * int(round(self.stride_s / dt / 2.0)))
            window = stride * max(2, int(round(self.window_s / (stride * dt))))
        gap = self.max_sample_gap if self.max_sample_gap > 0 else \
            max(self.gap_factor * dt, self.gap_floor)
        # an explicit max_sample_gap is the user's last word on where runs split
        bridged = max(gap, self.bridge_factor * dt) \
            if self.bridges_gaps and self.max_sample_gap == 0 else gap
        return SamplingPlan(float(dt), int(window), int(stride), float(gap),
                            float(self.torque_delay_samples * dt), float(bridged))

    @property
    def gain_max(self) -> np.ndarray:
        """(nj,) the largest gain the reading may have: every torque bound stated on the
        measured torque is at most this factor on the true torque's scale."""
        return self.torque_gain * (1.0 + self.torque_gain_rel)

    @property
    def bridges_gaps(self) -> bool:
        """Whether a torque-rate bound is stated for every joint (windows may span short gaps)."""
        return bool(self.torque_rate_abs.size and np.all(self.torque_rate_abs > 0))

    def with_overrides(self, **kw: Any) -> IdentificationConfig:
        """A copy with some fields replaced (scalars broadcast to per-joint arrays).

        ``friction_nominal``/``friction_radius`` set the friction box as centre ± radius;
        ``robot_uncertainty_rel`` replaces an explicit (calibrated) θ_r box by the relative one.
        """
        for key in ("torque_noise_abs", "velocity_noise_abs", "torque_lag_s",
                    "torque_lag_radius_s", "velocity_lag_s", "velocity_lag_radius_s",
                    "exclude_speed_rad_s", "torque_rate_abs", "torque_gain", "torque_gain_rel", "torque_noise_speed"):
            if key in kw:
                kw[key] = np.broadcast_to(np.asarray(kw[key], float),
                                          self.torque_noise_abs.shape).copy()
        if "robot_uncertainty_rel" in kw:
            kw["robot_uncertainty_rel"] = np.broadcast_to(
                np.asarray(kw["robot_uncertainty_rel"], float),
                self.robot_uncertainty_rel.shape).copy()
            kw.setdefault("theta_r_lower", None)
            kw.setdefault("theta_r_upper", None)
        if "friction_nominal" in kw or "friction_radius" in kw:
            c = np.asarray(kw.pop("friction_nominal", self.friction_nominal), float)
            r = np.broadcast_to(np.asarray(kw.pop("friction_radius", self.friction_radius),
                                           float), c.shape)
            kw["friction_lower"], kw["friction_upper"] = c - r, c + r
        if kw.get("friction") == "none":
            kw["friction_lower"] = np.zeros_like(self.friction_lower)
            kw["friction_upper"] = np.zeros_like(self.friction_upper)
            kw["friction_terms"] = None
        return replace(self, **kw)

    def assumptions(self) -> dict[str, Any]:
        """Every bound used, JSON-ready (for result files and diagnostics)."""
        return (_torque_assumptions(self) | _box_assumptions(self) | _sampling_assumptions(self)
                | _model_assumptions(self) | _calibration_rows_assumptions(self)
                | _floating_base_assumptions(self))


#: The scalar settings' defaults: the fields' own (a robot file's section overrides them).
_FIELD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(IdentificationConfig)
                                   if f.default is not MISSING}
#: Where windows split when ``max_sample_gap`` is 0, in words (help texts, parameter docs).


def _torque_assumptions(c: IdentificationConfig) -> dict[str, Any]:
    """The torque reading: noise bound and gain."""
    return {
        "torque_noise_abs_Nm": c.torque_noise_abs.tolist(),
        "torque_noise_rel": c.torque_noise_rel,
        "torque_noise_model": "|tau_meas - tau| <= abs_j + rel*|tau| per sample and joint",
        "torque_noise_speed_Nm_per_rad_s": c.torque_noise_speed.tolist(),
        "torque_gain": c.torque_gain.tolist(),
        "torque_gain_rel": c.torque_gain_rel.tolist(),
        "torque_gain_model": "true torque = k_j*tau_meas, one constant k_j per joint in "
                             "torque_gain_j*[1 - torque_gain_rel_j, 1 + torque_gain_rel_j]; "
                             "torque bounds are on tau_meas",
    }


def _box_assumptions(c: IdentificationConfig) -> dict[str, Any]:
    """The θ_r, friction and prior boxes."""
    lo, hi = c.theta_r_box
    return {
        "theta_r_box": ("explicit (calibrated) box" if c.theta_r_lower is not None
                        else f"relative {c.robot_uncertainty_rel.tolist()}"),
        "theta_r_lower": lo.tolist(),
        "theta_r_upper": hi.tolist(),
        "friction": c.friction,
        "friction_law": "tau_f = Fc*sigma(dq) + Fv*dq + Ia*ddq + beta; sigma = sign(dq) "
                        "for |dq| > coulomb_band, any value in [-1, 1] inside it",
        "friction_lower_Fc_Fv_Ia_beta": c.friction_lower.tolist(),
        "friction_upper_Fc_Fv_Ia_beta": c.friction_upper.tolist(),
        "friction_terms": ({} if c.friction_terms is None else
                           {"law": "tau_f += sum_c psi_jc * feature_c(q_j, dq_j) (calibrated "
                                   "terms; each coefficient psi in its box)",
                            "boxes": c.friction_terms.as_dict()}),
        "friction_unknowns": ("LP unknowns shared by all windows" if c.friction_unknowns
                              else "per-row radius"),
        "coulomb_band_rad_s": c.coulomb_band,
        "prior": c.prior_name,
        "prior_lower": c.prior.lower.tolist(),
        "prior_upper": c.prior.upper.tolist(),
    }


def _sampling_assumptions(c: IdentificationConfig) -> dict[str, Any]:
    """Windows, gaps, quadrature, stream timing and velocity noise."""
    return {
        "window_s": c.window_s, "stride_s": c.stride_s,
        "window_samples": c.window or "from window_s and the median step",
        "stride_samples": c.stride or "from stride_s and the median step",
        "max_sample_gap_s": c.max_sample_gap or
        f"max({c.gap_factor} x median step, {c.gap_floor} s)",
        "quadrature_safety": c.quadrature_safety,
        "torque_delay_samples": c.torque_delay_samples,
        "velocity_noise_abs_rad_s": c.velocity_noise_abs.tolist(),
        "velocity_noise_scope": c.velocity_noise_scope if c.velocity_noise_scope == "all"
        else "payload: the calibration's bound covers the velocity error through the unloaded "
             "arm (same velocities, speeds it saw); the rows state the payload's momentum only",
        "torque_timing": "the torque stream lags the joint states by torque_lag_s per joint "
                         "(compensated) up to torque_lag_radius_s plus torque_delay_samples x "
                         "the median step (a held command: 0.5), either sign",
        "torque_lag_s": c.torque_lag_s.tolist(),
        "torque_lag_radius_s": c.torque_lag_radius_s.tolist(),
        "velocity_lag_s": c.velocity_lag_s.tolist(),
        "velocity_lag_check": "the published velocities lag the positions by velocity_lag_s "
                              "(compensated) within velocity_lag_radius_s: checked on the data "
                              "against the positions' centred difference (contradicted: "
                              "inconsistent); the velocity error left within the radius is "
                              "covered by the torque-noise bound, as a calibration measured it",
        "velocity_lag_radius_s": c.velocity_lag_radius_s.tolist(),
        "excluded_windows": _exclusion_statement(c),
        "sampling": "windows only over runs of samples at most max_sample_gap apart, or "
                    "up to bridge_factor x the median step when torque_rate_abs is "
                    "stated; trapezoid error within quadrature_safety x |Simpson - "
                    "trapezoid|",
        "torque_rate": (
            "the applied torque of joint j is within torque_rate_abs_j x the median step / 2 "
            "of a path whose rate never exceeds torque_rate_abs_j: a bridged step of length h adds "
            "torque_rate_abs_j x (h^2/4 + h x the median step) to its rows' radius; a "
            "bridged step whose end torques contradict the bound splits the run"
            if c.bridges_gaps else "not stated: no gap is bridged"),
        "torque_rate_abs_Nm_s": c.torque_rate_abs.tolist(),
        "bridge_factor": c.bridge_factor,
    }


def _model_assumptions(c: IdentificationConfig) -> dict[str, Any]:
    """What the rows take the motion and the grasp to be."""
    return {
        "positions_velocities": "dq within velocity_noise_abs of the truth at the sample "
                                "instants (0: exact); q may be read to an encoder count "
                                "(it enters the regressors only)",
        "velocity_estimate": "published dq" if c.velocity_estimate is None else
        {"dq": "least-squares slope of the positions; every sample used is within "
               "velocity_noise_abs when |q̈| <= accel_abs, q̈ changes at most jerk_abs x "
               "(|dt| + accel_hold_s), q is read to half an encoder count and stamps lag "
               "their instants by at most stamp_delay_s",
         **c.velocity_estimate.assumptions()},
        "velocity_sign": "dq stays on one side of the Coulomb band between two samples "
                         "that are both outside it on that side",
        "rigid_grasp": "payload rigidly attached and unchanged during the data",
        "sources": list(c.sources),
    }


def _calibration_rows_assumptions(c: IdentificationConfig) -> dict[str, Any]:
    """What calibration rows add (nothing without them)."""
    if c.calibration_rows is None:
        return {}
    return {
        "calibration_rows": {
            "rows": len(c.calibration_rows),
            "noise_abs_Nm": c.calibration_rows.noise.tolist(),
            "statement": "the calibration's momentum rows constrain the shared theta_r and "
                         "friction unknowns: same robot (links, friction, torque offsets "
                         "unchanged since the calibration recordings), the calibration's "
                         "window-averaged noise bound held on them, the end-effector body "
                         "during calibration inside its calibration prior box",
            "provenance": c.calibration_rows.info}
    }


def _floating_base_assumptions(c: IdentificationConfig) -> dict[str, Any]:
    """The trunk IMU's bounds and the floating base's premises (nothing on a fixed base)."""
    if c.imu is None:
        return {}
    return {
        "imu_bounds": {"gyro_bias_abs_rad_s": c.imu.gyro_bias_abs,
                       "gyro_noise_abs_rad_s": c.imu.gyro_noise_abs,
                       "accel_bias_abs_m_s2": c.imu.accel_bias_abs,
                       "accel_noise_abs_m_s2": c.imu.accel_noise_abs,
                       "angular_accel_abs_rad_s2": c.imu.angular_accel_abs,
                       "jerk_abs_m_s3": c.imu.jerk_abs, "max_gap_s": c.imu.max_gap},
        "floating_base": "rows of the arm joints only, trunk motion from the IMU (angular "
                         "velocity + specific force, bias included in the bounds); no "
                         "contact on the arm or payload; IMU rigidly mounted as modelled",
    }


def _fail(key: str, why: str) -> IdentificationConfigError:
    return IdentificationConfigError(f"identification.{key}: {why}")


def _per_joint_ok(c: IdentificationConfig, key: str,
                  ok: Callable[[np.ndarray], np.ndarray], why: str) -> None:
    """Refuse ``key`` unless it has one finite value per joint, each ``ok``."""
    v = getattr(c, key)
    if v.shape != c.torque_noise_abs.shape or not np.all(np.isfinite(v)) or not np.all(ok(v)):
        raise _fail(key, why)


def _check(c: IdentificationConfig) -> None:
    """Refuse a setting out of its range, naming its key (the checks run in this order)."""
    for check in (_check_noise, _check_boxes, _check_windows, _check_velocity_noise,
                  _check_timing, _check_gaps, _check_torque_gain, _check_lp):
        check(c)


def _check_noise(c: IdentificationConfig) -> None:
    """The torque-noise bounds and the θ_r box's relative radius."""
    if np.any(~np.isfinite(c.torque_noise_abs)) or np.any(c.torque_noise_abs < 0):
        raise _fail("torque_noise_abs", "must be finite and >= 0")
    if not 0.0 <= c.torque_noise_rel < 1.0:
        raise _fail("torque_noise_rel", f"{c.torque_noise_rel} is not a fraction in [0, 1)")
    if np.all(c.torque_noise_abs == 0) and c.torque_noise_rel == 0:
        raise _fail("torque_noise_abs", "both noise bounds are zero; give a positive bound")
    if np.any(~np.isfinite(c.robot_uncertainty_rel)) or np.any(c.robot_uncertainty_rel < 0):
        raise _fail("robot_uncertainty_rel", "must be finite and >= 0")


def _check_boxes(c: IdentificationConfig) -> None:
    """The friction mode, the friction and extra-term boxes, an explicit θ_r box."""
    nj = c.torque_noise_abs.shape[0]
    if c.friction not in FRICTION_MODES:
        raise _fail("friction", f"{c.friction!r} is not one of {FRICTION_MODES}")
    for name, a in (("friction_lower", c.friction_lower), ("friction_upper", c.friction_upper)):
        if a.shape != (nj, 4) or not np.all(np.isfinite(a)):
            raise _fail(name, f"expected {nj}x4 finite values [Fc, Fv, Ia, beta]")
    if np.any(c.friction_lower > c.friction_upper):
        raise _fail("friction", "a friction box has lower > upper")
    terms = c.friction_terms
    if terms is not None:
        if terms.nominal.shape[0] != c.friction_lower.shape[0]:
            raise _fail("friction_terms", f"{terms.nominal.shape[0]} joints, the robot has "
                        f"{c.friction_lower.shape[0]}")
        if c.velocity_noise_scope == "all" and np.any(c.velocity_noise_abs > 0) \
                and terms.velocity_errors(1.0) is None:
            raise _fail("velocity_noise_abs", f"the calibrated friction terms {list(terms.names)} "
                        "have no bound on what a velocity error moves them by; state velocity "
                        "noise with velocity_noise_scope: payload (the calibration's bound covers "
                        "it) or use exact velocities")
    if np.any(c.friction_lower[:, 0] < 0):
        raise _fail("friction", "Coulomb friction Fc cannot be negative (its box starts < 0)")
    if c.theta_r_lower is not None:
        if c.theta_r_upper is None or c.theta_r_lower.shape != c.theta_r_nominal.shape \
                or c.theta_r_upper.shape != c.theta_r_nominal.shape \
                or np.any(c.theta_r_lower > c.theta_r_upper):
            raise _fail("theta_r", "explicit theta_r box malformed (shape or lower > upper)")


def _check_windows(c: IdentificationConfig) -> None:
    """The Coulomb band, the windows and the quadrature allowance."""
    if c.coulomb_band < 0:
        raise _fail("coulomb_band", "must be >= 0 (rad/s)")
    if c.window or c.stride:
        if c.window < 4 or c.stride < 2 or c.stride % 2 or c.window % c.stride:
            raise _fail("window", f"window={c.window}, stride={c.stride}: stride must be even, "
                        "at least 2, and divide window")
    if not (c.window_s > 0 and 0 < c.stride_s <= c.window_s):
        raise _fail("window_s", f"window_s={c.window_s}, stride_s={c.stride_s}: need "
                    "0 < stride_s <= window_s")
    if c.quadrature_safety < 0:
        raise _fail("quadrature_safety", "must be >= 0")


def _check_velocity_noise(c: IdentificationConfig) -> None:
    """The velocity-noise bound and what of its effect the rows state."""
    _per_joint_ok(c, "velocity_noise_abs", lambda v: v >= 0, "expected one finite value >= 0 "
                  "rad/s per joint (or one for all)")
    if c.velocity_estimate is not None and np.any(c.velocity_noise_abs <= 0):
        raise _fail("velocity_noise_abs", "velocity_estimate needs the stated bound of its "
                    "estimates (> 0 rad/s per joint): samples above it are not used")
    if c.velocity_noise_scope not in VELOCITY_NOISE_SCOPES:
        raise _fail("velocity_noise_scope", f"{c.velocity_noise_scope!r} is not one of "
                    f"{VELOCITY_NOISE_SCOPES}")
    if c.velocity_noise_scope == "payload" and not c.calibrated:
        raise _fail("velocity_noise_scope", "'payload' states only what a payload adds to the "
                    "velocity error's effect and rests on a calibration that measured the rest "
                    "through the same velocities; no calibration is loaded (use 'all')")


def _check_timing(c: IdentificationConfig) -> None:
    """Stream lags, excluded windows and the torque samples' offset."""
    for key in ("torque_lag_s", "torque_lag_radius_s", "velocity_lag_s", "velocity_lag_radius_s",
                "exclude_speed_rad_s"):
        if getattr(c, key).shape != c.torque_noise_abs.shape:
            raise _fail(key, "expected one value per joint (or one for all)")
    for key in ("torque_lag_s", "velocity_lag_s"):
        _per_joint_ok(c, key, lambda v: np.abs(v) <= 0.5, "expected finite lags within +-0.5 s")
    for key in ("torque_lag_radius_s", "velocity_lag_radius_s"):
        _per_joint_ok(c, key, lambda v: v >= 0, "expected finite values >= 0 s")
    if np.any(np.isnan(c.exclude_speed_rad_s)) or np.any(c.exclude_speed_rad_s <= 0):
        raise _fail("exclude_speed_rad_s", "expected speeds > 0 rad/s (null or .inf: no rule)")
    if not (np.isfinite(c.exclude_after_start_s) and c.exclude_after_start_s >= 0):
        raise _fail("exclude_after_start_s", "must be a finite number of seconds >= 0")
    if not (np.isfinite(c.torque_delay_samples) and c.torque_delay_samples >= 0):
        raise _fail("torque_delay_samples", "must be a finite number of sample steps >= 0")


def _check_gaps(c: IdentificationConfig) -> None:
    """Where the windows split at gaps, and the torque rate that bridges short ones."""
    if c.max_sample_gap < 0:
        raise _fail("max_sample_gap", "must be >= 0 seconds (0 = gap_factor x median step)")
    if c.gap_floor < 0:
        raise _fail("gap_floor", "must be >= 0 seconds")
    if not c.gap_factor > 1.0:
        raise _fail("gap_factor", "must be > 1 (a multiple of the median step)")
    _per_joint_ok(c, "torque_rate_abs", lambda v: v >= 0, "must be finite N*m/s >= 0, one "
                  "value or one per joint (0 = not stated)")


def _check_torque_gain(c: IdentificationConfig) -> None:
    """The torque reading's gain and its bound."""
    _per_joint_ok(c, "torque_gain", lambda v: v > 0,
                  "must be finite gains > 0, one value or one per joint")
    _per_joint_ok(c, "torque_gain_rel", lambda v: (v >= 0) & (v < 1),
                  "must be fractions in [0, 1), one value or one per joint")
    _per_joint_ok(c, "torque_noise_speed", lambda v: v >= 0,
                  "must be finite N*m per rad/s >= 0, one value or one per joint")


def _check_lp(c: IdentificationConfig) -> None:
    """Bridged steps, cut rounds, calibration rows, the online row caps and the prior B₀."""
    if not (np.isfinite(c.bridge_factor) and c.bridge_factor >= 1.0):
        raise _fail("bridge_factor", "must be a finite multiple >= 1 of the median step")
    if c.cut_rounds < 0 or c.max_cuts < 0:
        raise _fail("cut_rounds", f"cut_rounds={c.cut_rounds}, max_cuts={c.max_cuts}: must be >= 0")
    if c.calibration_rows is not None and not (c.theta_r_unknowns and c.friction_unknowns):
        raise _fail("calibration_rows", "need theta_r_unknowns and friction_unknowns: the "
                    "calibration rows constrain the shared theta_r and friction unknowns")
    for key in ("online_max_rows", "online_lp_rows"):
        if getattr(c, key) < 10:
            raise _fail(key, "must be >= 10")
    # (a ParameterBox is finite with lower <= upper by construction; B₀ must have width)
    if not isinstance(c.prior, ParameterBox) or c.prior.names != PARAM_NAMES \
            or np.any(c.prior.lower >= c.prior.upper):
        raise _fail("prior", "lower/upper must be 10 finite values each with lower < upper")


def _per_joint(raw: Any, n: int, key: str) -> np.ndarray:
    if isinstance(raw, str):
        raw = [float(x) for x in raw.replace(",", " ").split()]
        raw = raw[0] if len(raw) == 1 else raw
    arr = np.asarray(raw, float)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    if arr.shape != (n,):
        raise _fail(key, f"expected a number or {n} numbers, got {raw!r}")
    return arr


def _exclusion_statement(c: IdentificationConfig) -> str:
    """The deterministic rule that drops rows, in words (\"none\" when off)."""
    parts = []
    speed = c.exclude_speed_rad_s
    if np.any(np.isfinite(speed)):
        parts.append("rows of joint j whose window holds a sample with |dq_j| >= "
                     f"{[round(float(v), 4) if np.isfinite(v) else None for v in speed]} rad/s")
    if c.exclude_after_start_s > 0:
        parts.append(f"every row of a window starting within {c.exclude_after_start_s} s of the "
                     "start of a run (recording start, gap, restart)")
    return "; ".join(parts) if parts else "none"


def _none_is_inf(raw: Any) -> Any:
    """A per-joint speed list where null (or a missing key) means "no limit"."""
    if raw is None:
        return np.inf
    if isinstance(raw, list):
        return [np.inf if x is None else x for x in raw]
    return raw


def _friction_box(robot: Robot, sec: dict[str, Any], mode: str) -> tuple[np.ndarray, np.ndarray]:
    fr = robot.friction
    if mode == "none":
        return np.zeros_like(fr.nominal), np.zeros_like(fr.nominal)
    if mode == "config":
        # Coulomb friction is never negative: a catalogue box "0 ± a" means [0, a].
        lower = fr.lower.copy()
        lower[:, 0] = np.maximum(lower[:, 0], 0.0)
        return lower, fr.upper
    wide = sec.get("friction_wide")
    if not isinstance(wide, dict):
        raise _fail("friction_wide", "mode 'wide' needs friction_wide: {rel: {...}, abs: {...}} "
                    "in the robot's identification section")
    rel = np.array([float((wide.get("rel") or {}).get(k, 0.0)) for k in FRICTION_NAMES])
    absr = np.array([float((wide.get("abs") or {}).get(k, 0.0)) for k in FRICTION_NAMES])
    if np.any(rel < 0) or np.any(absr < 0):
        raise _fail("friction_wide", "radii must be >= 0")
    rad = absr + rel * np.abs(fr.nominal)
    lower, upper = fr.nominal - rad, fr.nominal + rad
    # it holds the catalogue box too; Fc, Fv, Ia are non-negative (a catalogue box "0 ± a"
    # means [0, a], as in mode config)
    lower = np.minimum(lower, fr.lower)
    lower[:, :3] = np.maximum(lower[:, :3], 0.0)
    return lower, np.maximum(upper, fr.upper)


#: Keys of a prior (an entry of ``identification.priors`` or a prior file).
PRIOR_KEYS = ("lower", "upper", "description", "physical_faces")


def _prior_entry(spec: str, priors: dict[str, Any]) -> tuple[str, Section]:
    """(name, entry) of a prior: an entry of ``priors`` or a YAML file (:func:`load_prior`)."""
    if spec in priors:
        return spec, Section("robot file", priors[spec], f"priors.{spec}", _prior_error,
                             PRIOR_KEYS)
    path = Path(spec)
    if not path.is_file():
        raise _fail("prior", f"{spec!r} is neither a prior of this robot "
                    f"({sorted(priors) or 'none defined'}) nor a file")
    top = read_yaml(path, "prior", _prior_error, ("prior", *PRIOR_KEYS))
    nested = top.section("prior", PRIOR_KEYS, default=None)
    # a 'prior:' key is the nested form even when empty: with top-level bounds beside it
    # the file is ambiguous (which half did its author mean?), never read in part
    if "prior" in top.data and (nested is None or set(top.data) != {"prior"}):
        raise _prior_error(f"{path}: give the bounds either under 'prior:' or at the top "
                           "level, not both")
    return str(path), top if nested is None else nested


def load_prior(spec: str, priors: dict[str, Any] | None = None, *,
               frame: str = "") -> tuple[str, ParameterBox]:
    """(name, box) of a prior: the name of an entry of ``priors`` or a YAML file with
    ``lower``/``upper`` (10 values each, Pinocchio order, end-effector joint frame; optionally
    under a ``prior:`` key, with a ``description``). The box is a θ_e
    :class:`~sysid_ros._src.model.box.ParameterBox` (nominal its centre) in ``frame`` (the robot's
    ``ee_joint``, when known). The entry is checked by :mod:`sysid_ros._src.schema`: an unknown key,
    a missing bound or a bound that is not 10 finite numbers is an error naming the file (or
    the entry) and the key."""
    name, entry = _prior_entry(spec, priors or {})
    lower = entry.numbers("lower", len(PARAM_NAMES), "θ_e lower bounds, Pinocchio order")
    upper = entry.numbers("upper", len(PARAM_NAMES), "θ_e upper bounds, Pinocchio order")
    entry.string("description", default=None)
    _faces(name, entry)
    try:
        return name, theta_e_box(lower, upper, frame=frame)
    except (BoxError, TypeError, ValueError) as exc:
        raise _fail("prior", f"{name}: {exc}") from exc


def prior_physical_faces(spec: str, priors: dict[str, Any] | None = None
                         ) -> tuple[tuple[int, str], ...]:
    """The prior's ``physical_faces``: entries ``"NAME lower|upper"`` naming faces that are
    facts of the mounting, not a catalogue's range (the bare bracelet's m·c_z with every tool
    beyond the flange). An ``ok`` box resting on such a face is reported in the result's notes,
    not warned about as pinned (:func:`~.diagnostics.pinned_faces`)."""
    return _faces(*_prior_entry(spec, priors or {}))


def _faces(name: str, entry: Section) -> tuple[tuple[int, str], ...]:
    """The ``physical_faces`` of an already-read prior entry (:func:`prior_physical_faces`)."""
    raw = entry.data.get("physical_faces") or []
    out = []
    for item in raw if isinstance(raw, list) else [raw]:
        parts = str(item).split()
        if len(parts) != 2 or parts[0] not in PARAM_NAMES or parts[1] not in ("lower", "upper"):
            raise _prior_error(f"{name}: physical_faces entry {item!r}: expected 'NAME lower' "
                               f"or 'NAME upper' with NAME one of {list(PARAM_NAMES)}")
        out.append((PARAM_NAMES.index(parts[0]), parts[1]))
    return tuple(out)


def _prior_error(message: str) -> IdentificationConfigError:
    return IdentificationConfigError(f"identification.prior: {message}")


_INT_KEYS = ("window", "stride", "online_max_rows", "online_lp_rows", "cut_rounds", "max_cuts",
             "calibration_rows_max")
_FLOAT_KEYS = ("coulomb_band", "window_s", "stride_s", "max_sample_gap", "gap_factor",
               "gap_floor", "quadrature_safety", "torque_delay_samples", "exclude_after_start_s",
               "bridge_factor")
#: Every optional key of a robot file's ``identification:`` section with its default (the
#: fields' defaults and :data:`PER_JOINT_DEFAULTS`: defined there, listed here for the reference).
SECTION_DEFAULTS: dict[str, Any] = {
    **{k: _FIELD_DEFAULTS[k] for k in (*_FLOAT_KEYS, *_INT_KEYS, "friction_unknowns",
                                       "theta_r_unknowns", "velocity_noise_scope")
       if k in _FIELD_DEFAULTS},
    **PER_JOINT_DEFAULTS}


def load_identification_config(robot: Robot, **overrides: Any) -> IdentificationConfig:
    """The robot's ``identification:`` section with ``overrides`` (None values ignored).

    ``prior`` may be overridden by a prior name or a YAML file path. Raises
    IdentificationConfigError naming the key for anything missing or malformed.
    """
    sec = robot.config.get("identification")
    if not isinstance(sec, dict):
        raise IdentificationConfigError(
            f"{robot.config_path}: no 'identification:' section (prior box, noise bounds)")
    overrides = {k: v for k, v in overrides.items() if v is not None}
    prior_name, prior, physical = _prior(robot, sec, overrides.pop("prior", None))
    mode = str(overrides.pop("friction", None) or sec.get("friction", "config"))
    if mode not in FRICTION_MODES:
        raise _fail("friction", f"{mode!r} is not one of {FRICTION_MODES}")
    try:
        kwargs = _section_settings(robot, sec, mode, prior, prior_name)
        rows_max = int(kwargs.pop("calibration_rows_max", 0))
        rows_max = int(overrides.pop("calibration_rows_max", rows_max))
        spec = overrides.pop("calibration_rows", None) or sec.get("calibration_rows")
        if spec is not None:
            kwargs["calibration_rows"] = _calibration_rows(robot, spec, rows_max,
                                                           kwargs["friction_terms"])
            # the rows constrain the shared θ_r: on unless the file says otherwise (then _check
            # names the conflict)
            kwargs["theta_r_unknowns"] = bool(sec.get("theta_r_unknowns", True))
            kwargs["sources"] = (*kwargs["sources"], f"calibration rows {spec}"
                                 if not isinstance(spec, CalibrationConstraints)
                                 else "calibration rows (in memory)")
        cfg = IdentificationConfig(**kwargs, prior_physical_faces=physical)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, IdentificationConfigError):
            raise
        raise IdentificationConfigError(f"{robot.config_path}: identification: {exc}") from exc
    for key in ("torque_noise_abs", "velocity_noise_abs", "torque_gain", "torque_gain_rel",
                "torque_noise_speed"):
        if key in overrides:
            overrides[key] = _per_joint(overrides[key], robot.nj, key)
    if isinstance(overrides.get("imu"), dict):
        if not robot.floating_base:
            raise _fail("imu", f"{robot.name} has a fixed base: no trunk IMU to bound")
        overrides["imu"] = ImuBounds.from_mapping(overrides["imu"], "imu")
    if isinstance(overrides.get("velocity_estimate"), dict):
        overrides["velocity_estimate"] = VelocityEstimate.from_mapping(
            overrides["velocity_estimate"], robot.nj, "velocity_estimate")
    cfg = cfg.with_overrides(**overrides) if overrides else cfg
    _check_estimate_calibration(robot, cfg)
    return cfg


def _check_estimate_calibration(robot: Robot, cfg: IdentificationConfig) -> None:
    """Scope ``payload`` with the identifier's own velocity estimate rests on a calibration whose
    bound absorbed that estimate's error through the unloaded arm: its recordings' velocities
    must be the same estimate's."""
    if cfg.velocity_estimate is None or cfg.velocity_noise_scope != "payload":
        return
    want = slope_source(cfg.velocity_estimate.half_width_s)
    used = (((robot.config.get("calibration") or {}).get("provenance") or {})
            .get("velocity_source") or [])
    if not used or any(u != want for u in used):
        raise _fail("velocity_noise_scope", f"'payload' with the velocity estimate needs a "
                    f"calibration made from the same estimate ({want!r}; sysid-calibrate "
                    f"--state-estimate slope); this one used {used or 'unknown velocities'}")


def _prior(robot: Robot, sec: dict[str, Any], override: Any
           ) -> tuple[str, ParameterBox, tuple[tuple[int, str], ...]]:
    """(name, box, physical faces) of the prior B₀: the override (a name or a file), else the
    section's."""
    prior_spec = override or sec.get("prior")
    if isinstance(prior_spec, dict):
        _, prior = load_prior("inline", {"inline": prior_spec}, frame=robot.ee_joint)
        return "robot file", prior, prior_physical_faces("inline", {"inline": prior_spec})
    if isinstance(prior_spec, str):
        priors = sec.get("priors") or {}
        name, prior = load_prior(prior_spec, priors, frame=robot.ee_joint)
        return name, prior, prior_physical_faces(prior_spec, priors)
    raise _fail("prior", "expected the name of an entry of 'priors:' or a mapping with "
                "'lower' and 'upper'")


def _section_settings(robot: Robot, sec: dict[str, Any], mode: str, prior: ParameterBox,
                      prior_name: str) -> dict[str, Any]:
    """The IdentificationConfig fields the robot (and its calibration) and its section give;
    the calibration rows aside."""
    n_other = robot.n_bodies - 1
    f_lo, f_hi = _friction_box(robot, sec, mode)
    explicit = robot.theta_r_box

    def per_joint(key: str, default: float | None = None) -> np.ndarray:
        fill = PER_JOINT_DEFAULTS[key] if default is None else default
        return _per_joint(sec.get(key, fill), robot.nj, key)

    def scalar(key: str) -> Any:
        return sec.get(key, _FIELD_DEFAULTS[key])

    kwargs: dict[str, Any] = dict(
        torque_noise_abs=per_joint("torque_noise_abs", 0.0),
        torque_noise_rel=float(sec.get("torque_noise_rel", 0.0)),
        theta_r_nominal=robot.theta_r(),
        robot_uncertainty_rel=_per_joint(
            sec.get("robot_uncertainty_rel", robot.links_rel_uncertainty), n_other,
            "robot_uncertainty_rel"),
        theta_r_lower=None if explicit is None else explicit[0],
        theta_r_upper=None if explicit is None else explicit[1],
        friction=mode, friction_lower=f_lo, friction_upper=f_hi,
        friction_terms=robot.friction.terms if mode == "config" else None,
        prior=prior, prior_name=prior_name,
        friction_unknowns=bool(scalar("friction_unknowns")),
        theta_r_unknowns=bool(scalar("theta_r_unknowns")),
        velocity_noise_abs=per_joint("velocity_noise_abs"),
        velocity_noise_scope=str(scalar("velocity_noise_scope")),
        velocity_estimate=None if sec.get("velocity_estimate") is None else
        VelocityEstimate.from_mapping(sec["velocity_estimate"], robot.nj,
                                      f"{robot.config_path}: identification.velocity_estimate"),
        torque_lag_s=per_joint("torque_lag_s"),
        torque_lag_radius_s=per_joint("torque_lag_radius_s"),
        velocity_lag_s=per_joint("velocity_lag_s"),
        velocity_lag_radius_s=per_joint("velocity_lag_radius_s"),
        torque_rate_abs=per_joint("torque_rate_abs"),
        torque_gain=per_joint("torque_gain"),
        torque_noise_speed=per_joint("torque_noise_speed"),
        torque_gain_rel=per_joint("torque_gain_rel"),
        exclude_speed_rad_s=_per_joint(_none_is_inf(sec.get("exclude_speed_rad_s")),
                                       robot.nj, "exclude_speed_rad_s"),
        calibrated="calibration" in robot.config,
        sources=tuple(robot.sources),
    )
    if robot.floating_base:
        if "imu" not in sec:
            raise _fail("imu", f"{robot.config_path}: a floating-base robot needs the trunk "
                        "IMU's bounds (gyro_bias_abs, gyro_noise_abs, accel_bias_abs, "
                        "accel_noise_abs, angular_accel_abs, jerk_abs, max_gap)")
        kwargs["imu"] = ImuBounds.from_mapping(sec["imu"], "identification.imu")
    if "robot_uncertainty_rel" in sec and explicit is not None:
        kwargs["theta_r_lower"] = kwargs["theta_r_upper"] = None
    kwargs.update({k: int(sec[k]) for k in _INT_KEYS if k in sec})
    kwargs.update({k: float(sec[k]) for k in _FLOAT_KEYS if k in sec})
    return kwargs


def _calibration_rows(robot: Robot, spec: Any, rows_max: int,
                      terms: FrictionTerms | None) -> CalibrationConstraints:
    """``spec``: loaded rows or a path (relative: to the robot file's directory; an overlay's
    path is made absolute when it is applied); their columns must carry ``terms``."""
    if isinstance(spec, CalibrationConstraints):
        spec.check(robot, terms=terms)
        return spec.subsample(rows_max)
    path = Path(str(spec))
    if not path.is_absolute() and robot.config_path:
        path = Path(robot.config_path).parent / path
    return CalibrationConstraints.load(path, robot, terms).subsample(rows_max)


def payload_prior_box(theta_ee: np.ndarray, mass_max: float, com_lower: np.ndarray,
                      com_upper: np.ndarray, gyration_max: float, *,
                      frame: str = "") -> ParameterBox:
    """θ_e box (nominal its centre, in ``frame``: the robot's ``ee_joint`` when known)
    containing θ_ee + θ_payload for every rigid payload with mass in [0, mass_max],
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
    return theta_e_box(lower, upper, frame=frame)
