"""Bag read throughput: ``read_joint_states`` vs plain ``rosbags`` deserialisation, same run.

Writes a synthetic 7-joint JointState bag per storage (MCAP, sqlite3), then times
(a) iterating it with ``rosbags`` ``Reader`` + ``typestore.deserialize_cdr`` and stacking the
arrays (the baseline any offline tool would write) and (b) ``read_joint_states`` (validated,
name-ordered arrays). Then the recorder's chunk close (``BagWriter.close_chunk``: close the
chunk's storage file, move it into the bag, rewrite ``metadata.yaml`` listing every chunk) for
the first and the last 10 of ``--chunks`` one-message chunks (600 = a 10-min recording in the
recorder's 1-s chunks, fsync off): its cost must not grow with the recording; baseline = the
first 10. Run: ``python -m bench.bench_bag [--messages N] [--chunks N] [--json PATH]``.
JSON keys: ``bag_read.<storage>.{messages, rosbags_msgs_per_s, read_joint_states_msgs_per_s,
speedup}``, ``chunk_close.{chunks, first_ms, last_ms, last_over_first}``.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader

from sysid_ros._src import progress
from sysid_ros._src.bagio import BagWriter, default_typestore, read_joint_states

NAMES = [f"joint_{i}" for i in range(1, 8)]


def make_bag(path: Path, n: int, storage: str) -> None:
    T = default_typestore().types
    rng = np.random.default_rng(0)
    vals = rng.normal(size=(n, 3, 7))
    with BagWriter(path, storage=storage, chunk_messages=20_000, chunk_seconds=None, fsync=False) as w:
        for k in range(n):
            t = 10**18 + k * 1_000_000
            stamp = T["builtin_interfaces/msg/Time"](sec=t // 10**9, nanosec=t % 10**9)
            w.write("/joint_states", T["sensor_msgs/msg/JointState"](
                header=T["std_msgs/msg/Header"](stamp=stamp, frame_id="base"), name=NAMES,
                position=vals[k, 0], velocity=vals[k, 1], effort=vals[k, 2]), t)


def read_plain(path: Path) -> np.ndarray:
    ts = default_typestore()
    rows = []
    with Reader(path) as r:
        conns = [c for c in r.connections if c.topic == "/joint_states"]
        for conn, _, data in r.messages(connections=conns):
            m = ts.deserialize_cdr(data, conn.msgtype)
            rows.append(np.concatenate((m.position, m.velocity, m.effort)))
    return np.asarray(rows)


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def chunk_close_ms(path: Path, chunks: int) -> tuple[float, float]:
    """Median ms of a one-message write that closes its chunk: first 10 and last 10."""
    times = []
    with BagWriter(path, chunk_messages=1, chunk_seconds=None, fsync=False) as w:
        for k in range(chunks):
            t0 = time.perf_counter()
            w.write_raw("/x", "std_msgs/msg/Float64", b"\x00\x01\x00\x00" + bytes(8), k * 1000)
            times.append(time.perf_counter() - t0)
    return float(np.median(times[:10])) * 1e3, float(np.median(times[-10:])) * 1e3


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=50_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chunks", type=int, default=600)
    p.add_argument("--json", type=Path, help="write figures to this JSON file")
    a = p.parse_args(argv)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for storage in progress.track(("mcap", "sqlite3"), "storages"):
            bag = Path(tmp) / storage
            make_bag(bag, a.messages, storage)
            plain = read_plain(bag)  # also checks both paths agree
            s = read_joint_states(bag, joint_names=NAMES)
            assert np.array_equal(plain[:, :7], s.position) and np.array_equal(plain[:, 14:], s.effort)
            t_plain = best_of(lambda: read_plain(bag), a.repeats)
            t_ours = best_of(lambda: read_joint_states(bag, joint_names=NAMES), a.repeats)
            results[storage] = {
                "messages": a.messages,
                "rosbags_msgs_per_s": a.messages / t_plain,
                "read_joint_states_msgs_per_s": a.messages / t_ours,
                "speedup": t_plain / t_ours,
            }
        first, last = chunk_close_ms(Path(tmp) / "chunks", a.chunks)
    close = {"chunks": a.chunks, "first_ms": first, "last_ms": last, "last_over_first": last / first}
    print(f"{'storage':<8} {'messages':>9} {'rosbags msg/s':>14} {'read_joint_states msg/s':>24} {'speedup':>8}")
    for storage, r in results.items():
        print(f"{storage:<8} {r['messages']:>9d} {r['rosbags_msgs_per_s']:>14,.0f} "
              f"{r['read_joint_states_msgs_per_s']:>24,.0f} {r['speedup']:>7.1f}x")
    print(f"chunk close: first 10 {first:.2f} ms, last 10 of {a.chunks} {last:.2f} ms "
          f"({last / first:.2f}x the first)")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"bag_read": results, "chunk_close": close}, indent=2,
                                     sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
