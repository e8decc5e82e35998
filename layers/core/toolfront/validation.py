"""Input validation on the hot path: every error as ``{path, message, keyword}``.

jsonschema-rs does the work (≈0.8 µs for a valid 10-field input against ≈127 µs for the
jsonschema library; see bench/). A test holds it to the same verdicts as jsonschema's
Draft202012Validator. Messages are written here rather than taken from either library because
theirs quote the caller's value ("'hunter2' does not match ..."), which can be a secret or a
megabyte of list; ours name the rule and never echo the value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs

from toolfront.schema import canonical_json

#: Distinct compiled validators kept per process (tools sharing a schema share one).
VALIDATOR_CACHE_SIZE = 512


@dataclass(frozen=True, slots=True)
class InputError:
    """One reason an input was refused. ``path`` is a JSON Pointer into the input."""

    path: str
    message: str
    keyword: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "keyword": self.keyword}


class InputValidator:
    """Validates inputs against one (already checked) schema."""

    __slots__ = ("_validator",)

    def __init__(self, schema: dict[str, Any]) -> None:
        self._validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)

    def errors(self, instance: Any) -> tuple[InputError, ...]:
        """Every error in ``instance``; empty when it is valid. Never raises for any input."""
        try:
            if self._validator.is_valid(instance):
                return ()
            return tuple(_to_input_error(err, instance) for err in self._validator.iter_errors(instance))
        except ValueError:  # a value JSON cannot carry (bytes, a set, a non-string key)
            return (InputError("", "the input is not JSON data", "type"),)


def validator_for(schema: dict[str, Any]) -> InputValidator:
    """The shared validator for ``schema``, compiled on first use."""
    return _compiled(canonical_json(schema))


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def _compiled(key: str) -> InputValidator:
    return InputValidator(json.loads(key))


def json_pointer(parts: Any) -> str:
    """RFC 6901 pointer for a sequence of keys and indexes ("" is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _to_input_error(err: jsonschema_rs.ValidationError, root: Any) -> InputError:
    kind = err.kind
    keyword = kind.name
    path = json_pointer(err.instance_path)
    if keyword == "falseSchema" and err.schema_path and err.schema_path[-1] == "additionalProperties":
        # jsonschema-rs reports a bare `additionalProperties: false` (no `properties` beside it) as
        # one false subschema; report it as jsonschema does, naming every property of that object.
        target = root
        for part in err.instance_path:
            target = target[part]
        return InputError(path, f"unexpected properties: {_names(sorted(target))}", "additionalProperties")
    describe = _MESSAGES.get(keyword)
    message = describe(kind) if describe else f"fails the {keyword!r} rule"
    return InputError(path, message, keyword)


def _names(values: Any) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


_MESSAGES: dict[str, Any] = {
    "type": lambda k: f"must be of type {' or '.join(k.types)}",
    "required": lambda k: f"{json.dumps(k.property, ensure_ascii=False)} is a required property",
    "additionalProperties": lambda k: f"unexpected properties: {_names(sorted(k.unexpected))}",
    "minItems": lambda k: f"must have at least {_plural(k.limit, 'item')}",
    "maxItems": lambda k: f"must have at most {_plural(k.limit, 'item')}",
    "uniqueItems": lambda k: "must not contain duplicate items",
    "minLength": lambda k: f"must be at least {_plural(k.limit, 'character')} long",
    "maxLength": lambda k: f"must be at most {_plural(k.limit, 'character')} long",
    "pattern": lambda k: f"must match the pattern {json.dumps(k.pattern, ensure_ascii=False)}",
    "format": lambda k: f"must be a valid {k.format}",
    "enum": lambda k: f"must be one of {_names(k.options)}",
    "const": lambda k: f"must be {json.dumps(k.expected_value, ensure_ascii=False)}",
    "minimum": lambda k: f"must be greater than or equal to {k.limit}",
    "maximum": lambda k: f"must be less than or equal to {k.limit}",
    "exclusiveMinimum": lambda k: f"must be greater than {k.limit}",
    "exclusiveMaximum": lambda k: f"must be less than {k.limit}",
    "multipleOf": lambda k: f"must be a multiple of {k.multiple_of}",
    "falseSchema": lambda k: "is not allowed here",
}
