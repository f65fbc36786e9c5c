"""The documentation holds together: generated reference pages match their sources, every relative
link and #anchor in the README and docs/ resolves, every ``docs/<page>.md#anchor`` that code,
configs or tests cite exists, the README's Python example runs, and the README and docs/ stay
within their size."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS.rglob("*.md")])

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CITE = re.compile(r"\bdocs/[\w./-]+\.md(?:#[\w-]+)?")


def _make_reference():
    spec = importlib.util.spec_from_file_location("make_reference",
                                                  ROOT / "scripts" / "make_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces → '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a Markdown page (duplicates numbered as GitHub numbers them)."""
    seen: dict[str, int] = {}
    out = set()
    text = _FENCE.sub("", page.read_text())
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def _resolve(source: Path, target: str) -> str | None:
    """Why ``target`` (a link in ``source``) does not resolve, or None."""
    if re.match(r"[a-z]+:", target) or target.startswith("//"):
        return None                                   # external: not checked offline
    path_part, _, anchor = target.partition("#")
    dest = (source.parent / path_part).resolve() if path_part else source
    if not dest.exists():
        return "no such file"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"no heading #{anchor}"
    return None


def test_slug_follows_github() -> None:
    assert slug("What the `ok` box rests on") == "what-the-ok-box-rests-on"
    assert slug("Unitree B1 + Z1 (`robot:=b1_z1`)") == "unitree-b1--z1-robotb1_z1"
    assert slug("Rows from integrated momentum") == "rows-from-integrated-momentum"


def test_reference_pages_are_generated_from_their_sources() -> None:
    stale = _make_reference().stale_pages()
    assert not stale, f"stale docs/reference pages {stale}: python scripts/make_reference.py"


def test_launch_arguments_take_their_node_parameters_defaults(tmp_path: Path) -> None:
    """A launch argument passed to a node parameter has the parameter table's default and
    choices (written by scripts/make_reference.py); a second value written by hand is stale and
    put back. Only the arguments of ``LAUNCH_OWNED`` keep a default of the graph's own."""
    make = _make_reference()
    assert not make.stale_launch_files(), "stale launch files: python scripts/make_reference.py"
    src = (ROOT / "launch" / "sim.launch.yaml").read_text()
    edited = src.replace('{name: hardware_seed, default: "0"', '{name: hardware_seed, default: "7"')
    edited = edited.replace('choices: ["realtime", "lockstep"]', 'choices: ["realtime"]')
    assert edited.count("\n") == src.count("\n") and edited != src
    (tmp_path / "sim.launch.yaml").write_text(edited)
    assert make.stale_launch_files(tmp_path) == ["sim.launch.yaml"]
    assert make.launch_text(tmp_path / "sim.launch.yaml") == src
    owned = set(make.LAUNCH_OWNED)
    used = {a for p in (ROOT / "launch").glob("*.launch.yaml") for a in owned
            if f"{{name: {a}," in p.read_text()}
    assert used == owned, f"LAUNCH_OWNED names no argument of a launch file: {owned - used}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert page.is_file(), f"{page.relative_to(ROOT)} is missing"
    text = _FENCE.sub("", page.read_text())
    bad = [f"{target}: {why}" for target in _LINK.findall(text)
           if (why := _resolve(page, target)) is not None]
    assert not bad, f"{page.relative_to(ROOT)}: broken links\n" + "\n".join(bad)


def test_cited_doc_pages_and_anchors_exist() -> None:
    """Code, configs, launch files and tests cite ``docs/<page>.md#anchor``; each must exist."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    for rel in files:
        path = ROOT / rel
        if path.suffix not in {".py", ".yaml", ".yml", ".md", ".sh", ".xml", ".cfg", ".toml"} \
                or not path.is_file():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for cite in _CITE.findall(line):
                page, _, anchor = cite.partition("#")
                dest = ROOT / page
                if not dest.is_file():
                    bad.append(f"{rel}:{n}: {cite} (no such page)")
                elif anchor and anchor not in anchors(dest):
                    bad.append(f"{rel}:{n}: {cite} (no such heading)")
    assert not bad, "stale citations of the docs:\n" + "\n".join(bad)


def test_no_frozen_section_numbers() -> None:
    """Docs are cited by page and heading anchor; a numbered section (a section sign and a number) is a number that
    freezes the page's structure. (The seed papers' own sections, ``S3 §V-A``, are not numbers.)"""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    for rel in files:
        path = ROOT / rel
        if path.suffix not in {".py", ".yaml", ".yml", ".md", ".sh", ".xml", ".xacro"} \
                or not path.is_file():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if re.search(r"§\s*\d", line):
                bad.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert not bad, "numbered section citations (cite docs/<page>.md#<anchor>):\n" + "\n".join(bad)


def test_readme_python_example_runs(tmp_path: Path) -> None:
    """The README's Python block, run as a user would paste it into a script."""
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert len(blocks) == 1, "the README has one Python example"
    assert len(blocks[0].splitlines()) <= 25
    script = tmp_path / "readme_example.py"
    script.write_text(blocks[0])
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "status: ok" in proc.stdout, proc.stdout[-2000:]


def test_readme_and_docs_stay_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
    size = sum(p.stat().st_size for p in DOCS.rglob("*") if p.is_file())
    assert size <= DOCS_BUDGET, f"docs/ is {size / 1000:.0f} kB, over {DOCS_BUDGET / 1000:.0f} kB"


#: Bytes: guide, reference, theory and results together (the generated reference is about 40 kB
#: of it). The goal the pages were condensed to; an addition pays for itself elsewhere.
DOCS_BUDGET = 120_000
