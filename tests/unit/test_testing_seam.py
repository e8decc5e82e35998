"""The layer never imports the local stack's package: ``toolfront.testing`` finds its stack through
the ``toolfront.testing`` entry point, which the development package implements."""

from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path

from toolfront import testing

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "toolfront"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_module_of_the_layer_imports_toolfront_dev_not_even_lazily_or_for_types() -> None:
    offenders = {
        str(path.relative_to(CORE)): sorted(n for n in _imported(path) if n.split(".")[0] == "toolfront_dev")
        for path in sorted(CORE.rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_development_install_offers_the_local_stack_through_the_entry_point() -> None:
    (found,) = entry_points(group=testing.ENTRY_POINTS, name="local_stack")
    assert found.value == "toolfront_dev.testing_stack:open_stack"
    assert callable(found.load())
