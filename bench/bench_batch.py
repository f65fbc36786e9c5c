"""Batch identification benchmark: one after another, local worker processes, a Ray cluster.

    python -m bench.bench_batch [--recordings 16] [--seconds 6] [--rate 1000] [--jobs 2]
                                [--rounds 5] [--no-single] [--json PATH]

Writes ``--recordings`` simulated hardware-like Gen3 bags of ``--seconds`` each
(:mod:`sysid_ros._src.simulation.sample_bags`: random dumbbells, drops, jitter, a 0.3 N·m torque
error) and identifies them with ``sysid-identify`` as a user would, timing each command's wall
clock:

- ``serial``: ``--out-dir DIR --jobs 1`` (one after another, in one process) — the baseline;
- ``single commands``: one ``sysid-identify --bag B --out F`` per recording (a shell loop);
- ``jobs``: ``--out-dir DIR --jobs N`` (N local worker processes);
- ``ray (running head)``: ``--ray-address HOST:PORT`` on a Ray head with N CPUs that this
  benchmark starts on 127.0.0.1 before timing and stops afterwards (a cluster that is already
  up, as on a lab's machines);
- ``ray (local)``: ``--ray-address local`` (the command starts and stops its own head: the
  start-up is in the time).

The machine may be shared with other work, so the figures are paired: every round runs
serial, ``--jobs N`` and the running head once each, back to back, in an order that rotates
from round to round, and each round gives its own ratios (serial / jobs, and Ray's time over
jobs). The ratios' median over ``--rounds`` rounds is the figure, their minimum and maximum its
spread; load from other work mostly falls on all three runs of a round alike. The load average
at the start and the end is printed with the figures, and each run's CPU seconds (the command
and its worker processes; not Ray's workers, which are the head's) with the cores it got on
average: on a machine shared with other work that, not the batch, bounds the speed-up.
Every mode's results must equal the serial ones except their timing fields (checked; the
benchmark fails otherwise).
Targets: serial / jobs ≥ 1.7 with N = 2 on a 2-core machine, and the Ray overhead over
``--jobs N`` (running head) ≤ 20 % of the ``--jobs N`` time.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from sysid_ros._src import progress
from sysid_ros._src.batch.executor import local_ray_head
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation.sample_bags import SAMPLE_TORQUE_NOISE, payload_bags

CLI = [sys.executable, "-m", "sysid_ros._src.identification.identify_cli"]
NOISE = ["--torque-noise-abs", str(SAMPLE_TORQUE_NOISE), "--no-progress"]


def _cpu() -> float:
    """CPU seconds of the finished child processes (a command and the workers it reaped)."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one command (CPU: without Ray's workers, not its children)."""
    clock, cpu = time.perf_counter(), _cpu()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    seconds = time.perf_counter() - clock
    if proc.returncode not in (0, 6):
        raise SystemExit(f"bench_batch: {' '.join(argv[3:6])}... exited {proc.returncode}: "
                         f"{proc.stderr.strip().splitlines()[-1:]}")
    return seconds, _cpu() - cpu


def _results(folder: Path) -> dict[str, Any]:
    out = {}
    for f in sorted(folder.glob("rec*.json")):
        doc = json.loads(f.read_text())
        doc.pop("seconds")
        out[f.stem] = doc
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--recordings", type=int, default=16)
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--rate", type=float, default=1000.0, help="Hz of the recordings")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of serial, --jobs and Ray (running head), one ratio each")
    p.add_argument("--no-single", action="store_true",
                   help="skip the one-command-per-recording loop")
    p.add_argument("--json", type=Path)
    a = p.parse_args(argv)
    times: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        root = Path(tmp)
        clock = time.perf_counter()
        bags = payload_bags(root / "bags", load_robot("gen3"), a.recordings, a.seconds,
                            rate_hz=a.rate)
        print(f"{a.recordings} recordings of {a.seconds:g} s at {a.rate:g} Hz written in "
              f"{time.perf_counter() - clock:.1f} s", flush=True)
        pattern = str(root / "bags" / "rec*")
        outs: dict[str, Path] = {}

        def batch(name: str, *extra: str) -> None:
            outs[name] = root / name.replace(" ", "_").replace("(", "").replace(")", "")
            shutil.rmtree(outs[name], ignore_errors=True)
            seconds, cpu = _timed([*CLI, "--bag", pattern, "--out-dir", str(outs[name]),
                                   *extra, *NOISE])
            times.setdefault(name, []).append(seconds)
            cpus.setdefault(name, []).append(cpu)
            print(f"  {name:<22} {seconds:7.2f} s wall, {cpu:6.2f} s CPU"
                  + ("" if name.startswith("ray") else f" ({cpu / seconds:.2f} cores)"),
                  flush=True)

        if not a.no_single:
            single = root / "single"
            single.mkdir()
            clock = time.perf_counter()
            for b in progress.track(bags, "single commands"):
                _timed([*CLI, "--bag", str(b.path), "--out", str(single / f"{b.path.name}.json"),
                        *NOISE])
            times["single commands"] = [time.perf_counter() - clock]
            outs["single commands"] = single
            print(f"  {'single commands':<22} {times['single commands'][0]:7.2f} s", flush=True)
        paired = ("serial", "jobs", "ray (running head)")
        runs: dict[str, tuple[str, ...]] = {"serial": ("--jobs", "1"),
                                            "jobs": ("--jobs", str(a.jobs))}
        with local_ray_head(a.jobs) as address:
            runs["ray (running head)"] = ("--ray-address", address, "--jobs", str(a.jobs))
            for r in progress.track(range(a.rounds), "rounds"):
                print(f"round {r + 1}/{a.rounds} (load {os.getloadavg()[0]:.1f})", flush=True)
                for name in paired[r % 3:] + paired[:r % 3]:
                    batch(name, *runs[name])
        batch("ray (local)", "--ray-address", "local", "--jobs", str(a.jobs))
        load.append(os.getloadavg()[0])
        reference = _results(outs["serial"])
        same = {name: _results(folder) == reference for name, folder in outs.items()}
        contained = sum(
            all(lo <= t <= hi for lo, t, hi in zip(reference[b.path.name]["lower"], b.theta_e,
                                                   reference[b.path.name]["upper"]))
            for b in bags if reference[b.path.name]["status"] == "ok")
    best = {name: min(v) for name, v in times.items()}
    speedups = [s / j for s, j in zip(times["serial"], times["jobs"])]
    overheads = [(r - j) / j for r, j in zip(times["ray (running head)"], times["jobs"])]
    speedup, overhead = median(speedups), median(overheads)
    print(f"\nmedian of {a.rounds} paired rounds [min, max] (load average {load[0]:.1f} at the "
          f"start, {load[1]:.1f} at the end; 2 cores are fully ours only at load <= 0.5):")
    print(f"speed-up serial / --jobs {a.jobs}: {speedup:.2f}x [{min(speedups):.2f}, "
          f"{max(speedups):.2f}] (target >= 1.7)")
    print(f"Ray (running head) overhead over --jobs {a.jobs}: {100 * overhead:+.0f} % "
          f"[{100 * min(overheads):+.0f}, {100 * max(overheads):+.0f}] (target <= 20 %)")
    print("median wall: " + ", ".join(f"{name} {median(v):.2f} s" for name, v in times.items()))
    if "single commands" in times:
        print(f"single commands / --jobs {a.jobs} (median): "
              f"{times['single commands'][0] / median(times['jobs']):.2f}x")
    print(f"Ray with its own head start (--ray-address local): {best['ray (local)']:.1f} s, "
          f"{100 * (best['ray (local)'] / median(times['jobs']) - 1):+.0f} % over the median "
          f"--jobs {a.jobs}")
    print(f"results identical to serial (timing fields aside): {same}")
    print(f"boxes holding the true payload: {contained} of {len(bags)}")
    report = {"recordings": a.recordings, "seconds": a.seconds, "rate_hz": a.rate,
              "jobs": a.jobs, "rounds": a.rounds, "wall_s": times, "best_s": best,
              "cpu_s": cpus, "load_average": load,
              "speedup_serial_over_jobs": speedup, "speedups_per_round": speedups,
              "ray_overhead_over_jobs": overhead, "ray_overheads_per_round": overheads,
              "identical": same, "contained": contained}
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
