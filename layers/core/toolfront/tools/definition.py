"""The tool definition: one operation a module offers, and every rule of the tool spec.

``Tool.new(**fields)`` fills the defaults and checks every rule, reporting all problems at once;
``Tool.try_new(**fields)`` answers ``(tool, [])`` or ``(None, errors)``. A ``Tool`` built any
other way (``Tool(...)``, ``dataclasses.replace``) can be checked again with ``tool.problems()``,
which is what the registry does with every tool a module returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Literal

from toolfront.auth.actors import PERMISSION, TOOL_SCOPE, Actor, ActorKind
from toolfront.errors import ToolDefinitionError
from toolfront.results import ToolResult
from toolfront.tools.approval_policy import ApprovalPolicy, policy_from
from toolfront.tools.presentation import check_presentation
from toolfront.tools.rules import CONTROL_FIELDS, ToolRules
from toolfront.tools.schema import check_schema
from toolfront.tools.validation import (
    InputError,
    InputValidator,
    integral_floats_as_ints,
    validator_for,
)

NAME_MAX_LENGTH = 100
COST_MAX = 1000

# <namespace>.<verb>_<noun>: one dot; the part after it is a verb and one or more _words.
_NAME = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def default_input_schema() -> dict[str, Any]:
    """The input schema of a tool that takes nothing."""
    return {"type": "object", "properties": {}, "additionalProperties": False}


class Audience(StrEnum):
    """Who may call a tool: ``admin`` (a key with scopes) or ``public`` (no key needed)."""

    ADMIN = "admin"
    PUBLIC = "public"


@dataclass(frozen=True, slots=True)
class Annotations:
    """Hints for clients; all false unless given."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False

    def as_dict(self) -> dict[str, bool]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a handler or a danger check knows about the call it serves.

    ``dry_run`` is true when a danger check runs: the check must decide without writing.
    """

    request_id: str
    tool: str
    # Never None: the pipeline and the approved-call runner always pass the caller; a context built
    # by hand (a test, a danger check's dry run) is an anonymous caller's.
    actor: Actor = field(default_factory=lambda: Actor(ActorKind.ANONYMOUS, ""))
    dry_run: bool = False
    client_token_hash: str | None = None  # the caller's client token, hashed (public tools)


Handler = Callable[[dict[str, Any], CallContext], "dict[str, Any] | ToolResult"]
DangerCheck = Callable[[dict[str, Any], CallContext], bool]
CostFunction = Callable[[dict[str, Any]], int]
Danger = Literal["always"] | DangerCheck | None
Cost = int | CostFunction | None


@dataclass(frozen=True, slots=True)
class Tool(ToolRules):
    """One operation, declared with the fields of the tool spec (snake_case)."""

    name: str
    audience: Audience
    handler: Handler
    scope: str | None = None
    permission: str | None = None
    title: str = ""
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=default_input_schema)
    output_schema: dict[str, Any] | None = None
    module: str | None = None
    annotations: Annotations = field(default_factory=Annotations)
    danger: Danger = None
    replay: bool = True
    client_token: str | None = None
    credentials: tuple[str, ...] = ()
    max_items: int | None = None
    cost: Cost = None
    # The MIME type(s) of the tool's files: the first is the default of a binary block that names
    # none; each is a type REST's Accept may ask for raw (OpenAPI lists them). One string or several.
    mime_type: str | tuple[str, ...] | None = None
    icons: tuple[dict[str, Any], ...] = ()  # {"src": https: or data: URI, "mime_type"?, "sizes"?}
    meta: dict[str, Any] | None = None  # sent as the tool's _meta on MCP
    approval: ApprovalPolicy | None = None  # who confirms a held call (None: one approver)
    search_hint: str | None = None  # words a search should find the tool by (MCP: anthropic/searchHint)
    always_load: bool = False  # clients that defer tool definitions load this one at once
    # Compiled on the first call, shared between tools with the same schema.
    _validator: InputValidator | None = field(default=None, init=False, repr=False, compare=False)
    _output_validator: InputValidator | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def new(cls, **fields_: Any) -> Tool:
        """Build a tool with the defaults filled in, or raise ``ToolDefinitionError`` with every problem."""
        tool, errors = cls.try_new(**fields_)
        if tool is None:
            raise ToolDefinitionError(errors, name=fields_.get("name"))
        return tool

    @classmethod
    def try_new(cls, **fields_: Any) -> tuple[Tool | None, list[str]]:
        """Build a tool; answer ``(tool, [])`` or ``(None, every problem)``."""
        errors = _unknown_fields(fields_)
        for required in ("name", "audience", "handler"):
            if fields_.get(required) is None:
                errors.append(f"{required} is required")
        if errors:
            return None, errors
        values = _normalise(fields_, errors)
        if errors:
            return None, errors
        tool = cls(**values)
        errors = tool.problems()
        return (None, errors) if errors else (tool, [])

    def problems(self) -> list[str]:
        """Every rule of the tool spec this tool breaks (empty when it is valid)."""
        return _problems(self)

    def validate_input(self, instance: Any) -> tuple[InputError, ...]:
        """Every error in ``instance`` against the input schema (empty when valid)."""
        validator = self._validator
        if validator is None:
            validator = validator_for(self.input_schema)
            object.__setattr__(self, "_validator", validator)
        return validator.errors(instance)

    def validate_output(self, instance: Any) -> tuple[InputError, ...]:
        """Every error in a success's ``instance`` against the output schema (empty when valid or
        when the tool declares none): the same restricted validator as for inputs."""
        if self.output_schema is None:
            return ()
        validator = self._output_validator
        if validator is None:
            validator = validator_for(self.output_schema)
            object.__setattr__(self, "_output_validator", validator)
        return validator.errors(instance)

    def with_integers(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` with integral floats made integers where the input schema says ``integer``
        (the handler, the fingerprint and the stores then see ``66``, never ``66.0``)."""
        fixed: dict[str, Any] = integral_floats_as_ints(self.input_schema, arguments)
        return fixed

    @property
    def mime_types(self) -> tuple[str, ...]:
        """``mime_type`` as a tuple: empty, one type, or the several declared."""
        if self.mime_type is None:
            return ()
        return (self.mime_type,) if isinstance(self.mime_type, str) else tuple(self.mime_type)

    def describe(self) -> dict[str, Any]:
        """The tool as JSON data: everything but the callables, which are named by kind."""
        return {
            "name": self.name,
            "module": self.module,
            "audience": str(self.audience),
            "scope": self.scope,
            "permission": self.permission,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "annotations": self.annotations.as_dict(),
            "danger": None if self.danger is None else ("always" if self.danger == "always" else "check"),
            "replay": self.replay,
            "client_token": self.client_token,
            "credentials": list(self.credentials),
            "max_items": self.max_items,
            "cost": self.cost if self.cost is None or isinstance(self.cost, int) else "dynamic",
            "mime_type": list(self.mime_type) if isinstance(self.mime_type, tuple) else self.mime_type,
            "icons": [dict(icon) for icon in self.icons],
            "meta": self.meta,
            "approval": self.approval.as_dict() if self.approval is not None else None,
            "search_hint": self.search_hint,
            "always_load": self.always_load,
        }


_FIELD_NAMES = frozenset(f.name for f in fields(Tool) if f.init)


def _unknown_fields(given: Mapping[str, Any]) -> list[str]:
    return [f"unknown field {name!r}" for name in sorted(set(given) - _FIELD_NAMES)]


def _normalise(given: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    """Fill the defaults and turn the friendly forms (dicts, strings, lists) into field types."""
    values = {k: v for k, v in given.items() if v is not None or k in ("danger", "cost")}
    audience = values["audience"]
    try:
        values["audience"] = Audience(audience)
    except ValueError:
        errors.append(f"audience must be 'admin' or 'public', got {audience!r}")
    if isinstance(values.get("name"), str):
        values.setdefault("title", values["name"])
    annotations = values.get("annotations")
    if isinstance(annotations, Mapping):
        unknown = sorted(set(annotations) - {f.name for f in fields(Annotations)})
        if unknown:
            errors.append(f"annotations has unknown hints: {', '.join(map(str, unknown))}")
        else:
            values["annotations"] = Annotations(**annotations)
    if "approval" in values:
        values["approval"] = policy_from(values["approval"], errors)
    for listed in ("credentials", "icons", "mime_type"):
        if isinstance(values.get(listed), list | tuple):
            values[listed] = tuple(values[listed])
    return values


def _problems(tool: Tool) -> list[str]:
    errors: list[str] = []
    _check_name(tool, errors)
    _check_access(tool, errors)
    _check_texts(tool, errors)
    _check_schemas(tool, errors)
    _check_behaviour(tool, errors)
    _check_client_token(tool, errors)
    check_presentation(tool, errors)
    return errors


def _check_name(tool: Tool, errors: list[str]) -> None:
    name = tool.name
    if not isinstance(name, str):
        errors.append(f"name must be a string, got {type(name).__name__}")
    elif len(name) > NAME_MAX_LENGTH:
        errors.append(f"name must be at most {NAME_MAX_LENGTH} characters, got {len(name)}")
    elif not _NAME.fullmatch(name):
        errors.append(
            f"name {name!r} must be '<namespace>.<verb>_<noun>' in lowercase, e.g. 'catalogue.set_prices'"
        )
    if tool.module is not None and not isinstance(tool.module, str):
        errors.append("module must be a string or None")


def _check_access(tool: Tool, errors: list[str]) -> None:
    if not isinstance(tool.audience, Audience):
        errors.append(f"audience must be 'admin' or 'public', got {tool.audience!r}")
        return
    exempt = tool.audience is Audience.PUBLIC or (isinstance(tool.name, str) and tool.is_system)
    why = "public tools" if tool.audience is Audience.PUBLIC else "core's system.* tools"
    for label, value, pattern, example in (
        ("scope", tool.scope, TOOL_SCOPE, "'catalogue.products:read'"),
        ("permission", tool.permission, PERMISSION, "'catalogue'"),
    ):
        if exempt:
            if value is not None:
                errors.append(f"{label} must be None for {why}, got {value!r}")
        elif value is None:
            errors.append(f"{label} is required for an admin tool")
        elif not isinstance(value, str) or not pattern.fullmatch(value):
            errors.append(f"{label} {value!r} is malformed, expected something like {example}")


def _check_texts(tool: Tool, errors: list[str]) -> None:
    for label in ("title", "description"):
        if not isinstance(getattr(tool, label), str):
            errors.append(f"{label} must be a string")
    if not callable(tool.handler):
        errors.append("handler must be a callable handler(input, ctx) -> dict or ToolResult")
    if not isinstance(tool.annotations, Annotations):
        errors.append("annotations must be a dict of hints or an Annotations object")
    elif not all(isinstance(v, bool) for v in tool.annotations.as_dict().values()):
        errors.append("annotations hints must be booleans")


def _check_schemas(tool: Tool, errors: list[str]) -> None:
    errors.extend(f"input_schema {p}" for p in check_schema(tool.input_schema))
    if isinstance(tool.input_schema, dict):
        properties = tool.input_schema.get("properties")
        reserved = sorted(CONTROL_FIELDS & set(properties)) if isinstance(properties, dict) else []
        errors.extend(f"input_schema may not declare the control field {name!r}" for name in reserved)
    if tool.output_schema is not None:
        errors.extend(f"output_schema {p}" for p in check_schema(tool.output_schema))


def _check_behaviour(tool: Tool, errors: list[str]) -> None:
    if not (tool.danger is None or tool.danger == "always" or callable(tool.danger)):
        errors.append(f"danger must be None, 'always' or a callable check(input, ctx), got {tool.danger!r}")
    if not isinstance(tool.replay, bool):
        errors.append(f"replay must be true or false, got {tool.replay!r}")
    if tool.max_items is not None and not _positive_int(tool.max_items):
        errors.append(f"max_items must be None or a positive integer, got {tool.max_items!r}")
    cost = tool.cost
    if not (cost is None or callable(cost) or (_positive_int(cost) and cost <= COST_MAX)):
        errors.append(
            f"cost must be None, an integer from 1 to {COST_MAX}, or a callable(input), got {cost!r}"
        )
    credentials = tool.credentials
    if not isinstance(credentials, tuple) or not all(isinstance(c, str) and c for c in credentials):
        errors.append("credentials must be a list of output field names")


def _check_client_token(tool: Tool, errors: list[str]) -> None:
    token = tool.client_token
    public = tool.audience is Audience.PUBLIC
    if token is None:
        if public and tool.danger is not None:
            errors.append("a public tool with a danger must declare a client_token (and require it)")
        return
    if not public:
        errors.append("client_token is only for public tools")
        return
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    prop = properties.get(token) if isinstance(properties, dict) and isinstance(token, str) else None
    if not isinstance(prop, dict) or prop.get("type") != "string":
        errors.append(f"client_token {token!r} must name a string property of input_schema")
    elif tool.danger is not None and token not in (schema.get("required") or []):
        errors.append(
            f"client_token {token!r} must be listed in input_schema's required (the tool has a danger)"
        )


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
