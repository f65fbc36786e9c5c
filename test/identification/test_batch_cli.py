"""``sysid-identify`` batch mode on simulated recordings with known payloads: one result per
recording, equal to the single-recording command's (up to its timing field) whichever executor
ran it, a bad recording is its own row, the summary tables, and the batch exit codes."""
from __future__ import annotations

import csv
import fcntl
import json
import os
import pty
import shutil
import socket
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest

from batch.summaries import summaries_without_timing
from sysid_ros._src.identification.identify_cli import main
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation.sample_bags import SAMPLE_TORQUE_NOISE, payload_bags

NOISE = ["--torque-noise-abs", str(SAMPLE_TORQUE_NOISE), "--no-progress"]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    bags = payload_bags(folder, load_robot("gen3"), 3, seconds=2.5, seed=4)
    bad = folder / "rec_bad"                    # not a rosbag2: a failing item
    bad.mkdir()
    (bad / "metadata.yaml").write_text("rosbag2_bagfile_information: [not, a, bag\n")
    return folder, bags


def _results(out_dir: Path) -> dict[str, dict]:
    """Each result JSON without its timing field."""
    docs = {}
    for f in sorted(out_dir.glob("rec*.json")):
        doc = json.loads(f.read_text())
        assert isinstance(doc.pop("seconds"), dict)
        docs[f.stem] = doc
    return docs


def _summary(out_dir: Path) -> list[dict]:
    return json.loads((out_dir / "summary.json").read_text())["items"]


def test_batch_equals_single_runs_and_contains_the_truth(recordings, tmp_path, capsys):
    folder, bags = recordings
    out = tmp_path / "out"
    code = main(["--bag", str(folder / "rec*"), "--out-dir", str(out), "--jobs", "2", *NOISE])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 6, err                      # one recording failed
    assert err[-1].startswith("sysid-identify: batch: 3 of 4 ok, 1 not")
    docs = _results(out)
    assert sorted(docs) == ["rec00", "rec01", "rec02"]      # no result for the bad bag
    rows = {r["name"]: r for r in _summary(out)}
    for bag in bags:
        name = bag.path.name
        single = tmp_path / f"{name}.json"
        assert main(["--bag", str(bag.path), "--out", str(single), *NOISE]) == 0
        ref = json.loads(single.read_text())
        ref.pop("seconds")
        assert docs[name] == ref
        lo, hi = np.array(ref["lower"]), np.array(ref["upper"])
        assert np.all(lo <= bag.theta_e) and np.all(bag.theta_e <= hi)
        row = rows[name]
        assert row["status"] == "ok" and row["exit_code"] == 0
        assert row["m_lower"] == lo[0] and row["m_upper"] == hi[0]
        assert row["m_width"] == pytest.approx(hi[0] - lo[0])
        assert row["skipped"] == 0 and row["warnings"] == 0 and row["wall_s"] > 0
    bad = rows["rec_bad"]
    assert bad["exit_code"] == 2 and bad["status"] == "bad_input"
    assert "rec_bad" in bad["message"]
    with (out / "summary.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [r["name"] for r in table] == ["rec00", "rec01", "rec02", "rec_bad"]
    md = (out / "summary.md").read_text()
    assert md.count("\n| rec0") == 3 and "\n| rec_bad | bad_input | 2 |" in md


def test_in_process_and_worker_processes_give_identical_bytes(recordings, tmp_path):
    folder, _ = recordings
    outs = {}
    for jobs in ("1", "2"):
        outs[jobs] = tmp_path / jobs
        main(["--bag", str(folder / "rec0*"), "--out-dir", str(outs[jobs]), "--jobs", jobs,
              *NOISE])
    for f in sorted(outs["1"].glob("rec*.json")):
        a, b = json.loads(f.read_text()), json.loads((outs["2"] / f.name).read_text())
        a.pop("seconds"), b.pop("seconds")
        assert json.dumps(a) == json.dumps(b)
    assert summaries_without_timing(outs["1"]) == summaries_without_timing(outs["2"])


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_ray_cluster_started_on_loopback_gives_the_same_results(recordings, tmp_path):
    """``--ray-address local``: a Ray head on 127.0.0.1 started by the command, stopped when it
    ends (nothing left connected)."""
    import ray

    folder, _ = recordings
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert main(["--bag", str(folder / "rec0*"), "--out-dir", str(local), *NOISE]) == 0
    assert main(["--bag", str(folder / "rec0*"), "--out-dir", str(on_ray), "--jobs", "2",
                 "--ray-address", "local", *NOISE]) == 0
    assert not ray.is_initialized()
    assert _results(on_ray) == _results(local)
    assert summaries_without_timing(on_ray) == summaries_without_timing(local)
    assert json.loads((on_ray / "summary.json").read_text())["meta"]["executor"] == "Ray (local)"
    assert [r["status"] for r in _summary(on_ray)] == ["ok"] * 3


@pytest.mark.parametrize("argv, words", [
    (["--bag", "{folder}/nothing*", "--out-dir", "{tmp}/o"], "matches no file"),
    (["--bag", "{folder}/rec00", "{copy}/rec00", "--out-dir", "{tmp}/o"], "share the name"),
    (["--bag", "{folder}/rec00", "{folder}/rec01", "--out", "{tmp}/r.json"], "--out-dir"),
    (["--bag", "{folder}/rec0*", "--out-dir", "{tmp}/o", "--out", "{tmp}/r.json"], "--out"),
    (["--bag", "{folder}/rec0*", "--out-dir", "{tmp}/o", "--jobs", "0"], "--jobs"),
    (["--bag", "{folder}/rec00", "--out", "{tmp}/r.json", "--jobs", "2"], "--out-dir"),
    (["--bag", "{folder}/rec0*", "--out-dir", "{file}"], "--out-dir"),
    (["--floor", "--out-dir", "{tmp}/o"], "--bag"),
    (["--bag", "{folder}/rec0*", "--out-dir", "{tmp}/o", "--ray-address", "127.0.0.1:{port}"],
     "no Ray cluster there (connection refused)"),
])
def test_a_bad_batch_exits_2_and_runs_nothing(recordings, tmp_path, capsys, argv, words):
    folder, _ = recordings
    copy = tmp_path / "copy"
    shutil.copytree(folder / "rec00", copy / "rec00")
    (tmp_path / "file").write_text("a file, not a folder")
    with socket.socket() as free:      # a loopback port where nothing listens
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    fill = {"folder": folder, "copy": copy, "tmp": tmp_path, "file": tmp_path / "file",
            "port": port}
    code = main([a.format(**fill) for a in argv] + NOISE)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("sysid-identify: error: ") and words in err[-1], err
    assert not (tmp_path / "o" / "summary.json").exists()


def _stderr(argv: list[str], terminal: bool) -> str:
    """The command's stderr as a terminal (a pseudo-terminal) or a pipe would receive it."""
    if not terminal:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False).stderr
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))   # 100 columns
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:          # the terminal closed with the command
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.slow
def test_progress_bar_on_a_terminal_only(recordings, tmp_path):
    folder, _ = recordings
    argv = [sys.executable, "-m", "sysid_ros._src.identification.identify_cli", "--bag", str(folder / "rec0*"),
            "--out-dir", "", "--torque-noise-abs", str(SAMPLE_TORQUE_NOISE)]

    def run(name: str, terminal: bool, *extra: str) -> str:
        argv[6] = str(tmp_path / name)
        return _stderr(argv + list(extra), terminal)

    shown = run("tty", True)
    assert "\rrecordings:" in shown and "3/3" in shown     # the bar, drawn up to its end
    assert "not ok=0]" in shown and "batch: 3 of 3 ok" in shown
    argv[4] = str(folder / "rec*")          # with the bad recording: an item that exits 2
    shown = run("tty_bad", True)
    assert "4/4" in shown and "not ok=1]" in shown and "batch: 3 of 4 ok, 1 not" in shown
    argv[4] = str(folder / "rec0*")
    for quiet in (run("pipe", False), run("off", True, "--no-progress")):
        assert "\rrecordings" not in quiet and "3/3" not in quiet
        assert quiet.strip().splitlines()[-1].startswith("sysid-identify: batch: 3 of 3 ok")


def test_one_recording_and_local_batches_never_import_ray(recordings, tmp_path):
    folder, _ = recordings
    code = (
        "import sys\n"
        "from sysid_ros._src.identification.identify_cli import main\n"
        f"a = main(['--bag', {str(folder / 'rec00')!r}, '--out', {str(tmp_path / 'r.json')!r},"
        f" '--torque-noise-abs', '0.3', '--no-progress'])\n"
        f"b = main(['--bag', {str(folder / 'rec0*')!r}, '--out-dir', {str(tmp_path / 'o')!r},"
        f" '--jobs', '2', '--torque-noise-abs', '0.3', '--no-progress'])\n"
        "print(a, b, 'ray' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "0", "False"]


def test_the_batch_driver_loads_no_identification():
    """A batch's own process only parses and hands out items (on Ray, its workers load the
    identification): the command and its batch module load no solver, model or bag reader."""
    code = ("import sys\n"
            "import sysid_ros._src.identification.identify_cli, sysid_ros._src.identification.batch\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'pinocchio', 'cyipopt', 'rosbags',\n"
            "                         'sysid_ros._src.identification.single', 'sysid_ros._src.model')\n"
            "             if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
