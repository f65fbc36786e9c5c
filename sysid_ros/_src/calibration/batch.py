"""``sysid-calibrate --manifest FILE --out-dir DIR``: independent calibrations, one per robot.

The manifest (YAML) maps each robot's name to its own recordings::

    robots:
      arm-a:                      # result names: DIR/arm-a.yaml, DIR/arm-a.json
        bags: [arm-a/cal_1, arm-a/cal_2]     # files, folders or globs
        validate: [arm-a/val]                # optional, as --validate
        robot: gen3                          # optional: registry name (default --robot)
        config: arm-a/gen3.yaml              # optional: robot facts file (default --config)

Relative paths are taken from the manifest's folder. Each robot is calibrated exactly as
``sysid-calibrate --bag ... [--validate ...] --out calib.yaml --json summary.json`` with the
other options of the command line (same files up to the date and timing fields, same exit
code), on local worker processes (``--jobs N``) or a Ray cluster (``--ray-address``). Results:
``DIR/<name>.yaml`` (calib.yaml), ``DIR/<name>.json`` (the ``--json`` summary) and
``DIR/summary.md``, ``.csv``, ``.json``. One robot's failure is its row; the others go on. Exit
codes: :data:`sysid_ros._src.batch.batch_mode.BATCH_EXIT_CODES`.
"""
from __future__ import annotations

import argparse
import copy
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any

import yaml

from sysid_ros._src.batch import BatchError, Outcome
from sysid_ros._src.batch.batch_mode import drive_batch, expand_paths, last_message, run_captured, \
    with_absolute_paths
from sysid_ros._src.cli_messages import fail

#: a command's one-item path: parsed arguments → exit code
RunSingle = Callable[[argparse.Namespace], int]

__all__ = ["ManifestEntry", "load_manifest", "run_batch", "calibrate_item", "COLUMNS",
           "SINGLE_ONLY"]

PROG = "sysid-calibrate"
COLUMNS = [("name", "robot"), ("robot", "model"), ("recordings", "recordings"),
           ("status", "status"), ("exit_code", "exit"),
           ("noise_max", "max noise bound (N*m)"), ("validation_scale", "validation scale"),
           ("warnings", "notes"), ("skipped", "skipped msgs"), ("wall_s", "wall (s)"),
           ("message", "verdict / error")]
#: options of one calibration that a batch refuses (the manifest or DIR says them per robot;
#: recordings with a known payload, like the unloaded ones, belong to one robot)
SINGLE_ONLY = ("bag", "validate", "out", "json", "report", "write_bag", "export_rows",
               "payload_bag", "payload_prior")
_STATUS = {0: "ok", 2: "bad_input", 3: "inconsistent", 4: "validation_inconsistent"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_KEYS = {"bags", "validate", "robot", "config"}
#: the calibration's own duration in its verdict (``...; 2.3 s``): the summary gives it in its
#: wall-time column, so that the rest of a row is the same on every run and executor
_ELAPSED = re.compile(r"; \d+(?:\.\d+)? s(?=;|$)")


@dataclass(frozen=True)
class ManifestEntry:
    """One robot of the manifest, paths absolute."""

    name: str
    bags: list[str]
    validate: list[str]
    robot: str | None
    config: str | None


def _paths(value: object, where: str, base: Path) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BatchError(f"{where}: expected a path or a list of paths")
    return [str(Path(p).resolve()) for p in
            expand_paths([v if Path(v).is_absolute() else str(base / v) for v in value],
                          f"{where}:")]


def load_manifest(path: str | Path) -> list[ManifestEntry]:
    """The manifest's robots in file order; BatchError names the bad entry or key."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as err:
        raise BatchError(f"--manifest {path}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise BatchError(f"--manifest {path}: not YAML: {' '.join(str(err).split())}") from None
    robots = doc.get("robots") if isinstance(doc, dict) else None
    if not isinstance(robots, dict) or not robots:
        raise BatchError(f"--manifest {path}: expected a mapping 'robots:' of robot names to "
                         "their recordings")
    base = path.resolve().parent
    entries = []
    for name, entry in robots.items():
        where = f"{path}: robots.{name}"
        if not isinstance(name, str) or not _NAME.match(name):
            raise BatchError(f"{where}: a robot name is letters, digits, '_', '-', '.' (it "
                             "names its result files)")
        if not isinstance(entry, dict) or "bags" not in entry:
            raise BatchError(f"{where}: expected a mapping with 'bags'")
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise BatchError(f"{where}: unknown key {unknown[0]!r} (keys: "
                             f"{', '.join(sorted(_KEYS))})")
        bags = _paths(entry["bags"], f"{where}.bags", base)
        if not bags:
            raise BatchError(f"{where}.bags: no recording")
        validate = _paths(entry.get("validate", []), f"{where}.validate", base)
        config = entry.get("config")
        if config is not None:
            config = _paths(config, f"{where}.config", base)[0]
        robot = entry.get("robot")
        if robot is not None and not isinstance(robot, str):
            raise BatchError(f"{where}.robot: expected a registry name")
        entries.append(ManifestEntry(name, bags, validate, robot, config))
    return entries


def calibrate_item(task: tuple[RunSingle, argparse.Namespace, ManifestEntry, str]
                   ) -> dict[str, Any]:
    """One robot in a worker: ``{"code", "lines", "yaml", "json"}`` (the written files' texts,
    None when not written); the messages name ``final``, where the driver writes calib.yaml.
    ``run_single`` comes with the task, so this module never imports the command."""
    run_single, args, entry, final = task
    ns = copy.copy(args)
    ns.bag, ns.validate = list(entry.bags), list(entry.validate)
    ns.robot = entry.robot or args.robot
    ns.config = entry.config or args.config
    ns.manifest = ns.out_dir = ns.report = ns.write_bag = None
    with tempfile.TemporaryDirectory(prefix="sysid-calibrate-") as tmp:
        out, summary = Path(tmp) / "calib.yaml", Path(tmp) / "summary.json"
        ns.out, ns.json = str(out), str(summary)
        code, lines = run_captured(run_single, ns)
        texts = [p.read_text() if p.exists() else None for p in (out, summary)]
    lines = [line.replace(str(out), final) for line in lines]
    return {"code": code, "lines": lines, "yaml": texts[0], "json": texts[1]}


def _row(entry: ManifestEntry, robot: str, out: Outcome[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {"name": entry.name, "robot": robot,
                           "recordings": len(entry.bags), "wall_s": round(out.seconds, 3)}
    if out.value is None:
        return row | {"status": "error", "exit_code": None, "message": out.error}
    code = out.value["code"]
    row |= {"exit_code": code, "status": _STATUS.get(code, f"exit {code}"),
            "message": _ELAPSED.sub("", last_message(out.value["lines"], PROG))}
    if out.value["json"] is not None:
        doc = json.loads(out.value["json"])
        row["noise_max"] = max(doc["noise"]["torque_abs"])
        row["warnings"] = len(doc.get("notes") or [])
        if doc.get("validation") is not None:
            row["validation_scale"] = doc["validation"]["scale"]
        skipped = doc.get("skipped") or {}
        row["skipped"] = sum(int(s.get("total", 0)) for s in skipped.values())
    return row


def run_batch(args: argparse.Namespace, run_single: RunSingle) -> int:
    """The batch (module docstring) of ``run_single`` over the robots; its exit code."""
    given = [f"--{k.replace('_', '-')}" for k in SINGLE_ONLY if getattr(args, k, None)]
    if args.manifest is None or args.out_dir is None:
        return fail(PROG, "a batch needs both --manifest FILE (robots and their recordings) "
                          "and --out-dir DIR")
    if given:
        return fail(PROG, f"{', '.join(given)}: one calibration's options; in a batch the "
                          "manifest names each robot's recordings and the results go to "
                          "--out-dir")
    try:
        entries = load_manifest(args.manifest)
    except BatchError as err:
        return fail(PROG, err)
    shared = with_absolute_paths(args, ("config", "prior"))
    items = [(run_single, shared, e, str(Path(args.out_dir).resolve() / f"{e.name}.yaml"))
             for e in entries]
    return drive_batch(PROG, "robot", args, calibrate_item, items, [e.name for e in entries],
                       [(".yaml", "yaml"), (".json", "json")],
                       lambda i, out: _row(entries[i], entries[i].robot or args.robot, out),
                       COLUMNS, {"manifest": str(args.manifest)})
