"""The payload problem: momentum rows → linear constraints on x = [θ_e | φ].

Each row of :class:`~.windows.MomentumRows` says (per window and joint)

    W_e·θ_e + W_r·θ_r + Fc·∫σ + Fv·∫q̇ + Ia·Δq̇ + β·T = ∫τ̂ dt − (noise integral),

which this module turns into |A·x − c| ≤ r_fixed + r_noise with

- x = [θ_e (10, the payload body) | φ (the friction coefficients whose box has width, when
  ``config.friction_unknowns``) | δθ_r = θ_r − θ_r^c (when ``config.theta_r_unknowns``)]: an
  unknown φ is *one* value shared by every window of its joint — a constant torque offset β or
  a viscous coefficient is the same in all windows, which per-row radii would forget; likewise
  θ_r is one vector for the whole recording, so its entries with a box of non-zero width (and
  a row that sees them) are unknowns in ±rad(θ_r) with the columns W_r. Sound: the true x
  satisfies every row with the true δθ_r, which is inside its box (assumption 3); the per-row
  radius |W_r|·rad(θ_r) is the same constraint with δθ_r chosen per row (a superset);
- c = ∫τ̂ − W_r·θ_r^c − (the fixed friction terms at their box centre);
- r_fixed: the exact radius of everything box-bounded and not an unknown — |W_r|·rad(θ_r)
  (only without ``theta_r_unknowns``), the fixed friction coefficients' intervals (Fc times the
  interval of ∫σ), Fc_max·(radius of
  ∫σ) for an unknown Fc (sound because Fc ≥ 0), and the quadrature allowance
  ``quadrature_safety``·|Simpson − trapezoid| of ∫τ̂, Fv·∫q̇, ∫W_r·θ_r and ∫W_e·θ_e (|θ| and
  |Fv| at the box edge);
- the floating base's IMU error (:mod:`.base_motion`): base_W·|θ|max over θ_r's box and B₀
  (per-sample noise) and gyro_bias_abs·Σ_k|D_ω,k|·|θ|max (a constant gyro bias);
- r_noise: the torque-noise radius Σ_k w_k·δτ_k = (a_j·T + rel·∫|τ̂|)/(1 − rel), kept apart so
  diagnostics can scale it (the "noise scale" of :mod:`.diagnostics`).

Floating base (:mod:`.base_motion`): only the arm joints have rows (friction unknowns of the
other joints would have no row: they are not unknowns), and x gains the accelerometer bias
unknowns [b (3) | z (3 × 10)]: the row's bias term −Σ_a b_a·∫G_a·θ is −Σ_a b_a·(∫G_a,r·θ_r^c)
− Σ_a ∫G_a,e·z_a with z_a = b_a·θ_e, |b_a| ≤ β, z_a in β·max(|θ_e lower|, |θ_e upper|)
(the bilinear term relaxed to its box, sound for every θ_e in the box); the θ_r remainder
β·Σ_a|∫G_a,r|·rad θ_r and the quadrature allowance of ∫G_a go into r_fixed.

Torque timing (``config.torque_delay_samples``, :mod:`.windows`): with the torque stream offset
from the joint states by δ_j (|δ_j| ≤ δ_max, one constant per joint), the true ∫τ of a window is
∫τ̂ + δ_j·(τ_end − τ_start). With ``friction_unknowns`` u_j = δ_j/δ_max ∈ [−1, 1] is one more
shared unknown per joint with rows (column −δ_max·(τ̂_end − τ̂_start)); otherwise δ_max·|τ̂_end −
τ̂_start| enters r_fixed. The noise of the two end samples, δ_max·(|n_start| + |n_end|), enters
r_noise.

Torque gain (``config.torque_gain_rel`` g_j > 0, :mod:`.config`): the true ∫τ is
(1 + g_j·v_j)·∫τ̂ (τ̂ already multiplied by ``torque_gain``), |v_j| ≤ 1 one constant per joint.
With ``friction_unknowns`` v_j is a shared unknown (column −g_j·∫τ̂; the timing term's product
with it, g_j·δ_max·|τ̂_end − τ̂_start|, enters r_fixed), otherwise g_j·|∫τ̂| enters r_fixed. The
torque bounds are stated on the measured torque, so the noise radius and the bridged gaps'
allowance are multiplied by the largest gain torque_gain_j·(1 + g_j), and the torque's
quadrature allowance (computed on the rescaled τ̂) by 1 + g_j.

Calibration rows (``config.calibration_rows``, :mod:`.calibration_constraints`): the calibration's own
momentum rows as further constraints on the shared δθ_r and φ, with 10 more unknowns for the
end-effector body as it was during the calibration (no payload), bounded by the calibration's
prior of that body; they need ``theta_r_unknowns`` and ``friction_unknowns``.

Extra friction terms (``config.friction_terms``, adopted by a calibration): each coefficient ψ
of a term's feature f(q_j, q̇_j) adds ψ·∫f dt to its joint's rows; with ``friction_unknowns`` a
coefficient whose box has width is one more shared unknown (column ∫f, after φ), otherwise its
box enters the row's radius. Their quadrature allowance is ``quadrature_safety``·|Simpson −
trapezoid| of ∫f at |ψ|max.

The prior of x is [B₀ | the friction box of the unknowns | the extra terms' boxes | ±rad(θ_r) |
bias box | calibration-time EE body box | [−1, 1] per torque-timing unknown | [−1, 1] per
torque-gain unknown]; boxes are reported on θ_e only. The gain unknowns come last, after every
model column, as in the calibration's x (:mod:`sysid_ros._src.calibration.rows`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import scipy.sparse as sp

from sysid_ros._src.identification.config import IdentificationConfig
from sysid_ros._src.identification.base_motion import imu_mount, trunk_bias
from sysid_ros._src.identification.windows import MomentumRows, row_joints_and_bodies
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import FRICTION_NAMES, Robot

__all__ = ["PayloadRows", "PayloadProblem", "N_THETA_E"]

N_THETA_E = 10


@dataclass(frozen=True)
class PayloadRows:
    """|A·x − c| ≤ r_fixed + r_noise, one row per (window, joint); ``joint``, ``t_start``,
    ``t_end`` say where each row comes from (for diagnostics)."""

    A: np.ndarray
    c: np.ndarray
    r_fixed: np.ndarray
    r_noise: np.ndarray
    joint: np.ndarray
    t_start: np.ndarray
    t_end: np.ndarray

    @property
    def r(self) -> np.ndarray:
        """The row radius under the stated noise bound."""
        return self.r_fixed + self.r_noise

    def __len__(self) -> int:
        return int(self.c.shape[0])

    def take(self, index: slice | np.ndarray) -> PayloadRows:
        return PayloadRows(*(getattr(self, f.name)[index] for f in fields(self)))

    @staticmethod
    def concat(parts: list[PayloadRows], n_x: int) -> PayloadRows:
        parts = [p for p in parts if len(p)]
        if not parts:
            z = np.zeros(0)
            return PayloadRows(np.zeros((0, n_x)), z, z, z, np.zeros(0, int), z, z)
        if len(parts) == 1:
            return parts[0]
        return PayloadRows(*(np.concatenate([getattr(p, f.name) for p in parts])
                             for f in fields(PayloadRows)))


class PayloadProblem:
    """Variable layout, prior and row construction for one robot and configuration."""

    def __init__(self, robot: Robot, config: IdentificationConfig) -> None:
        self.robot, self.config = robot, config
        nj = robot.nj
        n_theta = 10 * robot.n_bodies
        mask = np.ones(n_theta, bool)
        mask[robot.ee_columns] = False
        self._ee, self._other = np.flatnonzero(~mask), np.flatnonzero(mask)
        lo_r, hi_r = config.theta_r_box
        self.theta_r_c, self.theta_r_rad = 0.5 * (lo_r + hi_r), 0.5 * (hi_r - lo_r)
        self.theta_r_abs_max = np.maximum(np.abs(lo_r), np.abs(hi_r))
        has_rows = np.zeros(nj, bool)
        has_rows[row_joints_and_bodies(robot)[0]] = True
        # x's column blocks in order: θ_e | φ | ψ | δθ_r | IMU bias | calibration's end body |
        # torque timing | torque gain
        self._layout_friction(has_rows)
        self._layout_terms(has_rows)
        self._layout_theta_r(n_theta)
        self._layout_imu_bias()
        self._layout_calibration_body()
        self._layout_timing_and_gain()
        self._cal_rows: PayloadRows | None = None

    def _layout_friction(self, has_rows: np.ndarray) -> None:
        """φ: the friction coefficients with a box of width, of joints with rows."""
        robot, config, nj = self.robot, self.config, self.robot.nj
        self.f_lo, self.f_hi = config.friction_lower, config.friction_upper
        width = self.f_hi - self.f_lo
        scale = np.maximum(1.0, np.maximum(np.abs(self.f_lo), np.abs(self.f_hi)))
        self.free = (width > 1e-12 * scale) if config.friction_unknowns \
            else np.zeros((nj, 4), bool)
        self.free &= has_rows[:, None]
        self.col = np.full((nj, 4), -1)
        self.col[self.free] = N_THETA_E + np.arange(int(self.free.sum()))
        self.n_x = N_THETA_E + int(self.free.sum())
        self.names = list(PARAM_NAMES) + [
            f"{FRICTION_NAMES[k]}[{robot.joint_names[j]}]" for j, k in zip(*np.nonzero(self.free))]

    def _layout_terms(self, has_rows: np.ndarray) -> None:
        """ψ: the calibrated extra terms' coefficients, as φ."""
        robot, config, nj = self.robot, self.config, self.robot.nj
        # calibrated extra terms ψ (module docstring): unknowns like φ, each in its box
        terms = config.friction_terms
        self.terms = terms
        self.n_term_cols = 0 if terms is None else terms.width
        self.t_lo = np.zeros((nj, 0)) if terms is None else terms.lower
        self.t_hi = np.zeros((nj, 0)) if terms is None else terms.upper
        t_scale = np.maximum(1.0, np.maximum(np.abs(self.t_lo), np.abs(self.t_hi)))
        self.t_free = ((self.t_hi - self.t_lo > 1e-12 * t_scale) & has_rows[:, None]
                       if config.friction_unknowns else np.zeros(self.t_lo.shape, bool))
        self.t_col = np.full(self.t_lo.shape, -1)
        self.t_col[self.t_free] = self.n_x + np.arange(int(self.t_free.sum()))
        self.n_x += int(self.t_free.sum())
        if terms is not None:
            self.names += [f"{terms.columns[k]}[{robot.joint_names[j]}]"
                           for j, k in zip(*np.nonzero(self.t_free))]

    def _layout_theta_r(self, n_theta: int) -> None:
        """δθ_r: the other bodies' parameters some row sees (``theta_r_unknowns``)."""
        robot, config = self.robot, self.config
        # θ_r unknowns δ = θ_r − θ_r^c ∈ [−rad, rad]: the entries of θ_r whose box has width and
        # that some row can see (the subtree of a row joint; every other column of W is zero)
        seen = np.zeros(n_theta, bool)
        for b in row_joints_and_bodies(robot)[1]:
            seen[10 * b:10 * b + 10] = True
        r_scale = np.maximum(1.0, self.theta_r_abs_max)
        self.r_free = (self.theta_r_rad > 1e-12 * r_scale) & seen[self._other] \
            if config.theta_r_unknowns else np.zeros(self._other.size, bool)
        self.r_col = self.n_x
        self.n_r = int(self.r_free.sum())
        self.n_x += self.n_r
        body_names = [robot.model.names[i] for i in range(1, robot.model.njoints)]
        self.names += [f"{PARAM_NAMES[k % 10]}[{body_names[k // 10]}]"
                       for k in self._other[self.r_free]]

    def _layout_imu_bias(self) -> None:
        """The accelerometer bias and its products with θ_e (floating base)."""
        robot, config = self.robot, self.config
        # IMU biases per trunk axis (floating base); accelerometer-bias unknowns b (3) then
        # z_a = b_a·θ_e (3 × 10)
        self.bias = self.gyro_bias = np.zeros(3)
        if robot.floating_base and config.imu is not None:
            mount = imu_mount(robot)
            self.bias = trunk_bias(mount, config.imu.accel_bias_abs)
            self.gyro_bias = trunk_bias(mount, config.imu.gyro_bias_abs)
        self.n_bias = 33 if np.any(self.bias > 0) else 0
        self.bias_col = self.n_x
        self.n_x += self.n_bias
        if self.n_bias:
            axes = "xyz"
            self.names += [f"accel_bias_{a}" for a in axes] + [
                f"accel_bias_{a}*{p}" for a in axes for p in PARAM_NAMES]

    def _layout_calibration_body(self) -> None:
        """The end-effector body as it was during the calibration recordings."""
        robot, config = self.robot, self.config
        # the end-effector body during the calibration recordings (no payload): its own unknowns
        cal = config.calibration_rows
        self.n_ee_cal = 0 if cal is None else N_THETA_E
        self.ee_cal_col = self.n_x
        self.n_x += self.n_ee_cal
        if cal is not None:
            cal.check(robot, terms=config.friction_terms)
            self.names += [f"{p}[{robot.ee_joint} during calibration]" for p in PARAM_NAMES]

    def _layout_timing_and_gain(self) -> None:
        """The torque stream's timing and gain unknowns, one per joint with rows."""
        robot, config, nj = self.robot, self.config, self.robot.nj
        # torque-timing unknowns u_j = δ_j/δ_max, one per joint with rows (module docstring)
        self.delay_joints = (row_joints_and_bodies(robot)[0]
                             if config.friction_unknowns and config.torque_delay_samples > 0
                             else np.zeros(0, int))
        self.delay_col = self.n_x
        self._delay_index = np.full(nj, -1)
        self._delay_index[self.delay_joints] = np.arange(self.delay_joints.size)
        self.n_x += self.delay_joints.size
        self.names += [f"torque_delay[{robot.joint_names[j]}]" for j in self.delay_joints]
        # torque-gain unknowns v_j ∈ [−1, 1], one per joint with rows and a stated gain bound
        rows_j = row_joints_and_bodies(robot)[0]
        self.gain_joints = (rows_j[config.torque_gain_rel[rows_j] > 0]
                            if config.friction_unknowns else np.zeros(0, int))
        self.gain_col = self.n_x
        self._gain_index = np.full(nj, -1)
        self._gain_index[self.gain_joints] = np.arange(self.gain_joints.size)
        self.n_x += self.gain_joints.size
        self.names += [f"torque_gain[{robot.joint_names[j]}]" for j in self.gain_joints]


    def prior(self, theta_box: ParameterBox | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Box of x (lower, upper): [θ_e box (default B₀) | friction box of the unknowns |
        θ_r − θ_r^c in ±rad(θ_r) | IMU-bias box]."""
        box = self.config.prior if theta_box is None else theta_box
        lo, hi = box.lower, box.upper
        rad = self.theta_r_rad[self.r_free]
        z = np.repeat(self.bias, 10) * np.tile(np.maximum(np.abs(lo), np.abs(hi)), 3)
        b = self.bias if self.n_bias else np.zeros(0)
        z = z if self.n_bias else np.zeros(0)
        cal = self.config.calibration_rows
        ee_lo, ee_hi = (np.zeros(0), np.zeros(0)) if cal is None else (cal.ee_lower, cal.ee_upper)
        unit = np.ones(self.delay_joints.size + self.gain_joints.size)
        return (np.concatenate([lo, self.f_lo[self.free], self.t_lo[self.t_free], -rad, -b, -z,
                                ee_lo, -unit]),
                np.concatenate([hi, self.f_hi[self.free], self.t_hi[self.t_free], rad, b, z,
                                ee_hi, unit]))

    def _gain_terms(self, A: np.ndarray, tau: np.ndarray, joint: np.ndarray, scale: np.ndarray
                    ) -> np.ndarray:
        """Put the gain unknowns' columns −g_j·scale·∫τ̂ into ``A`` (in place) and return what
        each row's radius must add instead where the joint has no unknown: g_j·scale·|∫τ̂|."""
        g = self.config.torque_gain_rel[joint]
        idx = self._gain_index[joint]
        has = idx >= 0
        rows = np.flatnonzero(has)
        A[rows, self.gain_col + idx[has]] = -(g * scale * tau)[has]
        return np.where(has, 0.0, g * scale * np.abs(tau))

    @property
    def theta_r_slice(self) -> slice:
        """Columns of x holding θ_r − θ_r^c (empty without ``theta_r_unknowns``)."""
        return slice(self.r_col, self.r_col + self.n_r)

    @property
    def held_columns(self) -> np.ndarray:
        """Columns the point estimate holds at their box centre rather than fitting: δθ_r (the
        last link is nearly collinear with θ_e) and the calibration-time EE body (no payload
        row sees it)."""
        held = np.zeros(self.n_x, bool)
        held[self.theta_r_slice] = True
        held[self.ee_cal_col:self.ee_cal_col + self.n_ee_cal] = True
        return held

    def calibration_rows(self) -> PayloadRows:
        """The calibration's rows (``config.calibration_rows``) as rows |A·x − c| ≤ r on this
        problem's x (module docstring of :mod:`.calibration_constraints`); empty without them. Built
        once: they do not depend on the payload data."""
        cal = self.config.calibration_rows
        if cal is None:
            return PayloadRows.concat([], self.n_x)
        if self._cal_rows is not None:
            return self._cal_rows
        robot = self.robot
        n_cols = len(cal.columns)
        n_theta = 10 * robot.n_bodies
        # x_cal = M·x + k: links = θ_r^c + δθ_r, the EE body its calibration-time unknowns,
        # friction the identifier's unknowns or (no width) their centre
        M = sp.lil_matrix((n_cols, self.n_x))
        k = np.zeros(n_cols)
        k[self._other] = self.theta_r_c
        free_r = np.flatnonzero(self.r_free)
        M[self._other[free_r], self.r_col + np.arange(free_r.size)] = 1.0
        M[self._ee, self.ee_cal_col + np.arange(N_THETA_E)] = 1.0
        f_cols = n_theta + np.arange(4 * robot.nj).reshape(robot.nj, 4)
        M[f_cols[self.free], self.col[self.free]] = 1.0
        k[f_cols[~self.free]] = 0.5 * (self.f_lo + self.f_hi)[~self.free]
        w = self.n_term_cols
        t_cols = n_theta + 4 * robot.nj + np.arange(w * robot.nj).reshape(robot.nj, w)
        M[t_cols[self.t_free], self.t_col[self.t_free]] = 1.0
        k[t_cols[~self.t_free]] = 0.5 * (self.t_lo + self.t_hi)[~self.t_free]
        M = M.tocsr()
        rows = cal.rows
        A = np.asarray((rows.A @ M).todense())
        # the calibration's ∫τ̂ are the reading's as recorded: the same gain (one robot) makes
        # them torque_gain·(1 + g·v)·∫τ̂, with the payload rows' gain unknowns v
        gain = self.config.torque_gain[rows.joint]
        big = self.config.gain_max[rows.joint]
        c = gain * rows.c - rows.A @ k
        r_gain = self._gain_terms(A, rows.c, rows.joint, gain)
        # Fc·∫σ with ∫σ ∈ [s ± s_r] and 0 ≤ Fc ≤ Fc_max: the centre s in A, Fc_max·s_r in r
        fc_max = self.f_hi[rows.joint, 0]
        n = len(cal)
        nan = np.full(n, np.nan)       # not payload time: diagnostics draw no span for them
        self._cal_rows = PayloadRows(A, c, big * rows.r_fixed + fc_max * rows.sign_rad + r_gain,
                                     big * cal.noise[rows.joint] * rows.t_noise, rows.joint.copy(),
                                     nan, nan.copy())
        return self._cal_rows

    def _term_rows(self, m: MomentumRows, A: np.ndarray, c: np.ndarray,
                   r_fixed: np.ndarray) -> None:
        """The extra terms' part of the rows, in place: a free coefficient's column is ∫feature;
        a fixed one moves c by its centre and r_fixed by its radius; every one adds its
        quadrature allowance at |ψ|max and, under stated velocity noise (scope ``all``), what
        that noise moves the feature by over the window."""
        if not self.n_term_cols:
            return
        assert self.terms is not None
        cfg, j, rows = self.config, m.joint, np.arange(len(m))
        lo, hi, free, col = self.t_lo[j], self.t_hi[j], self.t_free[j], self.t_col[j]
        abs_max = np.maximum(np.abs(lo), np.abs(hi))
        for k in range(self.n_term_cols):
            coef, is_free = m.terms[:, k], free[:, k]
            A[rows[is_free], col[is_free, k]] = coef[is_free]
            c -= np.where(is_free, 0.0, 0.5 * (lo[:, k] + hi[:, k]) * coef)
            r_fixed += np.where(is_free, 0.0, 0.5 * (hi[:, k] - lo[:, k]) * np.abs(coef))
        r_fixed += cfg.quadrature_safety * np.sum(m.quad_terms * abs_max, axis=1)
        eps = cfg.velocity_noise_abs[j]
        if cfg.velocity_noise_scope == "all" and np.any(eps > 0):
            for e in np.unique(eps[eps > 0]):
                err = self.terms.velocity_errors(float(e))
                assert err is not None                  # refused by the config check
                sel = eps == e
                r_fixed[sel] += (abs_max[sel] @ err) * m.duration[sel]

    def rows(self, m: MomentumRows) -> PayloadRows:
        """The constraint rows of momentum rows ``m`` (see module docstring)."""
        cfg = self.config
        n = len(m)
        if n == 0:
            return PayloadRows.concat([], self.n_x)
        j = m.joint
        W_e, W_r = m.W[:, self._ee], m.W[:, self._other]
        A = np.zeros((n, self.n_x))
        A[:, :N_THETA_E] = W_e
        c = m.tau - W_r @ self.theta_r_c
        # θ_r is one vector for all windows: its free entries are shared LP unknowns (their
        # columns W_r); only the rest (zero-width entries: nothing) stays in the per-row radius
        A[:, self.theta_r_slice] = W_r[:, self.r_free]
        r_fixed = np.abs(W_r[:, ~self.r_free]) @ self.theta_r_rad[~self.r_free]
        rows = np.arange(n)
        r_fixed += self._friction_columns(m, A, c)
        self._term_rows(m, A, c, r_fixed)
        theta_e_abs_max = np.maximum(np.abs(cfg.prior.lower), np.abs(cfg.prior.upper))
        # the viscous column is the trapezoid of q̇ (not Δq: encoder counts, :mod:`.windows`)
        fv_max = np.maximum(np.abs(self.f_lo[j, 1]), np.abs(self.f_hi[j, 1]))
        # velocity noise ε: Ia·Δq̇ off by ≤ 2ε at the ends, Fv·∫q̇ by ≤ ε·T, the momentum
        # H(q)·q̇ at the ends by ≤ vel_rad (the Coulomb band is widened by ε in :mod:`.windows`);
        # scope 'payload': a payload changes neither Ia nor Fv, whose share the calibration
        # measured, and vel_rad is the payload's momentum only (config module docstring)
        eps = cfg.velocity_noise_abs[j]
        ia_max = np.maximum(np.abs(self.f_lo[j, 2]), np.abs(self.f_hi[j, 2]))
        if cfg.velocity_noise_scope == "all":
            r_fixed += eps * (2.0 * ia_max + fv_max * m.duration)
        r_fixed += m.vel_rad
        # torque bounds are on the reading: the largest gain turns them into the true torque's
        big, one_g = cfg.gain_max[j], 1.0 + cfg.torque_gain_rel[j]
        r_fixed += big * m.gap_rad     # bridged steps' torque allowance (stated rate bound)
        r_fixed += self._gain_terms(A, m.tau, j, np.ones(n))
        r_fixed += cfg.quadrature_safety * (one_g * m.quad_tau + fv_max * m.quad_dq
                                            + m.quad_W[:, self._other]
                                            @ self.theta_r_abs_max
                                            + m.quad_W[:, self._ee] @ theta_e_abs_max)
        r_fixed += self._base_motion_terms(m, A, theta_e_abs_max)
        rel = cfg.torque_noise_rel
        # the window-averaged bound a_j + s_j·∫|q̇| dt/T, times T (s_j = 0: a constant bound)
        r_noise = (cfg.torque_noise_abs[j] * m.duration
                   + cfg.torque_noise_speed[j] * m.speed_abs
                   + rel * m.tau_abs) / (1.0 - rel)
        # torque timing: ∫τ = ∫τ̂ + δ_j·(τ_end − τ_start); the end samples' noise in r_noise
        step = m.tau_end - m.tau_start
        if self.delay_joints.size:
            A[rows, self.delay_col + self._delay_index[j]] = -m.delay * step
            # the timing term of the true torque is (1 + g·v)·δ·step: the product with the gain
            # unknown is not linear, its part g·δ·|step| goes to the radius
            r_fixed += (one_g - 1.0) * m.delay * np.abs(step)
        else:
            r_fixed += one_g * m.delay * np.abs(step)
        r_noise += m.delay * (2.0 * cfg.torque_noise_abs[j]
                              + rel * (np.abs(m.tau_start) + np.abs(m.tau_end))) / (1.0 - rel)
        # the noise bounds are on the reading: the rescaled reading's noise is torque_gain times
        # it, the true torque's up to (1 + g) times that (τ̂ in tau_abs is rescaled already:
        # the relative part is counted conservatively)
        r_noise *= big
        return PayloadRows(A, c, r_fixed, r_noise, j.copy(), m.t_start.copy(), m.t_end.copy())

    def _friction_columns(self, m: MomentumRows, A: np.ndarray, c: np.ndarray) -> np.ndarray:
        """φ's columns of ``A`` for the unknown coefficients; the fixed ones moved into ``c``.
        Returns their part of the radius."""
        j, n = m.joint, len(m)
        lo, hi, free, col = self.f_lo[j], self.f_hi[j], self.free[j], self.col[j]
        fc_c, fc_r = 0.5 * (lo + hi), 0.5 * (hi - lo)
        rows = np.arange(n)
        r = np.zeros(n)
        for k in range(4):
            coef = m.fric[:, k]
            is_free = free[:, k]
            A[rows[is_free], col[is_free, k]] = coef[is_free]
            fixed = ~is_free
            if k == 0:
                # Coulomb: an interval coefficient [s ± sr] times Fc. Unknown Fc ≥ 0 enters the
                # LP with the centre s and Fc_max·sr in the radius; a fixed interval of Fc gives
                # the product of two intervals.
                s, sr = coef, m.sign_rad
                r += np.where(is_free, hi[:, 0] * sr,
                              np.abs(fc_c[:, 0]) * sr + fc_r[:, 0] * (np.abs(s) + sr))
                c -= np.where(fixed, fc_c[:, 0] * s, 0.0)
            else:
                c -= np.where(fixed, fc_c[:, k] * coef, 0.0)
                r += np.where(fixed, fc_r[:, k] * np.abs(coef), 0.0)
        return r

    def _base_motion_terms(self, m: MomentumRows, A: np.ndarray,
                           theta_e_abs_max: np.ndarray) -> np.ndarray:
        """Floating base: the IMU error's radius (zero for a fixed base, |θ| at the box edge)
        and the accelerometer-bias columns of ``A``. Returns the radius."""
        n = len(m)
        r = m.base_W[:, self._other] @ self.theta_r_abs_max \
            + m.base_W[:, self._ee] @ theta_e_abs_max
        if m.D_omega.shape[1]:
            # a constant gyro bias (|b_ω,k| ≤ β_ω,k): Σ_k b_ω,k·D_k·θ, |·| ≤ Σ_k β_ω,k|D_k|·|θ|max
            D = np.einsum("k,nkt->nt", self.gyro_bias, np.abs(m.D_omega))
            r = r + D[:, self._other] @ self.theta_r_abs_max + D[:, self._ee] @ theta_e_abs_max
        if self.n_bias:
            G_r, G_e = m.G[:, :, self._other], m.G[:, :, self._ee]       # (n, 3, ·)
            o = self.bias_col
            A[:, o:o + 3] = -G_r @ self.theta_r_c
            A[:, o + 3:o + 33] = -G_e.reshape(n, 30)
            r = r + (np.abs(G_r) @ self.theta_r_rad) @ self.bias
            r = r + self.config.quadrature_safety * (
                (m.quad_G[:, :, self._other] @ self.theta_r_abs_max
                 + m.quad_G[:, :, self._ee] @ theta_e_abs_max) @ self.bias)
        return r
