"""Shared fixtures: the family modules loaded the way Lambda loads them (from their CodeUri)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_family(name: str) -> ModuleType:
    """Import ``functions/<name>/app.py`` under a name of its own (every family's module is ``app``)."""
    path = ROOT / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"family_{name}_app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def catalogue() -> ModuleType:
    return load_family("catalogue")
