"""Bad messages in a recording: skipped and counted by kind (offline default), or the first one
refused (strict). Checked against the messages written: what is kept is exactly the good ones,
in order, with their values."""
from __future__ import annotations

import json

import numpy as np
import pytest

from sysid_ros._src.bagio import BagWriter, SkipLog, default_typestore, read_joint_states
from sysid_ros._src.bagio.errors import (DuplicateStampError, MissingJointError, NonFiniteValueError,
                                    NonMonotonicStampError)
from sysid_ros._src.sample_screen import PERSISTENT as PERSISTENT_BACKWARD
from sysid_ros._src.identification.identify_cli import main as identify_main
from sysid_ros._src.model.robots import load_robot

NAMES = ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6", "joint_7"]


def _write(path, messages):
    store = default_typestore()
    js = store.types["sensor_msgs/msg/JointState"]
    header, time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    with BagWriter(path, storage="mcap", chunk_seconds=None) as w:
        for k, (ns, names, pos, vel, eff) in enumerate(messages):
            msg = js(header=header(stamp=time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                     name=list(names), position=np.asarray(pos, float),
                     velocity=np.asarray(vel, float), effort=np.asarray(eff, float))
            w.write("/joint_states", msg, 10**9 + k)       # receive order = list order
    return path


def _good(k: int):
    v = np.full(7, 0.01 * k)
    return (10**9 + k * 10**7, NAMES, v, v + 1.0, v + 2.0)


def _bad_messages():
    """(messages, indices of the good ones, expected kind per bad index)."""
    msgs = [_good(k) for k in range(20)]
    kinds = {}
    ns, names, p, v, e = msgs[5]
    e = e.copy()
    e[3] = np.nan
    msgs[5], kinds[5] = (ns, names, p, v, e), "non_finite"
    msgs[8], kinds[8] = (msgs[7][0],) + msgs[8][1:], "duplicate_stamp"
    msgs[11], kinds[11] = (msgs[9][0] - 5,) + msgs[11][1:], "backward_stamp"
    msgs[13], kinds[13] = (0,) + msgs[13][1:], "zero_stamp"
    msgs[16] = (msgs[16][0], NAMES[:6], msgs[16][2][:6], msgs[16][3][:6], msgs[16][4][:6])
    kinds[16] = "missing_joint"
    msgs[18], kinds[18] = (msgs[18][0] + 5 * 10**9,) + msgs[18][1:], "far_future_stamp"
    good = [k for k in range(20) if k not in kinds]
    return msgs, good, kinds


def test_bad_messages_are_skipped_counted_and_the_rest_kept(tmp_path):
    msgs, good, kinds = _bad_messages()
    bag = _write(tmp_path / "bag", msgs)
    log = SkipLog()
    s = read_joint_states(bag, "/joint_states", NAMES, skip=log)
    np.testing.assert_array_equal(s.stamps_ns, [msgs[k][0] for k in good])
    np.testing.assert_allclose(s.effort, np.array([msgs[k][4] for k in good]))
    np.testing.assert_allclose(s.position, np.array([msgs[k][2] for k in good]))
    assert dict(log.counts) == dict.fromkeys(kinds.values(), 1)
    assert [ex[0][0] for ex in (log.examples[k] for k in kinds.values())] == list(kinds)
    assert "effort of joint joint_4 is nan" in log.describe()
    assert json.loads(json.dumps(log.as_dict()))["total"] == len(kinds)


@pytest.mark.parametrize("bad, error", [(5, NonFiniteValueError), (8, DuplicateStampError),
                                        (16, MissingJointError)])
def test_strict_reading_refuses_the_first_bad_message(tmp_path, bad, error):
    msgs, _, _ = _bad_messages()
    first_bad = [_good(k) for k in range(20)]
    first_bad[bad] = msgs[bad]
    bag = _write(tmp_path / "bag", first_bad)
    with pytest.raises(error, match=f"message {bad}" if bad != 8 else "message"):
        read_joint_states(bag, "/joint_states", NAMES)


def test_a_persistent_jump_back_is_refused_even_when_skipping(tmp_path):
    msgs = [_good(k) for k in range(50, 60)] + [_good(k) for k in range(PERSISTENT_BACKWARD + 2)]
    bag = _write(tmp_path / "bag", msgs)
    with pytest.raises(NonMonotonicStampError, match="jumped back persistently"):
        read_joint_states(bag, "/joint_states", NAMES, skip=SkipLog())


def test_sysid_identify_skips_one_nan_and_reports_it(tmp_path, capsys):
    gen3 = load_robot("gen3")
    rng = np.random.default_rng(0)
    msgs = []
    for k in range(600):
        q = 0.2 * np.sin(0.01 * k + np.arange(7))
        msgs.append((10**9 + k * 10**7, list(gen3.joint_names), q, 0.002 * np.cos(
            0.01 * k + np.arange(7)), rng.normal(size=7)))
    ns, names, p, v, e = msgs[300]
    e = e.copy()
    e[3] = np.nan
    msgs[300] = (ns, names, p, v, e)
    bag = _write(tmp_path / "bag", msgs)
    out = tmp_path / "r.json"
    # random torques are no robot's: the box may be refused (3), but the run went on (not 2)
    assert identify_main(["--robot", "gen3", "--bag", str(bag), "--out", str(out),
                          "--no-progress"]) in (0, 3)
    doc = json.loads(out.read_text())
    assert doc["data"]["skipped"]["by_kind"] == {"non_finite": 1}
    assert doc["data"]["skipped"]["first"]["non_finite"][0]["message"] == 300
    assert "skipped 1 message(s): non_finite 1" in capsys.readouterr().err
    assert identify_main(["--robot", "gen3", "--bag", str(bag), "--out", str(out),
                          "--no-progress", "--strict"]) == 2


def test_a_jump_forward_moves_the_time_base_after_a_counted_run(tmp_path):
    """A logger paused 10 s: the first PERSISTENT - 1 messages after the pause are skipped as
    far_future_stamp (counted), from the PERSISTENT-th on the recording goes on."""
    msgs = [_good(k) for k in range(20)] + [
        (m[0] + 10 * 10**9,) + m[1:] for m in (_good(k) for k in range(20, 40))]
    log = SkipLog()
    s = read_joint_states(_write(tmp_path / "bag", msgs), "/joint_states", NAMES, skip=log)
    kept = list(range(20)) + list(range(20 + PERSISTENT_BACKWARD - 1, 40))
    np.testing.assert_array_equal(s.stamps_ns, [msgs[k][0] for k in kept])
    assert dict(log.counts) == {"far_future_stamp": PERSISTENT_BACKWARD - 1}


def test_a_changed_joint_set_is_refused_through_the_cli(tmp_path, capsys):
    """Joints missing in PERSISTENT messages in a row with the same names: the stream changed
    (another robot's, a cut recording), refused naming the message; isolated ones are skipped."""
    gen3 = load_robot("gen3")
    msgs = [_good(k) for k in range(40)]
    for k in range(20, 40):
        msgs[k] = (msgs[k][0], NAMES[:6], *(x[:6] for x in msgs[k][2:]))
    bag = _write(tmp_path / "bag", msgs)
    with pytest.raises(MissingJointError, match=f"message {20 + PERSISTENT_BACKWARD - 1}: the "
                       "joint set changed"):
        read_joint_states(bag, "/joint_states", NAMES, skip=SkipLog())
    assert identify_main(["--robot", "gen3", "--bag", str(bag), "--no-progress", "--out",
                          str(tmp_path / "r.json")]) == 2
    assert "joint set changed" in capsys.readouterr().err
    assert list(gen3.joint_names) == NAMES


def test_strict_refuses_a_far_future_stamp_naming_it(tmp_path, capsys):
    msgs = [_good(k) for k in range(20)]
    msgs[7] = (msgs[7][0] + 3 * 10**9,) + msgs[7][1:]
    bag = _write(tmp_path / "bag", msgs)
    assert identify_main(["--robot", "gen3", "--bag", str(bag), "--no-progress",
                          "--out", str(tmp_path / "r.json"), "--strict"]) == 2
    assert "message 7: far future stamp, 3.0" in capsys.readouterr().err


def test_imu_messages_go_through_the_same_policy(tmp_path):
    """The trunk IMU of a floating base offline: a NaN reading, a duplicate and a far-future
    stamp skipped and counted (as the identifier node does online), the rest kept in order;
    strict refuses the first."""
    from sysid_ros._src.bagio import read_imu

    from .helpers import imu

    good = [(10**9 + k * 10**7, [0, 0, 0, 1, 0.1 * k, 0, 0, 0, 0, 9.81]) for k in range(20)]
    msgs = list(good)
    msgs.insert(5, (good[4][0], good[4][1]))                           # duplicate
    msgs.insert(9, (good[8][0] + 5 * 10**9, good[8][1]))              # far future
    msgs.insert(13, (good[12][0] + 10**6, [0, 0, 0, 1, np.nan, 0, 0, 0, 0, 9.81]))
    with BagWriter(tmp_path / "bag", storage="mcap", chunk_seconds=None) as w:
        for k, (ns, vals) in enumerate(msgs):
            w.write("/imu", imu(ns, vals), 10**9 + k)
    log = SkipLog()
    series = read_imu(tmp_path / "bag", "/imu", skip=log)
    np.testing.assert_array_equal(series.stamps_ns, [ns for ns, _ in good])
    np.testing.assert_allclose(series.angular_velocity[:, 0], [v[4] for _, v in good])
    assert dict(log.counts) == {"duplicate_stamp": 1, "far_future_stamp": 1, "non_finite": 1}
    assert log.examples["non_finite"][0][2] == "angular_velocity of axis x is nan"
    with pytest.raises(DuplicateStampError, match="message 5"):
        read_imu(tmp_path / "bag", "/imu", skip=SkipLog(refuse=True))


@pytest.mark.parametrize("ahead_s", [0.15, 0.5, 0.99])
def test_one_stamp_ahead_by_less_than_the_far_future_threshold_is_taken_back(tmp_path,
                                                                          ahead_s):
    """One message stamped ahead of the stream by less than FAR_FUTURE_S: accepted at first,
    the messages after it are behind it; when PERSISTENT of them follow on from the stamp
    before it, it is taken back (counted as far_future_stamp), the 9 skipped meanwhile are
    counted as backward_stamp, and the recording goes on — not refused as a jump back."""
    msgs = [_good(k) for k in range(40)]
    msgs[15] = (msgs[15][0] + int(ahead_s * 1e9),) + msgs[15][1:]
    log = SkipLog()
    s = read_joint_states(_write(tmp_path / "bag", msgs), "/joint_states", NAMES, skip=log)
    kept = [k for k in range(40) if not 15 <= k < 15 + PERSISTENT_BACKWARD]
    np.testing.assert_array_equal(s.stamps_ns, [msgs[k][0] for k in kept])
    assert dict(log.counts) == {"far_future_stamp": 1,
                                "backward_stamp": PERSISTENT_BACKWARD - 1}
    assert log.examples["far_future_stamp"][0][0] == 15
