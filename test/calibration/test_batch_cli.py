"""``sysid-calibrate --manifest --out-dir``: independent calibrations of several simulated
robots (known truth), each equal to the single calibration's files up to their date and timing
fields, one inconsistent robot as its own row, and manifest errors naming the entry."""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from batch.summaries import summaries_without_timing
from sysid_ros._src.calibration import Recording
from sysid_ros._src.calibration.calibrate_cli import main, write_recording_bag
from sysid_ros._src.calibration.synthetic import draw_case

FAST = ["--no-link-boxes", "--no-progress"]


@pytest.fixture(scope="module")
def fleet(gen3, tmp_path_factory):
    """Two drawn robots' 8 s calibration bags, and the first one's with a 10 N*m offset that
    its prior cannot explain (exit 3)."""
    d = tmp_path_factory.mktemp("fleet")
    out = {}
    for k, name in enumerate(("arm-a", "arm-b")):
        case = draw_case(gen3, 310 + k, cal_seconds=(8.0,), payload_seconds=0.0)
        rec = case.recordings()[0]
        out[name] = (write_recording_bag(d / name / "cal", rec, gen3), case)
        if k == 0:
            off = Recording(rec.t, rec.q, rec.dq, rec.tau + 10.0, "off")
            out["arm-c"] = (write_recording_bag(d / "arm-c" / "cal", off, gen3), case)
    manifest = d / "fleet.yaml"
    manifest.write_text(yaml.safe_dump({"robots": {
        "arm-a": {"bags": ["arm-a/cal"]},
        "arm-b": {"bags": ["arm-b/ca*"], "robot": "gen3"},
        "arm-c": {"bags": [str(out["arm-c"][0])]}}}))
    return manifest, out


def _strip(doc: dict) -> dict:
    """The document without its date and timing fields."""
    doc = json.loads(json.dumps(doc))
    prov = doc.get("provenance", {})
    prov.pop("date", None)
    prov.pop("seconds", None)
    doc.pop("seconds", None)
    return doc


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_batch_of_robots_equals_single_calibrations(fleet, tmp_path, capsys):
    manifest, bags = fleet
    out = tmp_path / "out"
    code = main(["--manifest", str(manifest), "--out-dir", str(out), "--jobs", "2", *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 6, err
    assert err[-1].startswith("sysid-calibrate: batch: 2 of 3 ok, 1 not")
    rows = {r["name"]: r for r in json.loads((out / "summary.json").read_text())["items"]}
    for name in ("arm-a", "arm-b"):
        bag, case = bags[name]
        single_yaml, single_json = tmp_path / f"{name}.yaml", tmp_path / f"{name}.json"
        assert main(["--bag", str(bag.resolve()), "--out", str(single_yaml), "--json",
                     str(single_json), *FAST]) == 0
        got = yaml.safe_load((out / f"{name}.yaml").read_text())
        assert _strip(got) == _strip(yaml.safe_load(single_yaml.read_text()))
        summary = json.loads((out / f"{name}.json").read_text())
        assert _strip(summary) == _strip(json.loads(single_json.read_text()))
        # the calibrated friction boxes hold the drawn robot's friction
        lo = np.array([summary["friction"][k]["lower"] for k in ("Fc", "Fv", "Ia", "beta")])
        hi = np.array([summary["friction"][k]["upper"] for k in ("Fc", "Fv", "Ia", "beta")])
        truth = case.truth.friction.T
        assert np.all(lo <= truth + 1e-9) and np.all(truth <= hi + 1e-9), name
        row = rows[name]
        assert row["status"] == "ok" and row["exit_code"] == 0 and row["recordings"] == 1
        assert row["noise_max"] == max(summary["noise"]["torque_abs"])
        assert row["message"].startswith(f"ok: wrote {(out / name).resolve()}.yaml;")
    bad = rows["arm-c"]
    assert bad["exit_code"] == 3 and bad["status"] == "inconsistent"
    assert "no plausible noise bound" in bad["message"]
    assert not (out / "arm-c.yaml").exists()
    assert "| arm-c | gen3 | 1 | inconsistent | 3 |" in (out / "summary.md").read_text()


@pytest.mark.slow   # a Ray head takes seconds to start, and two calibrations run twice
def test_ray_cluster_started_on_loopback_gives_the_local_results(fleet, tmp_path):
    """``--ray-address local`` writes the same files and summary as local worker processes,
    up to their date and timing fields, for a robot that calibrates and one that is
    inconsistent (exit 3); the head it starts is stopped when it ends."""
    import ray

    _, bags = fleet
    manifest = tmp_path / "two.yaml"
    manifest.write_text(yaml.safe_dump({"robots": {
        name: {"bags": [str(bags[name][0].resolve())]} for name in ("arm-a", "arm-c")}}))
    out, local = tmp_path / "out", tmp_path / "local"
    batch = ["--manifest", str(manifest), "--out-dir", str(out), "--jobs", "2", *FAST]
    assert main(batch) == 6
    out.rename(local)           # the same output folder for both: its path is in the verdicts
    assert main([*batch, "--ray-address", "local"]) == 6
    assert not ray.is_initialized()
    assert sorted(f.name for f in out.iterdir()) == sorted(f.name for f in local.iterdir())
    assert not list(out.glob("arm-c.*"))              # an inconsistent robot has no result
    for f in ("arm-a.yaml", "arm-a.json"):
        assert _strip(yaml.safe_load((out / f).read_text())) == \
            _strip(yaml.safe_load((local / f).read_text())), f
    on_ray, here = summaries_without_timing(out), summaries_without_timing(local)
    assert on_ray == here
    assert [r["status"] for r in on_ray["summary.json"]["items"]] == ["ok", "inconsistent"]
    assert json.loads((out / "summary.json").read_text())["meta"]["executor"] == "Ray (local)"


@pytest.mark.parametrize("manifest, words", [
    ("robots: [a, b]", "mapping 'robots:'"),
    ("robots: {arm-a: {bags: [arm-a/cal], speed: 3}}", "unknown key 'speed'"),
    ("robots: {arm-a: {validate: [arm-a/cal]}}", "robots.arm-a: expected a mapping with 'bags'"),
    ("robots: {arm-a: {bags: [nowhere/cal*]}}", "matches no file"),
    ("robots: {'a/b': {bags: [arm-a/cal]}}", "robot name"),
    ("robots: {arm-a: {bags: [arm-a/cal]", "not YAML"),
])
def test_bad_manifest_exits_2_naming_the_entry(fleet, tmp_path, capsys, manifest, words):
    path = fleet[0].parent / "bad.yaml"
    path.write_text(manifest)
    code = main(["--manifest", str(path), "--out-dir", str(tmp_path / "o"), *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("sysid-calibrate: error: ")
    assert words in err[-1], err
    assert not (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize("extra, words", [
    (["--bag", "x"], "--bag"), (["--report", "r"], "--report"), (["--out", "c.yaml"], "--out"),
    (["--payload-bag", "x", "--payload-prior", "dumbbell_1kg"], "--payload-bag, --payload-prior"),
])
def test_single_calibration_options_are_refused_in_a_batch(fleet, tmp_path, capsys, extra,
                                                           words):
    code = main(["--manifest", str(fleet[0]), "--out-dir", str(tmp_path / "o"), *extra, *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and words in err[-1]


def test_manifest_without_out_dir_and_jobs_without_batch_exit_2(fleet, capsys):
    assert main(["--manifest", str(fleet[0]), *FAST]) == 2
    assert "--out-dir" in capsys.readouterr().err
    assert main(["--bag", "x", "--out", "c.yaml", "--jobs", "2", *FAST]) == 2
    assert "--manifest" in capsys.readouterr().err
