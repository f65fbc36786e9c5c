"""Validation of a calibration on recordings it was not fitted to.

Two questions, answered separately:

1. **Do the calibrated bounds hold there?** The validation rows (same windows and allowances)
   are checked against the calibrated boxes: the smallest factor σ on the written bounds that
   keeps them consistent with some parameters *inside the calibrated boxes* (one LP; σ ≤ 1:
   consistent; > 1: the identifier would need that much more on those data — its assumption
   would fail there), and per joint the smallest bounds they need (:func:`.lp.min_noise`)
   divided by the written ones — the joints' *noise scales*, which say where.
2. **How well does the nominal predict?** Torque per sample τ̂ vs the calibrated nominal model,
   rigid body by RNEA plus the friction law, with q̇ and q̈ from the RTS smoother (the
   estimator's q̈ error, times H + Ia, is part of this number), and the window-averaged residual
   of the momentum rows (no q̈ needed) — both as RMS per joint in N·m.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from sysid_ros._src.calibration.calibrate import CalibrationResult, calibration_rows
from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.calibration.lp import common_scale, min_noise, scale_rows
from sysid_ros._src.calibration.state import rts_smoother
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.identification.alignment import StreamAlignment
from sysid_ros._src.identification.config import IdentificationConfig

__all__ = ["Validation", "validate", "predict_torque", "nominal_model"]


@dataclass
class Validation:
    """Per joint (nj,) arrays; ``series`` keeps (name, t, τ̂, τ_pred) per recording for plots."""

    joints: list[str]
    noise_needed: np.ndarray         # N·m, smallest consistent bound with the calibrated boxes
    noise_scale: np.ndarray          # noise_needed / written bound, per joint
    scale: float                     # smallest common factor on the written bounds (≤ 1: ok)
    torque_rms: np.ndarray           # N·m per sample
    window_rms: np.ndarray           # N·m, window-averaged
    torque_rms_stribeck: np.ndarray | None = None
    series: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    rows_residual: np.ndarray | None = None      # (n,) window-averaged residual (N·m)
    rows_joint: np.ndarray | None = None

    @property
    def consistent(self) -> bool:
        return bool(self.scale <= 1.0 + 1e-9)

    def as_dict(self) -> dict[str, Any]:
        out = {"consistent": self.consistent,
               "scale": float(self.scale),
               "noise_scale": [float(v) for v in self.noise_scale],
               "noise_needed_Nm": [float(v) for v in self.noise_needed],
               "torque_rms": [float(v) for v in self.torque_rms],
               "window_rms": [float(v) for v in self.window_rms],
               "bags": [s[0] for s in self.series]}
        if self.torque_rms_stribeck is not None:
            out["torque_rms_stribeck"] = [float(v) for v in self.torque_rms_stribeck]
        return out

    def describe(self) -> str:
        worst = int(np.argmax(self.noise_scale))
        verdict = "consistent" if self.consistent else "INCONSISTENT"
        return (f"validation {verdict}: needs {self.scale:.2f} x the written bounds (worst "
                f"joint {self.joints[worst]}, x{self.noise_scale[worst]:.2f} alone); torque RMS "
                + ", ".join(f"{v:.3f}" for v in self.torque_rms) + " N*m")


def nominal_model(robot: Robot, theta: np.ndarray) -> pin.Model:
    """A copy of the robot's model with every body's parameters set to ``theta``."""
    model = robot.model.copy()
    for jid in range(1, model.njoints):
        model.inertias[jid] = pin.Inertia.FromDynamicParameters(
            np.asarray(theta[10 * (jid - 1):10 * jid], float))
    return model


def predict_torque(robot: Robot, model: pin.Model, friction: np.ndarray, q: np.ndarray,
                   dq: np.ndarray, ddq: np.ndarray, stribeck=None,
                   terms: FrictionTerms | None = None) -> np.ndarray:
    """τ̂ predicted per sample (N, nj): RNEA(q, q̇, q̈) + the friction law (linear with
    ``friction`` (nj, 4) and the adopted extra ``terms`` at their nominal, or the Stribeck
    fit)."""
    data = model.createData()
    n = q.shape[0]
    qf = np.tile(robot.neutral(), (n, 1))
    qf[:, robot.q_index] = q
    vf = np.zeros((n, robot.nv))
    vf[:, robot.v_index] = dq
    af = np.zeros((n, robot.nv))
    af[:, robot.v_index] = ddq
    tau = np.empty((n, robot.nj))
    for k in range(n):
        tau[k] = pin.rnea(model, data, qf[k], vf[k], af[k])[robot.v_index]
    if stribeck is not None:
        return tau + stribeck.friction_torque(dq, ddq)
    fc, fv, ia, beta = friction.T
    extra = 0.0 if terms is None else terms.torque(q, dq, terms.nominal)
    return tau + fc * np.sign(dq) + fv * dq + ia * ddq + beta + extra


def aligned_torque(rec: Recording, config: IdentificationConfig
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(sample indices, τ̂ at those samples read ``config.torque_lag_s`` later): the torque
    the states of those samples go with. Samples whose lagged reading falls into a gap or
    beyond the recording's end are left out."""
    plan = config.sampling_plan(float(np.median(np.diff(rec.t))))
    dq = rec.dq if rec.dq is not None else np.zeros_like(rec.q)
    out = StreamAlignment(config.torque_lag_s).push(rec.t, rec.q, dq, rec.tau, None,
                                                    plan.max_sample_gap)
    keep = np.flatnonzero(out.valid)
    return keep, out.tau[keep]


def _unlagged_velocity(rec: Recording, config: IdentificationConfig) -> np.ndarray | None:
    """The measured velocities read ``config.velocity_lag_s`` later (a driver's velocity
    filter compensated, as the rows do), held at the recording's end; None without them. A
    lagging q̇ contradicts q, and the smoother then buys the contradiction with q̈ noise."""
    if rec.dq is None or not np.any(config.velocity_lag_s):
        return rec.dq
    return np.column_stack([np.interp(rec.t + lag, rec.t, rec.dq[:, j])
                            for j, lag in enumerate(config.velocity_lag_s)])


def validate(result: CalibrationResult, recordings: list[Recording],
             sigma_q: np.ndarray | float = 1e-4) -> Validation:
    """Validate ``result`` on ``recordings`` (module docstring)."""
    robot = result.robot
    nj = robot.nj
    rows = calibration_rows(robot, result.config, result.prior, recordings).with_timing()
    if result.noise_speed is not None:
        # the written bound δ0 + δ1·v, v the mean |speed|: noise term δ0·T'·(1 + δ1/δ0·v)
        rows = rows.with_noise_speed(np.divide(result.noise_speed, result.noise,
                                               out=np.zeros(nj), where=result.noise > 0))
    terms = result.friction_terms
    lower, upper = result.box()
    scaled = scale_rows(rows, lower, upper)
    scale = common_scale(scaled, result.noise)
    res = min_noise(scaled, nj)
    needed = np.full(nj, np.inf) if res is None else res[0]
    x = result.x_nominal
    duration = rows.t_end - rows.t_start                                # T of each window
    resid = rows.signed_residual(x) / duration
    window_rms = np.array([np.sqrt(np.mean(resid[rows.joint == j] ** 2)) for j in range(nj)])

    model = nominal_model(robot, result.link_nominal)
    sq_err = np.zeros(nj)
    sq_err_s = np.zeros(nj)
    count = 0
    series = []
    for rec in recordings:
        est = rts_smoother(rec.t, rec.q, _unlagged_velocity(rec, result.config), sigma_q=sigma_q)
        keep, tau = aligned_torque(rec, result.config)
        q, dq, ddq = rec.q[keep], est.dq[keep], est.ddq[keep]
        pred = predict_torque(robot, model, result.friction_nominal, q, dq, ddq, terms=terms)
        sq_err += np.sum((tau - pred) ** 2, axis=0)
        if result.stribeck is not None:
            pred_s = predict_torque(robot, model, result.friction_nominal, q, dq, ddq,
                                    result.stribeck)
            sq_err_s += np.sum((tau - pred_s) ** 2, axis=0)
        count += int(keep.size)
        series.append((rec.name, rec.t[keep], tau, pred))
    return Validation(
        list(robot.joint_names), needed, needed / result.noise, scale, np.sqrt(sq_err / count),
        window_rms,
        None if result.stribeck is None else np.sqrt(sq_err_s / count), series,
        resid, rows.joint)
