"""Torque transients the quadrature allowance absorbs are reported (count, joint, time, share
of the radius), offline in the identifier's result and JSON and in the calibration's summary
and report, online on the identifier node's /diagnostics; a clean recording reports none.

Data: a hardware-like MuJoCo Gen3 with known truth (drawn friction, offsets, torque lag, 500 Hz
with 1 % drops), calibrated on one recording, plus a dumbbell recording; the transient is a
+40 N·m one-sample spike in joint_4's torque.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.document import calibration_document, summary_json, \
    write_calibration
from sysid_ros._src.calibration.report import write_report
from sysid_ros._src.calibration.synthetic import as_recording, draw_case
from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config
from sysid_ros._src.identification.identify_cli import main as identify_main
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.identification.transients import TransientStream, find_transients
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import write_joint_states_bag

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
    write_calibration(calib, calibration_document(res))
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


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
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


def test_the_node_runtime_counts_it_on_diagnostics(setup):
    """Sample by sample, as the identifier node's callbacks deliver them: /diagnostics says
    how many transients, on which joint and when; the clean recording reports none."""
    _, case, _, robot = setup
    cfg = load_identification_config(robot)
    pay = case.payload
    tau, at = _spiked(pay.tau_meas, pay.t)
    for torques, expected in ((pay.tau_meas, "0"), (tau, None)):
        rt = IdentifierRuntime(OnlineIdentifier(robot, cfg), cfg)
        for k in range(pay.t.size):
            rt.joint_state(pay.t[k], pay.q[k], pay.dq[k], torques[k])
            if k % 400 == 399:
                rt.update()
        assert rt.update().status == "ok"
        figure = rt.report().values["transients"]
        if expected is not None:
            assert figure == expected
        else:
            name = robot.joint_names[SPIKE_JOINT]
            assert figure.startswith(f"1: {name} 1 ") and f"{at:.3f} s" in figure, figure


@pytest.mark.parametrize("chunk", [1, 7, 500])
def test_the_stream_judges_as_the_whole_recording_does(chunk):
    """Spikes in a smooth noisy signal: the online stream, fed in batches of any size, finds
    exactly what the offline test finds on the whole array, each once, and nothing else."""
    rng = np.random.default_rng(0)
    t = np.arange(3000) * 0.002
    tau = np.stack([5.0 * np.sin(t * (k + 1)) + rng.uniform(-0.1, 0.1, t.size)
                    for k in range(3)], axis=1)
    spikes = {(1, 1500): 40.0, (0, 2000): -20.0, (2, 4): 30.0}
    for (j, k), v in spikes.items():
        tau[k, j] += v
    names, args = ["a", "b", "c"], (np.full(3, 0.1), 0.0, np.full(3, 600.0), 0.005)
    offline = find_transients(t, tau, names, *args)
    assert sorted((tr.joint, tr.time) for tr in offline) == \
        sorted((names[j], t[k]) for j, k in spikes)
    stream = TransientStream(names, *args, dt=0.002)
    online = [tr for a in range(0, t.size, chunk) for tr in stream.push(t[a:a + chunk],
                                                                         tau[a:a + chunk])]
    assert [(tr.joint, tr.time) for tr in online] == [(tr.joint, tr.time) for tr in offline]
    np.testing.assert_allclose([tr.excess for tr in online], [tr.excess for tr in offline])
    assert stream.count == 3
