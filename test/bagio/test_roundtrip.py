"""Bag round trips: what BagWriter writes, rosbags and read_joint_states read back exactly."""
from __future__ import annotations

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader

from sysid_ros._src.bagio import (
    BagWriteError,
    BagWriter,
    iter_joint_states,
    list_topics,
    read_imu,
    read_joint_states,
)

from .helpers import NAMES, TS, imu, sample_arrays, write_joint_states


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_roundtrip_arrays_equal(tmp_path, storage):
    stamps, q, dq, tau = sample_arrays(500)
    bag = write_joint_states(tmp_path / "bag", stamps, q, dq, tau, storage=storage,
                             chunk_messages=120, chunk_seconds=None)
    # 500 messages in chunks of 120 → 5 split files, one metadata.yaml listing them all.
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert len(meta["relative_file_paths"]) == 5
    # the per-chunk lists (appended from fragments rendered once per chunk) parse as rosbag2's
    assert [f["path"] for f in meta["files"]] == meta["relative_file_paths"]
    assert [f["message_count"] for f in meta["files"]] == [120, 120, 120, 120, 20]
    assert all(set(f) >= {"starting_time", "duration"} for f in meta["files"])
    assert meta["message_count"] == 500 and meta["ros_distro"] == "jazzy"
    with Reader(bag) as r:  # plain rosbags opens the split bag
        assert r.message_count == 500
        assert sum(1 for _ in r.messages()) == 500
    series = read_joint_states(bag, joint_names=NAMES)
    assert series.names == tuple(NAMES)
    np.testing.assert_array_equal(series.stamps_ns, stamps)
    np.testing.assert_allclose(series.t, stamps * 1e-9, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(series.position, q)
    np.testing.assert_array_equal(series.velocity, dq)
    np.testing.assert_array_equal(series.effort, tau)
    assert list_topics(bag) == {"/joint_states": ("sensor_msgs/msg/JointState", 500)}


def test_reordered_names_and_subset(tmp_path):
    stamps, q, dq, tau = sample_arrays(60)
    rng = np.random.default_rng(3)
    perms = [rng.permutation(7) for _ in range(60)]
    bag = write_joint_states(tmp_path / "bag", stamps, q, dq, tau, permute=lambda i: perms[i])
    series = read_joint_states(bag, joint_names=NAMES)
    np.testing.assert_array_equal(series.position, q)
    np.testing.assert_array_equal(series.effort, tau)
    sub = read_joint_states(bag, "joint_states", joint_names=["joint_5", "joint_2"])
    np.testing.assert_array_equal(sub.velocity, dq[:, [4, 1]])


def test_chunked_iteration_and_progress(tmp_path):
    stamps, q, dq, tau = sample_arrays(250)
    bag = write_joint_states(tmp_path / "bag", stamps, q, dq, tau)
    calls = []
    parts = list(iter_joint_states(bag, chunk_size=100, progress=lambda d, t: calls.append((d, t))))
    assert [len(p) for p in parts] == [100, 100, 50]
    assert calls[-1] == (250, 250)
    np.testing.assert_array_equal(np.vstack([p.position for p in parts]), q)
    whole = read_joint_states(bag, chunk_size=100)
    np.testing.assert_array_equal(whole.effort, tau)


def test_chunk_closes_on_age(tmp_path):
    now = [0.0]
    stamps, q, dq, tau = sample_arrays(10)
    from .helpers import joint_state
    with BagWriter(tmp_path / "bag", chunk_seconds=1.0, clock=lambda: now[0]) as w:
        for i in range(10):
            w.write("/joint_states", joint_state(int(stamps[i]), NAMES, q[i], dq[i], tau[i]),
                    int(stamps[i]))
            now[0] += 0.45
        # A chunk closes on the first write at age >= 1 s: after messages 3 and 7.
        assert w.chunks_closed == 2
        assert not w.flush_if_due()  # the third chunk (messages 8, 9) is younger than 1 s
        now[0] += 5
        assert w.flush_if_due()  # an idle writer's timer closes it
        assert w.chunks_closed == 3
    assert read_joint_states(tmp_path / "bag").position.shape == (10, 7)


def test_raw_write_and_imu(tmp_path):
    rows = np.arange(50 * 10, dtype=float).reshape(50, 10) / 7.0
    with BagWriter(tmp_path / "bag", storage="sqlite3") as w:
        for i in range(50):
            data = TS.serialize_cdr(imu(10**9 + i * 5_000_000, rows[i]), "sensor_msgs/msg/Imu")
            w.write_raw("/imu", "sensor_msgs/msg/Imu", bytes(data), 10**9 + i)
    s = read_imu(tmp_path / "bag")
    np.testing.assert_array_equal(s.orientation, rows[:, 0:4])
    np.testing.assert_array_equal(s.angular_velocity, rows[:, 4:7])
    np.testing.assert_array_equal(s.linear_acceleration, rows[:, 7:10])


def test_writer_refuses_existing_and_unknown_type(tmp_path):
    (tmp_path / "bag").mkdir()
    with pytest.raises(BagWriteError, match="exists"):
        BagWriter(tmp_path / "bag").open()
    with BagWriter(tmp_path / "b2") as w, pytest.raises(BagWriteError, match="unknown"):
        w.write_raw("/x", "my_msgs/msg/Nope", b"\x00\x01\x00\x00", 1)


def test_empty_writer_produces_readable_bag(tmp_path):
    with BagWriter(tmp_path / "bag") as w:
        w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    assert list_topics(tmp_path / "bag") == {"/joint_states": ("sensor_msgs/msg/JointState", 0)}


def test_same_length_different_split_not_confused(tmp_path):
    # velocity 7 / effort 0 then velocity 0 / effort 7: same message length, different layout.
    from .helpers import joint_state
    stamps, q, dq, tau = sample_arrays(2)
    with BagWriter(tmp_path / "b") as w:
        w.write("/joint_states", joint_state(int(stamps[0]), NAMES, q[0], dq[0], []), 1)
        w.write("/joint_states", joint_state(int(stamps[1]), NAMES, q[1], [], tau[1]), 2)
    from sysid_ros._src.bagio import ArrayLengthError
    with pytest.raises(ArrayLengthError, match="message 1: velocity has 0 values"):
        read_joint_states(tmp_path / "b", require=())


def test_iter_messages_reads_one_topic_of_any_type(tmp_path):
    from sysid_ros._src.bagio import TopicNotFoundError, TopicTypeError, iter_messages

    stamps, q, dq, tau = sample_arrays(50)
    bag = write_joint_states(tmp_path / "bag", stamps, q, dq, tau)
    got = list(iter_messages(bag, "joint_states", "sensor_msgs/msg/JointState"))
    assert [t for t, _ in got] == sorted(t for t, _ in got) and len(got) == 50
    np.testing.assert_array_equal([m.position for _, m in got], q)
    with pytest.raises(TopicNotFoundError, match="/imu"):
        list(iter_messages(bag, "/imu", "sensor_msgs/msg/Imu"))
    with pytest.raises(TopicTypeError):
        list(iter_messages(bag, "/joint_states", "sensor_msgs/msg/Imu"))
