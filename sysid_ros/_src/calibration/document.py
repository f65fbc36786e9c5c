"""A calibration result as the calib.yaml overlay (format: :mod:`sysid_ros._src.model.calibration_overlay`)
and as the ``--json`` summary."""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sysid_ros._src.identification.transients import transient_summary
from sysid_ros._src.model.calibration_overlay import COMPLETE, FORMAT_VERSION
from sysid_ros._src.model.robots import FRICTION_NAMES

__all__ = ["calibration_document", "write_calibration", "summary_json"]


def _lst(a) -> list[float]:
    return [float(v) for v in np.asarray(a, float).reshape(-1)]


def _friction_table(a: np.ndarray) -> dict[str, list[float]]:
    return {name: _lst(a[:, k]) for k, name in enumerate(FRICTION_NAMES)}


def calibration_document(result, validation=None, bags: list[str] | None = None
                         ) -> dict[str, Any]:
    """The calib.yaml mapping of a :class:`~.calibrate.CalibrationResult` (and, optionally,
    its :class:`~.validate.Validation` summary in the provenance)."""
    o, robot = result.options, result.robot
    friction = {"nominal": _friction_table(result.friction_nominal),
                "lower": _friction_table(result.friction_lower),
                "upper": _friction_table(result.friction_upper)}
    if result.friction_terms is not None:
        friction["terms"] = result.friction_terms.as_dict()
    links = {}
    for name in result.links_written:
        jid = robot.model.getJointId(name)
        sl = slice(10 * (jid - 1), 10 * jid)
        links[name] = {"nominal": _lst(result.link_nominal[sl]),
                       "lower": _lst(result.link_lower[sl]),
                       "upper": _lst(result.link_upper[sl])}
    ident = _identification_section(result)
    provenance: dict[str, Any] = {
        "tool": "sysid-calibrate",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "bags": list(bags) if bags is not None else [r.name for r in result.recordings],
        "velocity_source": sorted({r.velocity_source for r in result.recordings}),
        "samples": int(sum(len(r) for r in result.recordings)),
        "duration_s": float(sum(r.duration for r in result.recordings)),
        "method": {
            "rows": "momentum windows (no accelerations), all bodies and friction "
                    "coefficients as unknowns, Fc >= 0",
            "prior": result.prior.describe(),
            "noise_min_Nm": _lst(result.noise_min),
            "noise_profile_Nm": _lst(result.noise_profile),
            "noise_margin": float(o.margin), "noise_floor_Nm": float(o.noise_floor),
            "friction_boxes": "LP min/max of each coefficient under the noise bound",
            "links": ("LP boxes; bodies listed under 'links' are those the data tightened"
                      if o.link_boxes else "not computed (prior box kept)"),
            "nominal": f"MAP least squares, URDF/catalogue prior, pseudo-inertia LMI, "
                       f"{o.robust} IRLS" + (", energy rows" if o.energy else ""),
            "friction_law": o.friction_law,
        },
        "assumptions": result.assumptions(),
        "notes": list(result.notes),
        "seconds": {k: float(v) for k, v in result.seconds.items()},
    }
    if result.stribeck is not None:
        provenance["stribeck"] = result.stribeck.as_dict(robot.joint_names)
    provenance.update(_timing_and_exclusions(result))
    if validation is not None:
        provenance["validation"] = validation.as_dict()
    doc: dict[str, Any] = {"sysid_calibration": FORMAT_VERSION, "robot": robot.name,
                           "joints": list(robot.joint_names), "provenance": provenance,
                           "friction": friction}
    if links:
        doc["links"] = links
    doc["identification"] = ident
    return doc


def _identification_section(result) -> dict[str, Any]:
    """calib.yaml's ``identification:``: the bounds and the window plan they hold for."""
    c = result.config
    ident: dict[str, Any] = {
        "torque_noise_abs": _lst(result.noise),
        "torque_noise_rel": float(c.torque_noise_rel),
        # the noise bound holds for these windows only: the identifier must use the same plan
        "window_s": float(c.window_s), "stride_s": float(c.stride_s),
        "coulomb_band": float(c.coulomb_band),
        "quadrature_safety": float(c.quadrature_safety),
        "friction": "config",
        # the torque stream's calibrated lag and the exclusion rule: the identifier applies both
        "torque_lag_s": _lst(c.torque_lag_s),
        "torque_lag_radius_s": _lst(c.torque_lag_radius_s),
        "velocity_lag_s": _lst(c.velocity_lag_s),
        "velocity_lag_radius_s": _lst(c.velocity_lag_radius_s),
        "exclude_speed_rad_s": [float(v) if np.isfinite(v) else None
                                for v in c.exclude_speed_rad_s],
        "exclude_after_start_s": float(c.exclude_after_start_s),
    }
    if result.noise_speed is not None:
        # the bound's speed-dependent part: δ0 + δ1·mean |speed| per window (assumptions)
        ident["torque_noise_speed"] = _lst(result.noise_speed)
    if result.gain_box is not None or np.any(c.torque_gain != 1.0):
        # the reading's gain box k ∈ [lo, hi] as centre·(1 ± rel): the identifier rescales τ̂ by
        # the centre and keeps the rest as its gain unknowns (identification.config)
        lo, hi = result.torque_gain_box
        centre = 0.5 * (lo + hi)
        ident["torque_gain"] = _lst(centre)
        # widened by a hair so that centre·(1 ± rel) still covers the box after rounding
        rel = 0.5 * (hi - lo) / centre
        ident["torque_gain_rel"] = _lst(np.where(hi > lo, rel * (1.0 + 1e-9) + 1e-12, 0.0))
    return ident


def write_calibration(path: str | Path, doc: dict[str, Any]) -> Path:
    """Write the calib.yaml mapping ``doc`` (block style, keys in the order given)."""
    path = Path(path)
    header = ("# sysid_ros calibration overlay (sysid-calibrate); apply with\n"
              "#   sysid-identify --calibration THIS_FILE   or the identifier's "
              "'calibration' parameter.\n"
              "# torque_noise_abs bounds the window-averaged torque error for the window_s "
              "written below; see provenance.assumptions.\n")
    # the last line: a file cut short (a full disk, a copy interrupted) lacks it and is refused
    doc = {**{k: v for k, v in doc.items() if k != COMPLETE}, COMPLETE: True}
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True))
    return path


def summary_json(result, validation=None) -> dict[str, Any]:
    """The ``--json`` summary: friction per coefficient, noise, optional validation."""
    names = FRICTION_NAMES
    out: dict[str, Any] = {
        "robot": result.robot.name,
        "joints": result.joint_names,
        "friction": {n: {"nominal": _lst(result.friction_nominal[:, k]),
                         "lower": _lst(result.friction_lower[:, k]),
                         "upper": _lst(result.friction_upper[:, k])}
                     for k, n in enumerate(names)},
        "noise": {"torque_abs": _lst(result.noise), "torque_abs_min": _lst(result.noise_min),
                  "torque_rel": float(result.config.torque_noise_rel),
                  "window_s": float(result.config.window_s),
                  "stride_s": float(result.config.stride_s)},
        "links_written": list(result.links_written),
        "seconds": {k: float(v) for k, v in result.seconds.items()},
        "notes": list(result.notes),
    }
    if result.stribeck is not None:
        out["stribeck"] = result.stribeck.as_dict(result.robot.joint_names)
    if result.gain_box is not None:
        lo, hi = result.torque_gain_box
        out["torque_gain"] = {"lower": _lst(lo), "upper": _lst(hi)}
    out.update(_timing_and_exclusions(result))
    if validation is not None:
        out["validation"] = validation.as_dict()
    return out


def _timing_and_exclusions(result) -> dict[str, Any]:
    """The torque lag estimate (per joint, with the residual RMS it removed) and the rows the
    exclusion rule dropped."""
    out: dict[str, Any] = {"excluded": result.excluded,
                           "transients": transient_summary(result.transients)}
    if result.terms is not None:
        out["terms"] = result.terms.as_dict()
        out["terms"]["adopted"] = ({} if result.friction_terms is None
                                   else result.friction_terms.as_dict())
    if result.margin is not None:
        out["noise_margin_per_joint"] = _lst(result.margin)
    lag = result.torque_lag
    if lag is not None:
        out["torque_lag"] = {
            "lag_s": _lst(lag.lag), "radius_s": _lst(lag.radius),
            "window_rms_at_zero_Nm": _lst(lag.rms_zero), "window_rms_at_lag_Nm": _lst(lag.rms_lag),
            "method": "per-joint minimiser of the window-averaged residual RMS of the "
                      "box-bounded least-squares fit over a lag grid; radius: spread of the "
                      "per-recording minimisers and of the near-optimal lags, at least a grid step and a sample period"}
    return out
