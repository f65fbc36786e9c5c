"""``sysid-calibrate``: exit codes with one-line reasons, the calib.yaml round trip through
``load_robot(..., calibration=...)``, the JSON summary, the report and ``--write-bag``."""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from sysid_ros._src.bagio import read_joint_states
from sysid_ros._src.calibration import Recording
from sysid_ros._src.calibration.calibrate_cli import EXIT_CODES, main, write_recording_bag
from sysid_ros._src.calibration.synthetic import as_recording
from sysid_ros._src.identification import load_identification_config
from sysid_ros._src.model.robots import FRICTION_NAMES, load_robot


FAST = ["--no-link-boxes"]


def _part(rec: Recording, lo: float, hi: float, name: str, **kw) -> Recording:
    keep = (rec.t >= rec.t[0] + lo) & (rec.t < rec.t[0] + hi)
    return Recording(rec.t[keep], rec.q[keep], None if rec.dq is None else rec.dq[keep],
                     kw.get("tau", rec.tau)[keep], name)


@pytest.fixture(scope="module")
def bags(gen3, cases, tmp_path_factory):
    d = tmp_path_factory.mktemp("bags")
    rec = cases[0].recordings()[0]
    out = {
        "cal": write_recording_bag(d / "cal", _part(rec, 0.0, 8.0, "cal"), gen3),
        "val": write_recording_bag(d / "val", _part(rec, 8.0, 99.0, "val"), gen3),
        "payload": write_recording_bag(d / "payload", as_recording(cases[0].payload), gen3),
        "offset": write_recording_bag(d / "offset", _part(rec, 0.0, 8.0, "off",
                                                          tau=rec.tau + 10.0), gen3),
    }
    out["short"] = write_recording_bag(d / "short", _part(rec, 0.0, 1.5, "short"), gen3)
    out["tiny"] = write_recording_bag(d / "tiny", _part(rec, 0.0, 0.3, "tiny"), gen3)
    no_vel = _part(rec, 0.0, 8.0, "novel")
    out["novel"] = write_recording_bag(
        d / "novel", Recording(no_vel.t, no_vel.q, None, no_vel.tau), gen3)
    return out


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_calibrates_validates_and_round_trips(gen3, bags, tmp_path, capsys):
    out, js, rep = tmp_path / "calib.yaml", tmp_path / "c.json", tmp_path / "report"
    # the robot file's driver effects include a friction error growing with speed: the
    # speed-dependent bound, as the hardware-like demo calibrates. 8 s of calibration data (the
    # guide asks for 20-60 s) leave the held-out bag above the bound on joint_1 at margins 1.25
    # and 1.5 (x1.06): margin 2 here, the subject being the files; the default margin is measured
    # on longer recordings by test_soundness and bench_calibration
    code, err = _run(capsys, "--robot", "gen3", "--bag", bags["cal"], "--validate", bags["val"],
                     "--out", out, "--json", js, "--report", rep, "--noise-speed",
                     "--margin", "2.0")
    assert code == EXIT_CODES["ok"], err
    assert err[0].startswith("sysid-calibrate: data: ")
    assert err[-1].startswith("sysid-calibrate: ok: wrote ")
    doc = yaml.safe_load(out.read_text())
    robot = load_robot("gen3", calibration=out)
    for k, name in enumerate(FRICTION_NAMES):
        assert np.allclose(robot.friction.nominal[:, k], doc["friction"]["nominal"][name])
        assert np.allclose(robot.friction.lower[:, k], doc["friction"]["lower"][name])
        assert np.allclose(robot.friction.upper[:, k], doc["friction"]["upper"][name])
    cfg = load_identification_config(robot)
    assert cfg.friction == "config"
    assert np.allclose(cfg.torque_noise_abs, doc["identification"]["torque_noise_abs"])
    assert cfg.window_s == 0.4 and cfg.stride_s == 0.1
    assert np.allclose(cfg.friction_lower, robot.friction.lower)
    summary = json.loads(js.read_text())
    for name in FRICTION_NAMES:
        assert set(summary["friction"][name]) == {"nominal", "lower", "upper"}
        assert len(summary["friction"][name]["lower"]) == gen3.nj
    assert len(summary["noise"]["torque_abs"]) == gen3.nj
    assert len(summary["validation"]["torque_rms"]) == gen3.nj
    assert summary["validation"]["consistent"] is True
    assert doc["provenance"]["validation"]["consistent"] is True
    for f in ("report.md", "torque.png", "friction.png", "residuals.png"):
        assert (rep / f).stat().st_size > 1000


@pytest.mark.slow     # ~18 s with its bag fixture; the default suite must stay under 5 min
def test_validation_with_an_unknown_payload_exits_4(bags, tmp_path, capsys):
    out = tmp_path / "calib.yaml"
    code, err = _run(capsys, "--bag", bags["cal"], "--validate", bags["payload"], "--out", out,
                     *FAST)
    assert code == EXIT_CODES["validation_inconsistent"]
    assert "VALIDATION INCONSISTENT" in err[-1]
    assert out.exists()      # written, and its provenance says so
    assert yaml.safe_load(out.read_text())["provenance"]["validation"]["consistent"] is False


def test_data_the_prior_cannot_explain_exit_3(bags, tmp_path, capsys):
    out = tmp_path / "calib.yaml"
    code, err = _run(capsys, "--bag", bags["offset"], "--out", out, *FAST)
    assert code == EXIT_CODES["inconsistent"]
    assert len(err) == 2 and "inconsistent: no plausible noise bound" in err[-1]
    assert "N*m allowed" in err[-1]
    assert not out.exists()


@pytest.mark.parametrize("argv, words", [
    (["--bag", "/nonexistent/bag", "--out", "x.yaml"], "/nonexistent/bag"),
    (["--bag", "{cal}"], "nothing to do"),
    (["--bag", "{cal}", "--write-bag", "x"], "--write-bag needs --state-estimate"),
    (["--robot", "z1", "--bag", "{cal}", "--out", "x.yaml"], "joint"),
    (["--robot", "nosuchrobot", "--bag", "{cal}", "--out", "x.yaml"], "nosuchrobot"),
    (["--bag", "{cal}", "--out", "x.yaml", "--margin", "0.5"], "margin"),
    (["--bag", "{cal}", "--out", "x.yaml", "--payload-theta", "1,2"], "10 numbers"),
    (["--bag", "{short}", "--out", "x.yaml"], "insufficient data"),
    (["--bag", "{tiny}", "--out", "x.yaml"], "no momentum window formed"),
    (["--bag", "{novel}", "--out", "x.yaml"], "--state-estimate"),
])
def test_bad_input_exits_2_with_one_line(bags, tmp_path, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    argv = [a.format(**bags) for a in argv]
    code, err = _run(capsys, *argv)
    assert code == EXIT_CODES["bad_input"]
    assert err[-1].startswith("sysid-calibrate: error: ") and words in err[-1], err


def test_state_estimate_writes_a_bag_with_velocities(gen3, bags, tmp_path, capsys):
    out = tmp_path / "estimated"
    code, err = _run(capsys, "--bag", bags["novel"], "--state-estimate", "--write-bag", out)
    assert code == EXIT_CODES["ok"], err
    series = read_joint_states(out, "/joint_states", gen3.joint_names)
    assert series.velocity is not None and np.any(np.abs(series.velocity) > 0.05)
    code, err = _run(capsys, "--bag", bags["novel"], "--state-estimate", "--write-bag", out)
    assert code == EXIT_CODES["bad_input"] and "already exists" in err[-1]


@pytest.mark.slow     # a calibration and an identification through both CLIs
def test_export_rows_reach_the_identifier(bags, tmp_path, capsys):
    """--export-rows writes calib.rows.npz beside calib.yaml and names it there; sysid-identify
    --calibration then rests on the rows too (and says so in its JSON), and
    --calibration-rows with another robot's file is bad input."""
    from sysid_ros._src.identification.identify_cli import main as identify_main

    out = tmp_path / "calib.yaml"
    code, err = _run(capsys, "--bag", bags["cal"], "--out", out, "--export-rows", "--noise-speed",
                     *FAST)
    assert code == EXIT_CODES["ok"], err
    doc = yaml.safe_load(out.read_text())
    assert doc["identification"]["calibration_rows"] == "calib.rows.npz"
    assert (tmp_path / "calib.rows.npz").is_file()
    result = tmp_path / "r.json"
    code = identify_main(["--calibration", str(out), "--bag", str(bags["payload"]), "--out",
                          str(result), "--no-progress"])
    capsys.readouterr()
    assert code == 0
    assumptions = json.loads(result.read_text())["assumptions"]
    assert assumptions["calibration_rows"]["rows"] > 0
    code = identify_main(["--robot", "z1", "--calibration-rows", str(tmp_path / "calib.rows.npz"),
                          "--bag", str(bags["payload"]), "--out", str(result), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "made for robot 'gen3'" in err
