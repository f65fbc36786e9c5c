"""Fast DDS shared-memory files that no process uses any more (Linux ``/dev/shm``).

Why this exists: Fast DDS names a participant's shared-memory port by a number derived from the
domain and participant index, and when that file already exists it opens it as it finds it,
with the queue capacity its creator gave it. A port left behind by a process that ran without
``config/fastdds.xml`` (Fast DDS's 512 descriptors) or was killed therefore silently replaces
the profile's 8192 for the next graph that draws the same number: the recorder SIGSTOPped for
two 1-s periods then lost 1071 of ~6000 joint_states with the profile set, and none once the
leftovers were gone (test/nodes/test_dds_profile.py). SIGKILLed publishers also leave their
segments (up to 32 MiB each) behind.

A group of files (a port with its ``_el``/``_sl`` lock files and ``sem.…_mutex`` semaphore, or
a segment with its lock file) is stale when no process has any of its port, segment or lock
files open or mapped. The kernel answers that for every process, including ones this user
cannot inspect through /proc: a write lease (``F_SETLEASE``/``F_WRLCK``) is granted only on a file
nobody else holds. The lease is held while the file is unlinked, so a process opening it in
between waits for the lease to be given up. Files the lease cannot be taken on (another user's,
a file system without leases) are kept. Stricter than Fast DDS's ``fastdds shm clean``, which
removes a port whose lock is unheld even while a writer still maps it.
"""
from __future__ import annotations

import fcntl
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ShmSweep", "sweep_stale_fastdds_files", "main"]

SHM_DIR = Path("/dev/shm")

# fastrtps_port7411, fastrtps_port7411_el, sem.fastrtps_port7411_mutex -> "port7411";
# fastrtps_0123456789abcdef(_el) -> "0123456789abcdef"
_FILE = re.compile(r"^(?:sem\.)?fastrtps_(port\d+|[0-9a-f]{16})(_el|_sl|_mutex)?$")


@dataclass(frozen=True)
class ShmSweep:
    """What one sweep did: the files removed and the groups kept (in use, or not checkable)."""

    removed: tuple[str, ...]
    groups_kept: int

    def summary(self) -> str:
        return (f"removed {len(self.removed)} stale Fast DDS shared-memory files, "
                f"kept {self.groups_kept} groups (in use, or another user's)")


def _groups(shm_dir: Path) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for name in os.listdir(shm_dir):
        m = _FILE.match(name)
        if m:
            groups.setdefault(m.group(1), []).append(name)
    return groups


def _lease(path: Path) -> int | None:
    """An fd holding a write lease on ``path`` (no other process has it open or mapped), or
    None when the lease is refused (in use, not ours, no lease support)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    except OSError:
        os.close(fd)
        return None
    return fd


def sweep_stale_fastdds_files(shm_dir: Path = SHM_DIR) -> ShmSweep:
    """Remove the Fast DDS shared-memory files that no process uses (see the module doc).

    Files of other users are left alone (no lease on them), as is everything when ``shm_dir``
    does not exist (no POSIX shared memory there).
    """
    if not shm_dir.is_dir():
        return ShmSweep((), 0)
    removed: list[str] = []
    kept = 0
    for names in _groups(shm_dir).values():
        # the semaphore is closed between uses: the port's own files tell whether it lives
        held = [n for n in names if not n.startswith("sem.")]
        leases: list[int] = []
        try:
            for name in held:
                fd = _lease(shm_dir / name)
                if fd is None:
                    break
                leases.append(fd)
            if len(leases) < len(held):
                kept += 1
                continue
            for name in names:
                try:
                    (shm_dir / name).unlink()
                    removed.append(name)
                except FileNotFoundError:
                    continue
                except PermissionError:
                    break
        finally:
            for fd in leases:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
                os.close(fd)
    return ShmSweep(tuple(sorted(removed)), kept)


def main(argv: list[str] | None = None) -> int:
    """``sysid-shm-clean``: sweep once and say what was done (exit 0; 1 if /dev/shm is unreadable)."""
    if argv:
        print("usage: sysid-shm-clean  (no arguments; see sysid_ros._src.launcher.shm)", file=sys.stderr)
        return 2
    try:
        print(sweep_stale_fastdds_files().summary())
    except OSError as exc:
        print(f"sysid-shm-clean: cannot sweep {SHM_DIR}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
