"""toolfront: a serverless tool API for AWS (the core that every function's layer carries).

What tool authors use is importable from here; each name is imported on first use, so that
``import toolfront`` (the CLI, a family module's first line) loads nothing it does not need.

Importing it also freezes what the process holds so far (``gc.freeze``): the interpreter, the Lambda
runtime and whatever the function loaded first, e.g. boto3 and a client made at module level. Those
live as long as the process. Without this, the process's first full collection, due right after
boto3 and a client are made, landed in toolfront's import and walked all of them: 30-45 ms of the
cold import measured over that floor (bench/README.md, "Cold imports"), and again at every later
full collection. Where toolfront is imported before boto3, little is frozen and little saved. A
frozen object is never collected, so a cycle that is garbage at this moment stays; what is made
afterwards is collected as before.
"""

from __future__ import annotations

import gc
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolfront.errors import (
        DuplicateToolError,
        RegistryError,
        ToolDefinitionError,
        ToolError,
        ToolfrontError,
    )
    from toolfront.family import Family
    from toolfront.results import ToolResult
    from toolfront.tools.definition import Annotations, Audience, CallContext, Tool
    from toolfront.tools.registry import Registry
    from toolfront.tools.validation import InputError
    from toolfront.wiring import family_handler

gc.freeze()

__version__ = "0.1.0"  # the package's version (pyproject.toml), also MCP's serverInfo and OpenAPI's

#: Public name -> the module that defines it.
_EXPORTS = {
    "Annotations": "toolfront.tools.definition",
    "Audience": "toolfront.tools.definition",
    "CallContext": "toolfront.tools.definition",
    "Tool": "toolfront.tools.definition",
    "Registry": "toolfront.tools.registry",
    "InputError": "toolfront.tools.validation",
    "ToolResult": "toolfront.results",
    "Family": "toolfront.family",
    "DuplicateToolError": "toolfront.errors",
    "RegistryError": "toolfront.errors",
    "ToolDefinitionError": "toolfront.errors",
    "ToolError": "toolfront.errors",
    "ToolfrontError": "toolfront.errors",
    "family_handler": "toolfront.wiring",
}

__all__ = [
    "Annotations",
    "Audience",
    "CallContext",
    "DuplicateToolError",
    "Family",
    "InputError",
    "Registry",
    "RegistryError",
    "Tool",
    "ToolDefinitionError",
    "ToolError",
    "ToolResult",
    "ToolfrontError",
    "family_handler",
    "results",
]


def __getattr__(name: str) -> Any:
    if name in ("results", "dynamodb"):  # submodules tool authors use: import_module binds them here
        return import_module(f"toolfront.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolfront' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
