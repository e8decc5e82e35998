"""The tool families of this project: every ``functions/<family>/app.py`` with ``api_tools()``.

Loaded as Lambda loads them (from their own directory, under a name of their own), for the
manifest, the CLI's ``tools list`` and the local stack's Cognito resource server.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from toolfront.tools.manifest import MANIFEST_FILE
from toolfront.tools.registry import Registry

FUNCTIONS_DIR = "functions"
MANIFEST_PATH = Path("layers/core/toolfront") / MANIFEST_FILE


def load_app(project: Path, family: str) -> ModuleType:
    """Import ``functions/<family>/app.py`` as ``toolfront_family_<family>``."""
    path = project / FUNCTIONS_DIR / family / "app.py"
    name = f"toolfront_family_{family}"
    loaded = sys.modules.get(name)
    if loaded is not None and Path(loaded.__file__ or "") == path:  # another project's is loaded anew
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # the function's folder: its sibling modules, as Lambda
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def family_apps(project: Path) -> list[Path]:
    """The ``app.py`` of every family: one that declares ``api_tools`` or a ``Family``, by name."""
    found = []
    for app in sorted((project / FUNCTIONS_DIR).glob("*/app.py")):
        text = app.read_text(encoding="utf-8")
        if "def api_tools(" in text or "Family(" in text:
            found.append(app)
    return found


def as_family(module: ModuleType) -> Any:
    """What the registry reads of a family module: ``FAMILY`` and ``api_tools`` (a module declaring
    its tools with a ``toolfront.Family`` offers them through that object)."""
    from toolfront.family import Family

    if callable(getattr(module, "api_tools", None)):
        return module
    for value in vars(module).values():
        if isinstance(value, Family):
            return SimpleNamespace(FAMILY=value.name, api_tools=value.api_tools)
    return module


def family_modules(project: Path) -> list[Any]:
    """Every family module, sorted by name, as the registry reads it."""
    return [as_family(load_app(project, app.parent.name)) for app in family_apps(project)]


def build_registry(project: Path) -> Registry:
    return Registry.from_modules(family_modules(project))


def manifest_text(project: Path) -> str:
    """The manifest as the layer ships it (stable formatting, so diffs are readable): the tools, and
    the API's route keys from ``template.yaml`` (the gateway's ``$default`` answers 405 from them)."""
    manifest = build_registry(project).manifest()
    manifest["routes"] = api_routes(project)
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def api_routes(project: Path) -> list[str]:
    """Every route key of the project's HTTP API but ``$default``; none without a template."""
    from toolfront_dev.template import DEFAULT_ROUTE, load_template

    path = project / "template.yaml"
    if not path.exists():
        return []
    return sorted({r.route_key for r in load_template(path).routes if r.path != DEFAULT_ROUTE})


def write_manifest(project: Path) -> Path:
    path = project / MANIFEST_PATH
    path.write_text(manifest_text(project), encoding="utf-8")
    return path


def tool_scopes(manifest: dict[str, Any]) -> list[str]:
    """Every scope an admin tool needs: the Cognito resource server's custom scopes."""
    return sorted({t["scope"] for t in manifest["tools"] if t["scope"]})
