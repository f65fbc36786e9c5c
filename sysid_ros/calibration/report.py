"""``--report DIR``: a markdown summary and three figures of a calibration.

- ``torque.png``: measured vs predicted joint torque (calibrated nominal) on the first
  validation recording (or, without one, on the first calibration recording — in-sample, and
  the caption says so), first ``PLOT_SECONDS`` seconds;
- ``friction.png``: per joint the identified friction law τ_f(q̇) = Fc·σ + Fv·q̇ + β with the
  band its calibrated box allows, the Stribeck fit if any, and the window-averaged friction the
  data show (momentum rows minus the rigid-body and armature terms);
- ``residuals.png``: histograms of the window-averaged residuals against ±δ_j, the written
  noise bound (calibration rows, and validation rows if any).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sysid_ros.calibration.rows import friction_column
from sysid_ros.model.robots import FRICTION_NAMES

__all__ = ["write_report", "PLOT_SECONDS"]

PLOT_SECONDS = 10.0


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grid(plt, nj: int, height: float = 1.6):
    cols = 2 if nj > 4 else 1
    rows = int(np.ceil(nj / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, height * rows + 0.8),
                             squeeze=False)
    flat = axes.reshape(-1)
    for ax in flat[nj:]:
        ax.axis("off")
    return fig, flat


def _torque_figure(path: Path, result, validation) -> str:
    from sysid_ros.calibration.state import rts_smoother
    from sysid_ros.calibration.validate import nominal_model, predict_torque

    plt = _plt()
    robot = result.robot
    if validation is not None and validation.series:
        name, t, tau, pred = validation.series[0]
        caption = f"validation recording {Path(name).name} (not used for fitting)"
    else:
        rec = result.recordings[0]
        est = rts_smoother(rec.t, rec.q, rec.dq)
        pred = predict_torque(robot, nominal_model(robot, result.link_nominal),
                              result.friction_nominal, rec.q, est.dq, est.ddq)
        name, t, tau = rec.name, rec.t, rec.tau
        caption = f"calibration recording {Path(name).name} (in-sample: no --validate given)"
    keep = t <= t[0] + PLOT_SECONDS
    fig, axes = _grid(plt, robot.nj)
    for j, ax in enumerate(axes[:robot.nj]):
        ax.plot(t[keep] - t[0], tau[keep, j], lw=2.4, color="0.75", label="measured")
        ax.plot(t[keep] - t[0], pred[keep, j], lw=0.8, color="C0", label="predicted")
        ax.plot(t[keep] - t[0], tau[keep, j] - pred[keep, j], lw=0.5, color="C3",
                label="measured − predicted")
        rms = float(np.sqrt(np.mean((tau[:, j] - pred[:, j]) ** 2)))
        ax.set_title(f"{robot.joint_names[j]}  (RMS {rms:.3f} N·m)", fontsize=9)
        ax.set_ylabel("N·m", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7, loc="upper right")
    for ax in axes[max(0, robot.nj - 2):robot.nj]:
        ax.set_xlabel("time (s)", fontsize=8)
    fig.suptitle(f"Joint torque: measured vs calibrated model — {caption}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return caption


def _friction_figure(path: Path, result) -> None:
    plt = _plt()
    robot, rows = result.robot, result.rows
    nj, n_theta = robot.nj, rows.n_theta
    x = result.x_nominal
    lo, hi, nom = result.friction_lower, result.friction_upper, result.friction_nominal
    fig, axes = _grid(plt, nj, 2.0)
    # window-averaged friction seen in the data: (∫τ̂ − W·θ − Ia·Δq̇)/T against Δq/T
    T = rows.t_noise * (1.0 - result.config.torque_noise_rel)
    rigid = rows.A[:, :n_theta] @ x[:n_theta]
    for j, ax in enumerate(axes[:nj]):
        sel = rows.joint == j
        cols = friction_column(n_theta, j, np.arange(4))
        F = rows.A[sel][:, cols].toarray()
        seen = (rows.c[sel] - rigid[sel] - nom[j, 2] * F[:, 2]) / T[sel]
        v_mean = F[:, 1] / T[sel]
        ax.scatter(v_mean, seen, s=2, color="0.6", alpha=0.5, label="data (window means)")
        vmax = max(float(np.max(np.abs(v_mean), initial=0.0)), 0.05)
        v = np.linspace(-vmax, vmax, 401)
        s = np.sign(v)
        ax.plot(v, nom[j, 0] * s + nom[j, 1] * v + nom[j, 3], color="C0", lw=1.2,
                label="linear law (nominal)")
        band_lo = np.where(v > 0, lo[j, 0] + lo[j, 1] * v, -hi[j, 0] + hi[j, 1] * v) + lo[j, 3]
        band_hi = np.where(v > 0, hi[j, 0] + hi[j, 1] * v, -lo[j, 0] + lo[j, 1] * v) + hi[j, 3]
        ax.fill_between(v, band_lo, band_hi, color="C0", alpha=0.2, label="calibrated box")
        if result.stribeck is not None:
            p = result.stribeck.params[j:j + 1]
            from sysid_ros.calibration.stribeck import stribeck_torque

            ax.plot(v, stribeck_torque(p, v[:, None])[:, 0], color="C3", lw=1.0,
                    label="Stribeck fit")
        ax.set_title(f"{robot.joint_names[j]}: Fv {nom[j, 1]:.2f} [{lo[j, 1]:.2f}, "
                     f"{hi[j, 1]:.2f}], Fc {nom[j, 0]:.2f}, β {nom[j, 3]:.2f}", fontsize=8)
        ax.set_ylabel("τ_f (N·m)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=6, loc="upper left")
    for ax in axes[max(0, nj - 2):nj]:
        ax.set_xlabel("q̇ (rad/s; window mean)", fontsize=8)
    fig.suptitle("Identified friction τ_f(q̇) without the armature term", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _residual_figure(path: Path, result, validation) -> None:
    plt = _plt()
    robot, rows = result.robot, result.rows
    nj = robot.nj
    T = rows.t_noise * (1.0 - result.config.torque_noise_rel)
    cal = rows.signed_residual(result.x_nominal) / T
    fig, axes = _grid(plt, nj)
    for j, ax in enumerate(axes[:nj]):
        d = result.noise[j]
        bins = np.linspace(-1.5 * d, 1.5 * d, 41)
        ax.hist(np.clip(cal[rows.joint == j], bins[0], bins[-1]), bins=bins, color="C0",
                alpha=0.6, density=True, label="calibration")
        if validation is not None and validation.rows_residual is not None:
            vr = validation.rows_residual[validation.rows_joint == j]
            ax.hist(np.clip(vr, bins[0], bins[-1]), bins=bins, color="C1", alpha=0.5,
                    density=True, label="validation")
        for sgn in (-1, 1):
            ax.axvline(sgn * d, color="k", lw=1.0, ls="--")
        ax.set_title(f"{robot.joint_names[j]}: bound ±{d:.3f} N·m", fontsize=9)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    for ax in axes[max(0, nj - 2):nj]:
        ax.set_xlabel("window-averaged residual (N·m), clipped at ±1.5 bound", fontsize=8)
    fig.suptitle("Window-averaged momentum-row residuals at the nominal (Coulomb interval in its "
                 "favour) vs the written bound ±δ (dashed; rows also carry a quadrature "
                 "allowance)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _table(result, validation) -> list[str]:
    names = result.robot.joint_names
    head = "| joint | δ* (N·m) | δ written | " + " | ".join(
        f"{n} nominal [lower, upper]" for n in FRICTION_NAMES)
    sep = "|---" * (3 + len(FRICTION_NAMES)) + "|"
    if validation is not None:
        head += " | validation noise scale | torque RMS (N·m) | window RMS (N·m)"
        sep += "---|---|---|"
    lines = [head + " |", sep]
    for j, n in enumerate(names):
        cells = [n, f"{result.noise_min[j]:.3f}", f"{result.noise[j]:.3f}"]
        for k in range(4):
            cells.append(f"{result.friction_nominal[j, k]:.3f} [{result.friction_lower[j, k]:.3f}"
                         f", {result.friction_upper[j, k]:.3f}]")
        if validation is not None:
            cells += [f"{validation.noise_scale[j]:.2f}", f"{validation.torque_rms[j]:.3f}",
                      f"{validation.window_rms[j]:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_report(directory: str | Path, result, validation=None) -> Path:
    """Write ``report.md`` and the figures into ``directory``; returns the markdown path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    caption = _torque_figure(out / "torque.png", result, validation)
    _friction_figure(out / "friction.png", result)
    _residual_figure(out / "residuals.png", result, validation)
    c = result.config
    md = [f"# Calibration of {result.robot.name}", "",
          "Recordings: " + ", ".join(f"`{r.name}` ({r.duration:.1f} s, {r.rate_hz:.0f} Hz, "
                                      f"velocities: {r.velocity_source})"
                                      for r in result.recordings), "",
          f"Windows {c.window_s} s every {c.stride_s} s, Coulomb band {c.coulomb_band} rad/s, "
          f"quadrature safety {c.quadrature_safety}; {len(result.rows)} rows.", "",
          "## Bounds per joint", ""]
    md += _table(result, validation)
    if validation is not None:
        md += ["", validation.describe() + ". The factor is the smallest one on the written "
               "bounds that keeps the validation rows consistent with parameters inside the "
               "calibrated boxes (≤ 1: consistent); a joint's noise scale is the bound its rows "
               "need / the bound written."]
    md += ["", "## Assumptions the bounds rest on", ""]
    md += [f"- {a}" for a in result.assumptions()]
    md += ["", "## Notes", ""] + [f"- {n}" for n in result.notes]
    md += ["", "## Figures", "",
           "![torque](torque.png)", "", f"Torque: {caption}.", "",
           "![friction](friction.png)", "",
           "Friction: grey dots are window means of what the data attribute to friction "
           "(momentum rows minus rigid body and armature at the nominal); blue: the linear law "
           "and the band its calibrated box allows.", "",
           "![residuals](residuals.png)", "",
           "Residuals: window-averaged momentum-row residuals at the nominal, against the "
           "written bound ±δ_j.", ""]
    path = out / "report.md"
    path.write_text("\n".join(md))
    return path
