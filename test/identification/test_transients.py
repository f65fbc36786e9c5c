"""Torque transients the quadrature allowance absorbs are reported (count, joint, time, share
of the radius), offline in the identifier's result and JSON and in the calibration's summary
and report; a clean recording reports none.

Data: a hardware-like MuJoCo Gen3 with known truth (drawn friction, offsets, torque lag, 500 Hz
with 1 % drops), calibrated on one recording, plus a dumbbell recording; the transient is a
+40 N·m one-sample spike in joint_4's torque.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from sysid_ros.calibration import CalibrationOptions, calibrate
from sysid_ros.calibration.document import calibration_document, summary_json
from sysid_ros.calibration.report import write_report
from sysid_ros.calibration.synthetic import as_recording, draw_case
from sysid_ros.identification import identify, load_identification_config
from sysid_ros.identification.cli import main as identify_main
from sysid_ros.model.calibration import apply_calibration
from sysid_ros.model.robots import load_robot
from sysid_ros.simulation import write_joint_states_bag

SPIKE_NM, SPIKE_AT, SPIKE_JOINT = 40.0, 3.0, 3


def _spiked(tau: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, float]:
    out = tau.copy()
    k = int(np.searchsorted(t, SPIKE_AT))
    out[k, SPIKE_JOINT] += SPIKE_NM
    return out, float(t[k])


@pytest.fixture(scope="module")
def setup():
    gen3 = load_robot("gen3")
    case = draw_case(gen3, 2, cal_seconds=(10.0,), payload_seconds=6.0)
    res = calibrate(gen3, case.recordings(), CalibrationOptions(link_boxes=False))
    robot = apply_calibration(gen3, calibration_document(res))
    return gen3, case, res, robot


def test_a_spike_is_reported_and_the_box_still_holds_the_truth(setup):
    _, case, res, robot = setup
    assert res.transients == []                      # the calibration recording is clean
    pay = case.payload
    config = load_identification_config(robot)
    clean = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp",
                     point_estimate=False)
    assert clean.status == "ok" and clean.contains(pay.truth.theta_e)
    assert clean.transients == []
    tau, at = _spiked(pay.tau_meas, pay.t)
    out = identify(robot, config, pay.t, pay.q, pay.dq, tau, "lp", point_estimate=False)
    assert out.status == "ok" and out.contains(pay.truth.theta_e)
    assert len(out.transients) == 1
    tr = out.transients[0]
    assert tr.joint == robot.joint_names[SPIKE_JOINT] and tr.time == at
    assert 0.5 * SPIKE_NM < tr.excess < SPIKE_NM
    assert 0.0 < tr.share < 1.0
    assert any("transients" in n and tr.joint in n for n in out.notes)


def test_the_cli_json_and_stderr_report_it(setup, tmp_path, capsys):
    gen3, case, res, robot = setup
    calib = tmp_path / "calib.yaml"
    calib.write_text(json.dumps(calibration_document(res)))     # JSON is YAML
    pay = case.payload
    tau, at = _spiked(pay.tau_meas, pay.t)
    spiked = dataclasses.replace(pay, tau_meas=tau)
    bag = write_joint_states_bag(tmp_path / "bag", spiked, gen3)
    out = tmp_path / "r.json"
    code = identify_main(["--bag", str(bag), "--out", str(out), "--calibration", str(calib),
                          "--no-progress"])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["transients"]["count"] == 1
    first = doc["transients"]["first"][0]
    assert first["joint"] == gen3.joint_names[SPIKE_JOINT]
    assert first["time"] == pytest.approx(at, abs=1e-4)
    assert "torque transients" in capsys.readouterr().err


def test_calibration_reports_a_spike_in_its_summary_and_report(setup, tmp_path):
    gen3, case, _, _ = setup
    rec = case.cal[0]
    tau, at = _spiked(rec.tau_meas, rec.t)
    spiked = as_recording(dataclasses.replace(rec, tau_meas=tau), "spiked")
    res = calibrate(gen3, [spiked], CalibrationOptions(link_boxes=False))
    assert [(tr.recording, tr.joint, tr.time) for tr in res.transients] == \
        [("spiked", gen3.joint_names[SPIKE_JOINT], at)]
    assert summary_json(res)["transients"]["count"] == 1
    md = write_report(tmp_path / "report", res).read_text()
    section = md.split("## Torque transients", 1)[1]
    assert gen3.joint_names[SPIKE_JOINT] in section and f"{at:.3f}" in section
