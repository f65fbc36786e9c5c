"""Hypothesis fuzz of the bag readers (sysid_ros._src.bagio.reader): truncated or garbled storage
files and malformed CDR payloads raise a BagError subclass (one line) — never another
exception. A truncated file never yields altered rows; a garbled one yields at most validated
rows (finite, increasing stamps, right shape): a byte changed inside a message's doubles is
undetectable, because rosbags writes MCAP chunks without a CRC and sqlite3 stores no checksum
(``test_flipped_value_byte_is_detected`` records this limit as a strict xfail)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sysid_ros._src.bagio import BagError, BagWriter
from sysid_ros._src.bagio.reader import read_joint_states
from .helpers import NAMES, RECEIVE_T0, joint_state, sample_arrays, write_joint_states

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
N = 60


@pytest.fixture(scope="module")
def pristine():
    root = Path(tempfile.mkdtemp(prefix="fuzzbag_"))
    stamps, q, dq, tau = sample_arrays(N)
    bags = {s: write_joint_states(root / s, stamps, q, dq, tau, storage=s)
            for s in ("mcap", "sqlite3")}
    yield bags, (stamps, q, dq, tau)
    shutil.rmtree(root, ignore_errors=True)


def _read_or_error(bag: Path, truth, exact: bool = True) -> None:
    try:
        series = read_joint_states(bag)
    except BagError as err:
        assert "\n" not in str(err) and str(err)
        return
    stamps, q, dq, tau = truth
    assert np.all(np.diff(series.t) > 0) and series.position.shape[1] == len(NAMES)
    assert all(np.all(np.isfinite(a)) for a in (series.position, series.velocity, series.effort))
    if not exact:
        return
    # accepted: exactly the written rows (a prefix at most), never altered values
    n = len(series)
    assert 0 < n <= N
    np.testing.assert_array_equal(series.position, q[:n])
    np.testing.assert_array_equal(series.velocity, dq[:n])
    np.testing.assert_array_equal(series.effort, tau[:n])


def _copy(bag: Path) -> Path:
    dst = Path(tempfile.mkdtemp(prefix="fuzzcase_")) / bag.name
    shutil.copytree(bag, dst)
    return dst


@SETTINGS
@given(storage=st.sampled_from(["mcap", "sqlite3"]), cut=st.floats(0.0, 0.999))
def test_truncated_storage_file(pristine, storage, cut):
    bags, truth = pristine
    bag = _copy(bags[storage])
    f = next(p for p in bag.iterdir() if p.suffix in (".mcap", ".db3"))
    data = f.read_bytes()
    f.write_bytes(data[:int(cut * len(data))])
    _read_or_error(bag, truth)
    shutil.rmtree(bag.parent, ignore_errors=True)


@SETTINGS
@given(storage=st.sampled_from(["mcap", "sqlite3"]), where=st.floats(0.0, 0.999),
       garbage=st.binary(min_size=1, max_size=64))
def test_garbled_bytes(pristine, storage, where, garbage):
    bags, truth = pristine
    bag = _copy(bags[storage])
    f = next(p for p in bag.iterdir() if p.suffix in (".mcap", ".db3"))
    raw = bytearray(f.read_bytes())
    at = int(where * len(raw))
    raw[at:at + len(garbage)] = garbage
    f.write_bytes(bytes(raw))
    _read_or_error(bag, truth, exact=False)
    shutil.rmtree(bag.parent, ignore_errors=True)


@pytest.mark.xfail(strict=True, reason="no checksum over message bytes: rosbags writes MCAP "
                   "chunks with CRC 0 and sqlite3 keeps none, so a changed double reads back")
def test_flipped_value_byte_is_detected(pristine):
    bags, truth = pristine
    bag = _copy(bags["mcap"])
    f = next(p for p in bag.iterdir() if p.suffix == ".mcap")
    raw = bytearray(f.read_bytes())
    needle = np.float64(truth[1][N // 2, 3]).tobytes()      # one stored position value
    at = bytes(raw).find(needle)
    assert at > 0
    raw[at + 7] ^= 0x01                                       # its exponent's lowest bit
    f.write_bytes(bytes(raw))
    try:
        with pytest.raises(BagError):
            read_joint_states(bag)
    finally:
        shutil.rmtree(bag.parent, ignore_errors=True)


@SETTINGS
@given(payload=st.binary(max_size=200), index=st.integers(0, 3))
def test_malformed_cdr_payload(payload, index):
    """A message whose serialized bytes are not a JointState: refused, whatever the bytes."""
    root = Path(tempfile.mkdtemp(prefix="fuzzcdr_"))
    stamps, q, dq, tau = sample_arrays(4)
    from sysid_ros._src.bagio import default_typestore
    ts = default_typestore()
    with BagWriter(root / "b", storage="mcap") as w:
        w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        for i in range(4):
            if i == index:
                data = payload
            else:
                msg = joint_state(int(stamps[i]), NAMES, q[i], dq[i], tau[i])
                data = bytes(ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
            w.write_raw("/joint_states", "sensor_msgs/msg/JointState", data,
                        RECEIVE_T0 + 1_000_000 * i)
    try:
        with pytest.raises(BagError):
            read_joint_states(root / "b")
    finally:
        shutil.rmtree(root, ignore_errors=True)
