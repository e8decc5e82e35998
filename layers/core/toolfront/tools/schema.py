"""The schema check: which JSON Schema a tool may declare (docs/contract.md, "Input validation").

A schema passes when it uses only the supported keywords and formats, its patterns compile, and
it is a valid Draft 2020-12 schema. The result is cached per distinct schema (by canonical JSON)
in a bounded LRU, so a schema built at run time can never grow memory without limit, and a cold
start pays the check once per distinct schema, not once per tool.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import jsonschema_rs

from toolfront.encoding import canonical_json

SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        # annotations: carried, never enforced
        "title",
        "description",
        "default",
        "examples",
    }
)
SUPPORTED_FORMATS = frozenset({"date-time", "date", "email", "uri", "uuid"})

#: Distinct schemas whose check result is remembered. Tools declare static schemas, so a process
#: sees a few dozen; the bound only matters for a schema rebuilt from changing data.
CHECK_CACHE_SIZE = 512


def check_schema(schema: Any, *, require_object: bool = True) -> tuple[str, ...]:
    """Check a tool schema; answer every problem found (empty when the schema is fine).

    Args:
        schema: the schema as declared.
        require_object: the schema must describe a JSON object (true for inputs and outputs).
    """
    if not isinstance(schema, dict):
        return (f"must be a JSON Schema object, got {type(schema).__name__}",)
    try:
        key = canonical_json(schema)
    except (TypeError, ValueError) as exc:
        return (f"is not JSON data ({exc})",)
    return _check_canonical(key, require_object)


@lru_cache(maxsize=CHECK_CACHE_SIZE)
def _check_canonical(key: str, require_object: bool) -> tuple[str, ...]:
    schema = json.loads(key)
    problems: list[str] = []
    if require_object and schema.get("type") != "object":
        problems.append('must have "type": "object" at its root')
    _walk(schema, "", problems)
    if not problems and not jsonschema_rs.meta.is_valid(schema):
        problems.extend(_metaschema_problems(schema))
    return tuple(problems)


def _walk(schema: Any, path: str, problems: list[str]) -> None:
    """Collect unsupported keywords and formats and broken patterns, naming each path."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        problems.append(f"{path or '/'}: a schema must be an object or a boolean")
        return
    for keyword, value in schema.items():
        here = f"{path}/{_escape(keyword)}"
        if keyword not in SUPPORTED_KEYWORDS:
            problems.append(f"unsupported keyword {keyword!r} at {here}")
        elif keyword == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                _walk(sub, f"{here}/{_escape(name)}", problems)
        elif keyword in ("items", "additionalProperties") and isinstance(value, dict | bool):
            _walk(value, here, problems)
        elif keyword == "format" and value not in SUPPORTED_FORMATS:
            problems.append(
                f"unsupported format {value!r} at {here} (supported: {', '.join(sorted(SUPPORTED_FORMATS))})"
            )
        elif keyword == "pattern" and isinstance(value, str):
            _check_pattern(value, here, problems)


def _check_pattern(pattern: str, path: str, problems: list[str]) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        problems.append(f"pattern at {path} is not a valid regular expression ({exc})")
        return
    try:  # the validator compiles patterns with its own (ECMA-262 flavoured) engine
        jsonschema_rs.Draft202012Validator({"pattern": pattern})
    except (ValueError, jsonschema_rs.ValidationError) as exc:
        problems.append(f"pattern at {path} is not supported by the validator ({exc})")


def _metaschema_problems(schema: dict[str, Any]) -> list[str]:
    # Only reached for a broken schema: jsonschema (slow to import) words the problems well.
    from jsonschema import Draft202012Validator

    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    found = [
        f"{'/' + '/'.join(_escape(str(p)) for p in err.absolute_path) if err.absolute_path else '/'}: "
        f"{err.message}"
        for err in meta.iter_errors(schema)
    ]
    return sorted(found) or ["is not a valid Draft 2020-12 schema"]


def _escape(token: str) -> str:
    """Escape one JSON Pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def check_cache_info() -> Any:
    """Hits, misses and size of the check cache (for tests and benchmarks)."""
    return _check_canonical.cache_info()


def clear_check_cache() -> None:
    """Forget every remembered check result."""
    _check_canonical.cache_clear()
