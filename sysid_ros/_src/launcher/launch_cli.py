"""``sysid-launch``: start a graph from a ``launch/*.launch.yaml`` file where ``ros2 launch`` is
not installed, e.g. ``sysid-launch sim.launch.yaml robot:=gen3 record:=true``."""
from __future__ import annotations

import argparse
import shlex
import signal
import sys
from collections.abc import Sequence

from .graph import Graph
from .parse import LaunchError, load_launch

__all__ = ["main", "parse_launch_args"]


def parse_launch_args(items: Sequence[str]) -> dict[str, str]:
    """``["robot:=gen3", ...]`` → ``{"robot": "gen3"}`` (LaunchError on a malformed item)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            raise LaunchError(f"launch argument {item!r} is not of the form name:=value")
        out[name] = value
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="sysid-launch",
        description="Run a sysid_ros launch file (the same YAML files ros2 launch reads).",
    )
    p.add_argument("launch_file", help="path, or name in the package's launch/ directory")
    p.add_argument("launch_args", nargs="*", metavar="name:=value")
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the resolved commands and exit")
    p.add_argument("--sigint-timeout", type=float, default=5.0)
    p.add_argument("--sigterm-timeout", type=float, default=3.0)
    a = p.parse_args(argv)
    try:
        desc = load_launch(a.launch_file, parse_launch_args(a.launch_args))
        if a.print_only:
            for name, value in desc.args.items():
                print(f"# {name} = {value}")
            for notice in desc.notices:
                print(f"# notice: {notice}")
            for spec in desc.processes:
                flag = " (required)" if spec.required else ""
                print(f"[{spec.name}]{flag} {shlex.join(spec.cmd)}")
            return 0
        graph = Graph(desc, sigint_timeout=a.sigint_timeout, sigterm_timeout=a.sigterm_timeout)
        stop_requested = []

        def on_signal(signum: int, _frame: object) -> None:
            # Forwarded as the start of the SIGINT → SIGTERM → SIGKILL ladder.
            stop_requested.append(signum)

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        graph.start()
        while graph.running and not stop_requested:
            graph.wait(timeout=0.1)
        return graph.stop()
    except LaunchError as err:
        print(f"sysid-launch: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
