"""The rules that follow from a tool's declared fields, written once.

A ``Tool`` (a function's own tools) and a ``ToolInfo`` (a manifest entry: every family's tools, read
without their code) both answer these rules through ``ToolRules``, so REST, MCP, OpenAPI and the
docs page cannot disagree about whether a tool takes an ``idempotency_key``, what a call costs or
whether it can be held for a person.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

SYSTEM_NAMESPACE = "system"
#: Control fields core adds to inputs; a tool's own schema may not declare them.
CONTROL_FIELDS = frozenset({"idempotency_key"})
#: The default cost of an admin write, as the docs state it (``default_cost`` computes it).
ADMIN_WRITE_COST = "max(1, ceil(longest list / 50))"
_ITEMS_PER_UNIT = 50
MCP_NAME_MAX = 64  # the model APIs' limit on a tool's name
_HASHED_PREFIX = 55  # a longer name keeps 55 characters, a dash and 8 hex digits of its SHA-256


def mcp_name(name: str) -> str:
    """A tool's name on MCP: its dot as a dash (the model APIs' tool-name rule refuses a dot), and a
    name over 64 characters shortened with a hash."""
    flat = name.replace(".", "-")
    if len(flat) <= MCP_NAME_MAX:
        return flat
    return f"{flat[:_HASHED_PREFIX]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def longest_list(value: Any) -> int:
    """The length of the longest list anywhere in ``value`` (0 when there is none)."""
    if isinstance(value, list):
        return max([len(value), *(longest_list(v) for v in value)])
    if isinstance(value, dict):
        return max((longest_list(v) for v in value.values()), default=0)
    return 0


class ToolRules:
    """The derived rules, for any class with a tool's ``name``, ``audience``, ``annotations``,
    ``replay``, ``danger``, ``credentials`` and ``client_token``."""

    __slots__ = ()

    name: str
    audience: Any  # Audience (a StrEnum: compares equal to "admin" / "public")
    annotations: Any  # Annotations
    replay: bool
    danger: Any
    credentials: tuple[str, ...]
    client_token: str | None

    @property
    def is_system(self) -> bool:
        """Core's own ``system.*`` tools: no scope or permission, never held."""
        return self.name.split(".", 1)[0] == SYSTEM_NAMESPACE

    @property
    def is_read_only(self) -> bool:
        return bool(self.annotations.read_only)

    @property
    def is_admin_write(self) -> bool:
        """An admin tool that writes: its default cost grows with its batch, and big batches are held."""
        return self.audience == "admin" and not self.is_read_only

    @property
    def offers_idempotency(self) -> bool:
        """Whether a retry with the same ``idempotency_key`` gets the first answer back."""
        return bool(self.replay) and not self.is_read_only

    @property
    def may_be_held(self) -> bool:
        """Whether a call can wait for a person (a danger, or any write: a ``requires_approval``
        key holds them all); never core's own tools, which read, cancel or confirm held calls
        (holding them would deadlock)."""
        return not self.is_system and (self.danger is not None or not self.is_read_only)

    @property
    def secret_fields(self) -> tuple[str, ...]:
        """The fields redacted from every sink besides the names that always are (credentials,
        and the client token)."""
        return (*self.credentials, *((self.client_token,) if self.client_token else ()))

    def default_cost(self, raw_input: Any) -> int:
        """Units a call costs when the tool declares no cost: 1, or for an admin write
        ``max(1, ceil(longest list / 50))``."""
        if self.is_admin_write:
            return max(1, math.ceil(longest_list(raw_input) / _ITEMS_PER_UNIT))
        return 1

    def batch_needs_confirmation(self, data: Any, batch_confirm_items: int) -> bool:
        """An admin write whose longest list is over the deployment's batch threshold."""
        return self.is_admin_write and longest_list(data) > batch_confirm_items


def cost_of(tool: Any, raw_input: Any) -> int:
    """Units one call of ``tool`` (a ``Tool``) costs: its fixed cost, its cost function's answer,
    or the default rule (also when the cost function fails or answers something else)."""
    if isinstance(tool.cost, int):
        return int(tool.cost)
    if callable(tool.cost):
        try:
            cost = tool.cost(raw_input)
        except Exception:  # the spec: a failing cost function falls back to the default rule
            cost = None
        if isinstance(cost, int) and not isinstance(cost, bool) and cost >= 1:
            return cost
    return int(tool.default_cost(raw_input))
