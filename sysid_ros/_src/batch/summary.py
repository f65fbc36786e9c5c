"""The summary table of a batch: ``summary.md`` (for a person), ``summary.csv`` (for a
spreadsheet) and ``summary.json`` (for a program), one row per item in the items' order.

Columns are ``(key, header)`` pairs; a missing or None value is an empty cell (``null`` in the
JSON). Floats are written with 6 significant digits in the markdown and in full elsewhere.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["write_summary", "SUMMARY_FILES"]

SUMMARY_FILES = ("summary.md", "summary.csv", "summary.json")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def write_summary(out_dir: Path, title: str, columns: Sequence[tuple[str, str]],
                  rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[Path]:
    """Write the three summary files into ``out_dir``; returns their paths."""
    keys = [k for k, _ in columns]
    md = [f"# {title}", ""]
    md += [f"- {k}: {_cell(v)}" for k, v in meta.items()]
    md += ["", "| " + " | ".join(h for _, h in columns) + " |",
           "|" + "---|" * len(columns)]
    md += ["| " + " | ".join(_cell(r.get(k)) for k in keys) + " |" for r in rows]
    paths = [out_dir / name for name in SUMMARY_FILES]
    paths[0].write_text("\n".join(md) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        w.writerows([["" if r.get(k) is None else r.get(k) for k in keys] for r in rows])
    paths[2].write_text(json.dumps({"meta": dict(meta), "columns": keys,
                                    "items": [{k: r.get(k) for k in keys} for r in rows]},
                                   indent=2) + "\n")
    return paths
