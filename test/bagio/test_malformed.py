"""Each kind of malformed bag raises its own BagError subclass with a one-line message."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.bagio import (
    ArrayLengthError,
    BagCorruptError,
    BagError,
    BagNotFoundError,
    BagWriter,
    DuplicateStampError,
    EmptyTopicError,
    MissingJointError,
    NonFiniteValueError,
    NonMonotonicStampError,
    TopicNotFoundError,
    TopicTypeError,
    read_imu,
    read_joint_states,
)

from .helpers import NAMES, joint_state, sample_arrays, write_joint_states


def _raises(exc, bag, match, **kw):
    with pytest.raises(exc, match=match) as info:
        read_joint_states(bag, **kw)
    assert isinstance(info.value, BagError)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.fixture(params=["mcap", "sqlite3"])
def storage(request):
    return request.param


def test_nan_names_message_and_joint(tmp_path, storage):
    stamps, q, dq, tau = sample_arrays(20)
    dq[13, 4] = np.nan
    bag = write_joint_states(tmp_path / "b", stamps, q, dq, tau, storage=storage)
    msg = _raises(NonFiniteValueError, bag, "message 13: velocity of joint joint_5 is nan")
    assert str(bag) in msg
    tau[2, 0] = np.inf
    bag = write_joint_states(tmp_path / "c", stamps, q, dq, tau, storage=storage)
    _raises(NonFiniteValueError, bag, "message 2: effort of joint joint_1 is inf")


def test_non_monotonic_and_duplicate_stamps(tmp_path, storage):
    stamps, q, dq, tau = sample_arrays(20)
    back = stamps.copy()
    back[7] = back[5]
    _raises(NonMonotonicStampError, write_joint_states(tmp_path / "b", back, q, dq, tau, storage=storage),
            "messages 6 and 7: header stamp goes back")
    dup = stamps.copy()
    dup[9] = dup[8]
    _raises(DuplicateStampError, write_joint_states(tmp_path / "c", dup, q, dq, tau, storage=storage),
            "messages 8 and 9 have the same header stamp")
    # Across iteration chunk boundaries too.
    _raises(DuplicateStampError, tmp_path / "c", "messages 8 and 9", chunk_size=9)


def test_missing_topic_lists_available(tmp_path, storage):
    stamps, q, dq, tau = sample_arrays(5)
    bag = write_joint_states(tmp_path / "b", stamps, q, dq, tau, storage=storage, topic="/arm/joint_states")
    _raises(TopicNotFoundError, bag, r"topic /joint_states not in bag .*available topics: "
            r"/arm/joint_states \[sensor_msgs/msg/JointState\]")
    with pytest.raises(TopicTypeError, match="expected sensor_msgs/msg/Imu"):
        read_imu(bag, "/arm/joint_states")


def test_missing_joint(tmp_path):
    stamps, q, dq, tau = sample_arrays(5)
    bag = write_joint_states(tmp_path / "b", stamps, q, dq, tau,
                             permute=lambda i: [0, 1, 2, 3, 4, 5] if i == 3 else None)
    _raises(MissingJointError, bag, r"message 3: joints \['joint_7'\] missing", joint_names=NAMES)
    _raises(MissingJointError, bag, r"joints \['elbow'\] missing", joint_names=["elbow"])


def test_empty_topic_and_missing_path(tmp_path, storage):
    with BagWriter(tmp_path / "b", storage=storage) as w:
        w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    _raises(EmptyTopicError, tmp_path / "b", "has no messages")
    with pytest.raises(BagNotFoundError, match="does not exist"):
        read_joint_states(tmp_path / "nope")
    (tmp_path / "plain_dir").mkdir()
    _raises(BagCorruptError, tmp_path / "plain_dir", "not a rosbag2 bag")


def test_wrong_array_lengths(tmp_path):
    stamps, q, dq, tau = sample_arrays(4)
    with BagWriter(tmp_path / "b") as w:
        for i, s in enumerate(stamps):
            eff = tau[i][:5] if i == 2 else tau[i]
            w.write("/joint_states", joint_state(int(s), NAMES, q[i], dq[i], eff), int(s))
    _raises(ArrayLengthError, tmp_path / "b", "message 2: effort has 5 values for 7 names")
    with BagWriter(tmp_path / "c") as w:
        for i, s in enumerate(stamps):
            w.write("/joint_states", joint_state(int(s), NAMES, q[i], dq[i], []), int(s))
    _raises(ArrayLengthError, tmp_path / "c", "message 0: effort is empty")
    ok = read_joint_states(tmp_path / "c", require=("position", "velocity"))
    assert ok.effort is None and ok.position.shape == (4, 7)


def test_corrupt_files(tmp_path, storage):
    stamps, q, dq, tau = sample_arrays(300)
    suffix = ".mcap" if storage == "mcap" else ".db3"
    # Truncated storage file.
    bag = write_joint_states(tmp_path / "t", stamps, q, dq, tau, storage=storage)
    f = bag / f"t_0{suffix}"
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    _raises(BagCorruptError, bag, "(unreadable|corrupt|cannot be decoded)")
    # Garbled bytes in the middle of the file.
    bag = write_joint_states(tmp_path / "g", stamps, q, dq, tau, storage=storage)
    f = bag / f"g_0{suffix}"
    raw = bytearray(f.read_bytes())
    rng = np.random.default_rng(1)
    lo = 200 if storage == "mcap" else 0
    raw[lo:] = rng.integers(0, 256, len(raw) - lo, dtype=np.uint8).tobytes()
    f.write_bytes(bytes(raw))
    _raises(BagCorruptError, bag, "(unreadable|corrupt|cannot be decoded)")
    # Garbled metadata.yaml.
    bag = write_joint_states(tmp_path / "m", stamps, q, dq, tau, storage=storage)
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: [unclosed\n")
    _raises(BagCorruptError, bag, "unreadable")
