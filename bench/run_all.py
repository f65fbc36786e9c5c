"""Run every benchmark in turn, each writing its figures to ``out/bench/<name>.json``.

Usage: python -m bench.run_all [--only NAME ...] [--out DIR]
Each benchmark prints its own table; this runner adds nothing but the sequencing, so that
``make bench`` is one command. The paper reproduction (bench/paper_tables.py) is separate: it
takes several minutes.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from sysid_ros._src import progress

BENCHMARKS = ("bench_regressors", "bench_identify", "bench_calibration", "bench_controller",
              "bench_eigen_bound", "bench_planner", "bench_sim", "bench_bag", "bench_decoder",
              "bench_terms", "bench_batch", "bench_unitree", "soundness_campaign")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=BENCHMARKS, default=list(BENCHMARKS))
    ap.add_argument("--out", type=Path, default=Path("out/bench"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    bar = progress.bar(len(args.only), "benchmarks", unit="bench")
    for name in args.only:
        bar.set_postfix_str(name)
        print(f"\n=== {name} ===", flush=True)
        t0 = time.monotonic()
        try:
            importlib.import_module(f"bench.{name}").main(["--json", str(args.out / f"{name}.json")])
        except SystemExit as exc:
            if exc.code not in (0, None):
                failed.append(name)
        except Exception as exc:     # report and go on: one broken benchmark must not hide others
            print(f"{name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed.append(name)
        print(f"({name}: {time.monotonic() - t0:.0f} s)", flush=True)
        bar.update(1)
    bar.close()
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
