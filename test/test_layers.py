"""The package's layers point one way, and no module imports itself round a cycle.

Every import of every module under ``sysid_ros/_src/`` is read from its source (function-level imports
too; those under ``if TYPE_CHECKING:`` are type hints only and never run). A subpackage may
import its own modules and those of strictly lower layers, never a higher or an equal one.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "sysid_ros" / "_src"

#: Lowest first. The model knows robots and parameters; the enclosures (interval kinematics),
#: bag input/output and the launcher build on it alone; the simulator and the identifier on
#: those; calibration and the controller on the identifier; the planner certifies the controller.
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(x) for x in (
    {"errors", "paths"},
    {"cli_messages", "cdr", "schema", "param_table", "sample_screen", "progress"},
    {"batch"},
    {"model"},
    {"enclosures", "bagio", "launcher"},
    {"simulation", "identification"},
    {"calibration", "control"},
    {"planning"},
    {"visualization"},
    {"nodes"},
    {"demo"},
))


def _unit(path: Path) -> str:
    """The layer unit of a module: its subpackage, or the top-level module's name."""
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parents[1]).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _runtime_imports(path: Path) -> list[tuple[str, int]]:
    """(imported module name, line) of every import that can run."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            out.append((base, node.lineno))
            out += [(f"{base}.{a.name}", node.lineno) for a in node.names]
    return [(m, line) for m, line in out if m.startswith("sysid_ros._src.")]


def _sources() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if p != ROOT / "__init__.py")


def test_every_unit_has_a_layer():
    units = {_unit(p) for p in _sources()}
    placed = set().union(*LAYERS)
    assert units <= placed, f"place these in LAYERS: {sorted(units - placed)}"


def test_imports_point_down():
    level = {u: k for k, layer in enumerate(LAYERS) for u in layer}
    wrong = []
    for path in _sources():
        src = _unit(path)
        for name, line in _runtime_imports(path):
            dst = name.split(".")[2]
            if dst != src and dst in level and level[dst] >= level[src]:
                wrong.append(f"{path.relative_to(ROOT.parents[1])}:{line} ({src}) imports {name}")
    assert not wrong, "imports that do not point down:\n" + "\n".join(sorted(set(wrong)))


def test_no_import_cycle():
    modules = {_module(p): p for p in _sources()}
    edges: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        edges[mod] |= {name for name, _ in _runtime_imports(path)
                       if name in modules and name != mod}
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for mod in modules:
        if mod not in index:
            visit(mod)
    assert not cycles, f"import cycles: {cycles}"
