"""``sysid-import``: joint logs as tables (CSV/TSV/text/NPZ) → a rosbag2 of ``/joint_states``.

    sysid-import [TABLE] --out BAG [--robot NAME] [--mapping MAP.yaml]
                 [--files t=T,q=Q[,dq=DQ][,tau=TAU]] [--joints N1,N2,...]
                 [--time COL [--time-unit s|ms|us|ns] | --rate-hz HZ] [--start S]
                 [--position COLS] [--velocity COLS] [--effort COLS]
                 [--position-unit rad|deg] [--velocity-unit rad/s|deg/s] [--effort-scale K]
                 [--continuous NAMES|auto|none] [--delimiter D] [--header auto|yes|no]
                 [--topic /joint_states] [--storage mcap|sqlite3]

The mapping file holds what the options say (each option sets one key, see docs/guide/identify-recording.md) and
the options override it. One ``sensor_msgs/JointState`` per row, header stamp = bag timestamp.
Reading, unit conversion and unwrapping: :mod:`sysid_ros._src.bagio.tabular`. Warnings go to stderr
as ``sysid-import: warning: ...``; the last stderr line summarises the bag. Exit codes: 0 bag
written, 2 bad input (one line ``sysid-import: error: ...`` naming file, line and column).
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


from sysid_ros._src.bagio.writer import write_joint_state_arrays
from sysid_ros._src import progress
from sysid_ros._src.cli_messages import fail, say
from sysid_ros._src.bagio.tabular import (
    DELIMITERS, POSITION_UNITS, TIME_UNITS, VELOCITY_UNITS, ImportedLog, MappingError,
    import_log, load_mapping, parse_mapping,
)

__all__ = ["main", "build_parser", "EXIT_CODES", "options_mapping", "write_log_bag"]

EXIT_CODES = {"ok": 0, "bad_input": 2}
PROG = "sysid-import"
#: ``--files`` keys → mapping sections.
FILE_KEYS = {"t": "time", "q": "position", "dq": "velocity", "tau": "effort"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Convert joint logs (CSV, TSV, whitespace text, NPZ; one table or one file "
                    "per quantity) into a rosbag2 of sensor_msgs/JointState for sysid-calibrate "
                    "and sysid-identify. Options set the keys of the mapping file (docs/guide/identify-recording.md).",
        epilog="exit codes: 0 bag written, 2 bad input")
    p.add_argument("table", nargs="?", help="one table holding every column (mapping key: file)")
    p.add_argument("--out", required=True, help="rosbag2 directory to create")
    p.add_argument("--robot", help="robot registry name or facts file: joint names, continuous "
                                   "joints and velocity limits")
    p.add_argument("--mapping", metavar="MAP.yaml", help="mapping file; options override it")
    p.add_argument("--files", metavar="t=T,q=Q,dq=DQ,tau=TAU",
                   help="one file per quantity (time, position, velocity, effort; dq and tau "
                        "optional); FILE.npz:ARRAY selects an array")
    p.add_argument("--joints", metavar="N1,N2,...", help="joint names (default: the robot's)")
    p.add_argument("--time", metavar="COL", help="time column (name or 0-based index)")
    p.add_argument("--time-unit", choices=list(TIME_UNITS), help="unit of the time column "
                                                                 "(default s)")
    p.add_argument("--rate-hz", type=float, help="fixed sample rate instead of a time column")
    p.add_argument("--start", type=float, metavar="S",
                   help="shift the stamps so that the first one is S seconds")
    for name, units in (("position", POSITION_UNITS), ("velocity", VELOCITY_UNITS)):
        p.add_argument(f"--{name}", metavar="COLS",
                       help=f"{name} columns, one per joint: names or 0-based indices, "
                            "comma-separated, or a range A:B")
        p.add_argument(f"--{name}-unit", choices=list(units))
    p.add_argument("--effort", metavar="COLS", help="effort columns, one per joint")
    p.add_argument("--effort-scale", type=float, metavar="K",
                   help="multiply efforts by K (to N*m)")
    p.add_argument("--continuous", metavar="NAMES",
                   help="joints to unwrap: names, 'none', or 'auto' (default: the robot's "
                        "joints without position limits)")
    p.add_argument("--delimiter", choices=list(DELIMITERS), help="text delimiter (default auto)")
    p.add_argument("--header", choices=["auto", "yes", "no"], help="first line is a header")
    p.add_argument("--topic", default="/joint_states")
    p.add_argument("--storage", choices=["mcap", "sqlite3"], default="mcap")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    return p


def _fail(msg: object) -> int:
    return fail(PROG, msg, EXIT_CODES["bad_input"])


def _say(msg: str) -> None:
    say(PROG, msg)


def _file_entry(text: str) -> dict[str, str]:
    path, sep, array = text.rpartition(":")
    if sep and path.lower().endswith(".npz") and array:
        return {"file": path, "array": array}
    return {"file": text}


def _files(text: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in FILE_KEYS or not value.strip():
            raise MappingError(f"--files: expected KEY=FILE with KEY one of "
                               f"{', '.join(FILE_KEYS)}, got {item!r}")
        if FILE_KEYS[key] in out:
            raise MappingError(f"--files: {key} given twice")
        out[FILE_KEYS[key]] = _file_entry(value.strip())
    if "position" not in out:
        raise MappingError("--files: q=FILE (positions) is required")
    return out


def options_mapping(args: argparse.Namespace) -> dict[str, Any]:
    """The mapping keys the command-line options set (unvalidated, like a YAML file's)."""
    top: dict[str, Any] = {"time": {}, "position": {}, "velocity": {}, "effort": {}}
    if args.files:
        for section, entry in _files(args.files).items():
            top[section].update(entry)
    for key, value in (("file", args.table), ("joints", args.joints),
                       ("continuous", args.continuous), ("delimiter", args.delimiter)):
        if value is not None:
            top[key] = value
    if args.header is not None:
        top["header"] = {"auto": "auto", "yes": True, "no": False}[args.header]
    for section, key, value in (
            ("time", "column", args.time), ("time", "unit", args.time_unit),
            ("time", "rate_hz", args.rate_hz), ("time", "start", args.start),
            ("position", "columns", args.position), ("position", "unit", args.position_unit),
            ("velocity", "columns", args.velocity), ("velocity", "unit", args.velocity_unit),
            ("effort", "columns", args.effort), ("effort", "scale", args.effort_scale)):
        if value is not None:
            top[section][key] = value
    return {k: v for k, v in top.items() if v != {}}


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base`` per section; a stamp source replaces the other kind."""
    out = dict(base)
    new_time, old_time = override.get("time", {}), base.get("time")
    if isinstance(old_time, dict):
        drop = ("file", "array", "column", "unit") if "rate_hz" in new_time else \
            ("rate_hz",) if {"file", "array", "column"} & set(new_time) else ()
        out["time"] = {k: v for k, v in old_time.items() if k not in drop}
    for key, value in override.items():
        old = out.get(key)
        out[key] = {**old, **value} if isinstance(value, dict) and isinstance(old, dict) else value
    return out


def write_log_bag(path: str | Path, log: ImportedLog, topic: str = "/joint_states",
                  storage: str = "mcap",
                  progress: Callable[[int, int], None] | None = None) -> Path:
    """Write ``log`` as JointState messages (stamps as header stamps and bag timestamps; empty
    velocity/effort arrays when absent) into the new rosbag2 directory ``path``;
    ``progress(done, total)`` counts the messages written."""
    return write_joint_state_arrays(path, log.t, log.position, log.velocity, log.effort,
                                    log.joint_names, topic, storage, progress)


def _run(args: argparse.Namespace) -> int:
    from sysid_ros._src.model.robots import load_robot

    if Path(args.out).exists():
        return _fail(f"--out {args.out}: already exists")
    data: dict[str, Any] = {}
    where = "options"
    if args.mapping is not None:
        data, where = load_mapping(args.mapping), str(args.mapping)
    mapping = parse_mapping(_merge(data, options_mapping(args)), where)
    robot = load_robot(args.robot) if args.robot is not None else None
    with progress.stages(2, "importing", not args.no_progress) as enter:
        enter("reading the tables")
        log = import_log(mapping, robot)
        enter("writing the bag")
        bar, done = progress.callback("writing", not args.no_progress, unit="msg")
        try:
            out = write_log_bag(args.out, log, args.topic, args.storage, progress=bar)
        finally:
            done()
    for warning in log.warnings:
        _say(f"warning: {warning}")
    _say(f"wrote {out}: {log.summary()}")
    return EXIT_CODES["ok"]


def main(argv: Sequence[str] | None = None) -> int:
    from sysid_ros._src.errors import SysidError

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:       # --help (0) or a usage error (2, message printed)
        return int(exc.code or 0)
    try:
        return _run(args)
    except (SysidError, OSError) as err:
        return _fail(str(err))


if __name__ == "__main__":
    raise SystemExit(main())
