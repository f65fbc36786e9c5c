"""sysid-identify on real rosbag2 files (MCAP and sqlite3) of simulated Gen3 data."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src.bagio import BagWriter, default_typestore
from sysid_ros._src.identification.identify_cli import main
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from sysid_ros._src.model.robots import load_robot

TS = default_typestore()
JS = TS.types["sensor_msgs/msg/JointState"]
Header = TS.types["std_msgs/msg/Header"]
Time = TS.types["builtin_interfaces/msg/Time"]


def _bag(path, t, q, dq, tau, names, storage="mcap"):
    with BagWriter(path, storage=storage) as w:
        for i in range(len(t)):
            ns = int(round((100.0 + t[i]) * 1e9))
            w.write("/joint_states", JS(header=Header(stamp=Time(sec=ns // 10**9,
                                                                 nanosec=ns % 10**9),
                                                      frame_id=""),
                                        name=list(names), position=np.ascontiguousarray(q[i], float),
                                        velocity=np.ascontiguousarray(dq[i], float),
                                        effort=np.ascontiguousarray(tau[i], float)), ns)
    return path


@pytest.fixture(scope="module")
def sim():
    robot = load_robot("gen3")
    rng = np.random.default_rng(21)
    theta = robot.theta_e() + random_payload_theta(rng, 4.0)
    return robot, theta, simulate(robot, rng, theta_e=theta, duration=0.6, noise_rel=0.025)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_ok_result_contains_truth(tmp_path, sim, storage):
    robot, theta, run = sim
    names = list(robot.joint_names)[::-1]           # columns matched by name, not position
    perm = [list(robot.joint_names).index(n) for n in names]
    bag = _bag(tmp_path / "b", run.t, run.q[:, perm], run.dq[:, perm], run.tau_meas[:, perm],
               names, storage)
    out = tmp_path / "r.json"
    assert main(["--bag", str(bag), "--out", str(out), "--torque-noise-rel", "0.025",
                 "--no-progress"]) == 0
    doc = json.loads(out.read_text())
    assert doc["status"] == "ok" and doc["robot"] == "gen3" and doc["body"] == "joint_7"
    assert doc["parameter_names"][:2] == ["m", "mcx"]
    lo, nom, hi = (np.array(doc[k]) for k in ("lower", "nominal", "upper"))
    assert np.all(lo <= theta) and np.all(theta <= hi)
    assert np.all(lo <= nom) and np.all(nom <= hi)
    assert doc["samples_used"] == len(run.t) and doc["windows_used"] > 0
    assert doc["assumptions"]["torque_noise_rel"] == 0.025
    assert doc["assumptions"]["torque_noise_abs_Nm"] == [0.0] * 7


def test_inconsistent_exit_3(tmp_path, sim):
    robot, theta, run = sim
    tau = run.tau_meas + 3.0                         # a large unmodelled offset
    bag = _bag(tmp_path / "b", run.t, run.q, run.dq, tau, robot.joint_names)
    out = tmp_path / "r.json"
    # the catalogue friction box has no room for a 3 N·m offset
    assert main(["--bag", str(bag), "--out", str(out), "--torque-noise-abs", "0.05",
                 "--friction", "config", "--no-progress"]) == 3
    doc = json.loads(out.read_text())
    assert doc["status"] == "inconsistent" and doc["lower"] is None
    assert doc["consistency"]["noise_scale"] > 1.0 and doc["reason"]
    # the uncalibrated (wide) box has an offset unknown of ±3 N·m: consistent, and sound
    assert main(["--bag", str(bag), "--out", str(out), "--torque-noise-abs", "0.05",
                 "--friction", "wide", "--no-progress"]) == 0
    doc = json.loads(out.read_text())
    assert doc["status"] == "ok"
    assert np.all(np.array(doc["lower"]) <= theta) and np.all(theta <= np.array(doc["upper"]))


def test_bad_input_exit_2(tmp_path, sim, capsys):
    robot, theta, run = sim
    n = 50
    bag = _bag(tmp_path / "b", run.t[:n], run.q[:n], run.dq[:n], run.tau_meas[:n],
               robot.joint_names)
    out = str(tmp_path / "r.json")
    assert main(["--bag", str(bag), "--out", out, "--topic", "/nope", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and len(err.strip().splitlines()) == 1
    wrong = _bag(tmp_path / "w", run.t[:n], run.q[:n, :6], run.dq[:n, :6], run.tau_meas[:n, :6],
                 robot.joint_names[:6])
    assert main(["--bag", str(wrong), "--out", out, "--no-progress"]) == 2
    assert "joint_7" in capsys.readouterr().err
    nan_tau = run.tau_meas[:n].copy()
    nan_tau[10, 3] = np.nan
    nanbag = _bag(tmp_path / "n", run.t[:n], run.q[:n], run.dq[:n], nan_tau, robot.joint_names)
    # one NaN is skipped and counted (docs/guide/recordings.md); --strict refuses the bag at it
    assert main(["--bag", str(nanbag), "--out", out, "--no-progress"]) != 2
    assert json.loads(Path(out).read_text())["data"]["skipped"]["by_kind"] == {"non_finite": 1}
    assert main(["--bag", str(nanbag), "--out", out, "--no-progress", "--strict"]) == 2
    assert "message 10" in capsys.readouterr().err
    assert main(["--bag", str(tmp_path / "missing"), "--out", out, "--no-progress"]) == 2
    assert main(["--bag", str(bag), "--out", out, "--window", "400", "--stride", "75",
                 "--no-progress"]) == 2
    assert "stride" in capsys.readouterr().err


def test_short_bag_is_insufficient(tmp_path, sim):
    robot, theta, run = sim
    n = 100
    bag = _bag(tmp_path / "b", run.t[:n], run.q[:n], run.dq[:n], run.tau_meas[:n],
               robot.joint_names)
    out = tmp_path / "r.json"
    assert main(["--bag", str(bag), "--out", str(out), "--no-progress"]) == 4
    doc = json.loads(out.read_text())
    assert doc["status"] == "insufficient_data" and doc["box_is_prior"]
    assert "fewer than one window" in doc["reason"]


def test_every_exit_code_says_why(tmp_path, sim, capsys):
    """100 Hz data with a 5 ms gap threshold: exit 4 naming the step; no velocities: exit 2;
    an ok box pinned to a wrong prior with --fail-on-warning: exit 5 (0 without it)."""
    robot, theta, run = sim
    sub = slice(None, None, 40)                               # 4 kHz -> 100 Hz
    bag = _bag(tmp_path / "slow", run.t[sub], run.q[sub], run.dq[sub], run.tau_meas[sub],
               robot.joint_names)
    out = tmp_path / "r.json"
    assert main(["--bag", str(bag), "--out", str(out), "--max-sample-gap", "0.005",
                 "--no-progress"]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("sysid-identify: data: 61 samples of 7 joints over 0.60 s, median rate 100 Hz")
    assert "ms apart > max_sample_gap 5.0 ms" in err[-1] and "every step is" in err[-1]
    # without velocities: refused, never zero-filled
    novel = tmp_path / "novel"
    with BagWriter(novel) as w:
        for i in range(20):
            ns = int(round((100.0 + run.t[i]) * 1e9))
            w.write("/joint_states", JS(header=Header(stamp=Time(sec=ns // 10**9,
                                                                 nanosec=ns % 10**9),
                                                      frame_id=""),
                                        name=list(robot.joint_names),
                                        position=np.ascontiguousarray(run.q[i], float),
                                        velocity=np.zeros(0),
                                        effort=np.ascontiguousarray(run.tau_meas[i], float)), ns)
    assert main(["--bag", str(novel), "--out", str(out), "--no-progress"]) == 2
    assert "no joint velocities" in capsys.readouterr().err
    # a prior whose mass face sits above the truth: ok but pinned -> exit 5 on request
    full = _bag(tmp_path / "full", run.t, run.q, run.dq, run.tau_meas, robot.joint_names)
    prior = tmp_path / "heavy.yaml"
    lo = [float(theta[0]) + 0.2, -0.35, -0.35, -1.35, 0.0, -0.06, 0.0, -0.13, -0.13, 0.0]
    hi = [float(theta[0]) + 5.0, 0.35, 0.35, -0.05, 0.50, 0.06, 0.50, 0.13, 0.13, 0.12]
    prior.write_text(f"lower: {lo}\nupper: {hi}\n")
    args = ["--bag", str(full), "--out", str(out), "--friction", "config", "--prior",
            str(prior), "--no-progress"]
    assert main(args) == 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "WARNINGS" in last and "pinned to the prior" in last
    assert main(args + ["--fail-on-warning"]) == 5
    doc = json.loads(out.read_text())
    assert doc["status"] == "ok" and doc["warnings"] and doc["prior"] == str(prior)


def test_floor_with_and_without_a_bag(tmp_path, sim, capsys):
    """--floor: the identifiability floor of the stated boxes next to the box (never wider
    than it: every sound box contains the floor), about the point estimate; alone without a
    bag; refused for a floating base and when neither --bag nor --floor is given."""
    robot, theta, run = sim
    bag = _bag(tmp_path / "b", run.t, run.q, run.dq, run.tau_meas, robot.joint_names)
    out = tmp_path / "r.json"
    assert main(["--bag", str(bag), "--out", str(out), "--torque-noise-rel", "0.025",
                 "--no-progress", "--floor", "--floor-states", "150"]) == 0
    doc = json.loads(out.read_text())
    floor = doc["floor"]
    assert floor["about"] == "point estimate" and floor["witnesses_consistent"]
    lo, hi = np.array(doc["lower"]), np.array(doc["upper"])
    assert np.all(lo <= np.array(floor["lower"]) + 1e-9)
    assert np.all(np.array(floor["upper"]) <= hi + 1e-9)
    assert 0.0 < floor["share_of_box"][0] <= 1.0
    assert "floor of the stated boxes: m width" in capsys.readouterr().err

    alone = tmp_path / "floor.json"
    widths = []
    for rel in ("0.05", "0.02"):
        assert main(["--out", str(alone), "--floor", "--robot-uncertainty-rel", rel]) == 0
        doc = json.loads(alone.read_text())
        assert doc["floor"]["about"] == "nominal end-effector body"
        widths.append(doc["floor"]["width"][0])
    # the mass floor is set by the link box: 2 % instead of 5 % gives 2/5 of it
    assert widths[1] == pytest.approx(0.4 * widths[0], rel=0.02)
    assert main(["--robot", "b1_z1", "--out", str(alone), "--floor"]) == 2
    assert main(["--out", str(alone)]) == 2
    assert "--bag is required" in capsys.readouterr().err


def test_velocity_noise_flags(tmp_path, sim):
    """Velocities with ±5 mrad/s of noise: unstated, the rows contradict the truth (exit 3);
    ``--velocity-noise-abs 0.005`` states it (exit 0, the truth inside, the bound in the JSON's
    assumptions); ``--velocity-noise-scope payload`` without a calibration is refused (exit 2)."""
    robot, theta, run = sim
    noisy = run.dq + np.random.default_rng(3).uniform(-0.005, 0.005, run.dq.shape)
    bag = _bag(tmp_path / "b", run.t, run.q, noisy, run.tau_meas, robot.joint_names)
    out = tmp_path / "r.json"
    base = ["--bag", str(bag), "--out", str(out), "--torque-noise-abs", "0.02",
            "--friction", "config", "--no-progress"]
    assert main(base) == 3
    assert main(base + ["--velocity-noise-abs", "0.005"]) == 0
    doc = json.loads(out.read_text())
    assert doc["assumptions"]["velocity_noise_abs_rad_s"] == [0.005] * 7
    assert np.all(np.array(doc["lower"]) <= theta) and np.all(theta <= np.array(doc["upper"]))
    assert main(base + ["--velocity-noise-abs", "0.005", "--velocity-noise-scope",
                        "payload"]) == 2
