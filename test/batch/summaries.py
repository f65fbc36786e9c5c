"""A batch's summary files with their timing and executor fields left out, for comparing two
runs of one batch on different executors."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

#: summary fields that say how and how fast the batch ran, not what it found
TIMING_META = ("jobs", "ray_address", "executor", "wall_s")
TIMING_COLUMN, TIMING_HEADER = "wall_s", "wall (s)"
_CELL = re.compile(r"(?<!\\)\|")


def summaries_without_timing(out_dir: Path) -> dict[str, object]:
    """``summary.json``, ``.csv`` and ``.md`` of ``out_dir`` without the timing column and
    the executor's fields (each asserted present, so that a renamed one is noticed)."""
    doc = json.loads((out_dir / "summary.json").read_text())
    for key in TIMING_META:
        doc["meta"].pop(key)
    for item in doc["items"]:
        item.pop(TIMING_COLUMN)
    with (out_dir / "summary.csv").open(newline="") as f:
        table = list(csv.reader(f))
    wall = table[0].index(TIMING_COLUMN)
    md, at = [], None
    for line in (out_dir / "summary.md").read_text().splitlines():
        if any(line.startswith(f"- {key}: ") for key in TIMING_META):
            continue
        if line.startswith("|"):
            cells = _CELL.split(line)
            at = cells.index(f" {TIMING_HEADER} ") if at is None else at
            line = "|".join(cells[:at] + cells[at + 1:])
        md.append(line)
    return {"summary.json": doc, "summary.csv": [r[:wall] + r[wall + 1:] for r in table],
            "summary.md": md}
