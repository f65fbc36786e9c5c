"""Regenerate the reference pages in docs/reference/ from their single sources.

- ``parameters.md``: every node's ``PARAMETERS`` table (``sysid_ros._src.nodes.params``);
- ``cli.md``: the options of every console script that ``setup.py`` declares as a CLI (the
  argparse parsers themselves; the ROS nodes' settings are their parameters);
- ``robot-file.md``: the keys of the shipped robot files ``config/<robot>.yaml`` with the
  comment each file gives them;
- in ``launch/*.launch.yaml``, the default and choices of every argument passed to a node
  parameter: the parameter table's (:data:`LAUNCH_OWNED` lists the arguments whose default is
  the graph's own).

Usage: ``python scripts/make_reference.py`` writes the pages and the launch arguments;
``--check`` exits 1 naming every file that differs from what would be written
(``test/test_docs.py`` runs the same comparison).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
LAUNCH = ROOT / "launch"
ROBOTS = ("gen3", "z1", "b1_z1")
#: Robot-file mappings whose keys are names the user chooses (a joint, a tool): documented once.
_NAMED = {"collision_spheres": "<joint>", "identification.priors": "<name>",
          "model.locked_joints": "<joint>"}
_MAX_DEPTH = 3
_KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][\w\-]*)\s*:(.*)$")


def _console_scripts() -> list[tuple[str, str]]:
    """(name, "module:function") of the CLIs in setup.py, in its order (the nodes excluded)."""
    text = (ROOT / "setup.py").read_text()
    out = []
    for name, target in re.findall(r'"(sysid-[\w-]+)\s*=\s*([\w.:]+)"', text):
        out.append((name, target))
    return out


_DUMP = """
import argparse, json, sys
sys.argv = [{name!r}, '--help']
captured = []
_parse = argparse.ArgumentParser.parse_args
def grab(self, args=None, namespace=None):
    captured.append(self)
    raise SystemExit(0)
argparse.ArgumentParser.parse_args = grab
import contextlib, io
import {module} as m
said = io.StringIO()
try:
  with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
    if hasattr(m, 'build_parser'):
        captured.append(m.build_parser())
    elif hasattr(m, 'parse_args'):
        m.parse_args(['--help'])
    else:
        m.{func}(['--help'])
except SystemExit:
    pass
if not captured:  # a script without options answers --help with its usage line
    print(json.dumps({{'description': said.getvalue().strip(), 'rows': []}}))
    sys.exit(0)
parser = captured[0]
rows = [[a.option_strings, a.metavar or a.dest.upper(),
         list(a.choices) if a.choices and not a.metavar else None,
         a.default if isinstance(a.default, (int, float, str)) else None, a.help or '',
         a.nargs == 0, a.required]
        for a in parser._actions if not isinstance(a, argparse._HelpAction)]
print(json.dumps({{'description': parser.description or '', 'rows': rows}}))
"""


def _options(name: str, target: str) -> dict[str, Any]:
    """The parser of console script ``name``: its description and its options, read in a process
    of their own (as the console script runs; a node's entry point would otherwise start)."""
    import json

    module, func = target.split(":")
    proc = subprocess.run([sys.executable, "-c", _DUMP.format(name=name, module=module, func=func)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"{name}: cannot read its parser: {proc.stderr[-2000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _option_row(strings: list[str], metavar: Any, choices: list[Any] | None, default: Any,
                help_text: str, flag: bool, required: bool) -> str:
    names = ", ".join(strings) if strings else str(metavar)
    if not flag and strings:
        names += " " + ("{" + ",".join(map(str, choices)) + "}" if choices
                        else str(metavar))
    text = " ".join(help_text.replace("%(default)s", str(default)).split()).replace("|", "\\|")
    if required:
        text = "required; " + text
    if default not in (None, False, "") and not flag and "default" not in text.lower():
        text += f" (default `{default}`)"
    cell = names.replace("|", "\\|")
    return f"| `{cell}` | {text} |"


def cli_markdown() -> str:
    parts = ["# Command-line reference\n",
             "Generated from each console script's parser by `python scripts/make_reference.py`"
             " (`<script> --help` prints the same). The nodes take"
             " [parameters](parameters.md).\n"]
    for name, target in _console_scripts():
        spec = _options(name, target)
        table = "".join(_option_row(*row) + "\n" for row in spec["rows"])
        if table:
            table = f"\n| option | meaning |\n|---|---|\n{table}"
        parts.append(f"## {name}\n\n{' '.join(spec['description'].split())}\n{table}")
    return "\n".join(parts)


def _comments(path: Path) -> dict[str, str]:
    """Dotted key → the comment the file gives it (trailing, else the block right above)."""
    out: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    block: list[str] = []
    header = True                                   # the file's own header describes the robot
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            block.append(stripped.lstrip("#").strip())
            continue
        m = _KEY_LINE.match(line)
        if not m or stripped.startswith("-"):
            block = []
            continue
        indent, key, rest = len(m.group(1)), m.group(2), m.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key))
        dotted = ".".join(k for _, k in stack)
        trailing = rest.split(" #", 1)[1].strip() if " #" in rest else ""
        text = trailing or " ".join(block)
        if text and not (header and not trailing):
            out[dotted] = text
        if not header:
            # a section's comment block may describe its keys as "key: meaning" lines
            for sub, meaning in _described_keys(block).items():
                out.setdefault(f"{dotted}.{sub}", meaning)
        header, block = False, []
    return out


def _described_keys(block: list[str]) -> dict[str, str]:
    """``key: meaning`` paragraphs of a comment block (continuation lines joined)."""
    out: dict[str, str] = {}
    current: str | None = None
    for line in block:
        m = re.match(r"([A-Za-z_][\w]*)\s*:\s+(.*)$", line)
        if m and not m.group(1)[0].isupper():
            current = m.group(1)
            out[current] = m.group(2)
        elif current is not None and line:
            out[current] += " " + line
        else:
            current = None
    return out


def _first_sentence(text: str, limit: int = 110) -> str:
    m = re.match(r"(.+?\.)(\s|$)", text)
    s = (m.group(1) if m else text).rstrip(".;:")
    s = s.replace("|", "\\|")
    return s if len(s) <= limit else s[:limit - 1].rstrip() + "…"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return "null"


def _required_keys() -> str:
    """The paragraph on the keys a new robot file needs (``sysid_ros._src.model.robots``)."""
    from sysid_ros._src.model.robots import REQUIRED_KEYS, TOOL_KEYS

    def key(name: str) -> str:                  # "a|a_deg": `a` (or `_deg`)
        first, *others = name.split("|")
        return f"`{first}`" + "".join(f" (or `{o.removeprefix(first)}`)" for o in others)

    def keys(names: tuple[str, ...]) -> str:
        return ", ".join(map(key, names))
    tools = "; ".join(f"{tool}: {keys(names)}" for tool, names in TOOL_KEYS.items())
    return (f"**Required** (`load_robot()` names each missing one): {keys(REQUIRED_KEYS)};"
            f" and per tool: {tools}. Every other key is optional.\n")


def _default_text(value: Any) -> str:
    """A default as the reference shows it: ``0.1``, ``0``, ``all``, ``inf``, ``true``."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).lower() if isinstance(value, bool) else str(value)


def robot_file_markdown() -> str:
    keys: dict[str, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    for robot in ROBOTS:
        path = ROOT / "config" / f"{robot}.yaml"
        doc = yaml.safe_load(path.read_text())
        comments = _comments(path)

        def walk(node: Any, parts: list[str], robot: str = robot,
                 comments: dict[str, str] = comments) -> None:
            dotted = ".".join(parts)
            if dotted in _NAMED and isinstance(node, dict):
                named = f"{dotted}.{_NAMED[dotted]}"
                entry = keys.setdefault(named, {"kind": set(), "robots": []})
                entry["kind"].update(_kind(v) for v in node.values())
                if robot not in entry["robots"]:
                    entry["robots"].append(robot)
                notes.setdefault(named, comments.get(dotted, ""))
                return
            if isinstance(node, dict) and len(parts) < _MAX_DEPTH:
                for k, v in node.items():
                    walk(v, [*parts, str(k)])
                return
            entry = keys.setdefault(dotted, {"kind": set(), "robots": []})
            entry["kind"].add(_kind(node))
            entry["robots"].append(robot)
            if not notes.get(dotted):
                notes[dotted] = comments.get(dotted, "")

        walk(doc, [])
    section_notes: dict[str, str] = {}
    for robot in ROBOTS:
        for dotted, text in _comments(ROOT / "config" / f"{robot}.yaml").items():
            if "." not in dotted:
                section_notes.setdefault(dotted, text)
    sections: dict[str, list[str]] = {}
    bare: dict[str, list[str]] = {}            # keys the files give no comment: listed, not tabled
    for dotted, entry in keys.items():
        top = dotted.split(".")[0] if "." in dotted else "(top level)"
        robots = "all" if len(entry["robots"]) == len(ROBOTS) else ", ".join(entry["robots"])
        kind = " or ".join(sorted(entry["kind"] - {"null"}) or ["null"])
        note = _first_sentence(notes.get(dotted, ""))
        if note:
            sections.setdefault(top, []).append(f"| `{dotted}` | {kind} | {robots} | {note} |")
        else:
            sections.setdefault(top, [])
            where = "" if robots == "all" else f", {robots}"
            bare.setdefault(top, []).append(f"`{dotted}` ({kind}{where})")
    from sysid_ros._src.control.controller import SECTION_DEFAULTS as CONTROLLER
    from sysid_ros._src.identification.config import SECTION_DEFAULTS as IDENTIFICATION
    from sysid_ros._src.param_table import defaults_of
    from sysid_ros._src.planning.planner import PlannerConfig
    planner = {k: v for k, v in defaults_of(PlannerConfig).items()
               if isinstance(v, (bool, int, float, str))}
    defaults = {top: "Defaults: " + ", ".join(f"`{k}` {_default_text(v)}" for k, v in
                                              given.items()) + ".\n"
                for top, given in (("controller", CONTROLLER), ("identification", IDENTIFICATION),
                                   ("planner", planner))}
    parts = ["# Robot-file reference\n",
             "A robot file (`config/<robot>.yaml`, or `robot:=FILE` / `--robot FILE`) holds every"
             " robot-specific number, each validated by name. Units are SI"
             " unless the key ends in `_deg` / `_deg_s`; per-joint lists follow `joints`."
             " Generated from the shipped files (" + ", ".join(
                 f"`config/{r}.yaml`" for r in ROBOTS) + ") by `python scripts/make_reference.py`;"
             " their comments are the full text and give the sources of the numbers.\n",
             _required_keys()]
    for top, rows in sections.items():
        note = section_notes.get(top, "") if top != "(top level)" else ""
        note = f"{_first_sentence(note, 400)}.\n\n" if note else ""
        table = ("| key | type | robots | description |\n|---|---|---|---|\n"
                 + "".join(row + "\n" for row in rows)) if rows else ""
        others = (f"{chr(10) if rows else ''}{'Also' if rows else 'Keys'}: {', '.join(bare[top])}.\n"
                  if top in bare else "")
        extra = f"\n{defaults[top]}" if top in defaults else ""
        parts.append(f"## {top}\n\n{note}{table}{others}{extra}")
    return "\n".join(parts)


def parameters_markdown() -> str:
    from sysid_ros._src.nodes.params import reference_markdown
    return reference_markdown()


#: Launch arguments that feed a node parameter with a default of the launch file's own: the
#: graph's choice for that use, not the node's (every other such argument takes the parameter
#: table's default, written here by :func:`launch_text`).
LAUNCH_OWNED: dict[str, str] = {
    "use_sim_time": "each graph's clock: the simulator's or the bag's /clock, else wall time",
    "max_trajectories": "the demo's four exciting trajectories (the planner alone runs on)",
    "payload": "the simulated dumbbell (the simulator alone carries none)",
    "output_dir": "the recorder's folder under out/ (the node alone writes where it runs)",
    "friction": "auto: the identifier's friction box follows hardware_like and calibration",
    "bag": "required: the recording to replay",
}
_ARG_LINE = re.compile(r"^- arg: (\{.*\})$")
_VAR = re.compile(r"^\$\(var (\w+)\)$")


def _launch_default(value: Any) -> str:
    """A parameter default as a launch argument spells it ("" = absent: an optional one)."""
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _fed_parameters(doc: dict[str, Any]) -> dict[str, list[Any]]:
    """Launch argument → the node parameters (table entries) it is passed to."""
    from sysid_ros._src.nodes.params import node_tables

    tables = node_tables()
    out: dict[str, list[Any]] = {}
    for item in doc["launch"]:
        node = item.get("node") or {}
        table = {p.name: p for p in tables.get(str(node.get("exec")), ())}
        for entry in node.get("param") or []:
            match = _VAR.match(str(entry.get("value", "")))
            if match and entry.get("name") in table:
                out.setdefault(match.group(1), []).append(table[entry["name"]])
    return out


def launch_text(path: Path) -> str:
    """``path`` with every launch argument that feeds node parameters given those parameters'
    default and choices (its description stays the launch file's: it may feed several nodes)."""
    text = path.read_text()
    fed = _fed_parameters(yaml.safe_load(text))
    lines = []
    for line in text.splitlines(keepends=True):
        match = _ARG_LINE.match(line.rstrip("\n"))
        arg = yaml.safe_load(match.group(1)) if match else {}
        params = fed.get(arg.get("name", ""), [])
        if params and arg["name"] not in LAUNCH_OWNED:
            defaults = {_launch_default(p.default) for p in params}
            if len(defaults) != 1:
                raise SystemExit(f"{path.name}: argument {arg['name']} feeds parameters with "
                                 f"different defaults {sorted(defaults)}")
            p = params[0]
            choices = (["true", "false"] if p.type == "bool" else [str(c) for c in p.choices])
            fields = [f"name: {arg['name']}", f"default: {json.dumps(defaults.pop())}"]
            if choices:
                fields.append(f"choices: {json.dumps(choices)}")
            fields.append(f"description: {json.dumps(arg['description'], ensure_ascii=False)}")
            line = "- arg: {" + ", ".join(fields) + "}\n"
        lines.append(line)
    return "".join(lines)


def stale_launch_files(root: Path = LAUNCH) -> list[str]:
    """Names of the launch files whose node-parameter arguments differ from the tables'."""
    return [p.name for p in sorted(root.glob("*.launch.yaml")) if p.read_text() != launch_text(p)]


PAGES: dict[str, Callable[[], str]] = {
    "parameters.md": parameters_markdown,
    "cli.md": cli_markdown,
    "robot-file.md": robot_file_markdown,
}


def stale_pages(root: Path = REFERENCE) -> list[str]:
    """Names of the pages under ``root`` that differ from their generated text."""
    return [name for name, make in PAGES.items()
            if not (root / name).is_file() or (root / name).read_text() != make()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only compare; exit 1 if a page is stale")
    args = p.parse_args(argv)
    if args.check:
        stale = [f"docs/reference/{n}" for n in stale_pages()]
        stale += [f"launch/{n}" for n in stale_launch_files()]
        for name in stale:
            print(f"{name} is stale: python scripts/make_reference.py", file=sys.stderr)
        return 1 if stale else 0
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for name, make in PAGES.items():
        (REFERENCE / name).write_text(make())
    for path in sorted(LAUNCH.glob("*.launch.yaml")):
        path.write_text(launch_text(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
