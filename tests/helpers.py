"""Small helpers the suites share: one free port, one event loader, one way to build a family."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from toolfront import Tool
from toolfront_dev.net import free_port

EVENTS = Path(__file__).resolve().parents[1] / "events"

__all__ = ["EVENTS", "family", "free_port", "load_event"]


def load_event(name: str, **changes: Any) -> dict[str, Any]:
    """``events/<name>.json`` (the events ``sam local invoke`` takes), with top-level fields changed."""
    loaded: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    loaded.update(changes)
    return loaded


def family(name: str, tools: Callable[[], list[Tool]]) -> SimpleNamespace:
    """A family module as the registry reads one: its ``FAMILY`` and ``api_tools``."""
    return SimpleNamespace(FAMILY=name, api_tools=tools)
