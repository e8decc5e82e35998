"""The core's layout holds its shape: subpackages by concept, small modules, arrows one way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "toolfront"
MAX_MODULE_LINES = 400
SUBPACKAGES = {"adapters", "admission", "approvals", "audit", "auth", "aws", "calls", "oauth", "tools"}


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
