"""The repository describes the product as it is: no tracked file (code, comments, docs, configs,
launch files, report strings, tests) refers to development sessions or to issue numbers. The
history lives in git and, by feature, in CHANGELOG.md.

A hit is reported as ``path:line: text``; matches may span a line break (a wrapped comment)."""
from __future__ import annotations

import re
from pathlib import Path

from repo_files import tracked_files

ROOT = Path(__file__).resolve().parents[1]


# Each pattern names a development step, never a ROS/pytest "session" (a fixture scope, a
# process session) or a numbered item of a module's own docstring.
HISTORY = re.compile(
    r"\bsessions?[\s\-]*(?:#\s*)?\d+"                   # a numbered development session
    r"|\b(?:this|that|last|previous|earlier|next|later)\s+session\b"
    r"|\bissues?[\s\-]*#?\s*\d+"                          # an issue number (also "#12")
    r"|\bitem-\d+\s+target",                              # an issue item's target
    re.IGNORECASE)

_BINARY = {".png", ".jpg", ".jpeg", ".gif", ".pdf", ".npz", ".npy", ".mcap", ".db3", ".stl",
           ".dae", ".obj", ".zip", ".gz"}


def history_mentions(root: Path, files: list[str]) -> list[str]:
    """``path:line: text`` of every history mention in ``files`` (relative to ``root``)."""
    hits = []
    for rel in files:
        path = root / rel
        if path.suffix.lower() in _BINARY or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for m in HISTORY.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            hits.append(f"{rel}:{line}: {' '.join(m.group(0).split())}")
    return hits


def test_the_pattern_finds_history_and_spares_ordinary_words() -> None:
    # the samples are assembled so that this file does not match its own patterns
    sess, iss = "Sess" + "ion", "Iss" + "ue"
    found = [bool(HISTORY.search(s)) for s in (
        f"as measured in {sess} 10:", f"before {sess.lower()}\n    15 the return",
        f"{iss.lower()} 15 item 1", f"{iss} #12", f"until this {sess.lower()} the sim",
        "the Z1's item-" + "2 target")]
    assert all(found), found
    spared = [s for s in ('@pytest.fixture(scope="session")', "its own session (so SIGINT",
                          "module doc item 4", "a known issue with the driver", "issues: none")
              if HISTORY.search(s)]
    assert not spared, spared


def test_no_tracked_file_mentions_development_sessions_or_issue_numbers() -> None:
    hits = history_mentions(ROOT, tracked_files())
    assert not hits, "history in the repository (move it to git / CHANGELOG.md):\n" + \
        "\n".join(hits)
