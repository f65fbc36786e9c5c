"""``--report DIR``: a markdown summary and three figures of a calibration.

- ``torque.png``: measured vs predicted joint torque (calibrated nominal) on the first
  validation recording (or, without one, on the first calibration recording — in-sample, and
  the caption says so), first ``PLOT_SECONDS`` seconds;
- ``friction.png``: per joint the identified friction law τ_f(q̇) = Fc·σ + Fv·q̇ + β with the
  band its calibrated box allows, the Stribeck fit if any, and the window-averaged friction the
  data show (momentum rows minus the rigid-body and armature terms);
- ``residuals.png``: histograms of the window-averaged residuals against ±δ_j, the written
  noise bound (calibration rows, and validation rows if any);
- ``residuals_vs.png``: per joint the same residuals against the window means of velocity,
  position and acceleration and against time, one colour per recording: what is still
  unmodelled. ``report.md`` also lists the model terms per joint (friction law, torque lag,
  excluded rows), the excluded windows, and the correlations of the residual with each of the
  four (section "Still unmodelled").
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sysid_ros._src.identification.calibration_constraints import friction_column
from sysid_ros._src.identification.transients import MAX_LISTED, transient_summary
from sysid_ros._src.model.robots import FRICTION_NAMES

__all__ = ["write_report", "window_features", "PLOT_SECONDS", "FEATURES"]

PLOT_SECONDS = 10.0

#: What the residual is set against: key (report column) and axis label.
FEATURES = (("velocity", "velocity (rad/s; window mean)"),
            ("position", "position (rad; window mean)"),
            ("acceleration", "acceleration: velocity change / T (rad/s²)"),
            ("time", "time: window start (s)"))

#: How many of the excluded windows' examples the report lists.
EXCLUDED_EXAMPLES_SHOWN = 8


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
    from sysid_ros._src.calibration.state import rts_smoother
    from sysid_ros._src.calibration.validate import nominal_model, predict_torque

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
    T = rows.t_end - rows.t_start
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
            from sysid_ros._src.calibration.stribeck import stribeck_torque

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


def _window_residual(result) -> np.ndarray:
    """(n,) each row's momentum residual at the nominal, window-averaged (N·m)."""
    rows = result.rows
    T = rows.t_end - rows.t_start
    return rows.signed_residual(result.x_nominal) / T


def _residual_figure(path: Path, result, validation) -> None:
    plt = _plt()
    robot, rows = result.robot, result.rows
    nj = robot.nj
    cal = _window_residual(result)
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


def _friction_head() -> str:
    return " | ".join(f"{n} nominal [lower, upper]" for n in FRICTION_NAMES)


def _friction_cells(result, j: int) -> list[str]:
    """Joint j's friction-law coefficients as "nominal [lower, upper]" cells."""
    return [f"{result.friction_nominal[j, k]:.3f} [{result.friction_lower[j, k]:.3f}, "
            f"{result.friction_upper[j, k]:.3f}]" for k in range(len(FRICTION_NAMES))]


def _table(result, validation) -> list[str]:
    names = result.robot.joint_names
    head = "| joint | δ* (N·m) | δ written | " + _friction_head()
    sep = "|---" * (3 + len(FRICTION_NAMES)) + "|"
    if validation is not None:
        head += " | validation noise scale | torque RMS (N·m) | window RMS (N·m)"
        sep += "---|---|---|"
    lines = [head + " |", sep]
    for j, n in enumerate(names):
        cells = [n, f"{result.noise_min[j]:.3f}", f"{result.noise[j]:.3f}"]
        cells += _friction_cells(result, j)
        if validation is not None:
            cells += [f"{validation.noise_scale[j]:.2f}", f"{validation.torque_rms[j]:.3f}",
                      f"{validation.window_rms[j]:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _time_mean(prefix: np.ndarray, x: np.ndarray, t: np.ndarray, a: np.ndarray, b: np.ndarray,
               j: np.ndarray) -> np.ndarray:
    """Trapezoid time average of x[:, j] over samples a..b (x[a, j] where a == b)."""
    span = t[b] - t[a]
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, (prefix[b, j] - prefix[a, j]) / safe, x[a, j])


def _recording_features(rec, a: np.ndarray, b: np.ndarray, j: np.ndarray) -> np.ndarray:
    """(len(a), 3) window means of velocity, position and Δq̇/T of joints j in ``rec``."""
    t, q, dq = rec.t, rec.q, rec.dq
    if dq is None:
        return np.full((a.size, 3), np.nan)
    out = np.empty((a.size, 3))
    for col, x in enumerate((dq, q)):
        prefix = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(
            0.5 * np.diff(t)[:, None] * (x[1:] + x[:-1]), axis=0)])
        out[:, col] = _time_mean(prefix, x, t, a, b, j)
    span = t[b] - t[a]
    out[:, 2] = np.where(span > 0, (dq[b, j] - dq[a, j]) / np.where(span > 0, span, 1.0), np.nan)
    return out


def window_features(result) -> dict[str, np.ndarray]:
    """Per row of ``result.rows`` the window means of its joint's velocity and position (time
    averages over the window's samples), its acceleration Δq̇/T and the window's start (s),
    keyed as in :data:`FEATURES`; NaN where the recording is missing or has no velocities."""
    rows, recs = result.rows, result.recordings
    feats = np.full((len(rows), 3), np.nan)
    for k in np.unique(rows.source):
        sel = np.flatnonzero(rows.source == k)
        if k >= len(recs):
            continue
        n = len(recs[k])
        a = np.clip(rows.start[sel], 0, n - 1)
        b = np.clip(rows.end[sel], 0, n - 1)
        feats[sel] = _recording_features(recs[k], a, b, rows.joint[sel])
    return {"velocity": feats[:, 0], "position": feats[:, 1], "acceleration": feats[:, 2],
            "time": np.asarray(rows.t_start, float)}


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of the finite pairs (NaN with < 3 of them or a constant one)."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(np.corrcoef(x[ok], y[ok])[0, 1])


def _fmt(value: float, spec: str) -> str:
    return "n/a" if not np.isfinite(value) else format(value, spec)


def _residuals_vs_figure(path: Path, result, resid: np.ndarray,
                         feats: dict[str, np.ndarray]) -> None:
    plt = _plt()
    robot, rows = result.robot, result.rows
    nj = robot.nj
    fig, axes = plt.subplots(nj, len(FEATURES), figsize=(13.0, 1.7 * nj + 0.9), squeeze=False)
    for j in range(nj):
        for c, (key, label) in enumerate(FEATURES):
            ax = axes[j, c]
            for k, rec in enumerate(result.recordings):
                sel = (rows.joint == j) & (rows.source == k)
                ax.scatter(feats[key][sel], resid[sel], s=2, color=f"C{k % 10}", alpha=0.6,
                           label=Path(rec.name).name)
            for sgn in (-1, 1):
                ax.axhline(sgn * result.noise[j], color="k", lw=0.8, ls="--")
            ax.tick_params(labelsize=6)
            if j == 0:
                ax.set_title(key, fontsize=8)
            if j == nj - 1:
                ax.set_xlabel(label, fontsize=7)
        axes[j, 0].set_ylabel(f"{robot.joint_names[j]}\nN·m", fontsize=7)
    axes[0, 0].legend(fontsize=6, markerscale=3, loc="upper right")
    fig.suptitle("Window-averaged momentum-row residual at the nominal vs what the window "
                 "did; dashed: the written bound ±δ", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _lag_cells(lag, j: int) -> list[str]:
    return [f"{1e3 * lag.lag[j]:.1f} ± {1e3 * lag.radius[j]:.1f}",
            f"{lag.rms_zero[j]:.3f} -> {lag.rms_lag[j]:.3f}"]


def _terms_table(result) -> list[str]:
    """Per joint: friction law, torque lag (if estimated), rows the exclusion rule dropped."""
    lag = getattr(result, "torque_lag", None)
    excluded = getattr(result, "excluded", {}) or {}
    head = "| joint | " + _friction_head()
    ncol = 1 + len(FRICTION_NAMES)
    if lag is not None:
        head += " | torque lag (ms) | window RMS at 0 lag -> at the lag (N·m)"
        ncol += 2
    if excluded:
        head += " | rows excluded"
        ncol += 1
    lines = [head + " |", "|---" * ncol + "|"]
    by_joint = excluded.get("rows_by_joint", {})
    for j, name in enumerate(result.robot.joint_names):
        cells = [name] + _friction_cells(result, j)
        if lag is not None:
            cells += _lag_cells(lag, j)
        if excluded:
            cells.append(str(int(by_joint.get(name, 0))))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _excluded_section(result) -> list[str]:
    excluded = getattr(result, "excluded", {}) or {}
    if not excluded:
        return ["No exclusion summary in this result."]
    by_reason = excluded.get("rows_by_reason", {})
    by_joint = excluded.get("rows_by_joint", {})
    md = [f"Rule: {excluded.get('rule', 'not stated')}.", "",
          "Rows dropped by reason: " + (", ".join(f"{k} {v}" for k, v in by_reason.items())
                                        or "none") + ".",
          "Rows dropped by joint: " + (", ".join(f"{k} {v}" for k, v in by_joint.items())
                                       or "none") + ".", ""]
    examples = list(excluded.get("examples", []))[:EXCLUDED_EXAMPLES_SHOWN]
    if examples:
        md += ["First examples:", ""]
        md += [f"- `{Path(str(e['recording'])).name}` {e['joint']}: {e['reason']}, window "
               f"{float(e['t_start']):.3f}–{float(e['t_end']):.3f} s" for e in examples]
    return md


def _transients_section(result) -> list[str]:
    found = list(getattr(result, "transients", []) or [])
    summary = transient_summary(found)
    md = [f"Rule: {summary['rule']}.", ""]
    if not found:
        return md + ["None found."]
    by_joint = summary["by_joint"]
    assert isinstance(by_joint, dict)
    md += [f"{len(found)} samples: " + ", ".join(f"{k} {v}" for k, v in by_joint.items())
           + ". Each is absorbed by the quadrature allowance of the windows containing it; "
           "the share is the largest fraction of such a window's radius that allowance takes.",
           "", "| recording | joint | time (s) | excess (N·m) | share of the radius |",
           "|---|---|---|---|---|"]
    for tr in sorted(found, key=lambda x: (x.recording, x.time))[:MAX_LISTED]:
        md.append(f"| `{Path(tr.recording).name}` | {tr.joint} | {tr.time:.3f} | "
                  f"{tr.excess:.2f} | {100 * tr.share:.0f}% |")
    return md


def _unmodelled_section(result, resid: np.ndarray, feats: dict[str, np.ndarray]) -> list[str]:
    rows = result.rows
    md = ["Correlation coefficient r of the window-averaged residual at the nominal with the "
          "window means of the joint's velocity, position and acceleration and with time, "
          "and the share of rows whose |residual| exceeds half the written bound δ. Pure noise "
          "correlates with none of them; a strong correlation (say |r| > 0.3) "
          "is structure the model lacks — a friction shape (velocity), a position-"
          "dependent torque such as cogging or a gravity error (position), armature or "
          "timing (acceleration), drift or temperature (time) — and it is paid for by a "
          "wider bound.", "",
          "| joint | rows | " + " | ".join(f"r({key})" for key, _ in FEATURES)
          + " | rows beyond δ/2 |",
          "|---" * (3 + len(FEATURES)) + "|"]
    for j, name in enumerate(result.robot.joint_names):
        sel = rows.joint == j
        r = [_corr(feats[key][sel], resid[sel]) for key, _ in FEATURES]
        share = float(np.mean(np.abs(resid[sel]) > 0.5 * result.noise[j])) if sel.any() \
            else float("nan")
        md.append(f"| {name} | {int(sel.sum())} | " + " | ".join(_fmt(v, "+.3f") for v in r)
                  + f" | {_fmt(100 * share, '.1f')} % |")
    return md


def _terms_section(result) -> list[str]:
    """Candidate friction/actuation terms with their cross-validated gain (:mod:`.terms`)."""
    terms = getattr(result, "terms", None)
    if terms is None:
        return []
    d = terms.as_dict()
    names = result.robot.joint_names
    lines = ["", "## Candidate terms", "",
             f"Judged by {d['folds']}: a term is kept if it lowers the held-out window RMS by "
             f"more than {100 * d['min_gain']:g} % (mean over joints). Selected: "
             f"{', '.join(d['selected']) or 'none'}.", "",
             "| law | gain | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names),
             "| linear (base) | | " + " | ".join(f"{v:.3f}" for v in d["base_rms"]) + " |"]
    for name, c in d["candidates"].items():
        lines.append(f"| + {name} | {100 * c['gain']:+.1f} % | "
                     + " | ".join(f"{v:.3f}" for v in c["rms"]) + " |")
    adopted = getattr(result, "friction_terms", None)
    if adopted is not None:
        lines += ["", "Adopted (calibrated coefficient: nominal [lower, upper]; the identifier "
                  "rests on these boxes):", "",
                  "| coefficient | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for k, col in enumerate(adopted.columns):
            lines.append(f"| {col} | " + " | ".join(
                f"{adopted.nominal[j, k]:.3f} [{adopted.lower[j, k]:.3f}, "
                f"{adopted.upper[j, k]:.3f}]" for j in range(len(names))) + " |")
    return lines


def write_report(directory: str | Path, result, validation=None) -> Path:
    """Write ``report.md`` and the figures into ``directory``; returns the markdown path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    caption = _torque_figure(out / "torque.png", result, validation)
    _friction_figure(out / "friction.png", result)
    _residual_figure(out / "residuals.png", result, validation)
    resid, feats = _window_residual(result), window_features(result)
    _residuals_vs_figure(out / "residuals_vs.png", result, resid, feats)
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
    md += ["", "## Model terms per joint", ""] + _terms_table(result)
    md += ["", "## Excluded windows", ""] + _excluded_section(result)
    md += ["", "## Torque transients", ""] + _transients_section(result)
    md += ["", "## Still unmodelled", ""] + _unmodelled_section(result, resid, feats)
    md += _terms_section(result)
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
           "written bound ±δ_j.", "",
           "![residuals vs](residuals_vs.png)", "",
           "Residuals against the window means of velocity, position and acceleration and "
           "against time, one colour per recording; dashed: ±δ_j (see Still unmodelled).", ""]
    path = out / "report.md"
    path.write_text("\n".join(md))
    return path
