"""Reads template.yaml: the HttpApi routes of every function and every DynamoDB table.

The local stack is built from this parse alone, so it cannot drift from what SAM deploys.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolfront_dev.errors import TemplateError

FUNCTION_TYPE = "AWS::Serverless::Function"
TABLE_TYPE = "AWS::DynamoDB::Table"
DEFAULT_ROUTE = "$default"
HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "ANY"})
# Lambda's own defaults, used when neither the function nor Globals.Function sets a value.
DEFAULT_MEMORY_MB = 128
DEFAULT_TIMEOUT_SECONDS = 3

_PLACEHOLDER = re.compile(r"^\{[A-Za-z0-9_.-]+\+?\}$")


@dataclass(frozen=True, slots=True)
class Route:
    """One HttpApi event: ``method`` upper-case (or ``ANY``), ``path`` with ``{p}``/``{p+}`` placeholders."""

    function_id: str
    method: str
    path: str

    @property
    def route_key(self) -> str:
        """The API Gateway route key, e.g. ``POST /v1/tools/catalogue/{verb_noun}``."""
        return DEFAULT_ROUTE if self.path == DEFAULT_ROUTE else f"{self.method} {self.path}"


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """An ``AWS::Serverless::Function`` with Globals.Function applied.

    ``environment`` and ``function_name`` (the ``FunctionName`` property, None when unset) hold the
    template's raw values: intrinsics such as ``{"Ref": "KeysTable"}`` are left to
    :class:`~toolfront_dev.intrinsics.Intrinsics`, as their values depend on the running stack.
    """

    logical_id: str
    code_uri: Path
    handler: str
    environment: Mapping[str, Any]
    memory_size_mb: int
    timeout_seconds: int
    routes: tuple[Route, ...]
    condition: str | None = None
    function_name: Any = None

    @property
    def handler_module(self) -> str:
        """The dotted module part of ``Handler`` (``app`` for ``app.lambda_handler``)."""
        return self.handler.rpartition(".")[0]

    @property
    def handler_function(self) -> str:
        """The function part of ``Handler`` (``lambda_handler`` for ``app.lambda_handler``)."""
        return self.handler.rpartition(".")[2]


@dataclass(frozen=True, slots=True)
class KeyElement:
    """One entry of a KeySchema."""

    attribute_name: str
    key_type: str


@dataclass(frozen=True, slots=True)
class AttributeDefinition:
    """One entry of AttributeDefinitions."""

    attribute_name: str
    attribute_type: str


@dataclass(frozen=True, slots=True)
class SecondaryIndex:
    """A global secondary index (its throughput settings do not matter on demand)."""

    index_name: str
    key_schema: tuple[KeyElement, ...]
    projection_type: str
    non_key_attributes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TimeToLive:
    """A table's TimeToLiveSpecification."""

    attribute_name: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class TableSpec:
    """An ``AWS::DynamoDB::Table``: what the local stack needs to create it."""

    logical_id: str
    key_schema: tuple[KeyElement, ...]
    attribute_definitions: tuple[AttributeDefinition, ...]
    global_secondary_indexes: tuple[SecondaryIndex, ...]
    time_to_live: TimeToLive | None
    condition: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """Any other resource, properties unevaluated: the local stack emulates some types (Cognito)."""

    logical_id: str
    type: str
    properties: Mapping[str, Any]
    condition: str | None = None


@dataclass(frozen=True, slots=True)
class Template:
    """The parts of template.yaml the local stack serves."""

    path: Path
    parameter_defaults: Mapping[str, str | None]
    conditions: Mapping[str, Any]
    functions: tuple[FunctionSpec, ...]
    tables: tuple[TableSpec, ...]
    resources: tuple[ResourceSpec, ...] = ()
    parameter_specs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def routes(self) -> tuple[Route, ...]:
        """Every HttpApi route of every function, in template order."""
        return tuple(route for function in self.functions for route in function.routes)

    def function(self, logical_id: str) -> FunctionSpec:
        """The function with this logical id; ``KeyError`` if there is none."""
        for function in self.functions:
            if function.logical_id == logical_id:
                return function
        raise KeyError(logical_id)


@functools.lru_cache(maxsize=16)
def _decoded(path: str, digest: str) -> tuple[Any, tuple[Any, ...]]:
    """cfn-lint's parse of the file whose content has ``digest``: parsing template.yaml takes ~60 ms,
    and the local stack and the tests load it many times. Read only (``_plain`` copies it)."""
    from cfnlint.decode import decode  # type: ignore[import-untyped]  # deferred: importing cfn-lint is slow

    raw, problems = decode(path)
    return raw, tuple(problems or ())


def load_template(path: Path | str) -> Template:
    """Parse a SAM template (``!Ref``/``!Sub`` included) into functions, routes and tables.

    Raises:
        TemplateError: the file is missing or unparsable, or a route or table is malformed.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise TemplateError(f"no SAM template at {path}")
    raw, problems = _decoded(str(path), hashlib.sha256(path.read_bytes()).hexdigest())
    if problems or not isinstance(raw, Mapping):
        details = "; ".join(str(problem) for problem in problems) or "not a mapping"
        raise TemplateError(f"cannot parse {path}: {details}")
    template = _plain(raw)
    resources = template.get("Resources") or {}
    globals_ = (template.get("Globals") or {}).get("Function") or {}
    functions: list[FunctionSpec] = []
    tables: list[TableSpec] = []
    others: list[ResourceSpec] = []
    for logical_id, resource in resources.items():
        kind, condition = resource.get("Type"), resource.get("Condition")
        props = resource.get("Properties") or {}
        if kind == FUNCTION_TYPE:
            functions.append(_function(logical_id, props, globals_, path.parent, condition))
        elif kind == TABLE_TYPE:
            tables.append(_table(logical_id, props, condition))
        else:
            others.append(ResourceSpec(logical_id, str(kind), props, condition))
    defaults = {
        name: None if spec.get("Default") is None else str(spec["Default"])
        for name, spec in (template.get("Parameters") or {}).items()
    }
    return Template(
        path=path,
        parameter_defaults=defaults,
        conditions=template.get("Conditions") or {},
        functions=tuple(functions),
        tables=tuple(tables),
        resources=tuple(others),
        parameter_specs={name: dict(spec) for name, spec in (template.get("Parameters") or {}).items()},
    )


def _function(
    logical_id: str, props: Mapping[str, Any], globals_: Mapping[str, Any], base: Path, condition: str | None
) -> FunctionSpec:
    code_uri, handler = props.get("CodeUri"), props.get("Handler")
    if not isinstance(code_uri, str) or not isinstance(handler, str) or "." not in handler:
        raise TemplateError(f"{logical_id}: needs a local CodeUri and a Handler of the form module.function")
    environment = {
        **_variables(globals_.get("Environment")),
        **_variables(props.get("Environment")),
    }
    routes = tuple(
        _route(logical_id, name, event.get("Properties") or {})
        for name, event in (props.get("Events") or {}).items()
        if event.get("Type") == "HttpApi"
    )
    return FunctionSpec(
        logical_id=logical_id,
        code_uri=(base / code_uri).resolve(),
        handler=handler,
        environment=environment,
        memory_size_mb=_integer(props, globals_, "MemorySize", DEFAULT_MEMORY_MB, logical_id),
        timeout_seconds=_integer(props, globals_, "Timeout", DEFAULT_TIMEOUT_SECONDS, logical_id),
        routes=routes,
        condition=condition,
        function_name=props.get("FunctionName"),
    )


def _variables(environment: Any) -> dict[str, Any]:
    variables = (environment or {}).get("Variables") if isinstance(environment, Mapping) else None
    return dict(variables or {})


def _integer(
    props: Mapping[str, Any], globals_: Mapping[str, Any], key: str, default: int, owner: str
) -> int:
    value = props.get(key, globals_.get(key, default))
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        raise TemplateError(f"{owner}: {key} must be a literal integer locally, got {value!r}")
    return int(value)


def _route(function_id: str, event_name: str, props: Mapping[str, Any]) -> Route:
    # SAM's HttpApi event without Path and Method is the catch-all $default route.
    path = props.get("Path", DEFAULT_ROUTE)
    method = str(props.get("Method", "ANY")).upper()
    where = f"{function_id} event {event_name}"
    if method not in HTTP_METHODS:
        raise TemplateError(f"{where}: unsupported method {method!r}")
    if not isinstance(path, str) or (path != DEFAULT_ROUTE and not path.startswith("/")):
        raise TemplateError(f"{where}: Path must be a literal starting with '/', got {path!r}")
    if path != DEFAULT_ROUTE:
        segments = path.split("/")[1:]
        for index, segment in enumerate(segments):
            if "{" in segment and not _PLACEHOLDER.match(segment):
                raise TemplateError(f"{where}: a placeholder must be a whole segment, got {segment!r}")
            if segment.endswith("+}") and index != len(segments) - 1:
                raise TemplateError(f"{where}: a greedy {segment} must be the last segment")
    return Route(function_id=function_id, method=method, path=path)


def _table(logical_id: str, props: Mapping[str, Any], condition: str | None) -> TableSpec:
    try:
        ttl = props.get("TimeToLiveSpecification")
        return TableSpec(
            logical_id=logical_id,
            key_schema=_key_schema(props["KeySchema"]),
            attribute_definitions=tuple(
                AttributeDefinition(d["AttributeName"], d["AttributeType"])
                for d in props["AttributeDefinitions"]
            ),
            global_secondary_indexes=tuple(
                SecondaryIndex(
                    index_name=index["IndexName"],
                    key_schema=_key_schema(index["KeySchema"]),
                    projection_type=index.get("Projection", {}).get("ProjectionType", "ALL"),
                    non_key_attributes=tuple(index.get("Projection", {}).get("NonKeyAttributes", ())),
                )
                for index in props.get("GlobalSecondaryIndexes") or ()
            ),
            time_to_live=TimeToLive(ttl["AttributeName"], bool(ttl.get("Enabled", False))) if ttl else None,
            condition=condition,
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise TemplateError(f"{logical_id}: malformed table definition ({exc!r})") from exc


def _key_schema(entries: Any) -> tuple[KeyElement, ...]:
    return tuple(KeyElement(entry["AttributeName"], entry["KeyType"]) for entry in entries)


def _plain(value: Any) -> Any:
    """Copy cfn-lint's node classes into plain dicts, lists and strings."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value
