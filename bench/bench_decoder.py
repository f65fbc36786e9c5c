"""Would a hand-written bag-side JointState decoder earn its place? Reading a 60-s 1-kHz Gen3
recording with ``read_joint_states`` (the ``rosbags`` typestore) and with the project's CDR codec
(``sysid_ros._src.cdr.JointStateDecoder``, the nodes' hand-written decoder) over the same messages,
and ``sysid-identify`` end to end, in the same run. The end-to-end ratio a faster reader could
reach is total / (total − the read time it saves); the decoder would have to reach 2× there.

Run: ``python -m bench.bench_decoder [--seconds S] [--rate HZ] [--repeats N] [--json PATH]``.
JSON keys: ``messages``, ``read.{rosbags_s, cdr_s, rosbags_over_cdr}``,
``identify.{total_s, best_case_ratio}``.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader

from bench.bench_bag import best_of
from sysid_ros._src import progress
from sysid_ros._src.bagio import read_joint_states
from sysid_ros._src.cdr import JointStateDecoder
from sysid_ros._src.identification.identify_cli import main as identify_main
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate, write_bag
from sysid_ros._src.model.robots import load_robot


def read_with_cdr(bag: Path, names: tuple[str, ...]) -> np.ndarray:
    """Every /joint_states message through the nodes' CDR decoder: (N, 3·nj) q, q̇, τ."""
    decoder = JointStateDecoder(names)
    rows = []
    with Reader(bag) as reader:
        conns = [c for c in reader.connections if c.topic == "/joint_states"]
        for _, _, data in reader.messages(connections=conns):
            s = decoder.decode(data)
            rows.append(np.concatenate((s.q, s.dq, s.tau)))
    return np.asarray(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--json", type=Path, help="write figures to this JSON file")
    a = p.parse_args(argv)
    gen3 = load_robot("gen3")
    rng = np.random.default_rng(0)
    figures: dict[str, dict[str, float]] = {}
    names = tuple(gen3.joint_names)
    with progress.stages(5, "bench_decoder") as enter, tempfile.TemporaryDirectory() as tmp:
        enter("simulating")
        run = simulate(gen3, rng, theta_e=gen3.theta_e() + random_payload_theta(rng),
                       duration=a.seconds, rate_hz=a.rate, noise_abs=0.1)
        enter("writing the bag")
        bag = write_bag(Path(tmp) / "run", run, names)
        out = Path(tmp) / "r.json"
        ours = read_joint_states(bag, joint_names=names)
        # both read the same numbers
        assert np.array_equal(read_with_cdr(bag, names)[:, 2 * gen3.nj:], ours.effort)
        enter("rosbags")
        t_ros = best_of(lambda: read_joint_states(bag, joint_names=names), a.repeats)
        enter("CDR codec")
        t_cdr = best_of(lambda: read_with_cdr(bag, names), a.repeats)
        enter("sysid-identify")
        t_id = best_of(lambda: identify_main(["--bag", str(bag), "--out", str(out),
                                              "--no-progress"]), a.repeats)
    saved = max(t_ros - t_cdr, 0.0)
    figures["read"] = {"rosbags_s": t_ros, "cdr_s": t_cdr, "rosbags_over_cdr": t_ros / t_cdr}
    figures["identify"] = {"total_s": t_id, "best_case_ratio": t_id / (t_id - saved)}
    n = int(run.t.size)
    print(f"reading a {a.seconds:.0f}-s {a.rate:.0f}-Hz Gen3 bag ({n} messages)")
    r, e = figures["read"], figures["identify"]
    print(f"{'reader':<28} {'seconds':>8} {'ratio':>8}")
    print(f"{'rosbags (read_joint_states)':<28} {r['rosbags_s']:>8.2f} {1.0:>7.2f}x")
    print(f"{'CDR codec (nodes)':<28} {r['cdr_s']:>8.2f} {r['rosbags_over_cdr']:>7.2f}x")
    print(f"sysid-identify end to end {e['total_s']:.2f} s; with the CDR codec at best "
          f"{e['best_case_ratio']:.2f}x faster (a decoder must reach 2x to be kept)")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"messages": n, **figures}, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
