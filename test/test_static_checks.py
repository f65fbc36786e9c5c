"""Lint (ruff) and type checks (mypy) as part of the test command.

Rule sets and their reasons live in ruff.toml and mypy.ini (strict on model, identification,
planning and control, with no per-module exemption), so any new lint or type error fails here."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_is_clean() -> None:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sysid_ros" / "mypy"
    proc = _run("mypy", "--config-file", "mypy.ini", "--cache-dir", str(cache), "sysid_ros")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
