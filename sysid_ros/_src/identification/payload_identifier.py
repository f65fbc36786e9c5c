"""Offline (whole recording) and online (streaming) payload identification.

Methods: ``lp`` (box of the polytope Θ), ``lp-cuts`` (Θ plus cutting planes vᵀJ(θ)v ≥ 0 of the
pseudo-inertia constraint: LP cost, tightens the inertia entries — see :mod:`feasible_set`),
``lp-lmi`` (Θ ∩ {J ⪰ 0} exactly, 20 SDPs: slow), ``sensitivity`` (comparison only).

Guarantee ("the box contains the true θ_e"), for methods ``lp``, ``lp-cuts`` and ``lp-lmi``, holds when all
of these hold (they are repeated in every result's ``assumptions``):

1. every torque sample's error is within the configured bound |τ̂ − τ| ≤ abs + rel·|τ|;
2. q and q̇ are exact at the sample instants; q̇ stays on one side of the Coulomb band between
   two samples that are both outside it on that side;
3. the other bodies' θ_r and the friction/armature/offset coefficients lie in their configured
   boxes, and τ_f = Fc·σ(q̇) + Fv·q̇ + Ia·q̈ + β is the friction law (σ = sign outside the
   Coulomb band, anything in [−1, 1] inside; ``--friction none``: τ̂ is the link-side torque);
   coefficients with a box of non-zero width are LP unknowns shared by all windows;
4. the trapezoid rule's error on each window is within ``quadrature_safety``·|Simpson − trapezoid|
   (smooth signals sampled fast enough for their bandwidth; windows never span a gap longer
   than ``max_sample_gap``);
5. the payload is rigid, rigidly held and unchanged over the data, and the truth is in B₀;
6. floating base (B1 + Z1; rows of the arm joints only): the trunk IMU's readings are within
   the configured ``imu`` bounds (bias included), it is mounted as modelled, and nothing
   touches the arm or payload (:mod:`.base_motion` derives why nothing else is needed).

If the data contradict these, Θ is usually empty and the status is ``inconsistent``: no box is
fabricated, and :mod:`diagnostics` says which joints, which time spans and how far off. An
``ok`` box pinned to one face of the prior, or with the least-squares estimate outside it,
carries warnings: the assumptions may be failing without Θ becoming empty. Method ``sensitivity``
(the seed paper's mean-value bound) carries no such guarantee;
it is there for comparison.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from sysid_ros._src.bagio.reader import ImuSamples
from sysid_ros._src.identification.base_motion import BaseMotion, ImuStream, \
    base_motion, imu_mount
from sysid_ros._src.identification.feasible_set import INCONSISTENT, INSUFFICIENT, OK, BoxResult, \
    chebyshev_centre, polytope_box
from sysid_ros._src.identification.config import IdentificationConfig
from sysid_ros._src.identification.diagnostics import Consistency, DataSummary, box_warnings, \
    consistency, insufficient_reason, physical_face_notes, pinned_faces, summarize
from sysid_ros._src.identification.errors import IdentificationConfigError, SampleError
from sysid_ros._src.identification.incremental import IncrementalBox
from sysid_ros._src.identification.options import METHODS, ONLINE_METHODS
from sysid_ros._src.identification.problem import N_THETA_E, PayloadProblem, PayloadRows
from sysid_ros._src.identification.transients import Transient, TransientStream, find_transients, \
    transient_note, with_radius_share
from sysid_ros._src.identification.windows import MomentumWindows
from sysid_ros._src.sample_screen import RESTART, RETRACT, SKIP, SampleScreen
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import Robot

__all__ = ["IdentificationResult", "METHODS", "identify", "OnlineIdentifier"]


@dataclass(frozen=True)
class IdentificationResult:
    """The θ_e ``box`` (None when inconsistent; the prior B₀ with insufficient data) whose
    nominal is the point estimate when ``estimated`` (else its centre), with the data summary,
    the consistency diagnosis, warnings and the reason for a non-ok status. ``lower``,
    ``nominal`` (None unless estimated) and ``upper`` read the box."""

    status: str
    box: ParameterBox | None
    samples_used: int
    windows_used: int
    method: str
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reason: str = ""
    summary: DataSummary | None = None
    consistency: Consistency | None = None
    estimated: bool = False
    #: torque samples beyond the stated bounds that the quadrature allowance absorbed
    #: (:mod:`.transients`), with their share of the radius
    transients: list[Transient] = field(default_factory=list)

    @property
    def lower(self) -> np.ndarray | None:
        return None if self.box is None else self.box.lower

    @property
    def upper(self) -> np.ndarray | None:
        return None if self.box is None else self.box.upper

    @property
    def nominal(self) -> np.ndarray | None:
        return self.box.nominal if self.box is not None and self.estimated else None

    def contains(self, theta: np.ndarray, tol: float = 0.0) -> bool:
        return self.box is not None and self.box.contains(theta, tol)


def _project_out_unknowns(rows: PayloadRows, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted rows in θ_e alone with the other unknowns (friction) eliminated by least squares:
    for fixed θ_e the best φ is linear, so min over (θ_e, φ) of ‖D(A·x − c)‖ equals min over θ_e
    of ‖(I − P)D(Y·θ_e − c)‖ with P the projector on the friction columns (variable projection).
    The ``held`` columns (δθ_r, the calibration-time EE body) are held at their box centre
    instead: the last link's parameters are nearly collinear with θ_e, so a free θ_r would absorb
    the payload (its box, not the data, bounds that direction — which the LP uses, a
    least-squares fit cannot), and no payload row sees the calibration-time EE body."""
    d = 1.0 / np.maximum(rows.r, 1e-12)
    keep = ~held
    DA, Dc = rows.A[:, keep] * d[:, None], rows.c * d
    Y, F = DA[:, :N_THETA_E], DA[:, N_THETA_E:]
    if F.shape[1] == 0:
        return Y, Dc
    Q, _ = np.linalg.qr(F)
    return Y - Q @ (Q.T @ Y), Dc - Q @ (Q.T @ Dc)


def _point_estimate(rows: PayloadRows, lower: np.ndarray, upper: np.ndarray,
                    x_lower: np.ndarray, x_upper: np.ndarray, theta_ref: np.ndarray,
                    held: np.ndarray, constraints: PayloadRows | None,
                    prior: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, bool]:
    """(θ_0, outside): θ_0 by log-Cholesky least squares on the payload ``rows`` within the
    ``prior`` B₀ (lower, upper); if it is outside the sound box, the box's Chebyshev centre over
    ``rows`` + ``constraints`` (the calibration rows) and ``outside`` True."""
    from sysid_ros._src.identification.estimate import estimate_theta

    Y, b = _project_out_unknowns(rows, held)
    theta0 = estimate_theta(Y, b, np.ones(len(b)), theta_ref, bounds=prior).theta
    tol = 1e-6 * (prior[1] - prior[0])      # Ipopt meets a bound to its tolerance, not exactly
    if np.all(theta0 >= lower - tol) and np.all(theta0 <= upper + tol):
        return theta0, False
    x_lo, x_hi = x_lower.copy(), x_upper.copy()
    x_lo[:N_THETA_E], x_hi[:N_THETA_E] = lower, upper
    if constraints is not None and len(constraints):
        rows = PayloadRows.concat([rows, constraints], rows.A.shape[1])
    centre = chebyshev_centre(rows.A, rows.c, rows.r, x_lo, x_hi)
    return (0.5 * (lower + upper) if centre is None else centre[:N_THETA_E]), True


def _box(method: str, rows: PayloadRows, x_lo: np.ndarray, x_hi: np.ndarray,
         config: IdentificationConfig, robot: Robot, cuts: np.ndarray | None = None,
         cut_rounds: int | None = None) -> BoxResult:
    if method == "sensitivity":
        from sysid_ros._src.identification.sensitivity import sensitivity_box

        return sensitivity_box(rows, theta_e_box(x_lo[:N_THETA_E], x_hi[:N_THETA_E]),
                               robot.theta_e())
    return polytope_box(rows.A, rows.c, rows.r, x_lo, x_hi, lmi=(method == "lp-lmi"),
                        psd_cuts=(method == "lp-cuts"), cuts=cuts,
                        cut_rounds=config.cut_rounds if cut_rounds is None else cut_rounds,
                        max_cuts=config.max_cuts)


def _base_motion(robot: Robot, config: IdentificationConfig, imu: ImuSamples | None,
                 t: np.ndarray) -> BaseMotion | None:
    """The trunk's base motion at the joint stamps (floating base), None for a fixed base."""
    if not robot.floating_base:
        if imu is not None:
            raise SampleError(f"imu: {robot.name} has a fixed base; no IMU is used")
        return None
    if imu is None:
        raise SampleError(f"imu: {robot.name} has a floating base; the arm rows need the trunk "
                          "IMU (angular velocity and specific force)")
    assert config.imu is not None       # load_identification_config requires it
    return base_motion(imu_mount(robot), config.imu, imu.t, imu.angular_velocity,
                       imu.linear_acceleration, t)


def identify(robot: Robot, config: IdentificationConfig, t: np.ndarray, q: np.ndarray,
             dq: np.ndarray | None, tau: np.ndarray, method: str = "lp", *,
             imu: ImuSamples | None = None, point_estimate: bool = True, chunk: int = 4000,
             progress: Callable[[int, int], None] | None = None) -> IdentificationResult:
    """Identify θ_e from a whole recording (arrays in ``robot.joint_names`` order).

    ``dq`` None (a recording without velocities) raises SampleError: velocities are never
    assumed zero; estimate them first (``sysid_ros._src.calibration``'s state estimator).
    ``imu``: the trunk IMU (floating-base robots only, required there), e.g. a
    ``bagio.ImuSeries``; joint samples it does not cover form no window.
    """
    config = _method_config(method, robot, config)
    t = np.asarray(t, float).reshape(-1)
    if dq is None:
        raise SampleError("velocity: the recording has no joint velocities; estimate them "
                          "first (never assumed 0)")
    plan = config.sampling_plan(_median_step(t))
    summary = summarize(t, robot.joint_names, plan)
    clock = time.perf_counter()
    base = _base_motion(robot, config, imu, t)
    win = MomentumWindows(robot, config, Regressors(robot), rate_hz=1.0 / plan.dt)
    problem = PayloadProblem(robot, config)
    rows, quad = _stream_rows(win, problem, config, (t, q, dq, tau), base, chunk, progress)
    transients = with_radius_share(
        find_transients(t, tau, robot.joint_names, config.torque_noise_abs,
                        config.torque_noise_rel, config.torque_rate_abs, plan.max_sample_gap),
        robot.joint_names, rows.joint, rows.t_start, rows.t_end, quad, rows.r,
        config.torque_lag_s)
    # the calibration's rows (if any): true constraints on the shared θ_r/friction unknowns, in
    # every LP (box, diagnosis, pinned faces), but not in the least-squares fit of θ_e
    cal_rows = problem.calibration_rows()
    t_reg = time.perf_counter() - clock
    x_lo, x_hi = problem.prior()
    notes = _notes(plan.describe(), config.prior_name, len(cal_rows), base, win, transients)
    frame = robot.ee_joint
    if len(rows) == 0:
        return IdentificationResult(INSUFFICIENT,
                                    theta_e_box(x_lo[:N_THETA_E], x_hi[:N_THETA_E], frame=frame),
                                    win.n_samples, 0, method,
                                    {"regressors": t_reg}, notes, [],
                                    insufficient_reason(t, plan), summary,
                                    transients=transients)
    check = win.premise_check
    if check is not None:
        # the velocity bounds rest on premises these data contradict: no box is sound
        return IdentificationResult(INCONSISTENT, None, win.n_samples, win.n_windows, method,
                                    {"regressors": t_reg}, notes, [], check.describe(), summary,
                                    transients=transients)
    lp_rows = PayloadRows.concat([rows, cal_rows], problem.n_x)
    clock = time.perf_counter()
    box = _box(method, lp_rows, x_lo, x_hi, config, robot)
    t_box = time.perf_counter() - clock
    clock = time.perf_counter()
    diag = consistency(lp_rows, x_lo, x_hi, robot.nj, per_joint=box.status == INCONSISTENT)
    t_diag = time.perf_counter() - clock
    clock = time.perf_counter()
    warnings: list[str] = []
    reason = ""
    theta_box, estimated = box.box, False
    if box.status == OK:
        assert theta_box is not None
        theta_box, estimated, warnings, face_notes = _estimate_and_warnings(
            method, point_estimate, theta_box, (rows, cal_rows, lp_rows), x_lo, x_hi, robot,
            problem.held_columns, config)
        notes += face_notes
    else:
        reason = diag.describe(robot.joint_names, float(t[0]))
    if theta_box is not None:
        theta_box = theta_e_box(theta_box.lower, theta_box.upper, theta_box.nominal, frame=frame)
    return IdentificationResult(box.status, theta_box, win.n_samples, win.n_windows, method,
                                {"regressors": t_reg, "bounds": t_box, "diagnosis": t_diag,
                                 "estimate": time.perf_counter() - clock}, notes, warnings,
                                reason, summary, diag, estimated, transients)


def _method_config(method: str, robot: Robot,
                   config: IdentificationConfig) -> IdentificationConfig:
    """``config`` as ``method`` can use it (the paper's sensitivity method has no shared
    unknowns); an unknown method or one the robot rules out raises."""
    if method not in METHODS:
        raise IdentificationConfigError(f"method {method!r} is not one of {METHODS}")
    if method != "sensitivity":
        return config
    if robot.floating_base:
        raise IdentificationConfigError(
            f"method sensitivity: {robot.name} has a floating base, whose IMU-bias unknowns "
            "that method cannot carry; use lp, lp-cuts or lp-lmi")
    return config.with_overrides(friction_unknowns=False, theta_r_unknowns=False,
                                 calibration_rows=None)


def _median_step(t: np.ndarray) -> float:
    """The median sampling step of strictly increasing stamps (SampleError otherwise)."""
    if t.size < 2:
        raise SampleError(f"time: {t.size} sample(s); need at least 2")
    steps = np.diff(t)
    if np.any(steps <= 0):
        raise SampleError("time: stamps not strictly increasing")
    return float(np.median(steps))


def _stream_rows(win: MomentumWindows, problem: PayloadProblem, config: IdentificationConfig,
                 samples: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                 base: BaseMotion | None, chunk: int,
                 progress: Callable[[int, int], None] | None) -> tuple[PayloadRows, np.ndarray]:
    """The rows of the whole recording, fed in chunks as the node feeds messages, and each
    row's quadrature allowance on ∫τ̂."""
    t, q, dq, tau = samples
    parts, quad = [], []
    n = t.size
    for s in range(0, n, chunk):
        m = win.extend(t[s:s + chunk], q[s:s + chunk], dq[s:s + chunk], tau[s:s + chunk],
                       None if base is None else base.take(slice(s, s + chunk)))
        parts.append(problem.rows(m))
        quad.append(config.quadrature_safety * m.quad_tau)
        if progress is not None:
            progress(min(s + chunk, n), n)
    return PayloadRows.concat(parts, problem.n_x), np.concatenate(quad)


def _notes(sampling: str, prior_name: str, n_calibration_rows: int, base: BaseMotion | None,
           win: MomentumWindows, transients: Sequence[Transient]) -> list[str]:
    """The result's notes: sampling, prior, calibration rows, floating base, exclusions and
    transients."""
    notes = [f"sampling: {sampling}", f"prior: {prior_name}"]
    if n_calibration_rows:
        notes.append(f"calibration rows: {n_calibration_rows} constraints on the shared "
                     "theta_r and friction unknowns")
    if base is not None:
        notes.append(f"floating base: rows of {len(win.row_joints)} arm joints; "
                     f"{int((~base.valid).sum())} joint samples without IMU coverage")
    notes += exclusion_notes(win)
    if transients:
        notes.append(transient_note(transients))
    return notes


def _estimate_and_warnings(method: str, point_estimate: bool, theta_box: ParameterBox,
                           all_rows: tuple[PayloadRows, PayloadRows, PayloadRows],
                           x_lo: np.ndarray, x_hi: np.ndarray, robot: Robot,
                           held_columns: np.ndarray, config: IdentificationConfig
                           ) -> tuple[ParameterBox, bool, list[str], list[str]]:
    """An ``ok`` box with its point estimate as nominal, whether it has one, the box's
    warnings (faces pinned to the prior, the estimate outside) and notes (faces on the prior's
    physical faces). ``all_rows``: the payload rows, the calibration's rows and the two stacked
    (the LP's)."""
    rows, cal_rows, lp_rows = all_rows
    outside, estimated = False, False
    if method == "sensitivity":
        estimated = True              # its box's nominal is the paper's θ*
    elif point_estimate:
        nominal, outside = _point_estimate(rows, theta_box.lower, theta_box.upper, x_lo,
                                           x_hi, robot.theta_e(), held_columns, cal_rows,
                                           (x_lo[:N_THETA_E], x_hi[:N_THETA_E]))
        # the Chebyshev centre is inside the box up to the LP's tolerance: clip the rest
        theta_box, estimated = theta_box.with_nominal(theta_box.clip(nominal)), True
    pinned = [] if method == "sensitivity" else \
        pinned_faces(lp_rows, x_lo, x_hi, theta_box.lower, theta_box.upper)
    physical = config.prior_physical_faces
    return (theta_box, estimated, box_warnings(pinned, outside, config.prior_name, physical),
            physical_face_notes(pinned, physical))


def exclusion_notes(win: MomentumWindows) -> list[str]:
    """What the calibrated exclusion rule and the torque alignment dropped, for the result."""
    out = []
    dropped = sum(win.excluded.values())
    if dropped:
        where = "; ".join(f"{j} {a:.2f}-{b:.2f} s ({r})" for r, j, a, b in
                          win.excluded_examples[:5])
        out.append(f"excluded by the stated rule ({win.config.assumptions()['excluded_windows']}"
                   f"): {dropped} rows " + str({k: v for k, v in win.excluded.items() if v})
                   + f"; first: {where}")
    # not aligned: the torque's or the velocity estimate's; the torque's alone are the rest
    torque_only = win.n_unaligned - win.align.n_velocity_unbounded
    if torque_only:
        out.append(f"torque alignment: {torque_only} samples whose lagged torque fell into "
                   "a gap or beyond the end were dropped (each split its run)")
    if win.align.n_velocity_unbounded:
        out.append(f"velocity estimate: {win.align.n_velocity_unbounded} samples whose bound "
                   "exceeded velocity_noise_abs (a start, a gap near them) were not used")
    if win.n_bridged or win.n_bridge_refused:
        out.append(f"bridged {win.n_bridged} short gaps with the stated torque-rate bound "
                   "(its allowance is in the rows' radius)"
                   + (f"; {win.n_bridge_refused} gaps whose end torques contradict that bound "
                      "split their runs" if win.n_bridge_refused else ""))
    return out


class OnlineIdentifier:
    """Streaming identifier: bounds only shrink and an update's cost does not grow with run time.

    Each :meth:`update` intersects the previous sound box (the prior of this update) with the
    polytope of the rows kept: the truth is in the previous box and satisfies every row, so it
    stays in the new box. The 20 box LPs live between updates (:mod:`.incremental`): new rows are
    appended, each LP restarts from its own optimum, and beyond ``config.online_lp_rows`` rows
    the rows slack at every optimum are dropped (the box is unchanged by that), so the LP size is
    bounded. An empty
    intersection sets status ``inconsistent`` (with :attr:`diagnosis` saying why) and keeps the
    last sound box until :meth:`reset`. The window plan follows the stream's own rate, measured
    from its first samples.

    With ``lp-cuts`` the pseudo-inertia cut pool is carried from update to update (cuts hold
    for every rigid body whatever the data). With ``background_cuts=True`` :meth:`update` only
    adds the pool's new cuts to the LPs (at most ``max_cuts`` kept) and the
    cut-generating rounds run in :meth:`tighten`, which another thread may call at its own,
    slower cadence: it solves on a snapshot without holding the lock and then intersects its
    box with the current one — both contain the truth, so the intersection does too (an empty
    intersection means the assumptions failed: ``inconsistent``).

    Samples come in through :meth:`add_samples` (already clean, strictly increasing stamps) or
    :meth:`add_messages` (as received: the bad-sample policy of :mod:`sysid_ros._src.sample_screen`
    drops bad samples and restarts the windows on a persistent jump back); a floating-base robot's trunk
    IMU through :meth:`add_imu`, joint samples waiting until the IMU covers their stamps.
    """

    def __init__(self, robot: Robot, config: IdentificationConfig, method: str = "lp",
                 point_estimate: bool = True, background_cuts: bool = False,
                 restart_after: int = 10) -> None:
        if method not in ONLINE_METHODS:
            raise IdentificationConfigError(f"online method {method!r}: use one of "
                                            f"{ONLINE_METHODS}")
        self.robot, self.config, self.method = robot, config, method
        self.point_estimate = point_estimate
        self.background_cuts = background_cuts and method == "lp-cuts"
        self.windows = MomentumWindows(robot, config, Regressors(robot))
        self.problem = PayloadProblem(robot, config)
        #: the calibration's rows, part of every update's LP (constant: no payload data)
        self._cal_rows = self.problem.calibration_rows()
        #: the shared bad-sample policy of :meth:`add_messages` (:mod:`sysid_ros._src.sample_screen`)
        self.screen = _screen(restart_after)
        # floating base: joint samples wait here until the IMU covers their stamps
        self.imu: ImuStream | None = None
        if robot.floating_base:
            assert config.imu is not None
            self.imu = ImuStream(imu_mount(robot), config.imu,
                                 screen=_screen(restart_after, "axis"))
        self._held: list[tuple[np.ndarray, ...]] = []
        self._lock = threading.Lock()     # guards box/rows/cuts against tighten()'s thread
        self._epoch = 0
        self.reset()

    def reset(self) -> None:
        """New payload: back to the prior box, all samples forgotten."""
        with self._lock:
            self._epoch += 1              # a tighten() started before this is discarded
            self.windows.reset()
            self.n_restarts = 0
            self._held = []
            self.screen.reset()
            if self.imu is not None:
                self.imu.reset()
            prior = theta_e_box(self.config.prior.lower, self.config.prior.upper,
                                frame=self.robot.ee_joint)      # B₀, nominal its centre
            #: the current sound box (replaced whole, under the lock: tighten() runs in another
            #: thread); its nominal is the point estimate, the unloaded body before any
            self.box = prior.with_nominal(prior.clip(self.robot.theta_e()))
            self.status = INSUFFICIENT
            #: the box LPs of this payload and the rows they keep (a snapshot, for tighten())
            self._lps = IncrementalBox(self.problem.n_x, self.config.online_lp_rows,
                                       pad_rel=1e-5 if self.method == "lp-cuts" else 1e-6,
                                       max_cuts=self.config.max_cuts, pinned=self._cal_rows)
            self._rows = self._lps.rows
            self._pending: list[PayloadRows] = []     # rows formed since the last update
            #: the most recent ``online_max_rows`` rows, for the point estimate (the LPs keep
            #: the rows that bind their optima, a biased sample for least squares)
            self._recent = self._rows
            self._cuts: np.ndarray | None = None
            self._new_rows = 0
            self.windows_used = 0
            self.warnings: list[str] = []
            #: the box's faces that rest on the prior's physical faces (notes, not warnings)
            self.face_notes: list[str] = []
            self.diagnosis: Consistency | None = None
            self.reason = ""
            #: torque transients of this payload's samples (:mod:`.transients`), once the
            #: stream's rate is known
            self.transients: TransientStream | None = None

    def restart_windows(self, keep_stamps: bool = False) -> None:
        """Time jumped back (bag loop, simulator reset): drop the samples in progress so no
        window spans the jump, keep the box and the rows (both stay sound for the same payload;
        a changed payload shows as ``inconsistent`` at the next update). The IMU buffer is
        emptied too (never interpolated across the jump); ``keep_stamps`` keeps the stamp
        policy's last stamp (set by the restart that called this)."""
        with self._lock:
            self.windows.break_run()
            self._held = []
            self.n_restarts += 1
            if self.transients is not None:
                self.transients.reset()
            if not keep_stamps:
                self.screen.reset()
            if self.imu is not None:
                self.imu.reset()

    @property
    def samples(self) -> int:
        return self.windows.n_samples

    @property
    def rows(self) -> PayloadRows:
        """The payload rows the box LPs keep (as of the last update; calibration rows apart)."""
        return self._rows

    @property
    def stalled_lps(self) -> int:
        """Box LP solves of this payload whose side fell back to the prior (not optimal)."""
        return self._lps.stalled

    # read-only views of the current box (what the tests and reports read)
    @property
    def lower(self) -> np.ndarray:
        return self.box.lower

    @property
    def upper(self) -> np.ndarray:
        return self.box.upper

    @property
    def nominal(self) -> np.ndarray:
        return self.box.nominal

    def add_messages(self, t: ArrayLike, q: ArrayLike, dq: ArrayLike, tau: ArrayLike) -> int:
        """Samples as messages arrive, under the shared bad-sample policy
        (:class:`~sysid_ros._src.sample_screen.SampleScreen`): zero, duplicate, isolated backward and
        far-future stamps and NaN/inf values are dropped and counted in ``screen.log`` (the
        windows in progress are kept; the hole splits a run like a dropped sample);
        ``restart_after`` consecutive consistent stamps behind the last one restart the windows
        (:meth:`restart_windows`: box kept). Returns new rows formed."""
        t = np.asarray(t, float).reshape(-1)
        q, dq, tau = (np.asarray(x, float) for x in (q, dq, tau))
        names = self.robot.joint_names
        formed = 0
        keep: list[int] = []
        for i, ti in enumerate(t):
            stamp = int(round(ti * 1e9)) if np.isfinite(ti) else 0
            verdict = self.screen.check(stamp, (("position", q[i]), ("velocity", dq[i]),
                                                ("effort", tau[i])), names)
            if verdict == RETRACT and keep:     # the last kept sample was out of line
                keep.pop()
            elif verdict in (RESTART, RETRACT):   # (one already in the windows: restart them)
                if keep:
                    formed += self.add_samples(t[keep], q[keep], dq[keep], tau[keep])
                keep = []
                self.restart_windows(keep_stamps=True)
            if verdict != SKIP:
                keep.append(i)
        if keep:
            formed += self.add_samples(t[keep], q[keep], dq[keep], tau[keep])
        return formed

    def missing_joint(self, t: float, detail: str, names: Sequence[str]) -> None:
        """A message without one of the robot's joints (``names``: the joints it has), in its
        place among :meth:`add_messages`' samples: counted as ``missing_joint``, or as
        ``joint_set_changed`` once the joint set has changed for good."""
        self.screen.missing_joint(int(round(t * 1e9)) if np.isfinite(t) else 0, detail, names)

    def add_imu(self, t: ArrayLike, angular_velocity: ArrayLike,
                linear_acceleration: ArrayLike) -> int:
        """Trunk IMU samples (floating base; IMU frame): returns new rows formed by joint
        samples they now cover."""
        if self.imu is None:
            raise SampleError(f"imu: {self.robot.name} has a fixed base; no IMU is used")
        self.imu.add(t, angular_velocity, linear_acceleration)
        return self._drain()

    def add_samples(self, t: ArrayLike, q: ArrayLike, dq: ArrayLike | None, tau: ArrayLike
                    ) -> int:
        """Append samples (raises SampleError, state unchanged); returns new rows formed.
        Floating base: samples wait until the IMU covers their stamps (:meth:`add_imu`)."""
        if self.imu is None:
            rows = self.problem.rows(self.windows.extend(t, q, dq, tau))
            self._judge_transients(t, tau)
            with self._lock:
                return self._append(rows)
        t, *arrays = self.windows._validate(t, q, dq, tau)
        last = self._held[-1][0][-1] if self._held else self.windows.last_time
        if t.size and last is not None and t[0] <= last:
            raise SampleError("time: stamps not strictly increasing")
        self._held.append((t, *arrays))
        return self._drain()

    def _drain(self) -> int:
        """Feed the held joint samples the IMU now covers into the windows."""
        assert self.imu is not None
        if not self._held:
            return 0
        t, q, dq, tau = (np.concatenate(x) for x in zip(*self._held))
        n, base = self.imu.resolve(t, float(t[-1]))
        self._held = [] if n == t.size else [(t[n:], q[n:], dq[n:], tau[n:])]
        if n == 0:
            return 0
        rows = self.problem.rows(self.windows.extend(t[:n], q[:n], dq[:n], tau[:n], base))
        self._judge_transients(t[:n], tau[:n])
        with self._lock:
            return self._append(rows)

    def _judge_transients(self, t: ArrayLike, tau: ArrayLike) -> None:
        """Feed accepted samples to the transient test (after the windows took them)."""
        plan = self.windows.plan
        if self.transients is None:
            if plan is None:
                return              # the rate probe still holds the first samples
            cfg = self.config
            self.transients = TransientStream(
                self.robot.joint_names, cfg.torque_noise_abs, cfg.torque_noise_rel,
                cfg.torque_rate_abs, plan.max_sample_gap, plan.dt)
        self.transients.push(np.asarray(t, float).reshape(-1), np.asarray(tau, float))

    def _append(self, rows: PayloadRows) -> int:
        if len(rows):
            self._pending.append(rows)
            both = PayloadRows.concat([self._recent, rows], self.problem.n_x)
            self._recent = both.take(slice(-self.config.online_max_rows, None))
            self._new_rows += len(rows)
            self.windows_used += len(rows) // len(self.windows.row_joints)
        return len(rows)

    def insufficient_reason(self) -> str:
        """Why no window has formed yet (empty once one has)."""
        w = self.windows
        if self.windows_used:
            return ""
        if w.plan is None:
            return f"measuring the stream's rate ({w.n_samples} samples so far)"
        limit = max(w.plan.max_sample_gap, w.plan.max_bridged_gap)
        return (f"{w.n_samples} samples, {w.n_gaps} gaps > {limit * 1e3:.1f} ms "
                f"(longest {w.longest_gap * 1e3:.1f} ms); a window needs {w.plan.window + 1} "
                "samples without such a gap")

    def update(self) -> str:
        """Recompute the box from the recent rows; returns the status."""
        if self.status == INCONSISTENT:
            return self.status
        check = self.windows.premise_check
        if check is not None:
            with self._lock:
                self.status, self.reason = INCONSISTENT, check.describe()
            return self.status
        if self._new_rows == 0:
            return self.status
        with self._lock:
            new = PayloadRows.concat(self._pending, self.problem.n_x)
            self._pending, self._new_rows = [], 0
            prior, cuts, epoch, lps = self.box, self._cuts, self._epoch, self._lps
            recent = self._recent
        cut_rounds = self.config.cut_rounds if self.method == "lp-cuts" and \
            not self.background_cuts else 0
        x_lo, x_hi = self.problem.prior(prior)
        lps.add(new)
        lps.add_cuts(cuts)
        box = lps.solve(x_lo, x_hi, cut_rounds)
        rows = lps.rows
        with self._lock:
            if epoch == self._epoch:
                self._rows = rows
        if self._merge(box, epoch, keep_cuts=False) and self.method == "lp-lmi":
            # the SDP box on the rows the LPs keep, inside the LP box just merged
            self._merge(_box("lp-lmi", self._with_calibration(rows),
                             *self.problem.prior(self.box), self.config, self.robot), epoch,
                        keep_cuts=False)
        if self.status == OK:
            self._update_nominal(recent, rows)
        elif self.status == INCONSISTENT and self.diagnosis is None:
            # ``new`` once more: its all-zero rows (no information on x, but possibly violated)
            # are not kept by the LPs
            lp_rows = self._with_calibration(PayloadRows.concat([rows, new], self.problem.n_x))
            self.diagnosis = consistency(lp_rows, x_lo, x_hi, self.robot.nj, per_joint=True)
            self.reason = self.diagnosis.describe(self.robot.joint_names)
        return self.status

    def tighten(self) -> bool:
        """Pseudo-inertia cut rounds on the current rows and box (``lp-cuts`` only; safe to
        call from a second thread). Returns True when the box was intersected with the result."""
        if self.method != "lp-cuts":
            return False
        with self._lock:
            if self.status != OK:
                return False
            rows = self._rows
            prior, cuts, epoch = self.box, self._cuts, self._epoch
        box = _box("lp-cuts", self._with_calibration(rows), *self.problem.prior(prior),
                   self.config, self.robot, cuts)
        return self._merge(box, epoch, keep_cuts=True)

    def _with_calibration(self, rows: PayloadRows) -> PayloadRows:
        return PayloadRows.concat([rows, self._cal_rows], self.problem.n_x)

    def _merge(self, box: BoxResult, epoch: int, keep_cuts: bool) -> bool:
        with self._lock:
            if epoch != self._epoch or self.status == INCONSISTENT:
                return False
            if box.status == INCONSISTENT or box.box is None:
                self.status = INCONSISTENT
                return False
            new = theta_e_box(box.box.lower, box.box.upper, frame=self.box.frame)
            both = self.box.intersect(new)
            if both is None:               # two sound boxes that miss each other
                self.status = INCONSISTENT
                return False
            self.box = both
            if keep_cuts and box.cuts is not None:
                self._cuts = box.cuts
            self.status = OK
            return True

    def _update_nominal(self, recent: PayloadRows, rows: PayloadRows) -> None:
        """The nominal from the ``recent`` rows, the warnings from the LPs' ``rows``."""
        box = self.box
        lower, upper = box.lower, box.upper
        outside = False
        if self.point_estimate:
            prior = self.config.prior
            nominal, outside = _point_estimate(recent, lower, upper,
                                               *self.problem.prior(box), box.nominal,
                                               self.problem.held_columns, self._cal_rows,
                                               (prior.lower, prior.upper))
        else:
            nominal = box.centre
        with self._lock:
            # tighten() may have shrunk the box meanwhile: keep the nominal inside it
            self.box = self.box.with_nominal(self.box.clip(nominal))
        x_lo, x_hi = self.problem.prior()
        pinned = pinned_faces(self._with_calibration(rows), x_lo, x_hi, self.box.lower,
                              self.box.upper)
        self.warnings = box_warnings(pinned, outside, self.config.prior_name,
                                     self.config.prior_physical_faces)
        self.face_notes = physical_face_notes(pinned, self.config.prior_physical_faces)

    def summary(self) -> dict[str, Any]:
        return {"status": self.status, "samples": self.samples, "windows": self.windows_used,
                "rows": len(self._rows), "gaps": self.windows.n_gaps,
                "bridged_steps": self.windows.n_bridged,
                "transients": 0 if self.transients is None else self.transients.count,
                "bridges_refused": self.windows.n_bridge_refused,
                "excluded_rows": dict(self.windows.excluded),
                "unaligned_samples": self.windows.n_unaligned}


def _screen(restart_after: int, entry: str = "joint") -> SampleScreen:
    try:
        return SampleScreen(persistent=restart_after, entry=entry)
    except ValueError as err:
        raise IdentificationConfigError(f"stamp restart_after: {err}") from None
