"""Does the bag-side JointState decoder earn its place? ``sysid-identify`` end to end on a 60-s
1-kHz Gen3 recording, with the project's CDR layout walk (``bagio.reader``: offsets reused
from the previous message) and with every message deserialised by ``rosbags`` alone (the
decoder's own fallback path), in the same run; also the read alone.

Run: ``python -m bench.bench_decoder [--seconds S] [--rate HZ] [--repeats N] [--json PATH]``.
JSON keys: ``{read,identify}.{decoder_s, rosbags_s, rosbags_over_decoder}``, ``messages``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from sysid_ros.bagio import read_joint_states
from sysid_ros.bagio import reader as bag_reader
from sysid_ros.identification.cli import main as identify_main
from sysid_ros.identification.synthetic import random_payload_theta, simulate, write_bag
from sysid_ros.model.robots import load_robot


@contextlib.contextmanager
def rosbags_only() -> Iterator[None]:
    """Every JointState through ``rosbags``' deserialiser (the decoder's fallback path)."""
    cls = bag_reader._JointStateDecoder
    fast = cls.decode

    def slow(self, index: int, data: bytes) -> tuple[int, list[np.ndarray]]:
        stamp, names, values = self._decode_slow(index, data)
        if names != self._last_names:
            self._mapping(names, index)
        return stamp, self._reorder(index, values)

    cls.decode = slow  # type: ignore[method-assign]
    try:
        yield
    finally:
        cls.decode = fast  # type: ignore[method-assign]


def best_of(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--json", type=Path, help="write figures to this JSON file")
    a = p.parse_args(argv)
    gen3 = load_robot("gen3")
    rng = np.random.default_rng(0)
    run = simulate(gen3, rng, theta_e=gen3.theta_e() + random_payload_theta(rng),
                   duration=a.seconds, rate_hz=a.rate, noise_abs=0.1)
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        bag = write_bag(Path(tmp) / "run", run, gen3.joint_names)
        out = Path(tmp) / "r.json"
        argv_id = ["--bag", str(bag), "--out", str(out), "--no-progress"]
        results = {}
        for label, ctx in (("decoder", contextlib.nullcontext), ("rosbags", rosbags_only)):
            with ctx():
                ref = read_joint_states(bag, joint_names=gen3.joint_names)
                t_read = best_of(lambda: read_joint_states(bag, joint_names=gen3.joint_names),
                                 a.repeats)
                t_id = best_of(lambda: identify_main(argv_id), a.repeats)
            results[label] = (t_read, t_id, ref.effort, json.loads(out.read_text())["upper"])
        # both paths read the same numbers and give the same box
        assert np.array_equal(results["decoder"][2], results["rosbags"][2])
        assert results["decoder"][3] == results["rosbags"][3]
        for k, name in ((0, "read"), (1, "identify")):
            dec, ros = results["decoder"][k], results["rosbags"][k]
            figures[name] = {"decoder_s": dec, "rosbags_s": ros, "rosbags_over_decoder": ros / dec}
    n = int(run.t.size)
    print(f"sysid-identify on a {a.seconds:.0f}-s {a.rate:.0f}-Hz Gen3 bag ({n} messages)")
    print(f"{'stage':<10} {'decoder (s)':>12} {'rosbags (s)':>12} {'rosbags / decoder':>18}")
    for name, f in figures.items():
        print(f"{name:<10} {f['decoder_s']:>12.2f} {f['rosbags_s']:>12.2f} "
              f"{f['rosbags_over_decoder']:>17.2f}x")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"messages": n, **figures}, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
