"""Joint logs as tables (CSV, TSV, whitespace text, NPZ) → validated joint-state arrays.

What ``sysid-import`` (:mod:`sysid_ros._src.bagio.import_cli`) reads before it writes a
``sensor_msgs/JointState`` bag; no rclpy and no Pinocchio at run time (a ``Robot`` is only
inspected for joint names, joint limits and velocity limits). User documentation: docs/guide/identify-recording.md.

Layout
------
A log is one table holding every column, or several tables, one per quantity. Each quantity
(``time``, ``position``, ``velocity``, ``effort``) takes its numbers from a *source*: a file (its
own ``file`` or the mapping's top-level ``file``) and, for an ``.npz``, optionally one ``array``
in it. A source used by one quantity only may leave its columns out (time: its only column;
the others: all its columns, one per joint, in joint order); a shared source needs them, by
header name (text), array name (an ``.npz`` of 1-D arrays) or 0-based index. Text files are
comma, tab, semicolon or whitespace separated (detected from the first data line unless
given), with an optional header line (detected: a first line with no number in it); blank lines
and lines starting with ``#`` are skipped. Only the selected columns are parsed, so a text in
an unused column is no error.

Errors (:class:`TabularError`, one line) name the file, the 1-based line and the 1-based column
of the offending cell (``q.csv:1234: column 5: 'abc' is not a number``), the two sources and
their row counts when lengths differ, and the mapping key with the expected type when the
mapping is wrong (:class:`MappingError`).

Unwrapping continuous joints
----------------------------
Loggers report a continuous joint's angle wrapped to [-π, π]. :func:`unwrap_joint` undoes this
per joint: the increment between consecutive samples is the wrapped difference plus 2π·k, and

* k is ``np.unwrap``'s (the increment of smallest magnitude) wherever the joint cannot have
  moved π or more between the two samples, i.e. ``dt · v_max < π``, with ``v_max`` the larger of
  the robot's velocity limit (when known) and the fastest motion seen between consecutive
  samples;
* across longer gaps that choice is ambiguous, and k is the one that brings the increment
  closest to the integrated velocity ``∫q̇ dt`` (trapezoid of the two samples' velocities);
  without velocities ``np.unwrap``'s choice is kept and the gap is reported as unresolved;
* where velocities are present and ``np.unwrap``'s increment differs from the integrated
  velocity by more than π (another branch would fit the velocity), the log is refused: its
  positions, velocities or stamps are inconsistent (a wrong unit, sign or column).

:func:`velocity_scale_warnings` also compares the position increments with the integrated
velocity of every joint over the regular steps and warns when they differ by more than a factor
of two (typically deg/s read as rad/s, or a flipped sign).
"""
from __future__ import annotations

import csv
import math
import zipfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sysid_ros._src.errors import SysidError
from sysid_ros._src.schema import Section, read_yaml

if TYPE_CHECKING:
    from sysid_ros._src.model.robots import Robot

__all__ = [
    "Column",
    "TabularError",
    "MappingError",
    "TIME_UNITS",
    "POSITION_UNITS",
    "VELOCITY_UNITS",
    "DELIMITERS",
    "MAPPING_KEYS",
    "Table",
    "TextTable",
    "ArrayTable",
    "read_table",
    "TimeSpec",
    "ChannelSpec",
    "ImportMapping",
    "parse_columns",
    "load_mapping",
    "parse_mapping",
    "UnwrapResult",
    "unwrap_joint",
    "velocity_scale_warnings",
    "ImportedLog",
    "import_log",
]

#: A column: 0-based index, or a header name (text) / array name (``.npz`` of 1-D arrays).
Column = int | str

#: Seconds per unit of the time column.
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: Radians per position unit.
POSITION_UNITS: dict[str, float] = {"rad": 1.0, "deg": math.pi / 180.0}
#: rad/s per velocity unit.
VELOCITY_UNITS: dict[str, float] = {"rad/s": 1.0, "deg/s": math.pi / 180.0}
#: Text delimiters by name (``None``: runs of whitespace; ``auto``: from the first data line).
DELIMITERS: dict[str, str | None] = {
    "auto": None, "comma": ",", "tab": "\t", "semicolon": ";", "whitespace": None,
}
#: Keys a mapping may hold, per section (``""`` = top level).
MAPPING_KEYS: dict[str, tuple[str, ...]] = {
    "": ("file", "delimiter", "header", "joints", "continuous", "time", "position", "velocity",
         "effort"),
    "time": ("file", "array", "column", "unit", "rate_hz", "start"),
    "position": ("file", "array", "columns", "unit"),
    "velocity": ("file", "array", "columns", "unit"),
    "effort": ("file", "array", "columns", "scale"),
}
_TWO_PI = 2.0 * math.pi
_CHANNELS = ("position", "velocity", "effort")


class TabularError(SysidError):
    """A log ``sysid-import`` cannot use; ``str(err)`` is one line naming file, line and column."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class MappingError(TabularError):
    """The mapping (YAML file or options): unknown key, wrong type or contradicting entries."""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _listing(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


# -- tables ----------------------------------------------------------------------------------
class Table(ABC):
    """Columns of numbers from one file (or one ``.npz`` array), parsed when selected."""

    name: str
    header: tuple[str, ...] | None

    @property
    @abstractmethod
    def n_cols(self) -> int:
        """Number of columns."""

    @abstractmethod
    def n_rows(self, index: int) -> int:
        """Number of rows of column ``index``."""

    @abstractmethod
    def values(self, index: int) -> np.ndarray:
        """Column ``index`` as finite float64 numbers (raises naming the offending cell)."""

    @abstractmethod
    def row_name(self, row: int) -> str:
        """``line N`` (text, 1-based line of the file) or ``row N`` (array, 1-based)."""

    @abstractmethod
    def where(self, row: int, index: int | None = None) -> str:
        """``file:line`` (plus ``: column c``) of 0-based ``row`` / column ``index``."""

    def label(self, index: int) -> str:
        """The source of column ``index`` for messages (file, array for ``.npz`` tables)."""
        return self.name

    def resolve(self, column: Column) -> int:
        """0-based index of ``column`` (an index or a header name)."""
        if isinstance(column, int):
            if 0 <= column < self.n_cols:
                return column
            raise MappingError(f"{self.name}: column index {column} is out of range: the file has "
                               f"{self.n_cols} column(s), indices 0..{self.n_cols - 1} (0-based)")
        if self.header is None:
            raise MappingError(f"{self.name}: has no header line, so column {column!r} cannot be "
                               "found by name; give 0-based indices")
        hits = [i for i, h in enumerate(self.header) if h == column]
        if not hits:
            raise MappingError(f"{self.name}: no column named {column!r} (columns: "
                               f"{_listing(list(self.header))})")
        if len(hits) > 1:
            raise MappingError(f"{self.name}: column name {column!r} appears {len(hits)} times "
                               "in the header; give its 0-based index")
        return hits[0]


class TextTable(Table):
    """A delimited text file: ``rows`` of cell strings, ``lines`` their 1-based line numbers."""

    def __init__(self, name: str, header: tuple[str, ...] | None, rows: list[list[str]],
                 lines: list[int], width: int) -> None:
        self.name, self.header, self.rows, self.lines = name, header, rows, lines
        self._width = width

    @property
    def n_cols(self) -> int:
        return self._width

    def n_rows(self, index: int) -> int:
        return len(self.rows)

    def row_name(self, row: int) -> str:
        return f"line {self.lines[row]}"

    def where(self, row: int, index: int | None = None) -> str:
        text = f"{self.name}:{self.lines[row]}"
        if index is None:
            return text
        named = f" ({self.header[index]})" if self.header is not None else ""
        return f"{text}: column {index + 1}{named}"

    def _number(self, cell: str, row: int, index: int) -> float:
        try:
            return float(cell)
        except ValueError:
            raise TabularError(f"{self.where(row, index)}: {cell!r} is not a number") from None

    def values(self, index: int) -> np.ndarray:
        cells = [r[index] for r in self.rows]
        try:
            out = np.array(cells, dtype=np.float64)
        except ValueError:
            out = np.array([self._number(c, i, index) for i, c in enumerate(cells)])
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            i = int(bad[0])
            raise TabularError(f"{self.where(i, index)}: {cells[i]!r} is not a finite number")
        return out


class ArrayTable(Table):
    """An ``.npz`` source: one 2-D/1-D array (``header`` None) or its 1-D arrays by name."""

    def __init__(self, name: str, header: tuple[str, ...] | None,
                 columns: list[np.ndarray]) -> None:
        self.name, self.header, self.columns = name, header, columns

    @property
    def n_cols(self) -> int:
        return len(self.columns)

    def n_rows(self, index: int) -> int:
        return int(self.columns[index].shape[0])

    def label(self, index: int) -> str:
        return self.name if self.header is None else f"{self.name}[{self.header[index]}]"

    def row_name(self, row: int) -> str:
        return f"row {row + 1}"

    def where(self, row: int, index: int | None = None) -> str:
        if self.header is not None and index is not None:
            return f"{self.label(index)}: row {row + 1}"
        return f"{self.name}: row {row + 1}" + ("" if index is None else f": column {index + 1}")

    def values(self, index: int) -> np.ndarray:
        out = np.asarray(self.columns[index], dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            i = int(bad[0])
            raise TabularError(f"{self.where(i, index)}: {out[i]} is not a finite number")
        return out


def _split_lines(entries: list[tuple[int, str]], sep: str | None) -> list[list[str]]:
    if sep is None:
        return [s.split() for _, s in entries]
    return [[c.strip() for c in row] for row in csv.reader((s for _, s in entries), delimiter=sep)]


def _detect_delimiter(line: str) -> str | None:
    for sep in (",", "\t", ";"):
        if sep in line:
            return sep
    return None


def _decode(path: Path, raw: bytes) -> str:
    if b"\0" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\0")) + 1
        raise TabularError(f"{path}:{line}: binary data in a text table (an .npz must be named "
                           "*.npz)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # a degree sign in a header, written by a Windows tool


def _read_text(path: Path, delimiter: str, header: bool | None) -> TextTable:
    try:
        text = _decode(path, path.read_bytes())
    except FileNotFoundError:
        raise TabularError(f"{path}: no such file") from None
    except OSError as err:
        raise TabularError(f"{path}: cannot read it ({err.strerror or err})") from None
    entries = [(n, s) for n, line in enumerate(text.split("\n"), 1)
               if (s := line.strip()) and not s.startswith("#")]
    if not entries:
        raise TabularError(f"{path}: no data (the file is empty or holds only comments)")
    sep = _detect_delimiter(entries[0][1]) if delimiter == "auto" else DELIMITERS[delimiter]
    rows = _split_lines(entries, sep)
    lines = [n for n, _ in entries]
    width = len(rows[0])
    for row, n in zip(rows, lines):
        if len(row) != width:
            raise TabularError(f"{path}:{n}: {len(row)} column(s), expected {width} (as on line "
                               f"{lines[0]})")
    has_header = (not any(_is_number(c) for c in rows[0])) if header is None else header
    names: tuple[str, ...] | None = None
    if has_header:
        names = tuple(c.strip().strip('"').strip() for c in rows[0])
        rows, lines = rows[1:], lines[1:]
    if not rows:
        raise TabularError(f"{path}: a header line but no data rows")
    return TextTable(str(path), names, rows, lines, width)


def _numeric(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "iuf"


def _read_npz(path: Path, array: str | None) -> ArrayTable:
    try:
        npz = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise TabularError(f"{path}: no such file") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise TabularError(f"{path}: not a readable .npz file ({err})") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise TabularError(f"{path}: holds a single array, not named arrays (save it with "
                           "numpy.savez)")
    with npz:
        try:
            arrays = {k: npz[k] for k in npz.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
            raise TabularError(f"{path}: not a readable .npz file ({err})") from None
    if array is not None:
        return _npz_array(path, arrays, array)
    names = [k for k, a in arrays.items() if a.ndim == 1 and _numeric(a)]
    if not names:
        raise TabularError(f"{path}: no 1-D numeric array to use as a column (arrays: "
                           f"{_listing(list(arrays))}); select a 2-D one with array:")
    return ArrayTable(str(path), tuple(names), [arrays[k] for k in names])


def _npz_array(path: Path, arrays: dict[str, np.ndarray], array: str) -> ArrayTable:
    if array not in arrays:
        raise TabularError(f"{path}: no array {array!r} (arrays: {_listing(list(arrays))})")
    a = arrays[array]
    name = f"{path}[{array}]"
    if not _numeric(a):
        raise TabularError(f"{name}: not numeric (dtype {a.dtype})")
    if a.ndim == 1:
        return ArrayTable(name, None, [a])
    if a.ndim == 2:
        return ArrayTable(name, None, [a[:, j] for j in range(a.shape[1])])
    raise TabularError(f"{name}: has shape {a.shape}; expected (rows,) or (rows, columns)")


def read_table(path: str | Path, *, array: str | None = None, delimiter: str = "auto",
               header: bool | None = None) -> Table:
    """Read a text table or an ``.npz`` (by suffix). ``delimiter``: a :data:`DELIMITERS` key;
    ``header``: None detects it; ``array``: one array of an ``.npz`` (default: its 1-D arrays as
    named columns)."""
    path = Path(path)
    if path.suffix.lower() == ".npz":
        return _read_npz(path, array)
    if array is not None:
        raise MappingError(f"{path}: array {array!r} given, but only .npz files hold arrays")
    if delimiter not in DELIMITERS:
        raise MappingError(f"delimiter: expected one of {', '.join(DELIMITERS)}, got {delimiter!r}")
    return _read_text(path, delimiter, header)


# -- the mapping -----------------------------------------------------------------------------
@dataclass(frozen=True)
class TimeSpec:
    """Where the stamps come from: a column (``unit``), or a fixed ``rate_hz``; ``start``
    shifts them so that the first one is ``start`` seconds."""

    file: Path | None = None
    array: str | None = None
    column: Column | None = None
    unit: str = "s"
    rate_hz: float | None = None
    start: float | None = None


@dataclass(frozen=True)
class ChannelSpec:
    """Where one of position/velocity/effort comes from, and the factor to SI units.

    ``columns``: one per joint in joint order, or ``{joint: column}``; None = every column of a
    source this quantity uses alone."""

    file: Path | None = None
    array: str | None = None
    columns: tuple[Column, ...] | dict[str, Column] | None = None
    scale: float = 1.0
    unit: str = ""


@dataclass(frozen=True)
class ImportMapping:
    """A validated mapping (see :func:`parse_mapping`)."""

    time: TimeSpec
    position: ChannelSpec
    velocity: ChannelSpec | None = None
    effort: ChannelSpec | None = None
    file: Path | None = None
    delimiter: str = "auto"
    header: bool | None = None
    joints: tuple[str, ...] | None = None
    continuous: tuple[str, ...] | None = None


def _column_item(text: str) -> list[Column]:
    text = text.strip()
    if ":" in text:
        lo, _, hi = text.partition(":")
        if lo.strip().isdigit() and hi.strip().isdigit():
            return list(range(int(lo), int(hi)))
    if text.isdigit():
        return [int(text)]
    return [text]


def parse_columns(text: str) -> tuple[Column, ...]:
    """``"0,2,q3"`` → ``(0, 2, "q3")``; ``"1:8"`` → ``(1, ..., 7)`` (0-based, end excluded)."""
    out: list[Column] = []
    for item in text.split(","):
        if not item.strip():
            raise MappingError(f"columns {text!r}: empty entry")
        out += _column_item(item)
    return tuple(out)


class _Reader(Section):
    """One mapping section through the shared schema reader (:mod:`sysid_ros._src.schema`): unknown
    keys refused, errors naming the file and the dotted key; absent keys read as None."""

    def __init__(self, where: str, data: object, section: str) -> None:
        super().__init__(where, data, section, MappingError, MAPPING_KEYS[section])

    def text(self, name: str, choices: Sequence[str] | None = None) -> str | None:
        value: str | None = self.string(name, choices, default=None)
        return value

    def path(self, name: str) -> Path | None:
        value = self.text(name)
        return None if value is None else Path(value)

    def num(self, name: str, positive: bool = False, nonzero: bool = False) -> float | None:
        value: float | None = self.number(name, positive, nonzero, default=None)
        return value

    def joint_names(self, name: str) -> tuple[str, ...] | None:
        value: tuple[str, ...] | None = self.names(name, default=None)
        return value

    def column(self, name: str) -> Column | None:
        value = self.data.get(name)
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return value
        if isinstance(value, str) and value:
            return int(value) if value.isdigit() else value
        raise self.fail(name, "a column name or a 0-based index")

    def columns(self, name: str) -> tuple[Column, ...] | dict[str, Column] | None:
        value = self.data.get(name)
        expected = "a list of column names or 0-based indices, or {joint: column}"
        if value is None:
            return None
        if isinstance(value, str):
            return parse_columns(value)
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        items = list(value.values()) if isinstance(value, dict) else value
        if not isinstance(items, list) or not items or not all(
                (isinstance(v, int) and not isinstance(v, bool) and v >= 0)
                or (isinstance(v, str) and v) for v in items):
            raise self.fail(name, expected)
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise self.fail(name, expected)
            return dict(value)
        return tuple(value)


def _time_spec(where: str, data: object) -> TimeSpec:
    r = _Reader(where, {} if data is None else data, "time")
    spec = TimeSpec(file=r.path("file"), array=r.text("array"), column=r.column("column"),
                    unit=r.text("unit", tuple(TIME_UNITS)) or "s",
                    rate_hz=r.num("rate_hz", positive=True), start=r.num("start"))
    from_file = spec.file is not None or spec.column is not None or spec.array is not None
    if spec.rate_hz is not None and (from_file or "unit" in r.data):
        raise MappingError(f"{where}: time: give either rate_hz or a time column (file/array/"
                           "column/unit), not both")
    return spec


def _channel_spec(where: str, data: object, name: str, default_unit: str) -> ChannelSpec:
    r = _Reader(where, data, name)
    units = {"position": POSITION_UNITS, "velocity": VELOCITY_UNITS}.get(name)
    unit, scale = "", 1.0
    if units is not None:
        unit = r.text("unit", tuple(units)) or default_unit
        scale = units[unit]
    else:
        scale = r.num("scale", nonzero=True) or 1.0
    return ChannelSpec(file=r.path("file"), array=r.text("array"),
                       columns=r.columns("columns"), scale=scale, unit=unit)


def _header_flag(r: _Reader) -> bool | None:
    value = r.data.get("header", "auto")
    if value == "auto" or value is None:
        return None
    if isinstance(value, bool):
        return value
    raise r.fail("header", "true, false or 'auto'")


def _continuous(r: _Reader) -> tuple[str, ...] | None:
    value = r.data.get("continuous", "auto")
    if value == "auto" or value is None:
        return None
    if value == "none" or value == []:
        return ()
    return r.joint_names("continuous")


def parse_mapping(data: object, where: str = "mapping") -> ImportMapping:
    """Validate a mapping (the YAML file's content, options merged in); ``where`` prefixes
    errors. Keys: :data:`MAPPING_KEYS`; meanings in docs/guide/identify-recording.md."""
    r = _Reader(where, data, "")
    if r.data.get("position") is None:
        raise MappingError(f"{where}: position: missing (where the joint positions are: "
                           "position: in a mapping file, --position COLS with one table, or "
                           "--files q=FILE)")
    position = _channel_spec(where, r.data["position"], "position", "rad")
    vel_unit = "deg/s" if position.unit == "deg" else "rad/s"
    velocity = effort = None
    if r.data.get("velocity") is not None:
        velocity = _channel_spec(where, r.data["velocity"], "velocity", vel_unit)
    if r.data.get("effort") is not None:
        effort = _channel_spec(where, r.data["effort"], "effort", "")
    return ImportMapping(
        time=_time_spec(where, r.data.get("time")), position=position, velocity=velocity,
        effort=effort, file=r.path("file"),
        delimiter=r.text("delimiter", tuple(DELIMITERS)) or "auto", header=_header_flag(r),
        joints=r.joint_names("joints"), continuous=_continuous(r))


def load_mapping(path: str | Path) -> dict[str, Any]:
    """A mapping YAML file as a dict (unvalidated), its relative ``file`` entries made relative
    to the mapping file's folder; errors name the file (and the line of a YAML syntax error)."""
    path = Path(path)
    # an empty mapping file is allowed: the options say it all
    data = read_yaml(path, "mapping", MappingError, empty_ok=True).data
    _rebase(data, path.parent)
    for section in ("time", *_CHANNELS):
        if isinstance(data.get(section), dict):
            _rebase(data[section], path.parent)
    return data


def _rebase(section: dict[str, Any], base: Path) -> None:
    value = section.get("file")
    if isinstance(value, str) and value and not Path(value).is_absolute():
        section["file"] = str(base / value)


# -- unwrapping ------------------------------------------------------------------------------
@dataclass(frozen=True)
class UnwrapResult:
    """What unwrapping did to one joint.

    Attributes:
        joint: joint name.
        turns: full turns added at the last sample (net).
        wraps: steps where a multiple of 2π was added.
        by_velocity: ambiguous steps whose branch the integrated velocity chose.
        unresolved: ambiguous steps without velocities (``np.unwrap``'s branch kept).
    """

    joint: str
    turns: int
    wraps: int
    by_velocity: int
    unresolved: int


def unwrap_joint(t: np.ndarray, q: np.ndarray, dq: np.ndarray | None, *, joint: str = "joint",
                 speed_limit: float | None = None,
                 where: Callable[[int], str] | None = None) -> tuple[np.ndarray, UnwrapResult]:
    """Unwrap one continuous joint's positions ``q`` (rad) sampled at ``t`` (s), using the
    velocities ``dq`` (rad/s) across gaps too long for ``np.unwrap`` (module docstring).

    ``where(i)`` names sample ``i`` in errors (e.g. ``file:line``). Raises :class:`TabularError`
    where positions and velocities disagree by more than π on an unambiguous step."""
    dt = np.diff(t)
    step = np.diff(q)
    branch = np.rint((np.diff(np.unwrap(q)) - step) / _TWO_PI)
    speeds = np.abs(step + _TWO_PI * branch) / dt
    v_max = max(float(speeds.max(initial=0.0)), speed_limit or 0.0)
    ambiguous = dt * v_max >= math.pi
    by_velocity = unresolved = 0
    if dq is not None:
        integral = 0.5 * (dq[:-1] + dq[1:]) * dt
        fit = np.rint((integral - step) / _TWO_PI)
        bad = np.flatnonzero(~ambiguous & (fit != branch))
        if bad.size:
            i = int(bad[0])
            here = where(i + 1) if where is not None else f"sample {i + 1}"
            raise TabularError(
                f"{here}: {joint}: the position moves {step[i] + _TWO_PI * branch[i]:+.3f} rad "
                f"(mod 2π) in {dt[i]:.3g} s but the velocities integrate to {integral[i]:+.3f} "
                "rad; positions and velocities disagree (velocity unit, sign or columns?)")
        by_velocity = int(np.count_nonzero(ambiguous & (fit != branch)))
        branch = np.where(ambiguous, fit, branch)
    else:
        unresolved = int(np.count_nonzero(ambiguous))
    offsets = np.concatenate(([0.0], np.cumsum(branch)))
    result = UnwrapResult(joint, int(offsets[-1]), int(np.count_nonzero(branch)), by_velocity,
                          unresolved)
    return q + _TWO_PI * offsets, result


def velocity_scale_warnings(t: np.ndarray, q: np.ndarray, dq: np.ndarray,
                            names: Sequence[str]) -> list[str]:
    """Joints whose velocities integrate to less than half or more than twice the position
    change over the regular steps (regression of ∫q̇ dt on Δq), for joints moving > 0.1 rad."""
    dt = np.diff(t)
    regular = dt <= 1.5 * np.median(dt)
    dq_pos = np.diff(q, axis=0)[regular]
    integral = (0.5 * (dq[:-1] + dq[1:]) * dt[:, None])[regular]
    out = []
    for j, name in enumerate(names):
        den = float(dq_pos[:, j] @ dq_pos[:, j])
        if np.ptp(q[:, j]) < 0.1 or den == 0.0:
            continue
        ratio = float(dq_pos[:, j] @ integral[:, j]) / den
        if not 0.5 <= ratio <= 2.0:
            out.append(f"{name}: the velocities integrate to {ratio:.3g} x the position change; "
                       "check velocity.unit, the sign and the velocity columns")
    return out


# -- assembling a log ------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportedLog:
    """A log in SI units, joints in ``joint_names`` order, continuous joints unwrapped.

    Attributes:
        t: (N,) stamps (s), strictly increasing.
        joint_names: the JointState names.
        position: (N, nj) rad.
        velocity: (N, nj) rad/s, or None.
        effort: (N, nj) N·m (scaled), or None.
        unwrapped: one entry per continuous joint.
        warnings: one-line warnings (velocity scale, unresolved gaps).
        gap_at: where the largest gap ends (``file:line``), or "".
    """

    t: np.ndarray
    joint_names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None
    unwrapped: tuple[UnwrapResult, ...]
    warnings: tuple[str, ...]
    gap_at: str = ""

    def summary(self) -> str:
        """One line: samples, joints, duration, median rate, largest gap, unwrapped joints."""
        dt = np.diff(self.t)
        gap = f"largest gap {dt.max():.3g} s" + (f" (ending at {self.gap_at})" if self.gap_at else "")
        fields = [name for name, a in (("velocity", self.velocity), ("effort", self.effort))
                  if a is not None]
        nj = len(self.joint_names)
        parts = [f"{self.t.size} samples", f"{nj} joint{'s' if nj != 1 else ''} "
                 f"(position{''.join(', ' + f for f in fields)})",
                 f"{self.t[-1] - self.t[0]:.3f} s", f"median {1.0 / np.median(dt):.1f} Hz", gap]
        return ", ".join(parts) + "; " + self._unwrap_text()

    def _unwrap_text(self) -> str:
        if not self.unwrapped:
            return "no joint unwrapped"
        items = []
        for u in self.unwrapped:
            text = f"{u.joint} {u.turns:+d}"
            if u.wraps != abs(u.turns):
                text += f" ({u.wraps} wraps)"
            items.append(text)
        by_vel = sum(u.by_velocity for u in self.unwrapped)
        tail = f"; {by_vel} branch(es) chosen by the velocity across gaps" if by_vel else ""
        return "unwrapped (turns): " + ", ".join(items) + tail


class _Sources:
    """Tables by (file, array), read once; knows which quantities share a source."""

    def __init__(self, mapping: ImportMapping) -> None:
        self.mapping = mapping
        self.tables: dict[tuple[Path, str | None], Table] = {}
        self.users: dict[tuple[Path, str | None], list[str]] = {}
        for name, spec in self._specs():
            self.users.setdefault(self.key(name, spec.file, spec.array), []).append(name)

    def _specs(self) -> list[tuple[str, TimeSpec | ChannelSpec]]:
        m = self.mapping
        specs: list[tuple[str, TimeSpec | ChannelSpec]] = []
        if m.time.rate_hz is None:
            specs.append(("time", m.time))
        specs += [(n, s) for n, s in (("position", m.position), ("velocity", m.velocity),
                                      ("effort", m.effort)) if s is not None]
        return specs

    def key(self, quantity: str, file: Path | None, array: str | None) -> tuple[Path, str | None]:
        path = file or self.mapping.file
        if path is None:
            raise MappingError(f"{quantity}: no file (give {quantity}.file, or file: for one "
                               "table holding every column)")
        return path, array

    def table(self, key: tuple[Path, str | None]) -> Table:
        if key not in self.tables:
            self.tables[key] = read_table(key[0], array=key[1], delimiter=self.mapping.delimiter,
                                          header=self.mapping.header)
        return self.tables[key]

    def shared(self, key: tuple[Path, str | None]) -> bool:
        return len(self.users.get(key, ())) > 1


@dataclass
class _Picked:
    """Selected columns of one quantity: values (N, k) and where each came from."""

    values: np.ndarray
    table: Table
    indices: list[int]


def _channel_columns(spec: ChannelSpec, quantity: str, joints: tuple[str, ...], table: Table,
                     shared: bool) -> list[Column]:
    cols = spec.columns
    if cols is None:
        if shared:
            raise MappingError(f"{quantity}.columns: required, {table.name} also holds other "
                               "quantities")
        if table.n_cols != len(joints):
            raise MappingError(f"{table.name}: {table.n_cols} {quantity} column(s) for "
                               f"{len(joints)} joints ({_listing(list(joints))})")
        return list(range(table.n_cols))
    if isinstance(cols, dict):
        for name in cols:
            if name not in joints:
                raise MappingError(f"{quantity}.columns: unknown joint {name!r} (joints: "
                                   f"{_listing(list(joints))})")
        missing = [j for j in joints if j not in cols]
        if missing:
            raise MappingError(f"{quantity}.columns: no column for joint(s) {_listing(missing)}")
        return [cols[j] for j in joints]
    if len(cols) != len(joints):
        raise MappingError(f"{quantity}.columns: {len(cols)} column(s) for {len(joints)} joints "
                           f"({_listing(list(joints))})")
    return list(cols)


def _pick(sources: _Sources, quantity: str, spec: ChannelSpec, joints: tuple[str, ...]) -> _Picked:
    key = sources.key(quantity, spec.file, spec.array)
    table = sources.table(key)
    cols = _channel_columns(spec, quantity, joints, table, sources.shared(key))
    indices = [table.resolve(c) for c in cols]
    _check_lengths([(table, i) for i in indices])
    values = np.column_stack([table.values(i) for i in indices]) * spec.scale
    return _Picked(values, table, indices)


def _check_lengths(columns: Sequence[tuple[Table, int]]) -> None:
    ref_table, ref = columns[0]
    n_ref = ref_table.n_rows(ref)
    for table, i in columns[1:]:
        n = table.n_rows(i)
        if n != n_ref:
            raise TabularError(f"{table.label(i)} has {n} rows but {ref_table.label(ref)} has "
                               f"{n_ref}")


def _stamps(sources: _Sources, spec: TimeSpec, n_rows: int) -> tuple[np.ndarray, _Picked | None]:
    if spec.rate_hz is not None:
        if (spec.start or 0.0) < 0:
            raise MappingError(f"time.start: expected a number >= 0, got {spec.start}")
        return (spec.start or 0.0) + np.arange(n_rows) / spec.rate_hz, None
    key = sources.key("time", spec.file, spec.array)
    table = sources.table(key)
    column = spec.column
    if column is None:
        if sources.shared(key):
            raise MappingError(f"time.column: required, {table.name} also holds other "
                               "quantities (or give time.rate_hz)")
        if table.n_cols != 1:
            raise MappingError(f"time.column: required, {table.name} has {table.n_cols} columns")
        column = 0
    index = table.resolve(column)
    t = table.values(index) * TIME_UNITS[spec.unit]
    _check_increasing(t, table, index)
    if spec.start is not None:
        t = t - t[0] + spec.start
    if t[0] < 0:
        raise TabularError(f"{table.where(0, index)}: stamp {t[0]:.9g} s is negative; a bag "
                           "needs stamps >= 0 (shift them with time.start / --start)")
    return t, _Picked(t[:, None], table, [index])


def _check_increasing(t: np.ndarray, table: Table, index: int) -> None:
    bad = np.flatnonzero(np.diff(t) <= 0)
    if not bad.size:
        return
    i = int(bad[0]) + 1
    before = table.row_name(i - 1)
    if t[i] == t[i - 1]:
        raise TabularError(f"{table.where(i, index)}: stamp {t[i]:.9g} s repeats the one before "
                           f"({before}); stamps must increase strictly")
    raise TabularError(f"{table.where(i, index)}: stamp {t[i]:.9g} s is earlier than the one "
                       f"before ({before}: {t[i - 1]:.9g} s); stamps must increase strictly")


def _joint_names(mapping: ImportMapping, robot: Robot | None) -> tuple[str, ...]:
    names = mapping.joints
    if names is None and isinstance(mapping.position.columns, dict):
        names = tuple(mapping.position.columns)
    if names is None:
        if robot is None:
            raise MappingError("no joint names: give --robot NAME, or joints: in the mapping")
        return tuple(robot.joint_names)
    if robot is not None:
        unknown = [n for n in names if n not in robot.joint_names]
        if unknown:
            raise MappingError(f"unknown joint {unknown[0]!r}: robot {robot.name} has "
                               f"{_listing(list(robot.joint_names))}")
    return names


def _continuous_joints(mapping: ImportMapping, joints: tuple[str, ...],
                       robot: Robot | None) -> tuple[str, ...]:
    if mapping.continuous is None:
        if robot is None:
            return ()
        lo, hi = robot.limits.q_lower, robot.limits.q_upper
        free = {n for k, n in enumerate(robot.joint_names)
                if not (np.isfinite(lo[k]) or np.isfinite(hi[k]))}
        return tuple(n for n in joints if n in free)
    unknown = [n for n in mapping.continuous if n not in joints]
    if unknown:
        raise MappingError(f"continuous: unknown joint {unknown[0]!r} (joints: "
                           f"{_listing(list(joints))})")
    return mapping.continuous


def _speed_limit(robot: Robot | None, joint: str) -> float | None:
    if robot is None or joint not in robot.joint_names:
        return None
    return float(robot.limits.dq_max[robot.joint_names.index(joint)])


def _locator(table: Table, index: int) -> Callable[[int], str]:
    def where(row: int) -> str:
        return table.where(row, index)
    return where


def _unwrap_all(t: np.ndarray, pos: _Picked, vel: np.ndarray | None, joints: tuple[str, ...],
                continuous: tuple[str, ...], robot: Robot | None) \
        -> tuple[np.ndarray, list[UnwrapResult], list[str]]:
    q = pos.values.copy()
    results, warnings = [], []
    for name in continuous:
        j = joints.index(name)
        col = pos.indices[j]
        q[:, j], res = unwrap_joint(
            t, q[:, j], None if vel is None else vel[:, j], joint=name,
            speed_limit=_speed_limit(robot, name),
            where=_locator(pos.table, col))
        results.append(res)
        if res.unresolved:
            warnings.append(f"{name}: {res.unresolved} gap(s) too long to unwrap unambiguously "
                            "and no velocities to decide; np.unwrap's branch kept")
    return q, results, warnings


def import_log(mapping: ImportMapping, robot: Robot | None = None) -> ImportedLog:
    """Read, convert, check and unwrap the log ``mapping`` describes (joint names, default
    continuous joints and velocity limits from ``robot`` when given)."""
    joints = _joint_names(mapping, robot)
    continuous = _continuous_joints(mapping, joints, robot)
    sources = _Sources(mapping)
    pos = _pick(sources, "position", mapping.position, joints)
    vel = eff = None
    if mapping.velocity is not None:
        vel = _pick(sources, "velocity", mapping.velocity, joints)
    if mapping.effort is not None:
        eff = _pick(sources, "effort", mapping.effort, joints)
    t, stamp_cols = _stamps(sources, mapping.time, pos.values.shape[0])
    picked = [p for p in (stamp_cols, pos, vel, eff) if p is not None]
    _check_lengths([(p.table, p.indices[0]) for p in picked])
    if t.size < 2:
        raise TabularError(f"{pos.table.name}: {t.size} sample(s); need at least 2")
    return _finish(t, joints, continuous, robot, pos, vel, eff, stamp_cols)


def _finish(t: np.ndarray, joints: tuple[str, ...], continuous: tuple[str, ...],
            robot: Robot | None, pos: _Picked, vel_cols: _Picked | None,
            eff_cols: _Picked | None, stamp_cols: _Picked | None) -> ImportedLog:
    vel = None if vel_cols is None else vel_cols.values
    eff = None if eff_cols is None else eff_cols.values
    q, results, warnings = _unwrap_all(t, pos, vel, joints, continuous, robot)
    if vel is not None:
        warnings = velocity_scale_warnings(t, q, vel, joints) + warnings
    gap = int(np.argmax(np.diff(t))) + 1
    gap_at = stamp_cols.table.where(gap) if stamp_cols is not None else ""
    return ImportedLog(t, joints, q, vel, eff, tuple(results), tuple(warnings), gap_at)
