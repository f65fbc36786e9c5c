"""The repository stands alone: no tracked file points at design notes, robot facts or papers kept
outside it. Design notes live in docs/theory/ (cite them as ``docs/theory/<page>.md#<anchor>``), the Kinova
Gen3 facts in urdf/kinova_gen3_facts.yaml, and papers are cited by title and authors
(docs/theory/models.md#references).

Files other engineers are still migrating are listed in ``PENDING``; once such a file is clean the
second test warns (it does not fail, so the owners' work in progress never breaks the suite) that
its entry can be removed. The set should end up empty.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

from repo_files import tracked_files

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Built by concatenation so that this file does not match its own patterns.
_OUTSIDE = "sha" + "red"
FORBIDDEN = (
    "../" + _OUTSIDE,            # any path into the sibling folder
    _OUTSIDE + "/DESIGN",        # the external design notes
    _OUTSIDE + "/robots",        # the external robot facts
    _OUTSIDE + "/papers",        # the external copies of the papers
    "DESIGN" + " §",             # section references into the external notes
    "DESIGN" + ".md",
)

# Being migrated by their owners (section references into the external notes become
# "docs/theory/<page>.md#<anchor>"); remove each entry once its file is clean -- the set should
# end up empty. "path#section" covers only one top-level section of a YAML file (comment lines
# directly above a key belong to that key's section).
PENDING: set[str] = set()

_TOP_KEY = re.compile(r"[A-Za-z_][\w-]*\s*:")


def _yaml_sections(lines: list[str]) -> list[str | None]:
    """Top-level key each line belongs to; unindented comments/blank lines go to the next key."""
    owner: list[str | None] = [None] * len(lines)
    current: str | None = None
    waiting: list[int] = []
    for i, line in enumerate(lines):
        if _TOP_KEY.match(line):
            current = line.split(":", 1)[0].strip()
        elif line.startswith("#") or not line.strip():
            waiting.append(i)
            continue
        for k in waiting:
            owner[k] = current
        waiting = []
        owner[i] = current
    for k in waiting:
        owner[k] = current
    return owner


def _hits() -> list[tuple[str, int, str | None, str]]:
    """(path, line number, YAML section or None, line) of every forbidden mention."""
    hits = []
    for rel in tracked_files():
        path = ROOT / rel
        if not path.is_file():
            continue                        # tracked but deleted in the working tree
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue                        # binary files
        lines = text.splitlines()
        sections = _yaml_sections(lines) if rel.endswith((".yaml", ".yml")) else None
        for n, line in enumerate(lines, 1):
            if any(p in line for p in FORBIDDEN):
                hits.append((rel, n, None if sections is None else sections[n - 1], line.strip()))
    return hits


def _pending_entry(rel: str, section: str | None) -> str | None:
    if rel in PENDING:
        return rel
    if section is not None and f"{rel}#{section}" in PENDING:
        return f"{rel}#{section}"
    return None


@pytest.fixture(scope="module")
def hits():
    return _hits()


def test_no_file_depends_on_material_outside_the_repository(hits):
    bad = [f"{rel}:{n}: {line}" for rel, n, section, line in hits
           if _pending_entry(rel, section) is None]
    assert not bad, ("references to design notes, facts or papers outside the repository "
                     "(cite docs/theory/<page>.md#<anchor>, urdf/kinova_gen3_facts.yaml, or the paper by title "
                     "instead):\n" + "\n".join(bad))


def test_pending_list_only_names_files_still_being_migrated(hits):
    used = {_pending_entry(rel, section) for rel, _, section, _ in hits}
    done = sorted(PENDING - used)
    if done:
        warnings.warn(f"{done} no longer mention the external notes: remove them from PENDING in "
                      "test/test_self_contained.py", UserWarning, stacklevel=1)
