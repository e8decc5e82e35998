"""Input validation on the hot path: every error as ``{path, message, keyword}``.

jsonschema-rs does the work (≈0.7 µs for a valid 10-field input against ≈100 µs for the
jsonschema library; see bench/). A test holds it to the same verdicts as jsonschema's
Draft202012Validator. Messages are written here from the schema rather than taken from either
library, because theirs quote the caller's value ("'hunter2' does not match ..."), which can be a
secret or a megabyte of list; ours name the rule and never echo a value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

import jsonschema_rs

from toolfront.encoding import canonical_json
from toolfront.tools.schema import SUPPORTED_KEYWORDS

#: Distinct compiled validators kept per process (tools sharing a schema share one).
VALIDATOR_CACHE_SIZE = 512
_encode = json.JSONEncoder(ensure_ascii=False).encode


class InputError(NamedTuple):
    """One reason an input was refused. ``path`` is a JSON Pointer into the input.

    A NamedTuple rather than a frozen dataclass: it is built on the refusal path, where a frozen
    dataclass's ``object.__setattr__`` calls cost more than the validation itself.
    """

    path: str
    message: str
    keyword: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "keyword": self.keyword}


class InputValidator:
    """Validates inputs against one (already checked) schema."""

    __slots__ = ("_declared", "_rules", "_schema", "_validator")

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
        # (message, keyword) per schema location: a message depends only on the rule, never on the
        # value, so each is written once. Bounded by the number of keywords in the schema.
        self._rules: dict[str, tuple[str, str]] = {}
        self._declared: dict[str, frozenset[str]] = {}  # properties beside each additionalProperties

    def errors(self, instance: Any) -> tuple[InputError, ...]:
        """Every error in ``instance``; empty when it is valid. Never raises for any input."""
        try:
            if self._validator.is_valid(instance):
                return ()
            found = self._validator.evaluate(instance).errors()
        except ValueError:  # a value JSON cannot carry (bytes, a set, a non-string key)
            return (InputError("", "the input is not JSON data", "type"),)
        rules = self._rules
        errors = []
        for entry in found:
            rule = rules.get(entry["schemaLocation"])
            if rule is not None:  # the common case, kept inline: this is the refusal hot path
                errors.append(InputError(entry["instanceLocation"], *rule))
            else:
                errors.append(self._input_error(entry, instance))
        return tuple(errors)

    def _input_error(self, entry: Mapping[str, Any], root: Any) -> InputError:
        location: str = entry["schemaLocation"]
        path: str = entry["instanceLocation"]
        keyword = location.rsplit("/", 1)[-1]
        if keyword == "required":
            # jsonschema-rs words it '"sku" is a required property': it names a key, not a value.
            return InputError(path, entry["error"], keyword)
        if keyword == "additionalProperties":
            declared = self._declared.get(location)
            if declared is None:
                owner = resolve(self._schema, location[: -len("/additionalProperties")])
                declared = self._declared[location] = frozenset(owner.get("properties", ()))
            target = resolve(root, path)
            names = sorted(n for n in target if n not in declared) if isinstance(target, dict) else []
            return InputError(path, f"unexpected properties: {', '.join(map(_encode, names))}", keyword)
        if keyword in SUPPORTED_KEYWORDS:
            rule = (_describe(keyword, resolve(self._schema, location)), keyword)
        else:  # the location is a `false` subschema, not a keyword
            rule = ("is not allowed here", "falseSchema")
        self._rules[location] = rule
        return InputError(path, *rule)


def validator_for(schema: dict[str, Any]) -> InputValidator:
    """The shared validator for ``schema``, compiled on first use."""
    return _compiled(canonical_json(schema))


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def _compiled(key: str) -> InputValidator:
    return InputValidator(json.loads(key))


def json_pointer(parts: Any) -> str:
    """RFC 6901 pointer for a sequence of keys and indexes ("" is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolve(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 ``pointer`` in ``document``."""
    target = document
    for escaped in pointer.split("/")[1:] if pointer else ():
        token = escaped.replace("~1", "/").replace("~0", "~")
        target = target[int(token)] if isinstance(target, list) else target[token]
    return target


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(keyword: str, value: Any) -> str:
    """What the rule at a schema location asks for, in words."""
    describe = _MESSAGES.get(keyword)
    return describe(value) if describe else f"fails the {keyword!r} rule"


_MESSAGES: dict[str, Any] = {
    "type": lambda v: f"must be of type {' or '.join(sorted(v)) if isinstance(v, list) else v}",
    "minItems": lambda v: f"must have at least {_plural(v, 'item')}",
    "maxItems": lambda v: f"must have at most {_plural(v, 'item')}",
    "uniqueItems": lambda v: "must not contain duplicate items",
    "minLength": lambda v: f"must be at least {_plural(v, 'character')} long",
    "maxLength": lambda v: f"must be at most {_plural(v, 'character')} long",
    "pattern": lambda v: f"must match the pattern {_encode(v)}",
    "format": lambda v: f"must be a valid {v}",
    "enum": lambda v: f"must be one of {', '.join(map(_encode, v))}",
    "const": lambda v: f"must be {_encode(v)}",
    "minimum": lambda v: f"must be greater than or equal to {v}",
    "maximum": lambda v: f"must be less than or equal to {v}",
    "exclusiveMinimum": lambda v: f"must be greater than {v}",
    "exclusiveMaximum": lambda v: f"must be less than {v}",
    "multipleOf": lambda v: f"must be a multiple of {v}",
}


def integral_floats_as_ints(schema: Any, value: Any) -> Any:
    """``value`` with every integral float (``66.0``, ``1e2``) where ``schema`` says ``integer`` made
    the integer it is; the same object when there is none.

    JSON Schema counts ``66.0`` as an integer, so the validator accepts it; a handler (and boto3,
    and the idempotency fingerprint) would still see a float. Everything else is left as it is,
    for the validator to judge.
    """
    if not isinstance(schema, dict):
        return value
    if isinstance(value, float):
        kinds = schema.get("type")
        integer_only = kinds == "integer" or (
            isinstance(kinds, list) and "integer" in kinds and "number" not in kinds
        )
        return int(value) if integer_only and value.is_integer() else value
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        changed = {}
        for name, item in value.items():
            sub = properties.get(name, extra) if isinstance(properties, dict) else extra
            fixed = integral_floats_as_ints(sub, item)
            if fixed is not item:
                changed[name] = fixed
        return {**value, **changed} if changed else value
    if isinstance(value, list):
        items = schema.get("items")
        fixed_items = [integral_floats_as_ints(items, item) for item in value]
        return fixed_items if any(a is not b for a, b in zip(fixed_items, value, strict=True)) else value
    return value
