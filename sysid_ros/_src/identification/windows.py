"""Windowed momentum equations: the raw integrals every sound row is built from.

Momentum p = H(q)q̇ = W_m(q, q̇)·θ obeys ṗ = τ − τ_f + W_c(q, q̇)·θ with W_c·θ = Cᵀq̇ − g
(S3-7..9), τ_f = Fc·σ(q̇) + Fv·q̇ + Ia·q̈ + β the joint friction/actuation law. Integrating
over a window [a, b] gives, per joint (one row),

    (ΔW_m − ∫W_c dt)·θ + Fc·∫σ(q̇)dt + Fv·∫q̇ dt + Ia·Δq̇ + β·T = ∫τ dt,

with Δx = x(b) − x(a), T = t_b − t_a; ∫Ia·q̈ = Ia·Δq̇ is exact. ∫q̇ dt is Δq in exact
arithmetic, but positions are read to an encoder count: on the Gen3 (Fv ≈ 10 N·m·s/rad, counts
of 0.02°/0.011°) one count in Δq moves the viscous term by up to 0.0037 N·m·s, a third of a
±0.1 N·m bound's radius over 0.1 s, which rows built from Δq would carry nowhere (the simulator's
quantized positions miss the radius at the truth by that much). The trapezoid of the sampled
velocity has no such error; its quadrature allowance is ``quad_dq``.

This module computes, for every window and joint, the pieces of that equation from measured
samples — nothing here knows which parameters are unknown, fixed or box-bounded; that split is
:mod:`sysid_ros._src.identification.problem`'s (payload identification) and the calibration's:

- ``W`` = ΔW_m − ∫W_c (all bodies' columns), ``tau`` = ∫τ̂ and ``tau_abs`` = ∫|τ̂| (trapezoid on
  the real, non-uniform stamps);
- ``fric`` = the coefficients of [Fc, Fv, Ia, β]: [∫σ(q̇) (centre), ∫q̇ (trapezoid), Δq̇, T];
- ``sign_rad``: ∫σ(q̇) is only known to an interval. σ(q̇) = sign(q̇) when |q̇| > ``coulomb_band``
  and anything in [−1, 1] inside the band (dry friction is set-valued at rest and smooth,
  Stribeck-like or soft, at low speed: MuJoCo's frictionloss, real gearboxes). A step whose two
  samples have the same σ = ±1 integrates exactly (q̇ does not leave that side between samples:
  an assumption stated below); any other step contributes its trapezoid value as centre and
  Δt − |value| as radius, which covers every σ path in [−1, 1];
- ``quad_tau``, ``quad_W``: |T_fine − T_coarse|/3 (= |Simpson − trapezoid|) of ∫τ̂ and of each
  ∫W_c column, the consumer's quadrature allowance before its safety factor;
- ``tau_start``, ``tau_end``, ``delay``: τ̂ at the window's ends and the stream's torque-timing
  bound δ. A torque sample does not stand for the same instant as the joint state it arrives
  with: a digital controller's command is held over the period after it (or, as a simulator or
  a driver reports it, the period before), and a sensor's filter lags. If the torque stream is
  offset from the states by a constant δ, ∫ over the window of the true torque is
  ∫τ̂ + δ·(τ_end − τ_start) (exactly for a held command shifted by half a step, to first order
  otherwise) — an error the trapezoid-vs-Simpson allowance does not see: for a held command
  the trapezoid is exact on the samples and wrong by ½·Δt·(τ_end − τ_start). Measured on the
  simulator (Gen3, exact model, noise-free, 1 kHz, 0.1 s windows) it is up to 0.0034 N·m·s,
  a third of a ±0.1 N·m noise bound's radius; with 0.02-s windows twice the radius.

Windows are defined in seconds (``window_s``, ``stride_s``) and turned into sample counts from
the stream's own median step, so the same defaults work from 100 Hz to 4 kHz. Consecutive
samples further apart than ``max_sample_gap`` (by default ``gap_factor`` × the median step:
2.5 carries a window across one dropped sample, not across two) end a run: no window spans the
gap. A window across a single drop is as sound as any other: its trapezoid step is twice as
long and the quadrature allowance, computed from the same samples, grows with it.

A few dropped samples in a row (a lossy UDP link at 500 Hz drops two or three in a row every
few hundred samples) need more than that: nothing in the samples bounds the torque inside the
gap. With a stated torque-rate bound L_j (``torque_rate_abs``: τ_j = g + e with |ġ| ≤ L_j and
|e| ≤ L_j·Δ/2, Δ the median step: a command slewing at most L_j, held over at most a step) a
step of length h ≤ ``max_bridged_gap`` (``bridge_factor`` × Δ) is bridged: ∫(g − chord) over
the step is at most L_j·h²/4 (g rising at L_j then falling back to the far end) and
∫(e − chord) at most L_j·Δ·h, so ∫τ differs from the trapezoid by at most L_j·(h²/4 + Δ·h).
That allowance, and the error bound
of lag-compensated torques read inside such a step (:mod:`.alignment`), sum into ``gap_rad``
per row. The bound is checked where it is used: a step whose end torques differ by more than
L_j·(h + Δ) plus the two samples' noise bounds splits the run (``n_bridge_refused``).

Cost: ``Regressors.momentum_pair`` once per new sample, running trapezoid sums stored only at
window boundaries (every ``stride`` samples), so a window is a difference of two prefix sums and
memory/CPU per sample do not grow with the length of the recording.

Assumptions these integrals rest on (the consumer repeats them in its results): q and q̇ exact at
the sample instants; q̇ stays on one side of the Coulomb band between two samples that are both
outside it on the same side; the trapezoid error of each window is within the consumer's
safety factor × |Simpson − trapezoid|.

Floating base (B1 + Z1): only the rows of the joints that carry the end effector (the arm) are
formed, in the columns of the arm subtree's bodies (every other column of those rows is exactly
zero); each sample needs the trunk's IMU-derived ω and effective gravity
(:mod:`.base_motion`, which proves why these suffice), and ``base_W`` carries the radius rows
of the IMU error: |row error| ≤ base_W·|θ|max. Samples without a valid base state end the run
(no window spans them). For a fixed base ``base_W`` is zero and nothing else changes.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import ArrayLike

from sysid_ros._src.identification.alignment import Bridging, StreamAlignment
from sysid_ros._src.identification.base_motion import BaseMotion, arm_model, arm_regressors, \
    imu_mount, trunk_bias
from sysid_ros._src.identification.config import IdentificationConfig, SamplingPlan
from sysid_ros._src.identification.errors import SampleError, UnsupportedRobotError
from sysid_ros._src.identification.velocity_estimate import VelocityCheck
from sysid_ros._src.identification.velocity_lag import LagContradiction, LagCurve, contradiction
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot

__all__ = ["MomentumRows", "MomentumWindows", "row_joints_and_bodies", "EXCLUDED_FAST",
           "EXCLUDED_START"]

# Samples used to measure the stream's rate before the first window is laid out online.
RATE_PROBE_SAMPLES = 32
#: Exclusion reasons (:meth:`MomentumWindows._excluded`) and how many examples are kept.
EXCLUDED_FAST = "speed_at_limit"
EXCLUDED_START = "run_start"
MAX_EXCLUDED_EXAMPLES = 20


@dataclass(frozen=True)
class MomentumRows:
    """One row per (window, joint); see the module docstring for each field's meaning.

    W (n, n_theta), tau/tau_abs (n,), fric (n, 4), sign_rad (n,), quad_tau (n,),
    quad_W (n, n_theta), joint (n,) int, start/end (n,) global sample indices,
    t_start/t_end (n,) s, base_W (n, n_theta) the radius rows of the IMU error (floating base;
    zero for a fixed one), vel_rad (n,) the radius of the velocity noise's momentum error at
    the window's two ends (zero without velocity noise; :meth:`MomentumWindows._velocity_radius`),
    G (n, k, n_theta) ∫ of W_c's gravity part per unit trunk-axis gravity and quad_G its
    quadrature allowance, D_omega (n, k, n_theta) what a constant gyro bias multiplies
    (k = 3 for a floating base, 0 for a fixed one; see :mod:`.base_motion`), tau_start/tau_end
    (n,) τ̂ at the window's first and last sample, quad_dq (n,) the quadrature allowance of
    ∫q̇ (the viscous column) before the safety factor and delay (n,) the torque-timing bound δ (s)
    of the stream (``SamplingPlan.torque_delay``: ∫τ over a window shifted by δ differs from
    ∫τ̂ by δ·(τ_end − τ_start), module docstring); gap_rad (n,) N·m·s the bound on ∫τ's error
    over the bridged steps in the window (zero when none is bridged, module docstring). terms
    (n, width) ∫ of the calibrated extra friction terms' features of the row's joint
    (``config.friction_terms``; width 0 without) and quad_terms (n, width) their quadrature
    allowance before the safety factor. speed_abs (n,) ∫|q̇| dt of the row's joint (rad; the
    speed-dependent torque-error bound's measure, ``torque_noise_speed``).
    """

    W: np.ndarray
    tau: np.ndarray
    tau_abs: np.ndarray
    fric: np.ndarray
    sign_rad: np.ndarray
    quad_tau: np.ndarray
    quad_W: np.ndarray
    joint: np.ndarray
    start: np.ndarray
    end: np.ndarray
    t_start: np.ndarray
    t_end: np.ndarray
    base_W: np.ndarray
    G: np.ndarray
    quad_G: np.ndarray
    D_omega: np.ndarray
    tau_start: np.ndarray
    tau_end: np.ndarray
    quad_dq: np.ndarray
    delay: np.ndarray
    vel_rad: np.ndarray
    gap_rad: np.ndarray
    terms: np.ndarray
    quad_terms: np.ndarray
    speed_abs: np.ndarray

    @staticmethod
    def empty(n_theta: int, k: int = 0, width: int = 0) -> MomentumRows:
        z, zi = np.zeros(0), np.zeros(0, int)
        return MomentumRows(np.zeros((0, n_theta)), z, z, np.zeros((0, 4)), z, z,
                            np.zeros((0, n_theta)), zi, zi, zi, z, z, np.zeros((0, n_theta)),
                            np.zeros((0, k, n_theta)), np.zeros((0, k, n_theta)),
                            np.zeros((0, k, n_theta)), z, z, z, z, z, z, np.zeros((0, width)),
                            np.zeros((0, width)), z)

    def __len__(self) -> int:
        return int(self.tau.shape[0])

    @property
    def duration(self) -> np.ndarray:
        """T = t_end − t_start per row (s)."""
        return self.fric[:, 3]

    def take(self, index: slice | np.ndarray) -> MomentumRows:
        """Rows selected by a slice, index array or boolean mask."""
        return MomentumRows(*(getattr(self, f.name)[index] for f in fields(self)))

    @staticmethod
    def concat(parts: list[MomentumRows]) -> MomentumRows:
        parts = [p for p in parts if len(p)]
        if not parts:
            raise ValueError("MomentumRows.concat needs at least one non-empty part")
        if len(parts) == 1:
            return parts[0]
        return MomentumRows(*(np.concatenate([getattr(p, f.name) for p in parts])
                              for f in fields(MomentumRows)))


@dataclass
class _Checkpoint:
    t: float
    dq: np.ndarray         # (nj,)
    w_m: np.ndarray        # (nj, n_theta)
    fine: np.ndarray       # (D,) running trapezoid integral of the integrand vector
    coarse: np.ndarray     # (D,) running every-other-sample trapezoid
    sign_rad: np.ndarray   # (nj,) running radius of ∫σ(q̇)
    tau: np.ndarray        # (nj,) τ̂ of the row joints at this sample
    v_m: np.ndarray        # (nr,) radius of the momentum's error under velocity noise
    gap_rad: np.ndarray    # (nr,) running bridged-step allowance (N·m·s)
    r_m: np.ndarray | None = None   # (nr, nc) IMU radius row of W_m (floating base)
    m_k: np.ndarray | None = None   # (3, nr, nc) W_m(e_k): what a gyro bias multiplies
    used: bool = False     # already closed a window as its end point


def _trapezoid_at(t: np.ndarray, f: np.ndarray, base: np.ndarray,
                  positions: np.ndarray) -> np.ndarray:
    """base + ∫ f dt (trapezoid on the samples t) from t[0] to t[p], for sorted ``positions``.

    Equal to ``base + cumsum(½·Δt·(f[:-1] + f[1:]))`` read at ``positions``, but summed one
    segment at a time with two matrix-vector products, so no (N, D) array is written.
    """
    out = np.empty((len(positions), f.shape[1]))
    acc, prev = base.astype(float).copy(), 0
    for o, p in enumerate(positions):
        p = int(p)
        if p > prev:
            dt = np.diff(t[prev:p + 1])
            acc = acc + 0.5 * (dt @ f[prev:p] + dt @ f[prev + 1:p + 1])
        out[o] = acc
        prev = p
    return out


class MomentumWindows:
    """Streams samples in, yields the rows of each window as soon as it is complete.

    Args:
        robot: a fixed-base robot (rows of every joint), or a floating-base one (rows of the
            joints carrying the end effector only; :meth:`extend` then needs the base motion).
        config: sampling plan (window/stride/gap in seconds or samples) and Coulomb band.
        regressors: optional shared :class:`Regressors` (not thread-safe: one per thread).
        rate_hz: the stream's rate if known (offline: from the whole recording); otherwise it is
            measured from the first :data:`RATE_PROBE_SAMPLES` samples, which are held until then.
    """

    def __init__(self, robot: Robot, config: IdentificationConfig,
                 regressors: Regressors | None = None, rate_hz: float | None = None) -> None:
        self.robot, self.config = robot, config
        self.reg = regressors or Regressors(robot)
        self.nj = robot.nj
        self.n_theta = self.reg.n_theta
        self.vi = robot.v_index
        self.floating = robot.floating_base
        #: joints (config order) whose rows are formed; their velocity indices; body columns
        self.row_joints, self.bodies = row_joints_and_bodies(robot)
        self.rows_v = self.vi[self.row_joints]
        self.cols = (10 * self.bodies[:, None] + np.arange(10)).reshape(-1)
        self.nr, self.nc = self.row_joints.size, self.cols.size
        self.n_g = 3 if self.floating else 0
        self.arm = arm_model(robot, self.row_joints, self.bodies) if self.floating else None
        self.gyro_bias = (trunk_bias(imu_mount(robot), config.imu.gyro_bias_abs)
                          if self.floating and config.imu is not None else np.zeros(3))
        # floating base: the arm joints' velocity errors are error directions of the base
        # motion's radius rows (:func:`~.base_motion.arm_regressors`), not _velocity_radius
        self._joint_eps = (config.velocity_noise_abs[self.arm.kept] if self.arm is not None
                           else None)
        self._theta_c, self._theta_rad = _velocity_theta_box(robot, config)
        self._theta_c, self._theta_rad = self._theta_c[self.cols], self._theta_rad[self.cols]
        self._fixed_rate = rate_hz
        self.align = StreamAlignment(config.torque_lag_s, config.velocity_lag_s,
                                     config.velocity_estimate, config.velocity_noise_abs,
                                     tuple(robot.joint_names))
        # published velocities are checked against the stated lag (.velocity_lag); a velocity
        # estimate replaces them and has its own premise check
        self._lag_curve_on = config.velocity_estimate is None
        self._fast = np.asarray(config.exclude_speed_rad_s, float)[self.row_joints]
        self._terms = config.friction_terms
        self.n_term_cols = 0 if self._terms is None else self._terms.width
        self.reset()

    # Integrand columns: [W_c (nr·nc) | τ̂ (nr) | |τ̂| (nr) | σ(q̇) (nr) | floating base:
    # r_c (nr·nc) | G (3·nr·nc) | B (3·nr·nc) | extra friction terms (nr·width) | τ̂ error (nr) |
    # fast (nr) | q̇ (nr) | |q̇| (nr)]; "fast" is 1 where |q̇_j| ≥ exclude_speed_rad_s: its integral over a
    # window is > 0 iff a sample reached it; "τ̂ error" bounds torques read inside a bridged step
    # (.alignment).
    def _integrand(self, w_c: np.ndarray, tau: np.ndarray, sigma: np.ndarray,
                   extra: tuple[np.ndarray, ...], q: np.ndarray, dq: np.ndarray,
                   tau_err: np.ndarray) -> np.ndarray:
        n = tau.shape[0]
        parts = [w_c.reshape(n, -1), tau, np.abs(tau), sigma]
        parts += [x.reshape(n, -1) for x in extra]
        if self._terms is not None:
            parts.append(self._terms.features(q, dq).reshape(n, -1))
        parts.append(tau_err)
        parts.append((np.abs(dq) >= self._fast).astype(float))
        parts.append(dq)
        parts.append(np.abs(dq))
        return np.concatenate(parts, axis=1)

    def _sigma(self, dq: np.ndarray) -> np.ndarray:
        """σ(q̇) at the samples: ±1 outside the Coulomb band, 0 (= unknown in [−1, 1]) inside.
        With velocity noise ε the measured q̇ must clear the band by ε for the true one to."""
        band = self.config.coulomb_band + self.config.velocity_noise_abs[self.row_joints]
        return np.where(np.abs(dq) > band, np.sign(dq), 0.0)

    def _velocity_radius(self, q: np.ndarray) -> np.ndarray:
        """(N, nr): the largest |W_m(q, e)·θ| = |(H(q)·e)_j| over velocity errors |e_i| ≤ ε_i and
        θ in the identifier's boxes (θ_r's, the prior B₀ for θ_e; with ``velocity_noise_scope``
        ``payload``, θ_r = 0 and θ_e − θ_ee instead, :func:`_velocity_theta_box`): W_m is linear
        in q̇, so it is
        Σ_i ε_i·max_θ |W_m(q, e_i)·θ| = Σ_i ε_i·(|W_m(q, e_i)·θ_c| + |W_m(q, e_i)|·rad θ), the
        centre's inertia-matrix column plus what the boxes let it vary by (never more than
        Σ_i ε_i·|W_m(q, e_i)|·|θ|max, which drops the cancellations inside H(q)'s entries).
        Zero without velocity noise."""
        eps = self.config.velocity_noise_abs
        out = np.zeros((q.shape[0], self.nr))
        if self.floating:
            return out                  # in the base motion's radius rows (__init__)
        for i in np.flatnonzero(eps > 0):
            v = np.zeros((q.shape[0], self.robot.nj))
            v[:, i] = eps[i]
            w = self._regressors(q, v, None)[0]                 # (N, nr, nc)
            out += np.abs(w @ self._theta_c) + np.abs(w) @ self._theta_rad
        return out

    def reset(self) -> None:
        """Forget every sample (new payload, or time jumped backwards)."""
        self.n_samples = 0
        self._skipped = 0        # dropped samples: they keep their place in the global index
        self.n_windows = 0
        self.n_gaps = 0
        self.n_unaligned = 0
        #: steps bridged (:mod:`.config` ``torque_rate_abs``), and those whose end torques
        #: contradicted the stated rate (they split the run instead)
        self.n_bridged = 0
        self.n_bridge_refused = 0
        #: rows dropped by the exclusion rule, by reason, and the first few of them
        self.excluded: dict[str, int] = {EXCLUDED_FAST: 0, EXCLUDED_START: 0}
        self.excluded_examples: list[tuple[str, str, float, float]] = []
        self.excluded_by_joint = np.zeros(self.nr, int)
        self.align.reset()
        self.align.velocity_check, self.align.n_velocity_unbounded = None, 0
        self.lag_curve = LagCurve(self.robot.nj) if self._lag_curve_on else None
        self.longest_gap = 0.0
        self.plan: SamplingPlan | None = None
        # held (t, q, q̇, τ, base or None) batches until the sampling rate is known
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                  np.ndarray | None]] = []
        if self._fixed_rate is not None:
            self.plan = self.config.sampling_plan(1.0 / self._fixed_rate)
        self._break()

    def break_run(self) -> None:
        """End the current run of samples (a jump in time): later windows start after it."""
        self._pending = []
        self.align.reset()
        if self.lag_curve is not None:
            self.lag_curve.break_run()
        self._break()

    def _break(self) -> None:
        """End the current run of samples: later windows start after this point."""
        self._last: tuple[float, np.ndarray] | None = None     # last sample: t, integrand
        self._run_start: float | None = None                   # first stamp of this run
        self._last_even: tuple[float, np.ndarray, np.ndarray] | None = None
        self._fine_last: np.ndarray | None = None
        self._sign_rad_last: np.ndarray | None = None
        self._gap_rad_last: np.ndarray | None = None
        self._checkpoints: OrderedDict[int, _Checkpoint] = OrderedDict()

    @property
    def premise_check(self) -> VelocityCheck | LagContradiction | None:
        """The first contradiction of the velocity premises the data show so far: the velocity
        estimate's (:mod:`.alignment`) or the stated velocity lag's (:mod:`.velocity_lag`);
        None when the data contradict neither."""
        if self.align.velocity_check is not None:
            return self.align.velocity_check
        if self.lag_curve is None:
            return None
        return contradiction(self.lag_curve, self.config.velocity_lag_s,
                             self.config.velocity_lag_radius_s, self.robot.joint_names,
                             self.row_joints, self.config.velocity_noise_abs)

    @property
    def last_time(self) -> float | None:
        if self._pending:
            return float(self._pending[-1][0][-1])
        if self.align.held:
            return self.align.last_time
        return None if self._last is None else self._last[0]

    def _validate_base(self, base: BaseMotion | None, n: int) -> np.ndarray | None:
        if not self.floating:
            if base is not None:
                raise SampleError(f"{self.robot.name}: base motion given for a fixed-base robot")
            return None
        if base is None:
            raise SampleError(f"{self.robot.name}: floating base — the arm rows need the trunk "
                              "IMU (base motion) for every sample")
        if len(base) != n:
            raise SampleError(f"imu: base motion for {len(base)} samples, {n} joint samples")
        stacked = base.stacked()
        if not np.all(np.isfinite(stacked)):
            raise SampleError("imu: non-finite base motion")
        return np.concatenate([stacked, base.valid[:, None].astype(float)], axis=1)

    def _validate(self, t: ArrayLike, q: ArrayLike, dq: ArrayLike | None, tau: ArrayLike
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        t = np.asarray(t, float).reshape(-1)
        if dq is None:
            raise SampleError("velocity: missing (no joint velocities in the data); estimate "
                              "them first (sysid-calibrate's state estimator) — never assumed 0")
        q, dq, tau = (np.asarray(x, float) for x in (q, dq, tau))
        arrays = [q, dq, tau]
        for name, a in zip(("position", "velocity", "effort"), arrays):
            if a.ndim != 2 or a.shape != (t.size, self.nj):
                raise SampleError(f"{name}: expected shape ({t.size}, {self.nj}), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise SampleError(f"{name}: non-finite value")
        if not np.all(np.isfinite(t)):
            raise SampleError("time: non-finite stamp")
        last = self.last_time
        prev = [] if last is None else [last]
        if np.any(np.diff(np.concatenate([prev, t])) <= 0):
            raise SampleError("time: stamps not strictly increasing")
        return t, q, dq, tau

    def extend(self, t: ArrayLike, q: ArrayLike, dq: ArrayLike | None, tau: ArrayLike,
               base: BaseMotion | None = None) -> MomentumRows:
        """Add samples (t (N,) s; q, q̇, τ̂ (N, nj) in ``robot.joint_names`` order; ``base`` the
        trunk motion at the same stamps, floating base only) and return the rows of every
        window completed by them. Raises SampleError on bad input (state is unchanged then). A
        gap longer than the plan's ``max_sample_gap`` (also before the first new sample), or a
        sample without a valid base state, ends the current run: no window integrates across
        it (``n_gaps`` counts them, ``longest_gap`` keeps the longest, s).
        """
        t, q, dq, tau = self._validate(t, q, dq, tau)
        tau = np.asarray(tau * self.config.torque_gain)   # the reading's stated gain (config)
        b = self._validate_base(base, t.size)
        if self.plan is None:
            self._pending.append((t, q, dq, tau, b))
            held = sum(len(p[0]) for p in self._pending)
            if held < RATE_PROBE_SAMPLES:
                return MomentumRows.empty(self.n_theta, self.n_g)
            t, q, dq, tau = (np.concatenate(x) for x in list(zip(*self._pending))[:4])
            b = None if b is None else np.concatenate([p[4] for p in self._pending
                                                       if p[4] is not None])
            self._pending = []
            self.plan = self.config.sampling_plan(float(np.median(np.diff(t))))
        if self.lag_curve is not None:
            self.lag_curve.push(t, q, dq, self.plan.dt)
        aligned = self.align.push(t, q, dq, tau, b, self.plan.max_sample_gap, self._bridging)
        t, q, dq, tau, b = aligned.t, aligned.q, aligned.dq, aligned.tau, aligned.extra
        err = aligned.tau_err
        valid = aligned.valid
        self.n_unaligned += int(np.sum(~valid))
        if b is not None:
            # samples without an IMU state split the stream like a gap
            valid = valid & (b[:, -1] > 0.5)
            b = b[:, :-1]
        if valid.all():
            return self._extend_timed(t, q, dq, tau, err, b)
        parts = []
        edges = np.flatnonzero(np.diff(np.concatenate([[0], valid.astype(int), [0]])))
        done = 0
        for a, e in zip(edges[::2], edges[1::2]):
            if a > 0:                # the run before an invalid sample ends there
                self._break()
                self.n_gaps += 1
            self._skipped += int(a - done)
            parts.append(self._extend_timed(t[a:e], q[a:e], dq[a:e], tau[a:e], err[a:e],
                                            None if b is None else b[a:e]))
            done = int(e)
        self._skipped += int(valid.size - done)
        if not valid[-1]:
            self._break()
        parts = [p for p in parts if len(p)]
        return MomentumRows.concat(parts) if parts else MomentumRows.empty(self.n_theta, self.n_g)

    @property
    def _bridging(self) -> Bridging | None:
        plan = self.plan
        if plan is None or plan.max_bridged_gap <= plan.max_sample_gap:
            return None
        return Bridging(plan.max_bridged_gap, self.config.torque_rate_abs, plan.dt)

    def _split_steps(self, t: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Which steps (from the run's last sample, then within ``t``) end the run: longer than
        the bridged limit, or bridged but with end torques the stated rate cannot explain."""
        assert self.plan is not None
        plan, rj = self.plan, self.row_joints
        if self._last is None:
            t_ext, tau_ext = t, tau[:, rj]
        else:
            o = self.nr * self.nc
            t_ext = np.concatenate([[self._last[0]], t])
            tau_ext = np.concatenate([self._last[1][None, o:o + self.nr], tau[:, rj]])
        steps = np.diff(t_ext)
        split = steps > plan.max_bridged_gap
        bridged = (steps > plan.max_sample_gap) & ~split
        if bridged.any():
            k = np.flatnonzero(bridged)
            rate = self.config.torque_rate_abs[rj]
            rel = self.config.torque_noise_rel
            ends = np.abs(tau_ext[k]) + np.abs(tau_ext[k + 1])
            allowed = rate * (steps[k, None] + plan.dt) + (
                2.0 * self.config.torque_noise_abs[rj] + rel * ends) / (1.0 - rel)
            bad = np.any(np.abs(tau_ext[k + 1] - tau_ext[k]) > allowed, axis=1)
            split[k[bad]] = True
            self.n_bridge_refused += int(bad.sum())
            self.n_bridged += int((~bad).sum())
        if split.any():
            self.longest_gap = max(self.longest_gap, float(steps[split].max()))
        return split

    def _extend_timed(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
                      err: np.ndarray, b: np.ndarray | None) -> MomentumRows:
        """:meth:`extend` after validation and rate probing: split at long gaps."""
        assert self.plan is not None
        prev = 0 if self._last is None else 1
        cuts = np.flatnonzero(self._split_steps(t, tau)) + 1 - prev
        if cuts.size == 0:
            return self._extend_run(t, q, dq, tau, err, b)
        parts = []
        bounds = [0, *[int(c) for c in cuts if c > 0], t.size]
        for a, e in zip(bounds[:-1], bounds[1:]):
            if a > 0 or cuts[0] <= 0:
                self._break()
                self.n_gaps += 1
            if e > a:
                parts.append(self._extend_run(t[a:e], q[a:e], dq[a:e], tau[a:e], err[a:e],
                                              None if b is None else b[a:e]))
        parts = [p for p in parts if len(p)]
        return MomentumRows.concat(parts) if parts else MomentumRows.empty(self.n_theta, self.n_g)

    def _regressors(self, q: np.ndarray, dq: np.ndarray, b: np.ndarray | None
                    ) -> tuple[np.ndarray, ...]:
        """(W_m, W_c) of the row joints in the body columns, (N, nr, nc) each, and for a
        floating base (r_m, r_c, G, M, B) of :func:`~.base_motion.arm_regressors`."""
        n = q.shape[0]
        if b is not None:
            assert self.arm is not None
            return arm_regressors(self.arm, q, dq, b, self.gyro_bias, self._joint_eps)
        q_full = np.tile(self.robot.neutral(), (n, 1))
        q_full[:, self.robot.q_index] = q
        dq_full = np.zeros((n, self.robot.nv))
        dq_full[:, self.vi] = dq
        w_m, w_c = self.reg.momentum_pair(q_full, dq_full)
        return w_m[:, self.rows_v], w_c[:, self.rows_v]

    def _extend_run(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
                    err: np.ndarray, b: np.ndarray | None = None) -> MomentumRows:
        n = t.size
        assert self.plan is not None
        if n == 0:
            return MomentumRows.empty(self.n_theta, self.n_g)
        w_m, w_c, *extra = self._regressors(q, dq, b)
        r_m, m_k = (extra[0], extra[3]) if extra else (None, None)
        rj = self.row_joints
        sigma = self._sigma(dq[:, rj])
        f = self._integrand(w_c, tau[:, rj], sigma,
                            (extra[1], extra[2], extra[4]) if extra else (), q[:, rj], dq[:, rj],
                            err[:, rj])
        g = self.n_samples + self._skipped + np.arange(n)

        stride = self.plan.stride
        ks = np.flatnonzero(g % stride == 0)           # checkpoints in this batch
        v_m = self._velocity_radius(q[ks])
        even = np.flatnonzero(g % 2 == 0)

        # Fine trapezoid, continuing from the last sample of the previous batch. Only its values
        # at checkpoints (and the batch's last sample) are ever used, so it is summed segment by
        # segment between those points instead of as an (N, D) cumulative sum.
        nr, o_sigma = self.nr, self.nr * self.nc + 2 * self.nr
        if self._last is None:
            self._run_start = float(t[0])
            t_ext, f_ext, base, off = t, f, np.zeros(f.shape[1]), 0
            s_ext, srad_base, gap_base = sigma, np.zeros(nr), np.zeros(nr)
        else:
            t_ext = np.concatenate([[self._last[0]], t])
            f_ext = np.concatenate([self._last[1][None], f])
            s_ext = np.concatenate([self._last[1][None, o_sigma:o_sigma + nr], sigma])
            # set together with _last at the end of every run (below)
            assert self._fine_last is not None and self._sign_rad_last is not None
            assert self._gap_rad_last is not None
            base, srad_base, off = self._fine_last, self._sign_rad_last, 1
            gap_base = self._gap_rad_last
        fine_pos = np.unique(np.concatenate([ks, [n - 1]])) + off
        fine_at = dict(zip((fine_pos - off).tolist(), _trapezoid_at(t_ext, f_ext, base, fine_pos)))
        dt = np.diff(t_ext)
        half = 0.5 * (s_ext[:-1] + s_ext[1:])
        srad = np.concatenate([srad_base[None], srad_base + np.cumsum(
            dt[:, None] * (1.0 - np.abs(half)), axis=0)])
        # bridged steps (the run was not split there): L_j·(h²/4 + Δ·h) each
        over = np.where(dt > self.plan.max_sample_gap, dt, 0.0)
        allowance = (over ** 2 / 4.0 + self.plan.dt * over)[:, None] * \
            self.config.torque_rate_abs[rj][None, :]
        grad = np.concatenate([gap_base[None], gap_base + np.cumsum(allowance, axis=0)])
        if self._last is not None:
            srad, grad = srad[1:], grad[1:]

        # Coarse trapezoid over even global indices (pairs of steps), same treatment.
        coarse_at: dict[int, np.ndarray] = {}
        if even.size:
            want = np.flatnonzero(g[even] % stride == 0)
            js = np.unique(np.concatenate([want, [even.size - 1]]))
            if self._last_even is None:
                te, fe, cbase, coff = t[even], f[even], np.zeros(f.shape[1]), 0
            else:
                te = np.concatenate([[self._last_even[0]], t[even]])
                fe = np.concatenate([self._last_even[1][None], f[even]])
                cbase, coff = self._last_even[2], 1
            coarse_at = dict(zip(js.tolist(), _trapezoid_at(te, fe, cbase, js + coff)))

        coarse_index = {int(gi): j for j, gi in enumerate(g[even])}
        for o_k, k in enumerate(ks):
            gi = int(g[k])
            self._checkpoints[gi] = _Checkpoint(
                t[k], dq[k, rj].copy(), w_m[k].copy(), fine_at[int(k)].copy(),
                coarse_at[coarse_index[gi]].copy(), srad[k].copy(), tau[k, rj].copy(),
                v_m[o_k], grad[k].copy(),
                None if r_m is None else r_m[k].copy(), None if m_k is None else m_k[k].copy())

        self._last = (t[-1], f[-1].copy())
        self._fine_last, self._sign_rad_last = fine_at[n - 1].copy(), srad[-1].copy()
        self._gap_rad_last = grad[-1].copy()
        if even.size:
            self._last_even = (t[even[-1]], f[even[-1]].copy(), coarse_at[even.size - 1].copy())
        self.n_samples += n
        return self._emit()

    def _emit(self) -> MomentumRows:
        assert self.plan is not None
        h, stride = self.plan.window, self.plan.stride
        parts = []
        done = []
        for b, cb in self._checkpoints.items():
            a = b - h
            if a < 0 or cb.used:
                continue
            ca = self._checkpoints.get(a)
            if ca is None:
                continue
            rows = self._rows(a, ca, b, cb)
            reason = self._excluded(ca, cb)
            if np.any(reason != ""):
                self._count_excluded(reason, ca.t, cb.t)
                rows = rows.take(reason == "")
            parts.append(rows)
            cb.used = True
            done.append(b)
        # Drop checkpoints no future window can start from.
        if done:
            oldest_needed = max(done) + stride - h
            for k in [k for k in self._checkpoints if k < oldest_needed]:
                del self._checkpoints[k]
        self.n_windows += len(parts)
        parts = [p for p in parts if len(p)]
        return MomentumRows.concat(parts) if parts else MomentumRows.empty(self.n_theta, self.n_g)

    def _count_excluded(self, reason: np.ndarray, t_start: float, t_end: float) -> None:
        for k in np.flatnonzero(reason != ""):
            self.excluded[reason[k]] += 1
            self.excluded_by_joint[k] += 1
            if len(self.excluded_examples) < MAX_EXCLUDED_EXAMPLES:
                self.excluded_examples.append(
                    (str(reason[k]), self.robot.joint_names[int(self.row_joints[k])],
                     float(t_start), float(t_end)))

    def _full(self, block: np.ndarray) -> np.ndarray:
        """(nr, nc) body-column block → (nr, n_theta) rows (other columns exactly zero)."""
        if self.nc == self.n_theta:
            return block
        out = np.zeros((self.nr, self.n_theta))
        out[:, self.cols] = block
        return out

    def _full3(self, block: np.ndarray) -> np.ndarray:
        """(3, nr, nc) → (nr, 3, n_theta)."""
        return np.swapaxes(np.stack([self._full(x) for x in block]), 0, 1)

    def _rows(self, a: int, ca: _Checkpoint, b: int, cb: _Checkpoint) -> MomentumRows:
        assert self.plan is not None                   # windows exist only once it is laid out
        nr, nc = self.nr, self.nc
        d_fine = cb.fine - ca.fine
        quad = np.abs(d_fine - (cb.coarse - ca.coarse)) / 3.0
        o = nr * nc
        T = cb.t - ca.t
        o_a = d_fine.size - nr                         # ∫|q̇|: the integrand's last block
        o_v = o_a - nr                                 # ∫q̇
        o_e = o_v - 2 * nr                             # ∫ of the bridged torques' error bound
        fric = np.stack([d_fine[o + 2 * nr:o + 3 * nr], d_fine[o_v:o_a], cb.dq - ca.dq,
                         np.full(nr, T)], axis=1)
        o_t = o_e - nr * self.n_term_cols              # the extra terms' block, before "τ̂ error"
        terms = d_fine[o_t:o_e].reshape(nr, self.n_term_cols)
        quad_terms = quad[o_t:o_e].reshape(nr, self.n_term_cols)
        if ca.r_m is None or cb.r_m is None or ca.m_k is None or cb.m_k is None:
            base_W = np.zeros((nr, self.n_theta))            # fixed base: no IMU error
            G = quad_G = D_omega = np.zeros((nr, 0, self.n_theta))
        else:
            o_r = o + 3 * nr
            base_W = self._full(ca.r_m + cb.r_m + d_fine[o_r:o_r + o].reshape(nr, nc))
            o_g, o_b = o_r + o, o_r + 4 * o
            G, quad_G = (self._full3(v[o_g:o_b].reshape(3, nr, nc)) for v in (d_fine, quad))
            D_omega = self._full3(cb.m_k - ca.m_k - d_fine[o_b:o_b + 3 * o].reshape(3, nr, nc))
        return MomentumRows(
            W=self._full((cb.w_m - ca.w_m) - d_fine[:o].reshape(nr, nc)),
            tau=d_fine[o:o + nr], tau_abs=d_fine[o + nr:o + 2 * nr], fric=fric,
            sign_rad=cb.sign_rad - ca.sign_rad, quad_tau=quad[o:o + nr],
            quad_W=self._full(quad[:o].reshape(nr, nc)), joint=self.row_joints.copy(),
            start=np.full(nr, a), end=np.full(nr, b), t_start=np.full(nr, ca.t),
            t_end=np.full(nr, cb.t), base_W=base_W, G=G, quad_G=quad_G, D_omega=D_omega,
            tau_start=ca.tau.copy(), tau_end=cb.tau.copy(), quad_dq=quad[o_v:o_a],
            delay=self.plan.torque_delay + self.config.torque_lag_radius_s[self.row_joints],
            vel_rad=ca.v_m + cb.v_m, gap_rad=cb.gap_rad - ca.gap_rad + d_fine[o_e:o_e + nr],
            terms=terms, quad_terms=quad_terms, speed_abs=d_fine[o_a:o_a + nr])

    def _excluded(self, ca: _Checkpoint, cb: _Checkpoint) -> np.ndarray:
        """Per row joint, the exclusion rule's reason for this window ("" = kept): a sample at
        or above ``exclude_speed_rad_s`` in it, or a start within ``exclude_after_start_s`` of
        the run's start. Decided from the states and stamps alone, never from residuals."""
        reason = np.full(self.nr, "", dtype=object)
        after = self.config.exclude_after_start_s
        if after > 0 and self._run_start is not None and ca.t - self._run_start < after:
            reason[:] = EXCLUDED_START
            return reason
        o_v = cb.fine.size - 2 * self.nr               # ∫q̇, before ∫|q̇|
        fast = cb.fine[o_v - self.nr:o_v] - ca.fine[o_v - self.nr:o_v]
        reason[fast > 0] = EXCLUDED_FAST
        return reason


def _velocity_theta_box(robot: Robot, config: IdentificationConfig
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(centre, radius) of every body's θ (model order) over which the velocity noise's momentum
    error is bounded: θ_r's box and the prior B₀ of θ_e; with ``velocity_noise_scope`` ``payload``
    only what the payload adds, θ_e − θ_ee with θ_ee the calibration-time end-effector body
    (nominal ± ``robot_uncertainty_rel``), the other bodies' share being the calibration's
    (config module docstring)."""
    lo_r, hi_r = config.theta_r_box
    ee = robot.ee_columns.start
    prior_c, prior_rad = config.prior.centre, config.prior.radius
    if config.velocity_noise_scope == "payload":
        theta_ee = robot.theta_e()
        rel = float(np.max(config.robot_uncertainty_rel, initial=0.0))
        zeros = np.zeros_like(lo_r)
        return (np.insert(zeros, ee, prior_c - theta_ee),
                np.insert(zeros, ee, prior_rad + rel * np.abs(theta_ee)))
    return (np.insert(0.5 * (lo_r + hi_r), ee, prior_c),
            np.insert(0.5 * (hi_r - lo_r), ee, prior_rad))


def row_joints_and_bodies(robot: Robot) -> tuple[np.ndarray, np.ndarray]:
    """Fixed base: every joint, every body. Floating base: the joints supporting the end
    effector (their rows need neither contact forces nor leg torques) and the bodies of their
    subtree (0-based body indices; every other column of those rows is zero)."""
    nb = robot.n_bodies
    if not robot.floating_base:
        return np.arange(robot.nj), np.arange(nb)
    support = {int(j) for j in robot.model.supports[robot.ee_joint_id]}
    ids = robot.joint_ids
    rows = np.array([k for k, j in enumerate(ids) if int(j) in support], int)
    if rows.size == 0:
        raise UnsupportedRobotError(f"{robot.name}: no actuated joint carries the end effector")
    sub = sorted({int(b) for j in ids[rows] for b in robot.model.subtrees[int(j)]})
    return rows, np.array([b - 1 for b in sub], int)
