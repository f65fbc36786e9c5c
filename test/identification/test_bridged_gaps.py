"""Windows across a few dropped samples (``torque_rate_abs``, ``bridge_factor``).

The allowance L·(h²/4 + Δ·h) per bridged step (a worst case of the stated slew and hold,
hundreds of times what a smooth torque needs) is checked against an independent reference: the
same hardware-like MuJoCo run published at 2 kHz, whose dense trapezoid stands for ∫τ, against a
500-Hz stream with runs of dropped samples. Then the issue's case end to end: 10 % i.i.d. drops
at 500 Hz, two 10-s calibration recordings: the calibration succeeds, its friction boxes and the
payload box on another recording hold the truth. Without a stated rate the same data split at
every double drop; with a rate the data contradict, the bridged steps split the run instead.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.errors import CalibrationInputError
from sysid_ros._src.calibration.calibrate_cli import main as calibrate_main
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.identification import MomentumWindows, identify, load_identification_config
from sysid_ros._src.identification.identify_cli import main as identify_main
from sysid_ros._src.identification import OnlineIdentifier
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros import apply_calibration
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import write_joint_states_bag

DENSE_HZ, EVERY = 2000.0, 4            # published at 2 kHz, kept every 4th: 500 Hz


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="module")
def dense(gen3):
    case = draw_case(gen3, 3, cal_seconds=(4.0,), payload_seconds=0.0, drop_prob=0.0,
                     rate_hz=DENSE_HZ)
    return case.cal[0]


def _gapped(rec, rng: np.random.Generator) -> np.ndarray:
    """Indices of the 500-Hz stream with runs of 2-4 dropped samples every 50 samples (each
    one a bridged step: a single drop is within max_sample_gap)."""
    keep = np.arange(0, rec.t.size, EVERY)
    mask = np.ones(keep.size, bool)
    for start in range(20, keep.size - 10, 50):
        mask[start:start + int(rng.integers(2, 5))] = False
    return keep[mask]


def test_bridged_rows_bound_the_dense_integral(gen3, dense):
    cfg = load_identification_config(gen3, friction="config").with_overrides(
        torque_lag_s=0.0, window_s=0.2, stride_s=0.05)
    idx = _gapped(dense, np.random.default_rng(0))
    full = np.arange(0, dense.t.size, EVERY)      # the 500-Hz stream without drops
    win = MomentumWindows(gen3, cfg, rate_hz=DENSE_HZ / EVERY)
    tau = dense.tau_motor                        # noise-free: the allowances alone must cover it
    rows = win.extend(dense.t[idx], dense.q[idx], dense.dq[idx], tau[idx])
    assert win.n_bridged > 0 and win.n_bridge_refused == 0 and len(rows) > 0
    bridged = rows.gap_rad > 0
    assert bridged.mean() > 0.5                 # most windows span a bridged gap
    gap_err, dense_err = np.empty(len(rows)), np.empty(len(rows))
    for k in range(len(rows)):
        j = rows.joint[k]
        at = (dense.t >= rows.t_start[k]) & (dense.t <= rows.t_end[k])
        at_full = full[at[full]]
        # what the dropped samples cost: against the same stream without drops
        gap_err[k] = abs(rows.tau[k] - np.trapezoid(tau[at_full, j], dense.t[at_full]))
        # and against the 2-kHz integral, with the quadrature allowance the rows carry
        dense_err[k] = abs(rows.tau[k] - np.trapezoid(tau[at, j], dense.t[at]))
    assert np.all(gap_err <= rows.gap_rad + 1e-12), np.max(gap_err - rows.gap_rad)
    assert np.all(dense_err <= rows.gap_rad + cfg.quadrature_safety * rows.quad_tau)
    # not vacuous: the drops do move the integral
    assert gap_err[bridged].max() > 1e-5
    # the allowance is sound, but a worst case: half the slew times the step length, not a
    # smoothness the data might not have


def test_long_gaps_still_split_and_a_contradicted_rate_refuses_the_bridge(gen3, dense):
    cfg = load_identification_config(gen3, friction="config").with_overrides(torque_lag_s=0.0)
    keep = np.arange(0, dense.t.size, EVERY)
    t = dense.t[keep]
    cut = (t > 1.0) & (t < 1.05)                 # 50 ms: far beyond bridge_factor x 2 ms
    idx = keep[~cut]
    win = MomentumWindows(gen3, cfg, rate_hz=DENSE_HZ / EVERY)
    rows = win.extend(dense.t[idx], dense.q[idx], dense.dq[idx], dense.tau_meas[idx])
    assert win.n_gaps == 1
    assert not np.any((rows.t_start < 1.0) & (rows.t_end > 1.05))
    # a rate bound the data contradict: the bridged steps split the run, counted
    low = cfg.with_overrides(torque_rate_abs=1e-3)
    idx = _gapped(dense, np.random.default_rng(1))
    win = MomentumWindows(gen3, low, rate_hz=DENSE_HZ / EVERY)
    win.extend(dense.t[idx], dense.q[idx], dense.dq[idx], dense.tau_meas[idx])
    assert win.n_bridge_refused > 0 and win.n_gaps >= win.n_bridge_refused


@pytest.fixture(scope="module")
def lossy(gen3):
    # velocities not lagged: only torque readings are bridged, so a lagged velocity read inside a
    # dropped step would split the windows at every drop (the lag: test_noise_speed.py)
    return draw_case(gen3, 0, cal_seconds=(10.0, 10.0), payload_seconds=6.0, drop_prob=0.1,
                     velocity_lag=0.0)


@pytest.fixture(scope="module")
def calibrated(gen3, lossy):
    return calibrate(gen3, lossy.recordings(), CalibrationOptions(link_boxes=False))


def test_ten_percent_drops_at_500_hz_calibrate_and_identify_soundly(gen3, lossy, calibrated):
    truth = lossy.truth.friction
    inside = (truth >= calibrated.friction_lower) & (truth <= calibrated.friction_upper)
    assert inside[:, 1:].all(), np.argwhere(~inside[:, 1:])
    robot = apply_calibration(gen3, calibration_document(calibrated))
    pay = lossy.payload
    out = identify(robot, load_identification_config(robot), pay.t, pay.q, pay.dq,
                   pay.tau_meas, "lp", point_estimate=False)
    assert out.status == "ok", out.reason
    assert out.contains(pay.truth.theta_e)
    assert any("bridged" in n for n in out.notes)


def test_the_node_runtime_bridges_the_same_gaps_online(gen3, lossy, calibrated):
    """Sample by sample, as the identifier node's callbacks deliver them: an ok box with the
    truth, and /diagnostics counts the bridged steps."""
    robot = apply_calibration(gen3, calibration_document(calibrated))
    cfg = load_identification_config(robot)
    rt = IdentifierRuntime(OnlineIdentifier(robot, cfg), cfg)
    pay = lossy.payload
    for k in range(pay.t.size):
        rt.joint_state(pay.t[k], pay.q[k], pay.dq[k], pay.tau_meas[k])
        if k % 500 == 499:
            rt.update()
    assert rt.update().status == "ok"
    box = rt.box()
    assert box is not None and box.contains(pay.truth.theta_e)
    values = rt.report().values
    assert int(values["bridged_steps"]) > 0 and values["bridges_refused"] == "0"


def test_without_a_stated_rate_the_same_drops_leave_too_little_data(gen3, lossy):
    facts = dict(gen3.config)
    facts["identification"] = dict(facts["identification"], torque_rate_abs=0.0)
    unstated = dataclasses.replace(gen3, config=facts)
    with pytest.raises(CalibrationInputError, match="insufficient data"):
        calibrate(unstated, lossy.recordings(), CalibrationOptions(link_boxes=False))


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_through_the_clis(gen3, lossy, tmp_path):
    """The same lossy bags through ``sysid-calibrate`` and ``sysid-identify``: both exit 0, the
    data line counts the bridged steps and the payload box holds the truth."""
    bags = [str(write_joint_states_bag(tmp_path / f"cal{k}", rec, gen3))
            for k, rec in enumerate(lossy.cal)]
    calib, summary = tmp_path / "calib.yaml", tmp_path / "calib.json"
    argv = ["--robot", "gen3", "--out", str(calib), "--json", str(summary), "--no-link-boxes"]
    assert calibrate_main(argv + [a for b in bags for a in ("--bag", b)]) == 0
    assert json.loads(summary.read_text())["excluded"]["bridged_gaps"] > 0
    pay = write_joint_states_bag(tmp_path / "pay", lossy.payload, gen3)
    out = tmp_path / "r.json"
    assert identify_main(["--bag", str(pay), "--out", str(out), "--calibration", str(calib),
                          "--no-progress"]) == 0
    doc = json.loads(out.read_text())
    assert doc["data"]["bridged_steps"] > 0
    lo, hi = np.array(doc["lower"]), np.array(doc["upper"])
    truth = lossy.payload.truth.theta_e
    assert np.all((lo <= truth) & (truth <= hi))
