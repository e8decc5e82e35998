"""Generated JSON Schemas (pydantic's) rewritten into the portable subset tools declare (the contract's
"Input validation"): what every MCP client and model API accepts.

Local ``$ref``/``$defs`` are inlined, ``X | None`` becomes ``"type": [X, "null"]``, ``allOf`` of one
reference is merged, titles pydantic invents are dropped, objects are closed unless the model allows
extra fields. What the subset cannot say is refused with the field's path and the construct: a union
of objects, a recursive model, a discriminated union (``oneOf``), a dict with free keys, ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolfront.errors import ToolDefinitionError
from toolfront.tools.schema import SUPPORTED_FORMATS, SUPPORTED_KEYWORDS

_FORMATS = {"uuid4": "uuid", "uuid1": "uuid", "uuid3": "uuid", "uuid5": "uuid"}
_DROPPED = frozenset({"title"})  # pydantic's generated titles repeat the field names


def portable_schema(schema: Mapping[str, Any], *, what: str) -> dict[str, Any]:
    """``schema`` (a generated JSON Schema with its ``$defs``) in the portable subset.

    Args:
        what: names the schema in errors (``input`` or ``output``).

    Raises:
        ToolDefinitionError: every construct the subset cannot express, each with its field's path.
    """
    problems: list[str] = []
    rewritten = _rewrite(
        dict(schema), schema.get("$defs", {}), path=(), seen=(), what=what, problems=problems
    )
    if problems:
        raise ToolDefinitionError(problems)
    return rewritten


def _where(what: str, path: tuple[str, ...]) -> str:
    return f"{what} field {'.'.join(path)!r}" if path else f"the {what} model"


def _rewrite(
    node: dict[str, Any],
    defs: Mapping[str, Any],
    *,
    path: tuple[str, ...],
    seen: tuple[str, ...],
    what: str,
    problems: list[str],
) -> dict[str, Any]:
    def fail(construct: str, advice: str) -> dict[str, Any]:
        problems.append(f"{_where(what, path)}: {construct} cannot be expressed; {advice}")
        return {}

    ref = node.get("$ref")
    if ref is not None:
        name = str(ref).rsplit("/", 1)[-1]
        if not str(ref).startswith("#/$defs/") or name not in defs:
            return fail(f"a reference ({ref})", "define the type in the same model")
        if name in seen:
            return fail(f"a recursive model ({name})", "flatten it to a fixed depth")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _rewrite(merged, defs, path=path, seen=(*seen, name), what=what, problems=problems)
    if "oneOf" in node or "discriminator" in node:
        return fail("a discriminated union (oneOf)", "use one model with optional fields")
    if "allOf" in node:
        parts = node["allOf"]
        if len(parts) != 1:
            return fail("an intersection (allOf)", "use one model")
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return _rewrite({**parts[0], **rest}, defs, path=path, seen=seen, what=what, problems=problems)
    if "anyOf" in node:
        return _union(node, defs, path=path, seen=seen, what=what, problems=problems, fail=fail)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key == "$defs":
            continue
        if key == "properties":
            out[key] = {
                name: _rewrite(dict(sub), defs, path=(*path, name), seen=seen, what=what, problems=problems)
                for name, sub in value.items()
            }
        elif key == "items":
            if not isinstance(value, dict):
                return fail("a tuple (prefixItems)", "use a list of one type")
            out[key] = _rewrite(dict(value), defs, path=(*path, "0"), seen=seen, what=what, problems=problems)
        elif key == "additionalProperties":
            if value not in (True, False):
                return fail("a dict with free keys (additionalProperties)", "use a model with named fields")
            out[key] = value
        elif key == "format":
            found = _FORMATS.get(value, value)
            if found not in SUPPORTED_FORMATS:
                return fail(
                    f"the format {value!r}", f"use one of {', '.join(sorted(SUPPORTED_FORMATS))} or none"
                )
            out[key] = found
        elif key in SUPPORTED_KEYWORDS:
            out[key] = value
        else:
            return fail(f"the keyword {key!r}", "keep to the portable keywords (docs/contract.md, section 6)")
    if out.get("type") == "object" and "additionalProperties" not in out:
        out["additionalProperties"] = False  # a model is closed unless it allows extra fields
    return out


def _union(node: dict[str, Any], defs: Mapping[str, Any], *, fail: Any, **context: Any) -> dict[str, Any]:
    branches = [b for b in node["anyOf"] if b != {"type": "null"}]
    nullable = len(branches) < len(node["anyOf"])
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if len(branches) == 1:
        inner = _rewrite({**branches[0], **rest}, defs, **context)
        return _nullable(inner) if nullable else inner
    if all(set(b) == {"type"} and isinstance(b["type"], str) and b["type"] != "object" for b in branches):
        types = [b["type"] for b in branches] + (["null"] if nullable else [])
        return _rewrite({**rest, "type": types}, defs, **context)
    kinds = {str(b.get("type", "ref" if "$ref" in b else "?")) for b in branches}
    construct = "a union of objects (anyOf)" if kinds & {"object", "ref"} else "a union of types (anyOf)"
    return fail(construct, "use one model with optional fields")  # type: ignore[no-any-return]


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null."""
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    if "const" in schema:
        return {**{k: v for k, v in schema.items() if k != "const"}, "enum": [schema["const"], None]}
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "null" not in kind:
        return {**schema, "type": [*kind, "null"]}
    return schema
