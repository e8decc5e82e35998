"""The core's layout holds its shape: subpackages by concept, small modules, arrows one way, and the
import table of docs/architecture.md says exactly which part imports which."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "toolfront"
ARCHITECTURE = CORE.parents[2] / "docs" / "architecture.md"
MAX_MODULE_LINES = 400
SUBPACKAGES = {"adapters", "admission", "approvals", "audit", "auth", "aws", "calls", "oauth", "tools"}
IMPORT_SECTION = "## Import graph"
MUTUAL_SECTION = "### Mutual imports"
_TABLE_ROW = re.compile(r"^(\w+)\s+->\s*(.*)$")
_MUTUAL_PAIR = re.compile(r"`(\w+)` ↔ `(\w+)`")


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(CORE.rglob("*.py"))}


def _runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The core modules ``path`` imports when it runs (``TYPE_CHECKING`` blocks do not count)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            skipped.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("toolfront"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
    return found - {"toolfront"}


def test_the_top_level_names_the_concepts() -> None:
    packages = {path.name for path in CORE.iterdir() if (path / "__init__.py").exists()}
    assert packages == SUBPACKAGES


@pytest.mark.parametrize("package", sorted(SUBPACKAGES))
def test_subpackage_inits_are_empty(package: str) -> None:
    for init in (CORE / package).rglob("__init__.py"):
        assert init.read_text(encoding="utf-8").strip() == "", init


def test_no_module_is_over_the_size_limit() -> None:
    long = {
        name: lines
        for name, path in _modules().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_import_cycle_between_core_modules() -> None:
    modules = _modules()
    graph = {name: _runtime_imports(path, set(modules)) & set(modules) for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycle = [*path[path.index(name) :], name]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, [*path, name])
        done.add(name)

    for name in sorted(graph):
        if name != "toolfront":  # the package's lazy re-exports import nothing at run time
            visit(name, [])


def test_every_module_says_what_it_owns() -> None:
    silent = [
        name
        for name, path in _modules().items()
        if path.name != "__init__.py" and not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert silent == []


def test_the_version_is_written_once_in_code_and_matches_the_package() -> None:
    import tomllib

    import toolfront

    project = tomllib.loads((CORE.parents[2] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert toolfront.__version__ == project["version"]


def _part(module: str) -> str:
    """The part of the core a module belongs to: its subpackage, or the top-level module itself."""
    return module.split(".")[1]


def _code_arrows() -> dict[tuple[str, str], list[str]]:
    """Every run-time import from one part of the core to another, with the modules that make it."""
    modules = _modules()
    arrows: dict[tuple[str, str], list[str]] = {}
    for name, path in modules.items():
        if name == "toolfront":
            continue
        for target in sorted(_runtime_imports(path, set(modules))):
            if target.startswith("toolfront.") and _part(target) != _part(name):
                arrows.setdefault((_part(name), _part(target)), []).append(name)
    return arrows


def _section(text: str, heading: str) -> str:
    """The text under ``heading``, up to the next heading of the same or a higher level."""
    assert heading in text, f"docs/architecture.md has no {heading!r}"
    level = heading.split(" ", 1)[0]
    after = text.split(heading, 1)[1]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", after, flags=re.MULTILINE)]
    return after[: ends[0]] if ends else after


def _doc_table() -> dict[str, set[str]]:
    """The import table of docs/architecture.md: ``part -> a, b (why), c`` per row of its first
    fenced block, an indented line going on with the row above (a parenthesis explains, it names
    no part; ``(nothing)`` is no arrow)."""
    section = _section(ARCHITECTURE.read_text(encoding="utf-8"), IMPORT_SECTION)
    rows: dict[str, str] = {}
    for line in section.split("```", 2)[1].splitlines():
        row = _TABLE_ROW.match(line)
        if row is not None:
            assert row.group(1) not in rows, f"{row.group(1)} has two rows"
            rows[row.group(1)] = row.group(2)
        elif line.startswith(" ") and rows:
            last = next(reversed(rows))
            rows[last] += " " + line.strip()
    return {
        part: {t.strip() for t in re.split(r"[,;]", re.sub(r"\([^()]*\)", "", text)) if t.strip()}
        for part, text in rows.items()
    }


def _code_parts() -> set[str]:
    return {_part(name) for name in _modules() if name != "toolfront"}


def test_architecture_import_table_names_every_part_of_the_core_once() -> None:
    assert set(_doc_table()) == _code_parts()


def test_architecture_import_table_lists_exactly_the_imports_the_code_makes() -> None:
    code = _code_arrows()
    doc = {(source, target) for source, targets in _doc_table().items() for target in targets}
    missing = [f"{a} -> {b} (made by {', '.join(code[a, b])})" for a, b in sorted(set(code) - doc)]
    extra = [f"{a} -> {b}" for a, b in sorted(doc - set(code))]
    problems = [f"missing from the table: {arrow}" for arrow in missing]
    problems += [f"in the table, not in the code: {arrow}" for arrow in extra]
    assert not problems, "docs/architecture.md, Import graph:\n" + "\n".join(problems)


def test_architecture_doc_explains_every_mutual_import_between_parts() -> None:
    code = _code_arrows()
    mutual = {frozenset(pair) for pair in code if pair[::-1] in code}
    section = _section(ARCHITECTURE.read_text(encoding="utf-8"), MUTUAL_SECTION)
    explained = {frozenset(pair) for pair in _MUTUAL_PAIR.findall(section)}
    problems = [f"mutual, not explained: {' ↔ '.join(sorted(pair))}" for pair in mutual - explained]
    problems += [f"explained, no longer mutual: {' ↔ '.join(sorted(pair))}" for pair in explained - mutual]
    assert not problems, f"docs/architecture.md, {MUTUAL_SECTION}:\n" + "\n".join(sorted(problems))
