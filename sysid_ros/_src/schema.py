"""Schema checks of the YAML input files: one typed reader per mapping section.

Every input file the tools read — robot facts, calibration overlays, named priors, ``sysid-import``
mappings — goes through :class:`Section`: unknown keys are refused (a foreign or misspelt file is
never half used), each value is read with the type it must have, and every error names the file,
the dotted key and what was expected, e.g.::

    calib.yaml: friction.lower.Fv: expected 7 finite numbers (one per joint), got [0.1, 0.2]

The error class is the caller's (``RobotConfigError``, ``MappingError``, ...), so each tool keeps
its exit code (2) and its ``except`` clauses. No ROS, no I/O besides :func:`read_yaml`.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

__all__ = ["Section", "read_yaml", "parse_yaml", "MISSING"]

#: ``default`` of a required key
MISSING: Any = object()


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Section:
    """Typed access to one mapping of a file; ``where`` names the file, ``prefix`` the dotted
    key of the section (empty at the top level), ``error`` builds the caller's exception from
    the message. ``allowed`` (when given) are the only keys the section may hold."""

    def __init__(self, where: str, data: object, prefix: str = "",
                 error: Callable[[str], Exception] = ValueError,
                 allowed: Collection[str] | None = None) -> None:
        self.where, self.prefix, self.error = where, prefix, error
        if not isinstance(data, dict):
            raise error(f"{where}: {prefix or 'the file'}: expected a mapping of keys to values, "
                        f"got {_short(data)}")
        self.data: dict[str, Any] = data
        if allowed is not None:
            for key in data:
                if key not in allowed:
                    raise error(f"{where}: unknown key {self.key(str(key))!r} (expected one of: "
                                f"{', '.join(self.key(k) for k in allowed)})")

    # -- naming ------------------------------------------------------------------------------
    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def fail(self, name: str, expected: str) -> Exception:
        got = f", got {_short(self.data[name])}" if name in self.data else ""
        return self.error(f"{self.where}: {self.key(name)}: expected {expected}{got}")

    def missing(self, name: str, expected: str) -> Exception:
        return self.error(f"{self.where}: {self.key(name)}: missing (expected {expected})")

    def _get(self, name: str, default: Any, expected: str) -> Any:
        if name not in self.data or self.data[name] is None:
            if default is MISSING:
                raise self.missing(name, expected)
            return default
        return self.data[name]

    # -- values ------------------------------------------------------------------------------
    def section(self, name: str, allowed: Collection[str] | None = None,
                default: Any = MISSING) -> Section | None:
        """The sub-mapping ``name`` (None when absent and ``default`` is None)."""
        value = self._get(name, default, "a mapping")
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(name, "a mapping")
        return Section(self.where, value, self.key(name), self.error, allowed)

    def string(self, name: str, choices: Sequence[str] | None = None,
               default: Any = MISSING) -> Any:
        expected = "a string" if choices is None else "one of " + ", ".join(map(repr, choices))
        value = self._get(name, default, expected)
        if value is default and default is not MISSING:
            return value
        if not isinstance(value, str) or not value or (choices is not None
                                                       and value not in choices):
            raise self.fail(name, expected)
        return value

    def number(self, name: str, positive: bool = False, nonzero: bool = False,
               default: Any = MISSING) -> Any:
        expected = ("a positive number" if positive else "a non-zero number" if nonzero
                    else "a finite number")
        value = self._get(name, default, expected)
        if value is default and default is not MISSING:
            return value
        x = float(value) if _is_number(value) else math.nan
        if not math.isfinite(x) or (positive and x <= 0) or (nonzero and x == 0):
            raise self.fail(name, expected)
        return x

    def numbers(self, name: str, n: int, what: str = "", allow_null: bool = False,
                default: Any = MISSING) -> Any:
        """``n`` finite numbers (None entries read as inf when ``allow_null``) as an array."""
        expected = f"{n} finite numbers" + (f" ({what})" if what else "") + \
            (" or null" if allow_null else "")
        value = self._get(name, default, expected)
        if value is default and default is not MISSING:
            return value
        ok = isinstance(value, list) and len(value) == n and all(
            _is_number(x) or (allow_null and x is None) for x in value)
        arr = np.array([np.inf if x is None else x for x in value], float) if ok else np.empty(0)
        finite = np.isfinite(arr) | np.array([x is None for x in value] if ok else [], bool)
        if not ok or not np.all(finite):
            raise self.fail(name, expected)
        return arr

    def names(self, name: str, default: Any = MISSING) -> Any:
        """Distinct non-empty strings (a comma-separated string is split)."""
        value = self._get(name, default, "a list of names")
        if value is default and default is not MISSING:
            return value
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(name, "a list of names")
        if len(set(value)) != len(value):
            raise self.fail(name, "distinct names")
        return tuple(value)

    def equal(self, name: str, expected_value: object, expected: str) -> None:
        """Refuse ``name`` unless present and equal to ``expected_value``."""
        value = self._get(name, MISSING, expected)
        if value != expected_value or isinstance(value, bool) != isinstance(expected_value, bool):
            raise self.fail(name, expected)


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


#: parsed documents by their text (a process reads the same robot file for every item of a batch)
_PARSED: dict[str, Any] = {}
_PARSED_MAX = 16


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, parsed once per process for each distinct text; every call
    gets its own copy, so a caller that edits the document changes nobody else's. A batch
    worker reads the same robot file for every recording: parsing it again each time cost
    about a tenth of an item. Keyed by the text itself, so an edited file is parsed afresh;
    YAML errors are raised every time, nothing is kept for them."""
    if text not in _PARSED:
        doc = yaml.safe_load(text)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[text] = doc
    return copy.deepcopy(_PARSED[text])


def read_yaml(path: str | Path, what: str, error: Callable[[str], Exception],
              allowed: Collection[str] | None = None, empty_ok: bool = False) -> Section:
    """The top-level mapping of the YAML file ``path`` (``what`` it should be, for the
    messages): a missing file, a YAML syntax error (with its line) or anything but a mapping is
    an error naming the file; an empty file is an empty mapping when ``empty_ok``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{path}: cannot read the {what} file ({err})") from None
    try:
        doc = parse_yaml(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise error(f"{path}{line}: not valid YAML ({getattr(err, 'problem', None) or err})") \
            from None
    if doc is None and empty_ok:
        doc = {}
    if not isinstance(doc, dict):
        raise error(f"{path}: expected a {what} (a mapping at the top level), got "
                    f"{_short(doc)}")
    return Section(str(path), doc, "", error, allowed)
