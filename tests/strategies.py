"""Hypothesis strategies that generate instances a toolfront schema accepts.

hypothesis-jsonschema (0.23.1, the latest) relies on Hypothesis internals that current Hypothesis
removed ("'many' object has no attribute 'more'"), and our keyword set is small, so the
generator for it is written here.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=12)
# Floats stay within 2**53: beyond it jsonschema-rs and jsonschema disagree on multipleOf (pinned in
# test_validation.py); a whole number that large is no input a tool means.
FLOATS = st.floats(min_value=-(2.0**53), max_value=2.0**53, allow_nan=False, allow_infinity=False)
JSON_VALUES = st.recursive(
    JSON_SCALARS | FLOATS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date": st.dates().map(dt.date.isoformat),
    "date-time": st.datetimes(timezones=st.just(dt.UTC)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    "uuid": st.uuids().map(str),
    "email": st.from_regex(
        r"[a-z][a-z0-9]{0,10}(\.[a-z0-9]{1,5})?@[a-z]{1,10}\.(org|com|io)", fullmatch=True
    ),
    "uri": st.from_regex(r"https://[a-z]{1,10}\.org/[a-z0-9/]{0,12}", fullmatch=True),
}


def instances(schema: Any) -> st.SearchStrategy[Any]:
    """Values ``schema`` accepts (for the supported keyword set of toolfront.tools.schema)."""
    if schema is True or schema == {}:
        return JSON_VALUES
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    types = schema.get("type")
    if isinstance(types, list):
        return st.one_of([instances({**schema, "type": t}) for t in types])
    builder = _BY_TYPE.get(types, lambda _: JSON_VALUES)
    return builder(schema)


def _string(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    if "format" in schema:
        return _FORMATS[schema["format"]]
    low, high = schema.get("minLength", 0), schema.get("maxLength", 20)
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True, alphabet=st.characters(codec="ascii")).filter(
            lambda s: low <= len(s) <= high
        )
    return st.text(min_size=low, max_size=high)


def _integer(schema: dict[str, Any]) -> st.SearchStrategy[int]:
    low = schema.get("minimum", -(10**6))
    high = schema.get("maximum", 10**6)
    if "exclusiveMinimum" in schema:
        low = max(low, schema["exclusiveMinimum"] + 1)
    if "exclusiveMaximum" in schema:
        high = min(high, schema["exclusiveMaximum"] - 1)
    step = schema.get("multipleOf")
    if step:
        return st.integers(-(-low // step), high // step).map(lambda k: k * step)
    return st.integers(low, high)


def _number(schema: dict[str, Any]) -> st.SearchStrategy[float]:
    return st.floats(
        min_value=schema.get("minimum", schema.get("exclusiveMinimum")),
        max_value=schema.get("maximum", schema.get("exclusiveMaximum")),
        exclude_min="exclusiveMinimum" in schema,
        exclude_max="exclusiveMaximum" in schema,
        allow_nan=False,
        allow_infinity=False,
    )


def _array(schema: dict[str, Any]) -> st.SearchStrategy[list[Any]]:
    items = instances(schema.get("items", True))
    low, high = schema.get("minItems", 0), schema.get("maxItems", 4)
    if schema.get("uniqueItems"):
        return st.lists(items, min_size=low, max_size=high, unique_by=repr)
    return st.lists(items, min_size=low, max_size=high)


def _object(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    fixed = st.fixed_dictionaries(
        {name: instances(sub) for name, sub in properties.items() if name in required},
        optional={name: instances(sub) for name, sub in properties.items() if name not in required},
    )
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return fixed
    names = st.text(max_size=8).filter(lambda n: n not in properties)
    more = st.dictionaries(names, instances(extra), max_size=3)
    return st.tuples(fixed, more).map(lambda pair: {**pair[1], **pair[0]})


_BY_TYPE: dict[Any, Any] = {
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": lambda _: st.booleans(),
    "null": lambda _: st.none(),
    "array": _array,
    "object": _object,
}
