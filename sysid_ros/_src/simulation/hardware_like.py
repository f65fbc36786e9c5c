"""Hardware-like simulated data: logs that look like a real Gen3 / Z1, not like the model.

What differs from the package's idealised simulation (``simulation.synthetic``) and why:

- **The robot is not the facts file.** A :class:`~sysid_ros._src.simulation.truth.HardwareTruth`
  (friction, armature, link inertias, sensor offsets) drawn around the config's values
  (:func:`random_hardware_truth`) is what MuJoCo simulates; the identifier only knows the
  nominal model.
- **Dry friction is MuJoCo's** ``frictionloss`` constraint (stiff: Fc while sliding, sticking
  below it), resolved by the constraint solver, not the identifier's exact Fc·sign(q̇).
- **The sensor reports the motor side**: τ̂ = (τ_motor + β)/k + noise, where τ_motor is what
  the controller applied (friction and armature included, as Z1/B1 current estimates and a Gen3
  driver's effort are), β a constant offset per joint and k the reading's constant gain per
  joint (``HardwareTruth.torque_gain``, 1 unless drawn: a motor torque constant that is off).
  Noise is uniform in ±(torque_noise + torque_noise_rel·|(τ_motor + β)/k|).
- **The robot runs its own loop**: a 1 kHz PD + nominal-gravity controller (zero-order hold)
  tracks an exciting reference (:func:`~sysid_ros._src.simulation.reference.exciting_reference`),
  physics at ``physics_dt``, whatever the publication rate.
- **Publication is imperfect** (:class:`HardwareSensor`): samples at ``rate_hz`` on the robot's
  clock (the physics step nearest k/rate_hz), stamps delayed by up to ``jitter``·period (the
  driver stamps on receipt), i.i.d. drops, optional periodic stalls, quantised encoders and a
  velocity field that is exact, noisy, a backward difference of the published positions, a
  zero-phase smoothed derivative of them (``filtered``: a post-processed log), or missing.
- **Driver effects seen in real Gen3 logs** (a profile's choice; the Gen3 file has all but the
  speed-limit error): a torque stream that lags the state stream (``torque_lag``), a lagged velocity
  (``velocity_lag``), and a slowly varying torque error while a joint runs at its speed limit
  (``velocity_limit_error``), where real drives clamp the speed, and a friction error that
  grows with speed (``friction_speed_error``), as a gear's does with temperature and lubrication.

Timing convention of a sample (the same in the sim node): the state (q, q̇) at the sample
instant and the motor torque applied during the physics step that *ended* there (what a sensor
read at that instant holds), or, with ``torque_lag``, at t − lag_j. :class:`ExactSamples` has
that step's start state, acceleration and dry friction, so the law can be checked exactly.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.simulation._util import centred_derivative, encoder_resolution, per_joint, quantize
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.payload import Payload
from sysid_ros._src.simulation.reference import SumOfSines, exciting_reference
from sysid_ros._src.simulation.simulator import Simulator
from sysid_ros._src.simulation.spec import SimulatorSpec
from sysid_ros._src.simulation.truth import (
    HardwareTruth, drawn_truth, hardware_truth_settings, random_hardware_truth,
)

__all__ = [
    "VELOCITY_MODES", "HardwareProfile", "HardwareTruth", "random_hardware_truth",
    "hardware_truth_settings", "HardwareSensor", "PublishedSamples", "ExactSamples",
    "HardwareRecording", "record_hardware_like", "write_joint_states_bag",
    "check_recording",
]

#: What the published velocity field holds (see :class:`HardwareProfile`).
VELOCITY_MODES = ("exact", "noisy", "finite_difference", "filtered", "missing")

#: ``filtered`` velocities: stamps more than this many periods apart (a stall) split the log into
#: segments differentiated on their own.
FILTER_SEGMENT_BREAK_PERIODS = 5.0


def _number(value: object, name: str, lo: float, hi: float, *, lo_open: bool = False,
            hi_open: bool = False) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SimConfigError(f"HardwareProfile.{name} must be a number, got {value!r}") from None
    ok = (math.isfinite(x) and (x > lo if lo_open else x >= lo)
          and (x < hi if hi_open else x <= hi))
    if not ok:
        rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise SimConfigError(f"HardwareProfile.{name} must be in {rng}, got {value!r}")
    return x


def _bound(value: object, name: str, hi: float = math.inf, *,
           positive: bool = False) -> float | tuple[float, ...]:
    """A scalar or per-joint tuple in [0, hi] ((0, …] if ``positive``; length checked against
    the robot later)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(value, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            arr = np.array([np.nan])
        ok = (arr.size > 0 and bool(np.all(np.isfinite(arr)))
              and bool(np.all(arr > 0 if positive else arr >= 0)) and bool(np.all(arr <= hi)))
        if not ok:
            rng = f"{'> 0' if positive else '>= 0'}{'' if math.isinf(hi) else f' and <= {hi:g}'}"
            raise SimConfigError(f"HardwareProfile.{name} must be {rng} (scalar or one value per "
                                 f"joint), got {value!r}")
        return tuple(float(v) for v in arr)
    return _number(value, name, 0.0, hi, lo_open=positive, hi_open=math.isinf(hi))


@dataclass(frozen=True)
class HardwareProfile:
    """How a robot's driver publishes joint states (all times in seconds).

    Attributes:
        rate_hz: publication rate (Hz), 100–4000.
        jitter: stamp delay bound as a fraction of the period, [0, 0.5): each stamp is the
            true sample instant + U(0, jitter)·period (a driver stamps on receipt), so stamps
            stay strictly increasing.
        drop_prob: probability that a sample is not published (i.i.d.), [0, 1).
        gap_every_s, gap_s: optional stalls: no sample is published while
            ``t mod gap_every_s ≥ gap_every_s − gap_s`` (the first stall ends at gap_every_s);
            the robot keeps moving. None / 0 = no stalls.
        torque_noise: uniform torque noise bound (N·m), scalar or one per joint.
        torque_noise_rel: additional noise bound as a fraction of |τ| (current-based
            estimates), [0, 1).
        velocity: ``exact`` (the simulator's q̇), ``noisy`` (q̇ + U(±velocity_noise)),
            ``finite_difference`` (backward difference of the published, quantised positions
            over the published stamps; 0 for the first sample), ``filtered`` (zero-phase smoothed
            derivative of the published positions, see ``velocity_filter_s``) or ``missing``
            (no velocity).
        velocity_noise: bound (rad/s) of ``noisy`` velocities, scalar or one per joint.
        velocity_filter_s: ``filtered`` velocities: the central difference of the published,
            quantised positions over the published stamps, averaged over the 2r+1 published
            samples centred on each, r = round(velocity_filter_s·rate_hz/2) (the outer ones
            velocity_filter_s apart), [0, 1] s. Centred, so it needs later samples: it models a
            post-processed (offline) log, and :meth:`HardwareSensor.read` must get the whole log
            in one call (:func:`record_hardware_like` does; the sim node cannot publish it).
            Near the ends of the log, and of stalls longer than
            :data:`FILTER_SEGMENT_BREAK_PERIODS` periods, the window shrinks to stay centred; the
            first / last sample gets the one-sided difference with its neighbour.
        torque_lag: delay (s) of the published torque stream behind the state stream, [0, 0.5],
            scalar or one per joint: the torque published at sample instant t is the sensor
            torque (τ_motor + β, then noise) at t − lag_j, linearly interpolated between sample
            instants (the physics step there when lag_j is a whole number of periods and the
            period one of physics steps; the first sample's value before it). Kept across
            :meth:`HardwareSensor.reset` (the driver's delay line does not see the robot jump).
        velocity_lag: delay (s) of the published velocity behind the state's instant, [0, 0.5],
            scalar or one per joint, for ``exact`` and ``noisy`` velocities: the velocity
            published at t is q̇(t − lag_j) (a driver's causal velocity filter, to first order),
            interpolated between sample instants like ``torque_lag``; positions are not delayed.
        velocity_limit_error: bound (N·m) of a torque error while a joint is at its speed limit,
            scalar or one per joint (0: none): where |q̇_j| ≥ velocity_limit_frac·velocity_limit_j
            (exact q̇ at the sample instant) the published torque gets e_j(t) =
            velocity_limit_error_j·sin(θ_j(t)), θ_j a slow random phase drawn from the sensor's
            rng (smooth, either sign, reaching ±the bound), and nothing elsewhere; part of what
            the sensor reads, so it lags with the rest under ``torque_lag``. Models drives that
            clamp the speed
            and then report torque the rigid-body + friction law does not explain; the simulator
            does not clamp the speed (its tracking controller sets it).
        friction_speed_error: bound (N·m per rad/s) of a speed-proportional friction error,
            scalar or one per joint (0: none): the published torque gets
            e_j(t) = friction_speed_error_j·|q̇_j|·sin(θ_j(t)) (exact q̇ at the sample instant,
            θ_j a slow random phase as for ``velocity_limit_error``, drawn after it): no
            function of the joint's state explains it, and it is bounded by
            friction_speed_error_j·|q̇_j|. Lags with the rest under ``torque_lag``.
        velocity_limit: speed limit (rad/s, > 0), scalar or one per joint; None: the robot's
            ``limits.velocity``.
        velocity_limit_frac: fraction of ``velocity_limit`` from which the error applies, (0, 1].
        quantize: round published positions to the robot's
            ``simulation.encoder_resolution_deg``.
        physics_dt: physics step (s); default: the largest control_dt/n (n whole) that is
            ≤ min(1 ms, period/2). True sample instants are the physics steps nearest k/rate_hz.
            The default is resolved at construction: ``dataclasses.replace(p, rate_hz=…)``
            keeps it unless ``physics_dt=None`` is passed too.
        control_dt: period of the robot's internal controller (s); a whole number of physics
            steps (the robot's 1 kHz loop runs whatever the publication rate).
    """

    rate_hz: float = 1000.0
    jitter: float = 0.0
    drop_prob: float = 0.0
    gap_every_s: float | None = None
    gap_s: float = 0.0
    torque_noise: float | tuple[float, ...] = 0.0
    torque_noise_rel: float = 0.0
    velocity: str = "exact"
    velocity_noise: float | tuple[float, ...] = 0.0
    quantize: bool = True
    physics_dt: float | None = None
    control_dt: float = 1e-3
    torque_lag: float | tuple[float, ...] = 0.0
    velocity_lag: float | tuple[float, ...] = 0.0
    velocity_filter_s: float = 0.02
    velocity_limit_error: float | tuple[float, ...] = 0.0
    velocity_limit: float | tuple[float, ...] | None = None
    velocity_limit_frac: float = 0.95
    friction_speed_error: float | tuple[float, ...] = 0.0

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        put("rate_hz", _number(self.rate_hz, "rate_hz", 100.0, 4000.0))
        put("jitter", _number(self.jitter, "jitter", 0.0, 0.5, hi_open=True))
        put("drop_prob", _number(self.drop_prob, "drop_prob", 0.0, 1.0, hi_open=True))
        put("gap_s", _number(self.gap_s, "gap_s", 0.0, math.inf, hi_open=True))
        if self.gap_every_s is not None:
            every = _number(self.gap_every_s, "gap_every_s", 0.0, math.inf, lo_open=True,
                            hi_open=True)
            put("gap_every_s", every)
            if not 0.0 < self.gap_s < every:
                raise SimConfigError(f"HardwareProfile.gap_s must be in (0, gap_every_s = "
                                     f"{every:g}) when gap_every_s is set, got {self.gap_s!r}")
        elif self.gap_s > 0.0:
            raise SimConfigError("HardwareProfile.gap_s > 0 needs gap_every_s (stall period)")
        put("torque_noise", _bound(self.torque_noise, "torque_noise"))
        put("torque_noise_rel", _number(self.torque_noise_rel, "torque_noise_rel", 0.0, 1.0,
                                        hi_open=True))
        if self.velocity not in VELOCITY_MODES:
            raise SimConfigError(f"HardwareProfile.velocity must be one of {list(VELOCITY_MODES)}, "
                                 f"got {self.velocity!r}")
        put("velocity_noise", _bound(self.velocity_noise, "velocity_noise"))
        put("velocity_filter_s", _number(self.velocity_filter_s, "velocity_filter_s", 0.0, 1.0))
        put("torque_lag", _bound(self.torque_lag, "torque_lag", 0.5))
        put("velocity_lag", _bound(self.velocity_lag, "velocity_lag", 0.5))
        if self.velocity in ("finite_difference", "filtered", "missing") and \
                np.any(np.asarray(self.velocity_lag, float) > 0):
            raise SimConfigError("HardwareProfile.velocity_lag applies to 'exact' and 'noisy' "
                                 f"velocities (the driver's own filter), not {self.velocity!r}")
        put("velocity_limit_error", _bound(self.velocity_limit_error, "velocity_limit_error"))
        put("friction_speed_error", _bound(self.friction_speed_error, "friction_speed_error"))
        if self.velocity_limit is not None:
            put("velocity_limit", _bound(self.velocity_limit, "velocity_limit", positive=True))
        put("velocity_limit_frac", _number(self.velocity_limit_frac, "velocity_limit_frac", 0.0,
                                           1.0, lo_open=True))
        if not isinstance(self.quantize, (bool, np.bool_)):
            raise SimConfigError(f"HardwareProfile.quantize must be true or false, "
                                 f"got {self.quantize!r}")
        control = _number(self.control_dt, "control_dt", 0.0, 0.01, lo_open=True)
        put("control_dt", control)
        if self.physics_dt is None:
            # largest step that divides the control period and is ≤ min(1 ms, period/2)
            dt = control / math.ceil(control / min(1e-3, 0.5 / self.rate_hz) - 1e-9)
        else:
            dt = _number(self.physics_dt, "physics_dt", 0.0, min(1e-3, self.period), lo_open=True)
        put("physics_dt", dt)
        ratio = control / dt
        if abs(ratio - round(ratio)) > 1e-6:
            raise SimConfigError(f"HardwareProfile.control_dt = {control:g} s must be a whole "
                                 f"number of physics_dt = {dt:g} s steps")

    @property
    def physics_step(self) -> float:
        """``physics_dt`` as resolved at construction (never None once constructed)."""
        assert self.physics_dt is not None  # __post_init__ replaces None by the default step
        return self.physics_dt

    @property
    def period(self) -> float:
        """Nominal publication period 1/rate_hz (s)."""
        return 1.0 / self.rate_hz

    @property
    def steps_per_control(self) -> int:
        return int(round(self.control_dt / self.physics_step))

    def sample_step(self, k: int | np.ndarray) -> np.ndarray:
        """Physics step index of the k-th sample instant (the step nearest k/rate_hz)."""
        steps = np.asarray(k, dtype=float) * (self.period / self.physics_step)
        return np.rint(steps).astype(np.int64)

    def in_gap(self, t: np.ndarray) -> np.ndarray:
        """True where a sample instant t (s) falls into a stall."""
        t = np.asarray(t, dtype=float)
        if self.gap_every_s is None:
            return np.zeros(t.shape, dtype=bool)
        return np.mod(t, self.gap_every_s) >= self.gap_every_s - self.gap_s

    @classmethod
    def from_mapping(cls, values: Mapping[str, object], where: str = "hardware profile",
                     **overrides: object) -> HardwareProfile:
        """Build from a YAML mapping (unknown keys are an error naming ``where``)."""
        if not isinstance(values, Mapping):
            raise SimConfigError(f"{where} must be a mapping, got {type(values).__name__}")
        known = {f.name for f in fields(cls)}
        merged = {**values, **overrides}
        unknown = sorted(set(merged) - known)
        if unknown:
            raise SimConfigError(f"{where}: unknown keys {unknown}; known: {sorted(known)}")
        try:
            return cls(**merged)  # type: ignore[arg-type]
        except SimConfigError as err:
            raise SimConfigError(f"{where}: {err}") from None

    @classmethod
    def from_robot(cls, robot: Robot, **overrides: object) -> HardwareProfile:
        """The robot file's ``simulation.hardware_like.profile`` (+ keyword overrides). A
        ``velocity`` override to a mode the driver does not filter (``finite_difference``,
        ``filtered``, ``missing``) drops the file's ``velocity_lag`` unless one is passed too:
        the lag belongs to the published velocity it replaces."""
        section = simulation_section(robot).hardware_like
        if overrides.get("velocity", "exact") not in ("exact", "noisy"):
            overrides = {"velocity_lag": 0.0, **overrides}
        return cls.from_mapping(section.get("profile", {}) or {},
                                f"{robot.config_path}: simulation.hardware_like.profile",
                                **overrides)


@dataclass(frozen=True, eq=False)
class PublishedSamples:
    """Samples as a driver publishes them: ``index`` (M,) rows of the input that were
    published, ``t`` (M,) stamps (s, whole nanoseconds), ``q`` (M, nj) rad, ``dq`` (M, nj)
    rad/s or None (velocity missing), ``tau_meas`` (M, nj) N·m."""

    index: np.ndarray
    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray | None
    tau_meas: np.ndarray


class _TorqueDelay:
    """Per-joint pure delay of a sampled stream: the value at t − lag_j, linearly interpolated
    between the instants seen so far (the first one's value before it). Times are whole
    nanoseconds, so a lag of whole periods lands exactly on an earlier instant. Keeps only the
    history a later call (later instants) can still need: the sim node's stream stays bounded."""

    def __init__(self, lag: np.ndarray) -> None:
        self.lag_ns = np.rint(lag * 1e9)
        self._t_ns = np.empty(0)
        self._x = np.empty((0, lag.size))

    def __call__(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        if t.size == 0:
            return x.copy()
        t_ns = np.rint(t * 1e9)
        t_all, x_all = np.concatenate([self._t_ns, t_ns]), np.vstack([self._x, x])
        out = np.column_stack([np.interp(t_ns - lag, t_all, col)
                               for lag, col in zip(self.lag_ns, x_all.T)])
        oldest = t_all[-1] - self.lag_ns.max()
        keep = max(int(np.searchsorted(t_all, oldest, side="right")) - 1, 0)
        self._t_ns, self._x = t_all[keep:], x_all[keep:]
        return out


class _SpeedLimitError:
    """Torque error of drives at their speed clamp: e_j(t) = m_j·sin(θ_j(t)) where
    |q̇_j| ≥ threshold_j, 0 elsewhere. θ_j(t) = ψ_j + π·Σ_k a_jk·sin(2π f_jk t + φ_jk) is a slow
    random phase (3 terms, f in [0.02, 0.1] Hz, Σ_k a_jk = 1): e_j is smooth in t, of either
    sign, bounded by m_j and reaching it, and changes by at most 2·m_j per second (π·2π·0.1)."""

    N_TERMS = 3
    FREQ_HZ = (0.02, 0.1)

    def __init__(self, magnitude: np.ndarray, threshold: np.ndarray,
                 rng: np.random.Generator) -> None:
        self.magnitude, self.threshold = magnitude, threshold
        shape = (magnitude.size, self.N_TERMS)
        self._psi = rng.uniform(-math.pi, math.pi, magnitude.size)
        weights = rng.uniform(0.1, 1.0, shape)
        self._amp = math.pi * weights / weights.sum(axis=1, keepdims=True)
        self._omega = 2.0 * math.pi * rng.uniform(*self.FREQ_HZ, shape)
        self._phase = rng.uniform(-math.pi, math.pi, shape)

    def error(self, t: np.ndarray) -> np.ndarray:
        """e(t) (N, nj) wherever the speed is (at the limit or not)."""
        waves = np.sin(self._omega * t[:, None, None] + self._phase)
        return self.magnitude * np.sin(self._psi + np.sum(self._amp * waves, axis=-1))

    def __call__(self, t: np.ndarray, dq: np.ndarray) -> np.ndarray:
        return np.where(np.abs(dq) >= self.threshold, self.error(t), 0.0)


class HardwareSensor:
    """The publication model of a :class:`HardwareProfile`: which sample instants are published
    and what they report. Works on batches (a whole recording) and on single samples (the sim
    node), keeping the last published sample for finite-difference velocities and the torque
    history a ``torque_lag`` needs; ``filtered`` velocities need the whole log in one call.
    """

    def __init__(self, robot: Robot, profile: HardwareProfile, truth: HardwareTruth,
                 rng: np.random.Generator) -> None:
        truth.check(robot)
        nj = robot.nj
        self.profile = profile
        self._rng = rng
        self._beta = truth.friction[:, 3].copy()
        self._gain = np.asarray(truth.torque_gain, float).copy()
        self._noise = per_joint(profile.torque_noise, nj, "HardwareProfile.torque_noise")
        self._vnoise = per_joint(profile.velocity_noise, nj, "HardwareProfile.velocity_noise")
        self._resolution = encoder_resolution(robot) if profile.quantize else np.zeros(nj)
        self._prev: tuple[float, np.ndarray] | None = None   # last published (stamp, q)
        lag = per_joint(profile.torque_lag, nj, "HardwareProfile.torque_lag")
        self._delay = _TorqueDelay(lag) if np.any(lag > 0) else None
        vlag = per_joint(profile.velocity_lag, nj, "HardwareProfile.velocity_lag")
        self._vdelay = _TorqueDelay(vlag) if np.any(vlag > 0) else None
        self._speed_error = self._speed_limit_error(robot, profile, rng)
        gain = per_joint(profile.friction_speed_error, nj, "HardwareProfile.friction_speed_error")
        # the slow phase of a speed-limit error at threshold 0 (drawn only when there is one)
        self._friction_error = (_SpeedLimitError(gain, np.zeros(nj), rng)
                                if np.any(gain > 0) else None)

    @staticmethod
    def _speed_limit_error(robot: Robot, profile: HardwareProfile,
                           rng: np.random.Generator) -> _SpeedLimitError | None:
        """The profile's speed-limit error (None without one: no random draws then)."""
        nj = robot.nj
        magnitude = per_joint(profile.velocity_limit_error, nj,
                              "HardwareProfile.velocity_limit_error")
        if not np.any(magnitude > 0):
            return None
        limit = (robot.limits.dq_max if profile.velocity_limit is None else
                 per_joint(profile.velocity_limit, nj, "HardwareProfile.velocity_limit"))
        return _SpeedLimitError(magnitude, profile.velocity_limit_frac * limit, rng)

    def reset(self) -> None:
        """Forget the last published sample (the next finite difference starts at 0); the torque
        delay line is kept (time goes on)."""
        self._prev = None

    def read(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray,
             tau_motor: np.ndarray) -> PublishedSamples:
        """Publish the exact samples at true instants ``t`` (N,) (increasing, after any
        earlier call's): state ``q``, ``dq`` and applied motor torque ``tau_motor`` (N, nj)."""
        p, rng = self.profile, self._rng
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, dq, tau = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, dq, tau_motor))
        keep = ~p.in_gap(t) & (rng.random(t.shape[0]) >= p.drop_prob)
        idx = np.flatnonzero(keep)
        m = idx.size
        stamps_ns = np.rint((t[idx] + p.jitter * p.period * rng.random(m)) * 1e9)
        stamps = stamps_ns * 1e-9
        q_pub = quantize(q[idx], self._resolution)
        # what the sensor reads: the speed-clamp error is in it, so it lags with the rest;
        # every sample instant enters the delay line, published or not (drops are the driver's)
        # a gain k_j on the reading (a current-based estimate's torque constant): k_j·τ̂ is the
        # torque of the identifier's convention
        sensed = (tau + self._beta) / self._gain
        if self._speed_error is not None:
            sensed = sensed + self._speed_error(t, dq)
        if self._friction_error is not None:
            sensed = sensed + self._friction_error.error(t) * np.abs(dq)
        tau_true = sensed[idx] if self._delay is None else self._delay(t, sensed)[idx]
        bound = self._noise + p.torque_noise_rel * np.abs(tau_true)
        tau_meas = tau_true + bound * rng.uniform(-1.0, 1.0, tau_true.shape)
        dq_pub: np.ndarray | None
        # the driver's velocity filter sees every instant, published or not
        dq_seen = dq[idx] if self._vdelay is None else self._vdelay(t, dq)[idx]
        if p.velocity == "exact":
            dq_pub = dq_seen.copy()
        elif p.velocity == "noisy":
            dq_pub = dq_seen + self._vnoise * rng.uniform(-1.0, 1.0, (m, q.shape[1]))
        elif p.velocity == "finite_difference":
            dq_pub = self._finite_difference(stamps, q_pub)
        elif p.velocity == "filtered":
            dq_pub = self._filtered(stamps, q_pub)
        else:
            dq_pub = None
        if m:
            self._prev = (float(stamps[-1]), q_pub[-1].copy())
        return PublishedSamples(idx, stamps, q_pub, dq_pub, tau_meas)

    def _finite_difference(self, stamps: np.ndarray, q_pub: np.ndarray) -> np.ndarray:
        """Backward difference over published samples (the previous call's last one first)."""
        out = np.zeros_like(q_pub)
        if q_pub.shape[0] == 0:
            return out
        if self._prev is not None:
            t_all = np.concatenate([[self._prev[0]], stamps])
            q_all = np.vstack([self._prev[1], q_pub])
            out[:] = np.diff(q_all, axis=0) / np.diff(t_all)[:, None]
        else:
            out[1:] = np.diff(q_pub, axis=0) / np.diff(stamps)[:, None]
        return out

    def _filtered(self, stamps: np.ndarray, q_pub: np.ndarray) -> np.ndarray:
        """Zero-phase smoothed derivative over this call's published samples (the whole log)."""
        if self._prev is not None:
            raise SimConfigError(
                "HardwareProfile.velocity 'filtered' is centred (it needs the next samples): it "
                "models post-processed logs, so the sensor must read the whole log in one call "
                "(record_hardware_like does); it cannot be published sample by sample")
        p = self.profile
        half = int(round(p.velocity_filter_s * p.rate_hz / 2.0))
        return centred_derivative(stamps, q_pub, half, FILTER_SEGMENT_BREAK_PERIODS * p.period)


@dataclass(frozen=True, eq=False)
class ExactSamples:
    """Exact simulator data at the published samples (evaluation only; rows = published rows).

    ``q``, ``dq``: (N, nj) exact state at the true sample instants. The reported torque is the
    one applied during the physics step that ended there; ``step_q``, ``step_dq`` are that
    step's start state, ``step_ddq`` = (dq − step_dq)/physics_dt its acceleration and
    ``dry_friction`` its dry-friction torque (identifier's sign: +Fc·sign(q̇) while sliding).
    For a fixed-base robot, to rounding (MuJoCo's Euler step takes damping at the end velocity)::

        tau_motor = RNEA_truth(step_q, step_dq, step_ddq) + Ia·step_ddq + Fv·dq + dry_friction
    """

    q: np.ndarray
    dq: np.ndarray
    step_q: np.ndarray
    step_dq: np.ndarray
    step_ddq: np.ndarray
    dry_friction: np.ndarray


@dataclass(frozen=True, eq=False)
class HardwareRecording:
    """A hardware-like joint-state log (published samples only) and its truth.

    Attributes:
        t: (N,) published stamps (s, whole nanoseconds), strictly increasing.
        q: (N, nj) published (quantised) positions, rad, ``joint_names`` order.
        dq: (N, nj) published velocities (rad/s) or None when the profile's velocity is missing.
        tau_meas: (N, nj) measured torque τ̂ = τ_motor + β + noise (N·m); with the profile's
            ``torque_lag`` τ_motor + β (+ any ``velocity_limit_error``) of t − lag_j.
        tau_motor: (N, nj) noise-free applied motor torque at the sample instant (N·m, without
            β, not delayed by ``torque_lag``).
        truth: the simulated robot (θ_e with the initial payload).
        profile: the publication profile.
        joint_names: column names.
        t_true: (N,) true sample instants on the physics clock (s); t − t_true is the stamp delay.
        exact: :class:`ExactSamples` of the published rows.
        swap_time: when the payload was swapped (s), or None; ``theta_e_after_swap`` (10,) the
            EE body after the swap.
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray | None
    tau_meas: np.ndarray
    tau_motor: np.ndarray
    truth: HardwareTruth
    profile: HardwareProfile
    joint_names: tuple[str, ...]
    t_true: np.ndarray
    exact: ExactSamples
    swap_time: float | None = None
    theta_e_after_swap: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.t.shape[0])


class _TrackingController:
    """The robot's own loop (fixed base): PD around the reference + the *nominal* model's
    gravity (no payload: the controller does not know it) + nominal viscous feed-forward.

    Gains: critically damped at ``bandwidth`` (rad/s) for the diagonal of H(q₀) + Ia of the
    nominal model, but at least the robot's ``simulation.hold_kp``/``hold_kd`` (a light wrist
    with little armature, like the Z1's, would otherwise get a PD too weak to break its dry
    friction)."""

    def __init__(self, robot: Robot, bandwidth: float, q0: np.ndarray,
                 hold_kp: np.ndarray, hold_kd: np.ndarray) -> None:
        self.model = robot.model
        self.data = robot.model.createData()
        nominal = robot.friction.nominal
        m_diag = np.diag(pin.crba(self.model, self.data, q0)) + nominal[:, 2]
        self.kp = np.maximum(bandwidth**2 * m_diag, hold_kp)
        self.kd = np.maximum(2.0 * bandwidth * m_diag, hold_kd)
        self.fv = nominal[:, 1]

    def __call__(self, q: np.ndarray, dq: np.ndarray, q_d: np.ndarray,
                 dq_d: np.ndarray) -> np.ndarray:
        g = pin.computeGeneralizedGravity(self.model, self.data, q)
        return g + self.fv * dq_d + self.kp * (q_d - q) + self.kd * (dq_d - dq)


def check_recording(duration: float, swap_payload: Payload | None,
                    swap_time: float | None) -> None:
    """SimConfigError unless ``duration`` > 0 s and the payload swap is complete and inside it."""
    if not (math.isfinite(duration) and duration > 0.0):
        raise SimConfigError(f"duration must be a positive number of seconds, got {duration!r}")
    if (swap_payload is None) != (swap_time is None):
        raise SimConfigError("swap_payload and swap_time go together")
    if swap_time is not None and not 0.0 < swap_time < duration:
        raise SimConfigError(f"swap_time must be in (0, duration = {duration}), got {swap_time}")


def record_hardware_like(robot: Robot, rng: np.random.Generator, payload: Payload | None,
                         duration: float, profile: HardwareProfile,
                         truth: HardwareTruth | None = None, reference: SumOfSines | None = None,
                         start: np.ndarray | None = None, *, swap_payload: Payload | None = None,
                         swap_time: float | None = None,
                         bandwidth: float = 10.0) -> HardwareRecording:
    """Record ``duration`` s of hardware-like joint states (module docstring).

    Args:
        robot: a fixed-base robot (its facts file = the identifier's nominal model).
        rng: all randomness (truth if drawn, reference if drawn, the speed-limit error's phase
            if any, drops, stamps, noise).
        payload: carried from the start (None: calibration run without payload).
        duration: seconds of robot time.
        profile: publication profile, e.g. ``HardwareProfile.from_robot(robot)``.
        truth: the simulated robot; default :func:`~sysid_ros._src.simulation.truth.drawn_truth`
            (the robot file's ``simulation.hardware_like.truth`` settings). Its θ_e is replaced
            by EE link + payload.
        reference: joint reference to track; default :func:`exciting_reference` from ``start``.
        start: initial joint angles (default: the reference's start); the robot starts at rest.
        swap_payload, swap_time: the payload becomes ``swap_payload`` at ``swap_time`` s (a
            changed grasp: violates the identifier's rigid-payload assumption on purpose).
        bandwidth: the tracking controller's bandwidth (rad/s).
    """
    if robot.floating_base:
        raise SimConfigError(f"record_hardware_like simulates fixed-base arms; {robot.name} has a "
                             "floating base (standing_hardware.record_standing_hardware_like)")
    check_recording(duration, swap_payload, swap_time)
    if truth is None:
        truth = drawn_truth(robot, rng, payload)
    if reference is None:
        reference = exciting_reference(robot, rng, start=start)
    q_start = reference(0.0)[0] if start is None else np.asarray(start, dtype=float)
    sim = Simulator(SimulatorSpec.hardware_like(robot, payload, profile, truth))
    sim.reset(q_start)
    initial_truth = sim.truth
    assert initial_truth is not None
    control = _TrackingController(robot, bandwidth, sim.q, sim.hold_kp, sim.hold_kd)
    schedule = _Schedule.plan(profile, reference, duration, swap_time)
    trace = _run_schedule(sim, control, schedule, swap_payload)
    pub = HardwareSensor(robot, profile, initial_truth, rng).read(schedule.t_true, trace.q,
                                                                 trace.dq, trace.tau)
    r = pub.index
    return HardwareRecording(
        t=pub.t, q=pub.q, dq=pub.dq, tau_meas=pub.tau_meas, tau_motor=trace.tau[r],
        truth=initial_truth, profile=profile, joint_names=tuple(robot.joint_names),
        t_true=schedule.t_true[r], exact=trace.exact(r, schedule.h), swap_time=swap_time,
        theta_e_after_swap=None if swap_time is None else sim.true_theta_e())


@dataclass(frozen=True, eq=False)
class _Schedule:
    """The physics steps of a recording: ``total`` steps of ``h`` s, a control tick every
    ``per_control`` steps (reference ``ref_q``, ``ref_dq`` per tick), sample instants ending
    the physics steps ``steps`` (1-based: after that many steps), the swap at ``swap_step``
    (−1: none)."""

    h: float
    total: int
    per_control: int
    ref_q: np.ndarray
    ref_dq: np.ndarray
    steps: np.ndarray
    swap_step: int

    @classmethod
    def plan(cls, profile: HardwareProfile, reference: SumOfSines, duration: float,
             swap_time: float | None) -> _Schedule:
        """The schedule of ``duration`` s at the profile's physics step and rates."""
        h = profile.physics_step
        total = int(round(duration / h))
        per_control = profile.steps_per_control
        # the reference at every control tick at once (one vectorised evaluation)
        ref_q, ref_dq = reference(np.arange(0, total, per_control) * h)
        n_samples = int(np.floor(total * h * profile.rate_hz + 1e-9))
        steps = profile.sample_step(np.arange(1, n_samples + 1))
        steps = steps[steps <= total]
        swap_step = -1 if swap_time is None else int(math.ceil(swap_time / h - 1e-9))
        return cls(h, total, per_control, ref_q, ref_dq, steps, swap_step)

    @property
    def t_true(self) -> np.ndarray:
        """True sample instants on the physics clock (s)."""
        return self.steps * self.h


@dataclass(frozen=True, eq=False)
class _Trace:
    """Exact simulator data at every sample instant of a :class:`_Schedule` (rows = samples):
    state at the instant, start state of the step that ended there, its applied motor torque
    and dry friction."""

    q: np.ndarray
    dq: np.ndarray
    step_q: np.ndarray
    step_dq: np.ndarray
    tau: np.ndarray
    dry: np.ndarray

    def exact(self, rows: np.ndarray, h: float) -> ExactSamples:
        """The :class:`ExactSamples` of ``rows`` (physics step ``h`` s)."""
        return ExactSamples(self.q[rows], self.dq[rows], self.step_q[rows], self.step_dq[rows],
                            (self.dq[rows] - self.step_dq[rows]) / h, self.dry[rows])


def _run_schedule(sim: Simulator, control: _TrackingController, schedule: _Schedule,
                  swap_payload: Payload | None) -> _Trace:
    """Step ``sim`` through ``schedule`` under ``control``, recording every sample instant."""
    steps, total, per_control = schedule.steps, schedule.total, schedule.per_control
    swap_step, ref_q, ref_dq = schedule.swap_step, schedule.ref_q, schedule.ref_dq
    n, nj = steps.size, sim.robot.nj
    q, dq, step_q, step_dq, tau, dry = (np.empty((n, nj)) for _ in range(6))
    cmd = np.zeros(nj)
    i = k = 0
    next_control = 0
    # Event loop over physics steps: control ticks, the swap, and the last step before each
    # sample instant (whose start state and torque are recorded); plain steps in between are
    # advanced in one call.
    while i < total:
        if i == swap_step:
            sim.set_payload(swap_payload)
        if i == next_control:
            tick = i // per_control
            cmd = control(sim.q, sim.dq, ref_q[tick], ref_dq[tick])
            next_control += per_control
        if k < n and i == steps[k] - 1:
            step_q[k], step_dq[k] = sim.q, sim.dq
            sim.step(cmd)
            q[k], dq[k] = sim.q, sim.dq
            tau[k], dry[k] = sim.tau_applied, sim.dry_friction()
            k += 1
            i += 1
            continue
        stop = min(total, next_control, steps[k] - 1 if k < n else total,
                   swap_step if swap_step > i else total)
        sim.step(cmd, stop - i)
        i = stop
    return _Trace(q, dq, step_q, step_dq, tau, dry)


def write_joint_states_bag(path: str | os.PathLike[str], recording: HardwareRecording,
                           robot: Robot, topic: str = "/joint_states",
                           storage: str = "mcap",
                           progress: Callable[[int, int], None] | None = None) -> Path:
    """Write a recording as ``sensor_msgs/JointState`` messages (names = robot.joint_names,
    header stamp = sample stamp = bag receive time; an empty velocity array when velocities are
    missing) into a new rosbag2 directory ``path``; returns it. Read back with
    ``bagio.read_joint_states(path, require=("position", "effort"))`` when velocity is missing.
    ``progress(done, total)`` is called every 10,000 messages and at the end."""
    from sysid_ros._src.bagio import write_joint_state_arrays

    names = list(robot.joint_names)
    if recording.q.shape[1] != len(names) or tuple(names) != recording.joint_names:
        raise SimConfigError(f"recording joints {recording.joint_names} do not match robot "
                             f"{robot.name}'s {tuple(names)}")
    return write_joint_state_arrays(path, recording.t, recording.q, recording.dq,
                                    recording.tau_meas, names, topic, storage, progress)
