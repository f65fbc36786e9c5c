"""The real-data path in simulation, end to end: a Gen3 drawn off the catalogue
(``hardware_like``: friction and armature ±50 %, dry friction, torque offsets, links ±5 %, 1 kHz
driver with drops, jitter, torque and velocity noise, lagging torque and velocity streams, a
friction error that grows with speed) is calibrated from recordings of itself without payload
(``sysid-sim-record`` → ``sysid-calibrate --noise-speed``, the velocity lag estimated), then
the closed-loop demo runs on it with that calibration (``sysid-demo --hardware-like
--calibration``) from the catalogued payload class ``dumbbell_8lb`` (from the generic ``2f85``
box it refuses before starting). Checked independently of the demo's verdict: the calibration's
friction boxes hold the drawn robot's friction, every published θ_e box holds the truth, and no
command reached a torque limit."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.demo.report import load_run
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import sim_truth

pytestmark = [pytest.mark.ros, pytest.mark.slow]
ENV = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def _run(tool: str, *args: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name(tool)
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout,
                          env=ENV)
    assert proc.returncode == 0, f"{tool} {args}: {proc.stderr[-3000:]}"
    return proc


def test_calibrated_closed_loop_on_hardware_like_data(tmp_path):
    _run("sysid-sim-record", "--seconds", "60", "--out", str(tmp_path / "calib_bag"))
    _run("sysid-sim-record", "--seconds", "20", "--seed", "1", "--out", str(tmp_path / "val"))
    calib = tmp_path / "calib.yaml"
    _run("sysid-calibrate", "--robot", "gen3", "--bag", str(tmp_path / "calib_bag"),
         "--validate", str(tmp_path / "val"), "--noise-speed", "--out", str(calib))

    gen3 = load_robot("gen3")
    calibrated = load_robot("gen3", None, calib)
    drawn = sim_truth(gen3, 0).friction          # the sim node's hardware_seed default
    fr = calibrated.friction
    assert np.all(fr.lower - 1e-9 <= drawn) and np.all(drawn <= fr.upper + 1e-9), (
        f"calibrated friction box misses the drawn robot:\n{fr.lower}\n{drawn}\n{fr.upper}")

    # the generic 2f85 prior: with dry friction the box cannot shrink at rest, and from it
    # not even holding the start pose certifies, so the demo refuses before starting
    refused = subprocess.run([str(Path(sys.executable).with_name("sysid-demo")),
                              "--hardware-like", "--calibration", str(calib), "--out",
                              str(tmp_path / "refused")], capture_output=True, text=True,
                             timeout=120, env=ENV)
    assert refused.returncode == 3, refused.stderr[-2000:]
    assert "cannot certify even holding" in refused.stderr

    out = tmp_path / "demo"
    proc = _run("sysid-demo", "--hardware-like", "--calibration", str(calib), "--prior",
                "dumbbell_8lb", "--timeout", "300", "--out", str(out), timeout=400.0)
    text = (out / "report.md").read_text()
    assert "Result: success" in text
    assert "task certified before execution: yes" in text, proc.stderr[-2000:]
    assert "certified exciting trajectories: 4 of 4" in text

    run = load_run(next(p for p in (out / "bag").iterdir() if p.is_dir()), gen3)
    assert run.truth is not None and run.bounds.shape[0] > 0
    assert np.all(run.bounds[:, 0] <= run.truth + 1e-9)
    assert np.all(run.truth <= run.bounds[:, 2] + 1e-9)
    # the simulated payload is one of the class, off its centre, and the report says where
    klass = prior_box(load_robot(out / "gen3.yaml"))    # the run's facts: dumbbell_8lb
    place = (run.truth - klass.centre) / klass.radius
    assert 0.3 <= abs(place[0]) <= 0.8 and np.all(np.abs(place) <= 1.0), place
    assert "drawn inside the class 'dumbbell_8lb'" in text
    assert "## The payload class, the truth and the identified box" in text
    prior = gen3.config["identification"]["priors"]["dumbbell_8lb"]
    prior_width = prior["upper"][0] - prior["lower"][0]
    # the data inform the mass (measured: 0.82 of the prior's width; the stated velocity
    # bound, 2 mrad/s through the loaded wrist, costs most of what they would say)
    assert run.bounds[-1, 2, 0] - run.bounds[-1, 0, 0] < 0.95 * prior_width
    assert np.all(np.abs(run.cmd).max(axis=0) < gen3.limits.tau_max)
