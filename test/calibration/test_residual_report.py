"""The residual report of ``sysid-calibrate --report``: what is still unmodelled per joint.

One real calibration of a hardware-like Gen3 (two short recordings, no torque-lag search, so
the module stays fast); the report's correlations are checked against an independent numpy
computation from the rows and recordings.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.report import write_report
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.calibration.timing import LagEstimate

SEED = 3
SECTIONS = ("## Model terms per joint", "## Excluded windows", "## Still unmodelled")


@pytest.fixture(scope="module")
def result(gen3):
    # the torque stream aligned with the states: no lag search (the file's 75-110 ms lag,
    # uncompensated, can need more than the allowed bound on a small joint)
    case = draw_case(gen3, SEED, cal_seconds=(8.0, 6.0), payload_seconds=0.0, torque_lag=0.0)
    return calibrate(gen3, case.recordings(),
                     CalibrationOptions(link_boxes=False, torque_lag="none"))


@pytest.fixture(scope="module")
def report(result, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return out, write_report(out, result).read_text()


def _section(md: str, title: str) -> str:
    body = md.split(title + "\n", 1)[1]
    return body.split("\n## ", 1)[0]


def _table_row(section: str, first_cell: str) -> list[str]:
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row {first_cell!r} in\n{section}")


def _independent(result, j: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Window residual and window means of joint j, computed row by row."""
    rows = result.rows
    T = rows.t_noise * (1.0 - result.config.torque_noise_rel)
    resid = (rows.signed_residual(result.x_nominal) / T)[rows.joint == j]
    feats: dict[str, list[float]] = {"velocity": [], "position": [], "acceleration": [],
                                     "time": []}
    for i in np.flatnonzero(rows.joint == j):
        rec = result.recordings[rows.source[i]]
        a, b = min(rows.start[i], len(rec) - 1), min(rows.end[i], len(rec) - 1)
        t = rec.t[a:b + 1]
        span = t[-1] - t[0]
        feats["velocity"].append(np.trapezoid(rec.dq[a:b + 1, j], t) / span)
        feats["position"].append(np.trapezoid(rec.q[a:b + 1, j], t) / span)
        feats["acceleration"].append((rec.dq[b, j] - rec.dq[a, j]) / span)
        feats["time"].append(rows.t_start[i])
    return resid, {k: np.asarray(v) for k, v in feats.items()}


def test_the_residuals_vs_figure_is_a_real_image(report, result):
    import matplotlib.image as mpimg

    out, md = report
    png = out / "residuals_vs.png"
    assert png.stat().st_size > 50_000
    img = mpimg.imread(png)
    assert img.shape[0] > 150 * result.robot.nj and img.shape[1] > 800   # a row per joint
    assert float(np.std(img[..., :3])) > 0.05                             # not blank
    assert "![residuals vs](residuals_vs.png)" in md


def test_the_report_has_the_new_sections_in_order(report, result):
    _, md = report
    at = [md.index(s) for s in SECTIONS]
    assert at == sorted(at) and md.index("## Bounds per joint") < at[0]
    terms = _section(md, "## Model terms per joint")
    for j, name in enumerate(result.robot.joint_names):
        row = _table_row(terms, name)
        fc = result.friction_nominal[j, 0]
        assert row[1] == (f"{fc:.3f} [{result.friction_lower[j, 0]:.3f}, "
                          f"{result.friction_upper[j, 0]:.3f}]")
    assert "torque lag" not in terms          # not estimated in this result
    assert "structure the model lacks" in _section(md, "## Still unmodelled")


@pytest.mark.parametrize("j", [0, 2])
def test_correlations_equal_an_independent_computation(report, result, j):
    _, md = report
    resid, feats = _independent(result, j)
    row = _table_row(_section(md, "## Still unmodelled"), result.robot.joint_names[j])
    assert int(row[1]) == resid.size
    printed = [float(c) for c in row[2:6]]
    expected = [np.corrcoef(feats[k], resid)[0, 1] for k in
                ("velocity", "position", "acceleration", "time")]
    assert np.allclose(printed, expected, atol=6e-4), (printed, expected)
    assert max(abs(v) for v in expected) > 0.1        # the check is not trivially 0 == 0
    share = 100.0 * np.mean(np.abs(resid) > 0.5 * result.noise[j])
    assert float(row[6].rstrip(" %")) == pytest.approx(share, abs=0.06)


def test_excluded_counts_of_the_calibration_appear(report, result):
    _, md = report
    excluded = result.excluded
    assert sum(excluded["rows_by_reason"].values()) > 0      # short runs: run-start rows
    section = _section(md, "## Excluded windows")
    assert excluded["rule"] in section
    for reason, count in excluded["rows_by_reason"].items():
        assert f"{reason} {count}" in section
    terms = _section(md, "## Model terms per joint")
    for name, count in excluded["rows_by_joint"].items():
        assert f"{name} {count}" in section
        assert _table_row(terms, name)[-1] == str(count)


@pytest.mark.slow
def test_given_lag_and_exclusions_are_reported(result, tmp_path):
    nj = result.robot.nj
    lag = LagEstimate(lag=np.full(nj, 0.012), radius=np.full(nj, 0.003),
                      rms_zero=np.full(nj, 0.456), rms_lag=np.full(nj, 0.123),
                      grid=np.array([0.0, 0.01]), rms_grid=np.ones((2, nj)))
    names = result.robot.joint_names
    excluded = {"rule": "rows at the speed clamp", "rows_by_reason": {"speed_at_limit": 17,
                                                                      "run_start": 5},
                "rows_by_joint": {n: (13 if k == 2 else 0) for k, n in enumerate(names)},
                "examples": [{"recording": "bags/run7", "joint": names[2],
                              "reason": "speed_at_limit", "t_start": 1.5, "t_end": 1.9}]}
    md = write_report(tmp_path, replace(result, torque_lag=lag, excluded=excluded)).read_text()
    terms = _section(md, "## Model terms per joint")
    row = _table_row(terms, names[2])
    assert row[-3:] == ["12.0 ± 3.0", "0.456 -> 0.123", "13"]
    assert _table_row(terms, names[0])[-1] == "0"
    section = _section(md, "## Excluded windows")
    assert "rows at the speed clamp" in section
    assert "speed_at_limit 17" in section and "run_start 5" in section
    assert f"{names[2]} 13" in section
    assert f"- `run7` {names[2]}: speed_at_limit, window 1.500–1.900 s" in section


@pytest.mark.slow
def test_a_result_without_lag_or_exclusions_still_reports(result, tmp_path):
    md = write_report(tmp_path, replace(result, torque_lag=None, excluded={})).read_text()
    assert all(s in md for s in SECTIONS)
    assert "No exclusion summary" in _section(md, "## Excluded windows")
    assert "rows excluded" not in _section(md, "## Model terms per joint")
