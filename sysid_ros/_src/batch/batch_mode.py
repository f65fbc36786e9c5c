"""What the batch modes of the command-line tools share: their options, the recordings a list
of paths and globs names, one output name per item, and the batch's exit code.

Exit codes of a batch: 0 every item exited 0; 2 the batch itself is bad and nothing ran (no
recording matches, two items would write the same result, unwritable output folder, bad
``--jobs``, unreachable Ray cluster); 6 at least one item did not exit 0 — its row in the
summary gives its exit code and reason.
"""
from __future__ import annotations

import argparse
import copy
import glob
import io
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

from sysid_ros._src import progress
from sysid_ros._src.batch.executor import BatchError, Outcome, executor_fields, run_tasks
from sysid_ros._src.batch.summary import write_summary
from sysid_ros._src.cli_messages import fail, say

__all__ = ["BATCH_EXIT_CODES", "add_batch_arguments", "expand_paths", "item_names",
           "recording_bytes", "absolute_or_none", "batch_exit_code", "item_code", "item_ok",
           "run_captured", "last_message", "prepare_out_dir",
           "drive_batch", "with_absolute_paths"]

BATCH_EXIT_CODES = {"ok": 0, "bad_input": 2, "some_failed": 6}
_GLOB = set("*?[")
_BAG_SUFFIXES = (".mcap", ".db3")


def add_batch_arguments(p: argparse.ArgumentParser, item: str) -> None:
    """``--out-dir``, ``--jobs``, ``--ray-address`` (``item``: what one result is of)."""
    g = p.add_argument_group("batch mode")
    g.add_argument("--out-dir", metavar="DIR",
                   help=f"one result per {item} in DIR, and DIR/summary.{{md,csv,json}}")
    g.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="worker processes (default 1)")
    g.add_argument("--ray-address", metavar="ADDR",
                   help="on a Ray cluster: auto, local or HOST:PORT")


def expand_paths(patterns: Sequence[str], where: str = "--bag") -> list[str]:
    """Each pattern as given when it exists, else its glob matches (sorted); in order, without
    repeats. A pattern that names nothing raises BatchError naming it."""
    out: list[str] = []
    for pat in patterns:
        if Path(pat).exists():
            found = [pat]
        elif _GLOB & set(pat):
            found = sorted(glob.glob(pat))
            if not found:
                raise BatchError(f"{where} {pat}: the pattern matches no file or folder")
        else:
            raise BatchError(f"{where} {pat}: no such file or folder")
        out += [f for f in found if f not in out]
    return out


def item_names(paths: Sequence[str]) -> list[str]:
    """The result name of each recording: its file or folder name without .mcap/.db3. Two
    recordings with one name raise BatchError (their results would overwrite each other)."""
    names = []
    for p in paths:
        name = Path(p.rstrip("/")).name
        for suffix in _BAG_SUFFIXES:
            name = name.removesuffix(suffix)
        names.append(name)
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        clash = [p for p, n in zip(paths, names) if n == twice[0]]
        raise BatchError(f"recordings {', '.join(clash)} share the name {twice[0]!r}: their "
                         "results would overwrite each other in the output folder; rename one "
                         "or run them in separate batches")
    return names


def absolute_or_none(path: str | None) -> str | None:
    """``path`` made absolute when it names an existing file (workers may run elsewhere);
    anything else (a registry name, None) unchanged."""
    if path is None or not Path(path).exists():
        return path
    return str(Path(path).resolve())


def with_absolute_paths(args: argparse.Namespace, keys: Sequence[str]) -> argparse.Namespace:
    """A copy of ``args`` whose options ``keys`` that name files are absolute paths."""
    shared = copy.copy(args)
    for key in keys:
        setattr(shared, key, absolute_or_none(getattr(shared, key)))
    return shared


def recording_bytes(path: str) -> int:
    """The size of a recording (a file, or the files of a rosbag2 folder); 0 when unreadable
    (its item reports why)."""
    p = Path(path)
    try:
        if p.is_dir():
            return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        return p.stat().st_size
    except OSError:
        return 0


def batch_exit_code(codes: Sequence[int | None]) -> int:
    """0 when every item exited 0, else 6 (an item that crashed has code None)."""
    ok = all(c == 0 for c in codes)
    return BATCH_EXIT_CODES["ok" if ok else "some_failed"]


def item_code(out: Outcome[Any]) -> int | None:
    """An item's exit code (``out.value["code"]``); None when it crashed."""
    return None if out.value is None else out.value["code"]


def item_ok(out: Outcome[Any]) -> bool:
    """An item is ok when it exited 0: the rule of the progress bar, the summary and
    :func:`batch_exit_code` alike."""
    return item_code(out) == 0


def run_captured(run: Callable[[argparse.Namespace], int], args: argparse.Namespace
                 ) -> tuple[int, list[str]]:
    """``run(args)`` with its stderr lines captured (a worker's messages travel back with its
    result); returns the exit code and the lines."""
    buf = io.StringIO()
    with redirect_stderr(buf):
        code = run(args)
    return code, buf.getvalue().splitlines()


def last_message(lines: Sequence[str], prog: str) -> str:
    """The verdict: the last stderr line without the ``prog:`` prefix."""
    line = lines[-1] if lines else ""
    return line.removeprefix(f"{prog}: ")


def prepare_out_dir(prog: str, out_dir: str) -> Path | int:
    """``out_dir`` created; or the exit code 2 after naming why it cannot be."""
    try:
        path = Path(out_dir)
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return fail(prog, f"--out-dir {out_dir}: {err.strerror or err}")
    return path


def drive_batch(prog: str, what: str, args: argparse.Namespace, fn: Callable[[Any], Any],
                items: Sequence[Any], names: Sequence[str],
                files: Sequence[tuple[str, str]],
                row: Callable[[int, Outcome[Any]], dict[str, Any]],
                columns: Sequence[tuple[str, str]], meta: dict[str, Any],
                cost: Callable[[Any], float] | None = None,
                warm: Callable[[], None] | None = None) -> int:
    """Run ``fn`` over ``items`` on the executor ``args`` asks for; write each finished item's
    texts ``value[key]`` as ``<args.out_dir>/<name><suffix>`` for ``(suffix, key)`` in ``files``, one
    line on stderr per item, and the summary of the rows ``row(index, outcome)``; returns the
    batch's exit code (2 when ``args.out_dir`` cannot be made, before anything runs).
    ``cost`` and ``warm``: as :func:`sysid_ros._src.batch.executor.run_tasks` takes them."""
    out_dir = prepare_out_dir(prog, args.out_dir)
    if isinstance(out_dir, int):
        return out_dir
    clock = time.perf_counter()
    rows: list[dict[str, Any] | None] = [None] * len(items)

    def done(out: Outcome[Any]) -> None:
        name = names[out.index]
        for suffix, key in files:
            if out.value is not None and out.value.get(key) is not None:
                (out_dir / f"{name}{suffix}").write_text(out.value[key])
        rows[out.index] = r = row(out.index, out)
        progress.write(f"{prog}: {name}: {r['message']}")

    fields = executor_fields(args.jobs, args.ray_address)
    say(prog, f"batch: {len(items)} {what}(s) on {fields['executor']}")
    try:
        outcomes = run_tasks(fn, items, jobs=args.jobs, ray_address=args.ray_address,
                             desc=f"{what}s", show_progress=not args.no_progress, on_done=done,
                             cost=cost, warm=warm, is_ok=item_ok)
    except BatchError as err:
        return fail(prog, err)
    table = [r for r in rows if r is not None]
    code = batch_exit_code([item_code(o) for o in outcomes])
    ok = sum(r["exit_code"] == 0 for r in table)
    meta = {"command": prog, **meta, f"{what}s": len(items), "ok": ok,
            "not_ok": len(table) - ok, "exit_code": code, **fields,
            "wall_s": round(time.perf_counter() - clock, 3)}
    try:
        write_summary(out_dir, f"{prog} batch", columns, table, meta)
    except OSError as err:
        return fail(prog, f"cannot write the summary: {err}")
    say(prog, f"batch: {ok} of {len(items)} ok, {len(table) - ok} not (summary "
              f"{out_dir / 'summary.md'}); {meta['wall_s']:.1f} s")
    return code
