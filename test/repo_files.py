"""The repository's files as the tests that read all of them see it."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: walked only when git is not available (e.g. an exported tarball)
_SKIP_DIRS = {".git", ".venv", "out", "build", "install", "log", "__pycache__", ".pytest_cache"}


def tracked_files() -> list[str]:
    """git's tracked files; without git every file outside build output (relative paths)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60).stdout
        return sorted(p for p in out.decode().split("\0") if p)
    except (OSError, subprocess.SubprocessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(ROOT):
            dirnames[:] = [d for d in dirnames
                           if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
            files += [os.path.relpath(os.path.join(dirpath, f), ROOT) for f in filenames]
        return sorted(Path(f).as_posix() for f in files)
