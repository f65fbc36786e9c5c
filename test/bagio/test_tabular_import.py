"""``sysid-import``: tables (per-quantity text files, CSV/TSV, NPZ) → JointState bags, read back.

Every log is generated here from a known trajectory (sinusoids plus a drift that carries the
continuous joints of a Gen3 across ±π several times, dropped samples and a gap), written the way
loggers write it (continuous joints wrapped to [-π, π]), imported, and read back with the
package's readers: positions must come back unwrapped, and velocities, efforts and stamps equal
to the source. Errors must name the file, the line and the column."""
from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from sysid_ros._src.bagio import read_joint_states
from sysid_ros._src.bagio.import_cli import main
from sysid_ros._src.bagio.tabular import (
    MappingError, TabularError, parse_columns, parse_mapping, unwrap_joint,
)
from sysid_ros._src.calibration.data import read_recording
from sysid_ros._src.model.robots import load_robot

NAMES = [f"joint_{i}" for i in range(1, 8)]
CONTINUOUS = (0, 2, 4, 6)          # Gen3 joints 1, 3, 5, 7 have no position limits
T0, RATE, GAP_AT, GAP_S = 3.0, 100.0, 120, 0.4


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def wrap(x):
    return (x + np.pi) % (2 * np.pi) - np.pi


@pytest.fixture(scope="module")
def traj():
    """t (s), true q (rad, continuous joints unwrapped, first sample in (-π, π)), dq, tau, and
    q as logged (continuous joints wrapped)."""
    t = T0 + np.arange(260) / RATE
    t = np.delete(t, [30, 31, 77])                    # dropped samples
    t[GAP_AT:] += GAP_S                               # a gap
    j = np.arange(7)
    amp, w, phase = 0.3 + 0.05 * j, 1.0 + 0.4 * j, 0.2 * j
    drift = np.zeros(7)
    drift[list(CONTINUOUS)] = [1.2, -1.3, 1.3, 1.4]   # rad/s, towards the nearer of ±π
    s = t[:, None] - T0
    q = 0.5 * np.cos(j) + amp * np.sin(w * s + phase) + drift * s
    q[:, CONTINUOUS] += np.array([2.9, -3.0, 2.5, 3.1]) - q[0, CONTINUOUS]  # wrap early
    dq = amp * w * np.cos(w * s + phase) + drift
    tau = 5.0 * np.sin(0.7 * w * s) + j
    logged = q.copy()
    logged[:, CONTINUOUS] = wrap(q[:, CONTINUOUS])
    assert np.all(np.abs(q[0, CONTINUOUS]) < np.pi)
    assert np.all(np.abs(q[-1, CONTINUOUS] - logged[-1, CONTINUOUS]) > 6)   # it did wrap
    return t, q, dq, tau, logged


def write_lab(d, traj, rows=slice(None)):
    """The per-quantity layout: t/q/q_d/tau files, space separated, no header."""
    t, _, dq, tau, logged = traj
    paths = {}
    for key, arr in (("t", t), ("q", logged), ("q_d", dq), ("tau", tau)):
        paths[key] = d / f"{key}_downsampled_1.csv"
        np.savetxt(paths[key], arr[rows], fmt="%.17g")
    return paths


def files_arg(p, with_dq=True, with_tau=True):
    parts = [f"t={p['t']}", f"q={p['q']}"]
    parts += [f"dq={p['q_d']}"] * with_dq + [f"tau={p['tau']}"] * with_tau
    return ",".join(parts)


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().err


def test_lab_layout_round_trip(tmp_path, traj, gen3, capsys):
    t, q, dq, tau, logged = traj
    p = write_lab(tmp_path, traj)
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--out", tmp_path / "bag")
    assert rc == 0, err
    rec = read_recording(tmp_path / "bag", gen3)
    np.testing.assert_allclose(rec.t, t, atol=2e-9)
    np.testing.assert_allclose(rec.q, q, atol=1e-12)
    np.testing.assert_allclose(rec.dq, dq, atol=1e-12)
    np.testing.assert_allclose(rec.tau, tau, atol=1e-12)
    # one summary line: samples, joints, duration, rate, largest gap, turns per continuous joint
    (line,) = err.strip().splitlines()
    assert line.startswith("sysid-import: wrote ")
    assert f"{t.size} samples, 7 joints" in line and "median 100.0 Hz" in line
    assert f"largest gap {GAP_S + 0.01:.3g} s (ending at {p['t']}:{GAP_AT + 1})" in line
    turns = np.rint((q[-1] - logged[-1]) / (2 * np.pi)).astype(int)
    for k in CONTINUOUS:
        assert f"{NAMES[k]} {turns[k]:+d}" in line
    assert "joint_2" not in line.split("unwrapped")[1]


def test_csv_with_header_degrees_milliseconds_and_effort_scale(tmp_path, traj, gen3, capsys):
    t, q, dq, tau, logged = traj
    header = ["stamp_ms"] + [f"pos{i}" for i in range(7)] + [f"vel{i}" for i in range(7)] \
        + [f"cur{i}" for i in range(7)] + ["note"]
    data = np.column_stack([t * 1e3, np.degrees(logged), np.degrees(dq), tau / 2.0])
    lines = [",".join(header)] + [",".join(f"{v:.17g}" for v in row) + ",ok" for row in data]
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "arm.csv").write_text("\n".join(lines) + "\n")
    mapping = {
        "file": "logs/arm.csv",               # relative to the mapping file
        "time": {"column": "stamp_ms", "unit": "ms"},
        "position": {"columns": [f"pos{i}" for i in range(7)], "unit": "deg"},
        "velocity": {"columns": {NAMES[i]: f"vel{i}" for i in reversed(range(7))}},
        "effort": {"columns": "15:22", "scale": 2.0},
    }
    (tmp_path / "map.yaml").write_text(yaml.safe_dump(mapping))
    rc, err = run(capsys, "--robot", "gen3", "--mapping", tmp_path / "map.yaml",
                  "--out", tmp_path / "bag")
    assert rc == 0, err
    rec = read_recording(tmp_path / "bag", gen3)
    np.testing.assert_allclose(rec.t, t, atol=2e-9)
    np.testing.assert_allclose(rec.q, q, atol=1e-9)         # deg → rad, then unwrapped
    np.testing.assert_allclose(rec.dq, dq, atol=1e-9)       # deg/s follows from deg
    np.testing.assert_allclose(rec.tau, tau, atol=1e-12)


def test_tsv_by_index_fixed_rate_without_velocity_or_effort(tmp_path, traj, capsys):
    _, q, _, _, logged = traj
    rows = slice(0, GAP_AT)                  # no gap: a fixed rate has none
    arr = np.column_stack([np.arange(GAP_AT), logged[rows]])
    np.savetxt(tmp_path / "log.tsv", arr, fmt="%.17g", delimiter="\t")
    rc, err = run(capsys, tmp_path / "log.tsv", "--robot", "gen3", "--position", "1:8",
                  "--rate-hz", 50, "--start", 10, "--out", tmp_path / "bag")
    assert rc == 0, err
    s = read_joint_states(tmp_path / "bag", joint_names=NAMES, require=("position",))
    assert s.velocity is None and s.effort is None
    np.testing.assert_allclose(s.t, 10.0 + np.arange(GAP_AT) / 50.0, atol=1e-9)
    np.testing.assert_allclose(s.position, q[rows], atol=1e-12)


def test_npz_arrays_and_named_columns(tmp_path, traj, gen3, capsys):
    t, q, dq, tau, logged = traj
    np.savez(tmp_path / "run.npz", t=t, q=logged, dq=dq, tau=tau, label=np.array(["x"]))
    files = ",".join(f"{k}={tmp_path / 'run.npz'}:{k}" for k in ("t", "q", "dq", "tau"))
    rc, err = run(capsys, "--robot", "gen3", "--files", files, "--out", tmp_path / "a")
    assert rc == 0, err
    rec = read_recording(tmp_path / "a", gen3)
    np.testing.assert_allclose(rec.q, q, atol=1e-12)
    np.testing.assert_allclose(rec.tau, tau, atol=1e-12)

    cols = {"time": t, **{f"p{i}": logged[:, i] for i in range(7)},
            **{f"e{i}": tau[:, i] for i in range(7)}}
    np.savez(tmp_path / "cols.npz", **cols)
    rc, err = run(capsys, tmp_path / "cols.npz", "--robot", "gen3", "--time", "time",
                  "--position", ",".join(f"p{i}" for i in range(7)),
                  "--effort", ",".join(f"e{i}" for i in range(7)), "--out", tmp_path / "b")
    assert rc == 0, err
    rec = read_recording(tmp_path / "b", gen3)
    assert rec.dq is None
    np.testing.assert_allclose(rec.t, t, atol=2e-9)
    np.testing.assert_allclose(rec.q, q, atol=1e-12)


def test_joint_subset_from_mapping_and_explicit_continuous(tmp_path, traj, capsys):
    t, q, _, _, logged = traj
    np.savetxt(tmp_path / "q.txt", logged[:, :3], fmt="%.17g")
    np.savetxt(tmp_path / "t.txt", t, fmt="%.17g")
    rc, err = run(capsys, "--files", f"t={tmp_path / 't.txt'},q={tmp_path / 'q.txt'}",
                  "--joints", "a,b,c", "--continuous", "a", "--out", tmp_path / "bag")
    assert rc == 0, err
    s = read_joint_states(tmp_path / "bag", require=("position",))
    assert list(s.names) == ["a", "b", "c"]
    np.testing.assert_allclose(s.position[:, 0], q[:, 0], atol=1e-12)     # unwrapped
    np.testing.assert_allclose(s.position[:, 2], logged[:, 2], atol=1e-12)  # left wrapped
    assert "unwrapped (turns): a +" in err


# -- unwrapping across gaps -------------------------------------------------------------------
def _ramp_with_gap(speed=2.5, gap=2.0):
    t = np.concatenate([np.arange(50) * 0.01, 0.49 + gap + np.arange(50) * 0.01])
    q = 0.3 + speed * t
    return t, q, np.full_like(t, speed)


def test_long_gap_branch_comes_from_the_integrated_velocity():
    t, q, dq = _ramp_with_gap()                # 5 rad during the gap: np.unwrap gets it wrong
    assert not np.allclose(np.unwrap(wrap(q)), q)
    out, res = unwrap_joint(t, wrap(q), dq, joint="j", speed_limit=1.0)
    np.testing.assert_allclose(out, q, atol=1e-12)
    assert res.by_velocity == 1 and res.unresolved == 0
    assert res.turns == round((q[-1] - wrap(q[-1])) / (2 * np.pi))
    out, res = unwrap_joint(t, wrap(q), None, joint="j", speed_limit=1.0)
    assert res.unresolved == 1                 # without velocities: reported, not guessed
    assert abs(abs(out[-1] - q[-1]) - 2 * np.pi) < 1e-9


def test_positions_and_velocities_that_disagree_are_refused():
    t, q, dq = _ramp_with_gap(speed=2.0, gap=0.9)     # 1.8 rad in the gap: unambiguous
    out, _ = unwrap_joint(t, wrap(q), dq, joint="j", speed_limit=2.0)
    np.testing.assert_allclose(out, q, atol=1e-12)
    with pytest.raises(TabularError, match=r"^q\.csv:51: j: the position moves \+1\.800 rad .* "
                                           r"integrate to -1\.800 rad"):
        unwrap_joint(t, wrap(q), -dq, joint="j", speed_limit=2.0,
                     where=lambda i: f"q.csv:{i + 1}")


def test_velocities_in_the_wrong_unit_are_warned_about(tmp_path, traj, capsys):
    p = write_lab(tmp_path, traj, rows=slice(0, GAP_AT))
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--velocity-unit", "deg/s",
                  "--out", tmp_path / "bag")
    assert rc == 0, err
    warnings = [x for x in err.splitlines() if x.startswith("sysid-import: warning: ")]
    assert len(warnings) == 7 and "0.0175 x the position change" in warnings[0]


# -- errors ------------------------------------------------------------------------------------
def _corrupt(path, line, col, text):
    lines = path.read_text().splitlines()
    cells = lines[line - 1].split()
    if col is None:
        del cells[-1]
    else:
        cells[col - 1] = text
    lines[line - 1] = " ".join(cells)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("key, line, col, text, expected", [
    ("q", 34, 5, "abc", "{q}:34: column 5: 'abc' is not a number"),
    ("q_d", 7, 2, "nan", "{q_d}:7: column 2: 'nan' is not a finite number"),
    ("tau", 9, None, "", "{tau}:9: 6 column(s), expected 7 (as on line 1)"),
    ("t", 12, 1, "3.1", "{t}:12: column 1: stamp 3.1 s repeats the one before (line 11); "
                        "stamps must increase strictly"),
    ("t", 12, 1, "3.0", "{t}:12: column 1: stamp 3 s is earlier than the one before "
                        "(line 11: 3.1 s); stamps must increase strictly"),
])
def test_bad_cells_name_file_line_and_column(tmp_path, traj, capsys, key, line, col, text,
                                             expected):
    p = write_lab(tmp_path, traj)
    if key == "t":
        _corrupt(p["t"], 11, 1, "3.1")
    _corrupt(p[key], line, col, text)
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--out", tmp_path / "bag")
    assert rc == 2
    assert err == "sysid-import: error: " + expected.format(**p) + "\n"
    assert not (tmp_path / "bag").exists()


def test_row_count_mismatch_names_both_files(tmp_path, traj, capsys):
    p = write_lab(tmp_path, traj)
    np.savetxt(p["tau"], traj[3][:-1], fmt="%.17g")
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--out", tmp_path / "bag")
    n = traj[0].size
    assert rc == 2
    assert err == f"sysid-import: error: {p['tau']} has {n - 1} rows but {p['t']} has {n}\n"


@pytest.mark.parametrize("mapping, expected", [
    ({"positon": {}}, "map.yaml: unknown key 'positon' (expected one of: file, delimiter"),
    ({"position": {"unit": "degrees"}},
     "map.yaml: position.unit: expected one of 'rad', 'deg', got 'degrees'"),
    ({"position": {}, "time": {"rate_hz": "fast"}},
     "map.yaml: time.rate_hz: expected a positive number, got 'fast'"),
    ({"position": {}, "time": {"rate_hz": 100, "column": 0}},
     "map.yaml: time: give either rate_hz or a time column"),
    ({"position": {"columns": [0.5]}}, "map.yaml: position.columns: expected a list of column"),
    ({"position": {}, "effort": {"unit": "Nm"}},
     "map.yaml: unknown key 'effort.unit' (expected one of: effort.file"),
    ({"position": {}, "joints": "joint_1,joint_8"}, "unknown joint 'joint_8': robot gen3 has"),
    ({"position": {}, "continuous": ["joint_9"]}, "continuous: unknown joint 'joint_9'"),
    ({"position": {"columns": [0, 1, 2]}},
     "position.columns: 3 column(s) for 7 joints (joint_1, joint_2"),
    ({"position": {"columns": ["p1"] * 7}}, "has no header line, so column 'p1' cannot be found"),
    ({"position": {"columns": list(range(7))}, "header": "maybe"},
     "map.yaml: header: expected true, false or 'auto', got 'maybe'"),
])
def test_mapping_errors_name_the_key(tmp_path, traj, capsys, mapping, expected):
    p = write_lab(tmp_path, traj)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"file": p["q"].name, **mapping}))
    rate = [] if "time" in mapping else ["--rate-hz", 100]
    rc, err = run(capsys, "--robot", "gen3", "--mapping", tmp_path / "map.yaml", *rate,
                  "--out", tmp_path / "bag")
    assert rc == 2
    assert err.startswith("sysid-import: error: ") and err.count("\n") == 1
    assert expected.replace("map.yaml", str(tmp_path / "map.yaml")) in err, err


def test_start_shifts_the_stamps_and_negative_stamps_are_refused(tmp_path, traj, capsys):
    t = traj[0]
    p = write_lab(tmp_path, traj)
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--start", 1.7e9,
                  "--out", tmp_path / "bag")
    assert rc == 0, err
    s = read_joint_states(tmp_path / "bag", joint_names=NAMES)
    np.testing.assert_allclose(s.t - 1.7e9, t - t[0], atol=1e-6)
    np.savetxt(p["t"], t - 4.0, fmt="%.17g")
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--out", tmp_path / "b2")
    assert rc == 2 and f"{p['t']}:1: column 1: stamp -1 s is negative" in err


def test_header_names_and_yaml_syntax_errors(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("t,x\n0,1\n1,2\n")
    rc, err = run(capsys, tmp_path / "a.csv", "--joints", "j", "--time", "t", "--position", "y",
                  "--out", tmp_path / "bag")
    assert rc == 2 and f"{tmp_path / 'a.csv'}: no column named 'y' (columns: t, x)" in err
    (tmp_path / "m.yaml").write_text("position:\n  unit: [rad\n")
    rc, err = run(capsys, "--mapping", tmp_path / "m.yaml", "--out", tmp_path / "bag")
    assert rc == 2 and f"{tmp_path / 'm.yaml'}:3: not valid YAML" in err
    (tmp_path / "b.csv").write_bytes(b"t,x\n0,1\n1,\0\n")
    rc, err = run(capsys, tmp_path / "b.csv", "--joints", "j", "--time", "t", "--position", "x",
                  "--out", tmp_path / "bag")
    assert rc == 2 and f"{tmp_path / 'b.csv'}:3: binary data in a text table" in err


def test_exit_codes(tmp_path, traj, capsys):
    p = write_lab(tmp_path, traj)
    (tmp_path / "bag").mkdir()
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p), "--out", tmp_path / "bag")
    assert rc == 2 and err == f"sysid-import: error: --out {tmp_path / 'bag'}: already exists\n"
    rc, err = run(capsys, "--files", files_arg(p), "--out", tmp_path / "b2")
    assert rc == 2 and "no joint names: give --robot NAME" in err
    rc, err = run(capsys, "--robot", "gen4", "--files", files_arg(p), "--out", tmp_path / "b3")
    assert rc == 2 and err.startswith("sysid-import: error: ") and "gen4" in err
    rc, err = run(capsys, "--files", "q=" + str(p["q"]) + ",x=1", "--out", tmp_path / "b4")
    assert rc == 2 and "--files: expected KEY=FILE" in err
    assert run(capsys, "--out", tmp_path / "b5", "--bogus")[0] == 2     # argparse usage error
    assert run(capsys, "--help")[0] == 0
    rc, err = run(capsys, "--robot", "gen3", "--files", files_arg(p, False, False), "--out",
                  tmp_path / "ok")
    assert rc == 0 and "7 joints (position)" in err


def test_parse_helpers():
    assert parse_columns("0, 2,q3,4:6") == (0, 2, "q3", 4, 5)
    with pytest.raises(MappingError, match="empty entry"):
        parse_columns("0,,1")
    m = parse_mapping({"position": {"unit": "deg"}, "velocity": {}, "time": {"rate_hz": 10}})
    assert m.velocity is not None and m.velocity.unit == "deg/s"
    assert math.isclose(m.velocity.scale, math.pi / 180)
    assert m.continuous is None and parse_mapping({"position": {}, "continuous": "none"}) \
        .continuous == ()
