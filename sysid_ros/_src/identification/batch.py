"""``sysid-identify --bag PATH|GLOB ... --out-dir DIR``: many recordings, one result each.

Every recording is identified exactly as ``sysid-identify --bag ONE --out FILE`` with the same
options would (same JSON, same exit code), on local worker processes (``--jobs N``) or a Ray
cluster (``--ray-address``). Results: ``DIR/<recording-name>.json`` and ``DIR/summary.md``,
``.csv``, ``.json`` (status, exit code, mass interval and width, warnings, skipped messages,
wall time, the verdict line). One recording's failure is its row; the others go on. Exit codes:
:data:`sysid_ros._src.batch.batch_mode.BATCH_EXIT_CODES`.

Workers read the recordings and files by path (made absolute here), so on a cluster every
machine must see them at the same path; the results travel back and are written here.
"""
from __future__ import annotations

import argparse
import copy
import json
import tempfile
from pathlib import Path
from collections.abc import Callable
from typing import Any

from sysid_ros._src.batch import BatchError, Outcome
from sysid_ros._src.batch.batch_mode import drive_batch, expand_paths, item_names, last_message, \
    recording_bytes, run_captured, with_absolute_paths
from sysid_ros._src.cli_messages import fail

__all__ = ["run_batch", "identify_item", "warm_up", "COLUMNS"]

#: a command's one-item path: parsed arguments → exit code
RunSingle = Callable[[argparse.Namespace], int]

PROG = "sysid-identify"
COLUMNS = [("name", "recording"), ("status", "status"), ("exit_code", "exit"),
           ("m_lower", "m lower (kg)"), ("m_upper", "m upper (kg)"), ("m_width", "m width (kg)"),
           ("warnings", "warnings"), ("skipped", "skipped msgs"), ("wall_s", "wall (s)"),
           ("message", "verdict / error"), ("bag", "bag")]


def identify_item(task: tuple[RunSingle, argparse.Namespace, str]) -> dict[str, Any]:
    """One recording in a worker: ``{"code", "lines", "doc"}`` (the result JSON's text, or
    None when none was written). ``run_single`` comes with the task (the command's one-recording
    path, picklable by name), so this module never imports the command that calls it."""
    run_single, args, bag = task
    ns = copy.copy(args)
    ns.bag, ns.out_dir, ns.no_progress = bag, None, True
    with tempfile.TemporaryDirectory(prefix="sysid-identify-") as tmp:
        ns.out = str(Path(tmp) / "result.json")
        code, lines = run_captured(run_single, ns)
        out = Path(ns.out)
        doc = out.read_text() if out.exists() else None
    return {"code": code, "lines": lines, "doc": doc}


def warm_up(args: argparse.Namespace) -> None:
    """What every recording's identification loads on first use, loaded once in the batch's
    process before its local workers are forked, so that they share it instead of each loading
    it again: the identification itself, the message definitions, the point estimate's solver
    and the robot file (last: a robot that does not load raises here, and each recording
    reports it as its own error)."""
    import cyipopt  # noqa: F401  (the point estimate's solver, imported where first used)

    import sysid_ros._src.identification.single  # noqa: F401  (what run_single loads on first use)

    from sysid_ros._src.bagio.writer import default_typestore
    from sysid_ros._src.model.robots import load_robot

    default_typestore()
    load_robot(args.robot, args.config, args.calibration)


def _row(name: str, bag: str, out: Outcome[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "bag": bag, "wall_s": round(out.seconds, 3)}
    if out.value is None:
        return row | {"status": "error", "exit_code": None, "message": out.error}
    row["exit_code"] = out.value["code"]
    row["message"] = last_message(out.value["lines"], PROG)
    doc = json.loads(out.value["doc"]) if out.value["doc"] is not None else None
    if doc is None or "status" not in doc:
        return row | {"status": "bad_input"}
    row["status"] = doc["status"]
    if doc.get("lower") is not None and doc.get("upper") is not None:
        lo, hi = float(doc["lower"][0]), float(doc["upper"][0])
        row |= {"m_lower": lo, "m_upper": hi, "m_width": hi - lo}
    row["warnings"] = len(doc.get("warnings") or [])
    skipped = (doc.get("data") or {}).get("skipped")
    row["skipped"] = None if skipped is None else skipped.get("total")
    return row


def run_batch(args: argparse.Namespace, run_single: RunSingle) -> int:
    """The batch (module docstring) of ``run_single`` over the recordings; its exit code."""
    if args.out is not None:
        return fail(PROG, "--out names one result file; a batch writes into --out-dir")
    if not args.bag:
        return fail(PROG, "--out-dir runs a batch of recordings: give them with --bag PATH|GLOB")
    try:
        bags = expand_paths(args.bag)
        names = item_names(bags)
    except BatchError as err:
        return fail(PROG, err)
    shared = with_absolute_paths(args, ("calibration", "calibration_rows", "config", "prior"))
    items = [(run_single, shared, str(Path(b).resolve())) for b in bags]
    return drive_batch(PROG, "recording", args, identify_item, items, names,
                       [(".json", "doc")], lambda i, out: _row(names[i], bags[i], out),
                       COLUMNS, {}, cost=lambda item: recording_bytes(item[2]),
                       warm=lambda: warm_up(shared))
