"""The schema check: supported keywords and formats, paths in refusals, a bounded cache."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolfront.tools import schema as schema_check
from toolfront.tools.schema import SUPPORTED_KEYWORDS, check_schema


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    schema_check.clear_check_cache()


def test_check_schema_using_every_supported_keyword_passes() -> None:
    schema = {
        "type": "object",
        "title": "t",
        "description": "d",
        "default": {},
        "examples": [{}],
        "properties": {
            "s": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$", "format": "email"},
            "n": {
                "type": ["number", "null"],
                "minimum": 0,
                "maximum": 9,
                "exclusiveMinimum": -1,
                "exclusiveMaximum": 10,
                "multipleOf": 0.5,
            },
            "e": {"enum": ["a", "b"]},
            "c": {"const": 3},
            "l": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 1,
                "maxItems": 3,
                "uniqueItems": True,
            },
            "o": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["s"],
        "additionalProperties": False,
    }
    assert check_schema(schema) == ()


@pytest.mark.parametrize(
    "keyword",
    [
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "patternProperties",
        "prefixItems",
        "$defs",
        "dependentRequired",
    ],
)
def test_check_schema_unsupported_keyword_is_refused_with_its_path(keyword: str) -> None:
    schema = obj(items={"type": "array", "items": {"type": "object", keyword: {}}})
    assert check_schema(schema) == (f"unsupported keyword {keyword!r} at /properties/items/items/{keyword}",)


def test_check_schema_reports_every_unsupported_keyword() -> None:
    schema = {
        "type": "object",
        "anyOf": [],
        "properties": {"a": {"$ref": "#"}},
        "additionalProperties": {"not": {}},
    }
    problems = check_schema(schema)
    assert set(problems) == {
        "unsupported keyword 'anyOf' at /anyOf",
        "unsupported keyword '$ref' at /properties/a/$ref",
        "unsupported keyword 'not' at /additionalProperties/not",
    }


def test_check_schema_property_named_like_a_keyword_is_not_a_keyword() -> None:
    assert check_schema(obj(anyOf={"type": "string"}, **{"$ref": {"type": "string"}})) == ()


def test_check_schema_path_escapes_slash_and_tilde() -> None:
    assert check_schema(obj(**{"a/b~c": {"oneOf": []}})) == (
        "unsupported keyword 'oneOf' at /properties/a~1b~0c/oneOf",
    )


@pytest.mark.parametrize("fmt", ["date-time", "date", "email", "uri", "uuid"])
def test_check_schema_supported_format_passes(fmt: str) -> None:
    assert check_schema(obj(v={"type": "string", "format": fmt})) == ()


def test_check_schema_unsupported_format_is_refused() -> None:
    (problem,) = check_schema(obj(v={"type": "string", "format": "ipv4"}))
    assert problem.startswith("unsupported format 'ipv4' at /properties/v/format")


def test_check_schema_broken_pattern_is_refused() -> None:
    (problem,) = check_schema(obj(v={"type": "string", "pattern": "(unclosed"}))
    assert problem.startswith("pattern at /properties/v/pattern is not a valid regular expression")


def test_check_schema_metaschema_violation_is_refused_with_jsonschema_wording() -> None:
    (problem,) = check_schema(obj(v={"type": "strng"}))
    assert problem.startswith("/properties/v/type: 'strng' is not valid under any of the given schemas")


def test_check_schema_negative_min_length_is_refused() -> None:
    assert check_schema(obj(v={"type": "string", "minLength": -1})) != ()


def test_check_schema_root_not_object_type_is_refused() -> None:
    assert check_schema({"type": "string"}) == ('must have "type": "object" at its root',)
    assert check_schema({"type": "string"}, require_object=False) == ()


@pytest.mark.parametrize("value", [None, [], "schema", 3])
def test_check_schema_not_a_dict_is_refused(value: Any) -> None:
    assert check_schema(value)[0].startswith("must be a JSON Schema object")


def test_check_schema_non_json_value_is_refused() -> None:
    assert check_schema(obj(v={"type": "number", "maximum": float("nan")}))[0].startswith("is not JSON data")


def test_check_schema_result_is_cached_per_distinct_schema() -> None:
    first = obj(a={"type": "string"})
    same = obj(a={"type": "string"})  # equal content, other object, keys in another order below
    reordered = {"properties": {"a": {"type": "string"}}, "type": "object"}
    for schema in (first, same, reordered):
        assert check_schema(schema) == ()
    info = schema_check.check_cache_info()
    assert (info.misses, info.hits, info.currsize) == (1, 2, 1)


def test_check_schema_cache_is_bounded() -> None:
    for i in range(schema_check.CHECK_CACHE_SIZE + 50):
        check_schema(obj(**{f"p{i}": {"type": "string"}}))
    assert schema_check.check_cache_info().currsize == schema_check.CHECK_CACHE_SIZE


def test_supported_keywords_are_draft_2020_12_keywords() -> None:
    annotations = {"title", "description", "default", "examples"}
    assert set(Draft202012Validator.VALIDATORS) | annotations >= SUPPORTED_KEYWORDS
