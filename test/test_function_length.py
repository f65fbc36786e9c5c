"""No function in sysid_ros/ is longer than 80 lines (``def`` line to last line, docstring
included; nested functions counted on their own). The functions still waiting to be split into
their phases are listed by name below: the list may only shrink — a listed function that has
been split is a stale entry, and a function not listed that grows past the limit fails."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sysid_ros"
MAX_LINES = 80

#: ``path:qualified name`` of the functions over the limit that are still to be split.
PENDING: frozenset[str] = frozenset()


@functools.cache
def function_lengths(root: Path = PACKAGE) -> dict[str, int]:
    """``path:qualified name`` → number of lines of every function and method under ``root``."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, rel: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                assert child.end_lineno is not None
                out[f"{rel}:{name}"] = child.end_lineno - child.lineno + 1
                visit(child, rel, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, rel, prefix + child.name + ".")
            else:
                visit(child, rel, prefix)

    for path in sorted(root.rglob("*.py")):
        visit(ast.parse(path.read_text()), path.relative_to(root.parent).as_posix(), "")
    return out


def test_the_length_count_sees_methods_and_nested_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(3))
    (pkg / "m.py").write_text("class A:\n    def f(self):\n        def g():\n            pass\n"
                              f"{body}\n\n\ndef h():\n    return 1\n")
    lengths = {k.split(":", 1)[1]: v for k, v in function_lengths(pkg).items()}
    assert lengths == {"A.f": 6, "A.f.g": 2, "h": 2}


def test_no_function_over_the_limit_but_the_pending_ones() -> None:
    lengths = function_lengths()
    long = {name for name, n in lengths.items() if n > MAX_LINES}
    new = sorted(f"{name} ({lengths[name]} lines)" for name in long - PENDING)
    assert not new, (f"functions over {MAX_LINES} lines (split them into their phases):\n"
                     + "\n".join(new))


def test_pending_list_only_shrinks() -> None:
    lengths = function_lengths()
    stale = sorted(name for name in PENDING if lengths.get(name, 0) <= MAX_LINES)
    assert not stale, ("split or gone, remove from PENDING:\n" + "\n".join(stale))
