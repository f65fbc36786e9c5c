"""Parse ``ros2 launch`` YAML launch files (the subset this project uses) into process specs.

One description of the graph serves both ``ros2 launch sysid_ros sim.launch.yaml`` on a full ROS
install and :mod:`sysid_ros._src.launcher` here, where ``launch`` is not installable. Supported:

* top level ``launch:`` list of ``arg`` (name, default, description, choices: a value outside
  them is refused naming the argument), ``let`` (name, value),
  ``node`` (pkg, exec, name, namespace, param, remap, args, output, if, unless, on_exit,
  launch-prefix) and ``executable`` (cmd, name, if, unless, output, on_exit, launch-prefix);
* ``launch-prefix`` (as in ``ros2 launch``): a command the process is started under, e.g.
  ``nice -n 10`` for a node whose work can wait while the 1 kHz nodes cannot;
* ``param`` entries ``{from: file.yaml}`` and ``{name: n, value: v}``; ``remap`` ``{from:, to:}``;
* substitutions ``$(var x)``, ``$(env X [default])``, ``$(find-pkg-share pkg)``,
  ``$(file-content path)``, nested innermost first (``$(file-content $(var urdf))``);
* ``on_exit: shutdown`` marks a process *required*: its exit stops the graph;
* a ``node`` of another package whose executable is not installed (``robot_state_publisher``
  without a full ROS install) is skipped with a one-line notice (``LaunchDescription.notices``)
  instead of failing the graph; ``ros2 launch`` on a full install starts it.

Anything else raises :class:`LaunchError` naming the file and the entry, rather than being
silently ignored.
"""
from __future__ import annotations

import sysid_ros
from sysid_ros._src.errors import SysidError

import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["LaunchError", "ProcessSpec", "LaunchDescription", "load_launch", "find_pkg_share",
           "resolve_executable", "launch_dir"]

PKG = "sysid_ros"


class LaunchError(SysidError):
    """A launch file cannot be parsed or resolved; ``str()`` is one line naming file and entry."""


@dataclass(frozen=True)
class ProcessSpec:
    """One process of the graph, ready to start."""

    name: str
    cmd: tuple[str, ...]
    required: bool
    param_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class LaunchDescription:
    """Result of :func:`load_launch`: the resolved args and the processes to start, in order."""

    path: Path
    args: dict[str, str]
    processes: tuple[ProcessSpec, ...] = field(default_factory=tuple)
    notices: tuple[str, ...] = ()       # one line per skipped optional node


# -- package resources -------------------------------------------------------------------------
def _source_root() -> Path | None:
    root = Path(sysid_ros.__file__).resolve().parents[1]
    return root if (root / "package.xml").exists() and (root / "launch").is_dir() else None


def find_pkg_share(pkg: str) -> Path:
    """``$(find-pkg-share pkg)``: the source tree root for sysid_ros when run from source or an
    editable install (so ``config/`` and ``launch/`` edits apply at once), else the install's
    ``share/<pkg>`` (sys.prefix, then ``AMENT_PREFIX_PATH``)."""
    if pkg == PKG and (root := _source_root()) is not None:
        return root
    prefixes = [sys.prefix, *filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep))]
    for prefix in prefixes:
        share = Path(prefix) / "share" / pkg
        if share.is_dir():
            return share
    raise LaunchError(f"package {pkg!r} not found (searched the source tree and {prefixes})")


def launch_dir() -> Path:
    """Directory holding the package's launch files."""
    return find_pkg_share(PKG) / "launch"


def _console_scripts_from_setup(root: Path) -> dict[str, str]:
    text = (root / "setup.py").read_text() if (root / "setup.py").exists() else ""
    return dict(re.findall(r'"([\w.-]+)\s*=\s*([\w.]+:[\w.]+)"', text))


def resolve_executable(pkg: str, exe: str) -> list[str]:
    """Command prefix for ``pkg``'s executable ``exe``.

    Order: an installed script (``<prefix>/lib/<pkg>/<exe>`` as ament installs it, or the venv's
    ``bin``), then the package's console-script entry point run with this interpreter (installed
    metadata, or ``setup.py`` of the source tree when the package is not installed). PATH is not
    searched: an unrelated program called ``sim`` must never be started by accident.
    """
    prefixes = [sys.prefix, *filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep))]
    for prefix in prefixes:
        for cand in (Path(prefix) / "lib" / pkg / exe, Path(prefix) / "bin" / exe):
            if pkg == PKG or cand.parent.name == pkg:
                if cand.is_file() and os.access(cand, os.X_OK):
                    return [str(cand)]
    target: str | None = None
    if pkg == PKG:
        from importlib.metadata import entry_points

        for ep in entry_points(group="console_scripts"):
            if ep.name == exe and ep.value.split(".")[0] == PKG:
                target = ep.value
                break
        if target is None and (root := _source_root()) is not None:
            target = _console_scripts_from_setup(root).get(exe)
    if target is None:
        raise LaunchError(f"executable {exe!r} of package {pkg!r} not found")
    module, func = target.split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {func} as f; sys.exit(f())"]


# -- substitutions -----------------------------------------------------------------------------
_SUBST = re.compile(r"\$\(([a-z-]+)((?:\s+[^()\s]+)*)\s*\)")


class _Skipped(Exception):
    """A node of another package that is not installed here (its notice is the message)."""


class _Context:
    def __init__(self, path: Path, cli_args: Mapping[str, str]) -> None:
        self.path = path
        self.cli_args = dict(cli_args)
        self.vars: dict[str, str] = {}
        self.used_cli: set[str] = set()

    def err(self, where: str, msg: str) -> LaunchError:
        return LaunchError(f"{self.path.name}: {where}: {msg}")

    def subst(self, value: Any, where: str) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if value is None:
            return ""
        if not isinstance(value, (str, int, float)):
            raise self.err(where, f"expected a scalar, got {type(value).__name__}")
        text = str(value)
        # Each result is parked behind a placeholder so that an enclosing substitution can take
        # it as an argument and a file's content is never parsed for substitutions itself.
        done: list[str] = []

        def unpark(s: str) -> str:
            return re.sub("\x00(\\d+)\x00", lambda m: done[int(m.group(1))], s)

        def repl(m: re.Match[str]) -> str:
            done.append(resolve(m))
            return f"\x00{len(done) - 1}\x00"

        def resolve(m: re.Match[str]) -> str:
            kind, rest = m.group(1), [unpark(a) for a in m.group(2).split()]
            if kind == "var":
                if len(rest) != 1:
                    raise self.err(where, f"$(var) takes one name: {m.group(0)}")
                if rest[0] not in self.vars:
                    raise self.err(where, f"undefined launch argument {rest[0]!r} in {m.group(0)}")
                return self.vars[rest[0]]
            if kind == "env":
                if len(rest) not in (1, 2):
                    raise self.err(where, f"$(env NAME [default]) expected: {m.group(0)}")
                if rest[0] in os.environ:
                    return os.environ[rest[0]]
                if len(rest) == 2:
                    return rest[1]
                raise self.err(where, f"environment variable {rest[0]} is not set")
            if kind == "find-pkg-share":
                if len(rest) != 1:
                    raise self.err(where, f"$(find-pkg-share) takes one package: {m.group(0)}")
                try:
                    return str(find_pkg_share(rest[0]))
                except LaunchError as e:
                    raise self.err(where, str(e)) from None
            if kind == "file-content":
                if len(rest) != 1:
                    raise self.err(where, f"$(file-content) takes one path: {m.group(0)}")
                try:
                    return Path(rest[0]).read_text()
                except OSError as e:
                    raise self.err(where, f"$(file-content): cannot read {rest[0]}: "
                                          f"{e.strerror or e}") from None
            raise self.err(where, f"unsupported substitution $({kind} ...)")

        out = text
        for _ in range(8):      # nesting depth
            new = _SUBST.sub(repl, out)
            if new == out:
                break
            out = new
        if "$(" in out:
            raise self.err(where, f"unsupported substitution syntax in {text!r}")
        return unpark(out)

    def condition(self, entry: Mapping[str, Any], where: str) -> bool:
        ok = True
        for key, want in (("if", True), ("unless", False)):
            if key in entry:
                v = self.subst(entry[key], f"{where}.{key}").strip().lower()
                if v not in ("true", "false", "1", "0"):
                    raise self.err(where, f"{key}: {v!r} is not a boolean (true/false/1/0)")
                ok = ok and ((v in ("true", "1")) == want)
        return ok


def _check_keys(ctx: _Context, entry: Mapping[str, Any], allowed: set[str], where: str) -> None:
    if not isinstance(entry, Mapping):
        raise ctx.err(where, f"expected a mapping, got {type(entry).__name__}")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ctx.err(where, f"unsupported key(s) {unknown}; supported: {sorted(allowed)}")


def _required(ctx: _Context, entry: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in entry:
        raise ctx.err(where, f"missing required key {key!r}")
    return entry[key]


_NODE_KEYS = {"pkg", "exec", "name", "namespace", "param", "remap", "args", "output", "if",
              "unless", "on_exit", "ros_args", "launch-prefix"}
_EXEC_KEYS = {"cmd", "name", "output", "if", "unless", "on_exit", "launch-prefix"}


def _launch_prefix(ctx: _Context, entry: Mapping[str, Any], where: str) -> list[str]:
    """The ``launch-prefix`` words (``ros2 launch`` runs the process under them); [] if absent
    or empty (an argument set to '' turns the prefix off)."""
    return shlex.split(ctx.subst(entry.get("launch-prefix", ""), where))


def _on_exit(ctx: _Context, entry: Mapping[str, Any], where: str) -> bool:
    if "on_exit" not in entry:
        return False
    v = ctx.subst(entry["on_exit"], where)
    if v != "shutdown":
        raise ctx.err(where, f"on_exit: only 'shutdown' is supported, got {v!r}")
    return True


def _node(ctx: _Context, entry: Mapping[str, Any], where: str, index: int) -> ProcessSpec:
    _check_keys(ctx, entry, _NODE_KEYS, where)
    pkg = ctx.subst(_required(ctx, entry, "pkg", where), where)
    exe = ctx.subst(_required(ctx, entry, "exec", where), where)
    try:
        cmd = resolve_executable(pkg, exe)
    except LaunchError as e:
        if pkg != PKG:
            # Decided before the params are substituted: they may use what is missing too.
            raise _Skipped(f"{ctx.path.name}: {pkg}/{exe} is not installed: not started "
                           "(a full ROS 2 install starts it)") from None
        raise ctx.err(where, str(e)) from None
    name = ctx.subst(entry.get("name", ""), where)
    cmd += shlex.split(ctx.subst(entry.get("args", ""), where))
    ros: list[str] = ["--ros-args"]
    if name:
        ros += ["-r", f"__node:={name}"]
    if "namespace" in entry:
        ns = ctx.subst(entry["namespace"], where)
        ros += ["-r", f"__ns:={ns if ns.startswith('/') else '/' + ns}"]
    files: list[str] = []
    params = entry.get("param", [])
    if not isinstance(params, list):
        raise ctx.err(where, "param must be a list")
    for k, p in enumerate(params):
        pw = f"{where}.param[{k}]"
        if isinstance(p, Mapping) and set(p) == {"from"}:
            f = ctx.subst(p["from"], pw)
            files.append(f)
            ros += ["--params-file", f]
        elif isinstance(p, Mapping) and set(p) == {"name", "value"}:
            pname = ctx.subst(p["name"], pw)
            value = p["value"]
            if isinstance(value, list):
                value = "[" + ", ".join(ctx.subst(v, pw) for v in value) + "]"
            text = ctx.subst(value, pw)
            # rcl cannot parse "name:=" (an empty override): spell the empty string in YAML
            ros += ["-p", f"{pname}:={text if text != '' else chr(39) * 2}"]
        else:
            raise ctx.err(pw, "expected {from: file} or {name: n, value: v}")
    remaps = entry.get("remap", [])
    if not isinstance(remaps, list):
        raise ctx.err(where, "remap must be a list")
    for k, r in enumerate(remaps):
        rw = f"{where}.remap[{k}]"
        if not (isinstance(r, Mapping) and set(r) == {"from", "to"}):
            raise ctx.err(rw, "expected {from: a, to: b}")
        ros += ["-r", f"{ctx.subst(r['from'], rw)}:={ctx.subst(r['to'], rw)}"]
    ros += shlex.split(ctx.subst(entry.get("ros_args", ""), where))
    label = name or exe or f"node{index}"
    return ProcessSpec(label, tuple(_launch_prefix(ctx, entry, where) + cmd + ros),
                       _on_exit(ctx, entry, where), tuple(files))


def _executable(ctx: _Context, entry: Mapping[str, Any], where: str, index: int) -> ProcessSpec:
    _check_keys(ctx, entry, _EXEC_KEYS, where)
    cmd = shlex.split(ctx.subst(_required(ctx, entry, "cmd", where), where))
    if not cmd:
        raise ctx.err(where, "empty cmd")
    name = ctx.subst(entry.get("name", ""), where) or Path(cmd[0]).name or f"exec{index}"
    return ProcessSpec(name, tuple(_launch_prefix(ctx, entry, where) + cmd),
                       _on_exit(ctx, entry, where))


def _check_choice(ctx: _Context, entry: Mapping[str, Any], name: str, where: str) -> None:
    """An argument declared with ``choices`` (as ``ros2 launch`` reads them) takes one of them:
    a value outside is refused here, naming the argument and the choices, instead of reaching
    a node as a value it fails on later."""
    if "choices" not in entry:
        return
    choices = entry["choices"]
    if not isinstance(choices, list) or not choices or not all(
            isinstance(c, str) for c in choices):
        raise ctx.err(f"{where}.choices", f"expected a list of strings, got {choices!r}")
    if ctx.vars[name] not in choices:
        source = "given" if name in ctx.cli_args else "its default"
        raise ctx.err(where, f"launch argument {name}: {ctx.vars[name]!r} ({source}) is not one "
                      f"of {', '.join(choices)}")


def load_launch(path: str | os.PathLike[str], args: Mapping[str, str] | None = None) -> LaunchDescription:
    """Parse and resolve a launch file with ``name:=value`` style ``args``.

    ``path`` may also be a bare name (``sim`` or ``sim.launch.yaml``) found in the package's
    ``launch/`` directory.

    Raises:
        LaunchError: unreadable file, YAML error, unsupported construct, unknown or missing arg.
    """
    p = Path(path)
    if not p.exists():
        for cand in (launch_dir() / p.name, launch_dir() / f"{p.name}.launch.yaml"):
            if cand.exists():
                p = cand
                break
        else:
            raise LaunchError(f"launch file {path} not found (also looked in {launch_dir()})")
    try:
        doc = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        loc = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise LaunchError(f"{p.name}: YAML syntax error: {loc}{problem}") from None
    ctx = _Context(p, args or {})
    if not isinstance(doc, Mapping) or set(doc) != {"launch"} or not isinstance(doc["launch"], list):
        raise ctx.err("top level", "expected a mapping with a single key 'launch' holding a list")
    procs: list[ProcessSpec] = []
    notices: list[str] = []
    for i, item in enumerate(doc["launch"]):
        where = f"launch[{i}]"
        if not isinstance(item, Mapping) or len(item) != 1:
            raise ctx.err(where, "each entry must be a mapping with one key (arg, let, node, executable)")
        ((kind, entry),) = item.items()
        where = f"{where}.{kind}"
        if kind == "arg":
            _check_keys(ctx, entry, {"name", "default", "description", "choices"}, where)
            name = str(_required(ctx, entry, "name", where))
            if name in ctx.cli_args:
                ctx.vars[name] = ctx.cli_args[name]
                ctx.used_cli.add(name)
            elif "default" in entry:
                ctx.vars[name] = ctx.subst(entry["default"], where)
            else:
                raise ctx.err(where, f"launch argument {name!r} is required (pass {name}:=VALUE)")
            _check_choice(ctx, entry, name, where)
        elif kind == "let":
            _check_keys(ctx, entry, {"name", "value"}, where)
            ctx.vars[str(_required(ctx, entry, "name", where))] = ctx.subst(
                _required(ctx, entry, "value", where), where)
        elif kind in ("node", "executable"):
            if not isinstance(entry, Mapping):
                raise ctx.err(where, "expected a mapping")
            if not ctx.condition(entry, where):
                continue
            build = _node if kind == "node" else _executable
            try:
                procs.append(build(ctx, entry, where, i))
            except _Skipped as skip:
                notices.append(str(skip))
        else:
            raise ctx.err(where, f"unsupported entry {kind!r} (supported: arg, let, node, executable)")
    unknown = sorted(set(ctx.cli_args) - ctx.used_cli)
    if unknown:
        declared = sorted(k for k in ctx.vars)
        raise ctx.err("arguments", f"unknown launch argument(s) {unknown}; declared: {declared}")
    names = [s.name for s in procs]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ctx.err("nodes", f"duplicate process names {dups}")
    return LaunchDescription(p, dict(ctx.vars), tuple(procs), tuple(notices))
