"""How the command-line tools speak on stderr: ``PROG: message`` and ``PROG: error: message``
(one line, whitespace collapsed, so that a log keeps one error per line)."""
from __future__ import annotations

import sys

__all__ = ["say", "fail"]


def say(prog: str, msg: str) -> None:
    """One line ``prog: msg`` on stderr."""
    print(f"{prog}: {msg}", file=sys.stderr)


def fail(prog: str, msg: object, code: int = 2) -> int:
    """One line ``prog: error: msg`` on stderr; returns the exit ``code`` (default 2, bad
    input)."""
    print(f"{prog}: error: {' '.join(str(msg).split())}", file=sys.stderr)
    return code
