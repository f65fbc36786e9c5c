"""The examples in examples/ run as a user runs them and print what their docstrings promise.

Each is checked against the truth it prints (simulated data with known payload/robot), so a
regression in identification, certification or calibration shows up here as well."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(name: str) -> str:
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stderr[-2000:]}"
    return proc.stdout


def test_identify_bag_contains_the_true_mass() -> None:
    out = _run("identify_bag.py")
    assert "status: ok" in out
    (p_lo, p_hi), (lo, hi) = [tuple(map(float, m)) for m in
                              re.findall(r"mass ∈ \[([\d.]+), ([\d.]+)\] kg", out)]
    truth = float(re.search(r"true mass ([\d.]+) kg", out).group(1))
    assert lo <= truth <= hi
    assert hi - lo < 0.75 * (p_hi - p_lo)            # the data narrowed the prior


def test_certify_trajectory_refuses_under_the_prior_and_certifies_when_identified() -> None:
    out = _run("certify_trajectory.py")
    assert "joint 1 by +0.3 rad in 3 s, prior box: REFUSED" in out
    assert "joint 1 by +0.3 rad in 3 s, identified box (±3 %): certified" in out
    assert "joint 2 by +1.5 rad in 0.5 s, identified box (±3 %): REFUSED" in out
    assert "joint velocity limit" in out


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_calibrate_robot_boxes_contain_the_truth_and_rescue_identification() -> None:
    out = _run("calibrate_robot.py")
    rows = re.findall(r"\[ *(-?[\d.]+), *(-?[\d.]+)\](?: kg)? ∋ *(-?[\d.]+)", out)
    assert len(rows) == 2 * 7 + 1                    # Fv and β per Gen3 joint, then the mass
    for lo, hi, truth in rows:
        assert float(lo) <= float(truth) <= float(hi)
    assert re.search(r"uncalibrated: inconsistent", out)
    assert re.search(r"calibrated  : ok, mass", out)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_is_tested(name: str) -> None:
    tested = {"identify_bag.py", "certify_trajectory.py", "calibrate_robot.py"}
    assert name in tested, f"examples/{name} has no test in {Path(__file__).name}"
