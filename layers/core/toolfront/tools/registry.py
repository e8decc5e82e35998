"""The registry: every tool a process serves, collected from modules, looked up by name in O(1).

A module offers tools from ``api_tools() -> list[Tool]`` (a plain dict of tool fields is taken
too). The registry fills in ``module``, ignores an invalid tool with one warning per module (the
module's other tools still register), ignores a module's ``system.*`` tools (that namespace belongs
to core, whose tools skip the scope and permission checks), and refuses two tools with one name.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any

from toolfront.errors import DuplicateToolError
from toolfront.tools.definition import Tool

logger = logging.getLogger(__name__)

MANIFEST_VERSION = 1


def module_name(module: ModuleType | Any) -> str:
    """A module's family name: its ``FAMILY`` attribute, else the last part of its import name."""
    family = getattr(module, "FAMILY", None)
    if isinstance(family, str) and family:
        return family
    return str(getattr(module, "__name__", type(module).__name__)).rsplit(".", 1)[-1]


class Registry:
    """An immutable set of tools, by name."""

    __slots__ = ("_tools",)

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        by_name: dict[str, Tool] = {}
        for tool in tools:
            first = by_name.get(tool.name)
            if first is not None:
                raise DuplicateToolError(
                    f"tool {tool.name!r} is declared twice (modules {first.module!r} and {tool.module!r})"
                )
            by_name[tool.name] = tool
        # Sorted once so listings are deterministic without sorting per request.
        self._tools = dict(sorted(by_name.items()))

    @classmethod
    def from_modules(
        cls, modules: Iterable[ModuleType | Any], *, core_tools: Iterable[Tool] = ()
    ) -> Registry:
        """Collect the tools of ``modules`` (plus core's own ``system.*`` tools)."""
        collected = list(core_tools)
        for module in modules:
            collected.extend(collect_module_tools(module))
        return cls(collected)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def manifest(self) -> dict[str, Any]:
        """Every tool as JSON data, sorted by name: what MCP, OpenAPI and routing are built from."""
        return {"version": MANIFEST_VERSION, "tools": [tool.describe() for tool in self._tools.values()]}


def collect_module_tools(module: ModuleType | Any) -> list[Tool]:
    """The valid, non-system tools a module offers, with ``module`` filled in; warns about the rest."""
    name = module_name(module)
    api_tools = getattr(module, "api_tools", None)
    if not callable(api_tools):
        logger.warning("module %s has no api_tools(); it offers no tools", name)
        return []
    try:
        offered = list(api_tools())
    except Exception as exc:  # a broken module must not take the other modules down with it
        logger.warning(
            "module %s: api_tools() failed (%s: %s); its tools are ignored", name, type(exc).__name__, exc
        )
        return []
    accepted: list[Tool] = []
    invalid: list[str] = []
    system: list[str] = []
    for item in offered:
        tool, errors = _as_tool(item, name)
        if tool is None:
            label = item.get("name") if isinstance(item, Mapping) else getattr(item, "name", repr(item))
            invalid.append(f"{label!r} ({'; '.join(errors)})")
        elif tool.is_system:
            system.append(tool.name)
        else:
            accepted.append(tool)
    if invalid:
        logger.warning("module %s: ignored %d invalid tool(s): %s", name, len(invalid), ", ".join(invalid))
    if system:
        logger.warning(
            "module %s: ignored tool(s) in core's system namespace: %s", name, ", ".join(sorted(system))
        )
    return accepted


def _as_tool(item: Any, module: str) -> tuple[Tool | None, list[str]]:
    if isinstance(item, Tool):
        tool = dataclasses.replace(item, module=module)
        errors = tool.problems()
        return (None, errors) if errors else (tool, [])
    if isinstance(item, Mapping):
        return Tool.try_new(**{**item, "module": module})
    return None, [f"not a Tool but {type(item).__name__}"]
