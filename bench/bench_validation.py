"""Input validation per call, toolfront against jsonschema 4.26.

Baselines: docs/performance.md, "1. JSON Schema validation". Its 10-field schema, a valid instance
(all 10 fields, 3 lines) and an invalid one with 5 violations (pattern, maximum, enum, an extra
property, a nested minimum). toolfront is timed through ``Tool.validate_input``, which is what the
call pipeline pays. jsonschema-rs used directly and fastjsonschema (when installed) are reference
rows. One-off costs: the schema check (first time and cached), jsonschema's ``check_schema``, and
the first ``validate_input`` of a fresh tool.
"""

from __future__ import annotations

import dataclasses
import itertools
import types
from collections.abc import Callable
from typing import Any

import jsonschema_rs
from harness import Section, Spec, measure_section
from jsonschema import Draft202012Validator

import toolfront
from toolfront.tools import schema as tf_schema
from toolfront.tools import validation as tf_validation

fastjsonschema: types.ModuleType | None
try:
    import fastjsonschema
    from fastjsonschema import JsonSchemaValuesException as _FJS_ALL_ERRORS
except ImportError:  # an optional comparison column
    fastjsonschema = None
    _FJS_ALL_ERRORS = Exception  # type: ignore[assignment,misc]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "maxLength": 32, "pattern": "^[A-Z]{3}-[0-9]{4,8}$"},
        "name": {"type": "string", "minLength": 1, "maxLength": 200},
        "currency": {"type": "string", "maxLength": 3, "pattern": "^[A-Z]{3}$"},
        "locale": {"type": "string", "maxLength": 16, "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
        "warehouse": {"type": "string", "maxLength": 12, "pattern": "^WH[0-9]{2,6}$"},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
        "priority": {"type": "integer", "minimum": 0, "maximum": 9},
        "channel": {"enum": ["web", "store", "phone", "marketplace"]},
        "gift": {"type": "boolean"},
        "lines": {
            "type": "array",
            "minItems": 1,
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "maxLength": 32},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
                    "unit_price": {"type": "number", "minimum": 0},
                },
                "required": ["sku", "quantity", "unit_price"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["sku", "name", "currency", "quantity", "channel", "lines"],
    "additionalProperties": False,
}

VALID: dict[str, Any] = {
    "sku": "ABC-12345",
    "name": "Walnut desk organiser",
    "currency": "GBP",
    "locale": "en-GB",
    "warehouse": "WH042",
    "quantity": 3,
    "priority": 2,
    "channel": "web",
    "gift": False,
    "lines": [
        {"sku": "ABC-12345", "quantity": 1, "unit_price": 24.5},
        {"sku": "DEF-67890", "quantity": 2, "unit_price": 9.99},
        {"sku": "GHI-11111", "quantity": 5, "unit_price": 0},
    ],
}

# pattern (sku), maximum (quantity), enum (channel), extra property (coupon), nested minimum.
INVALID: dict[str, Any] = {
    **VALID,
    "sku": "abc-12",
    "quantity": 5000,
    "channel": "fax",
    "coupon": "SPRING",
    "lines": [VALID["lines"][0], {"sku": "DEF-67890", "quantity": 0, "unit_price": 9.99}, VALID["lines"][2]],
}
EXPECTED_KEYWORDS = ["additionalProperties", "enum", "maximum", "minimum", "pattern"]

#: Samples per round: (jsonschema, fast libraries, jsonschema check_schema, one-offs, fastjsonschema.compile)
FULL_N = {"slow": 20_000, "fast": 100_000, "check": 200, "oneoff": 2_000, "compile": 60}
QUICK_N = {"slow": 1_000, "fast": 5_000, "check": 20, "oneoff": 200, "compile": 10}


def _noop_handler(data: dict[str, Any], ctx: toolfront.CallContext) -> dict[str, Any]:
    return {}


def make_tool() -> toolfront.Tool:
    """The tool under test: the 10-field schema on an admin tool."""
    return toolfront.Tool.new(
        name="bench.create_order",
        audience="admin",
        scope="bench.orders:write",
        permission="bench",
        handler=_noop_handler,
        input_schema=SCHEMA,
    )


def sanity_check(tool: toolfront.Tool) -> dict[str, Any]:
    """Fail loudly unless every library agrees on both instances; answer what toolfront reported."""
    js = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    problems = tf_schema.check_schema(SCHEMA)
    if problems:
        raise RuntimeError(f"toolfront refuses the bench schema: {problems}")
    if not js.is_valid(VALID) or tool.validate_input(VALID):
        raise RuntimeError("the valid instance is not valid")
    js_errors = sorted(e.validator for e in js.iter_errors(INVALID))
    tf_errors = tool.validate_input(INVALID)
    tf_keywords = sorted(e.keyword for e in tf_errors)
    if len(tf_errors) != 5 or tf_keywords != EXPECTED_KEYWORDS:
        raise RuntimeError(f"toolfront should report 5 errors {EXPECTED_KEYWORDS}, got {tf_keywords}")
    if js_errors != EXPECTED_KEYWORDS:
        raise RuntimeError(f"jsonschema should report 5 errors {EXPECTED_KEYWORDS}, got {js_errors}")
    found: dict[str, Any] = {
        "toolfront_errors": [e.as_dict() for e in tf_errors],
        "jsonschema_error_count": len(js_errors),
    }
    if fastjsonschema is not None:
        fjs_all = fastjsonschema.compile(SCHEMA, fast_fail=False)
        fjs_all(VALID)
        found["fastjsonschema_error_count"] = len(_fjs_errors(fjs_all, INVALID))
    return found


def _fjs_errors(validate: Callable[[Any], Any], instance: Any) -> list[Any]:
    try:
        validate(instance)
    except _FJS_ALL_ERRORS as exc:
        return list(getattr(exc, "errors", ()))
    return []


def specs(quick: bool) -> list[list[Spec]]:
    """The rows, in groups whose rounds are interleaved (each group shares one baseline)."""
    n = QUICK_N if quick else FULL_N
    tool = make_tool()
    tool.validate_input(VALID)  # compile outside the timed rows
    js = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    rs = jsonschema_rs.Draft202012Validator(SCHEMA, validate_formats=True)
    input_validator = tf_validation.InputValidator(SCHEMA)

    valid = [
        Spec("js_valid", "jsonschema is_valid(valid)", js.is_valid, n["slow"], arg=VALID),
        Spec(
            "tf_valid",
            "toolfront tool.validate_input(valid)",
            tool.validate_input,
            n["fast"],
            arg=VALID,
            baseline="js_valid",
            target=0.05,
        ),
        Spec(
            "tf_iv_valid",
            "toolfront InputValidator.errors(valid)",
            input_validator.errors,
            n["fast"],
            arg=VALID,
            baseline="js_valid",
        ),
        Spec(
            "rs_valid",
            "ref: jsonschema-rs is_valid(valid)",
            rs.is_valid,
            n["fast"],
            arg=VALID,
            baseline="js_valid",
        ),
    ]
    invalid = [
        Spec(
            "js_invalid",
            "jsonschema list(iter_errors(invalid)), 5 errors",
            lambda x: list(js.iter_errors(x)),
            n["slow"],
            arg=INVALID,
        ),
        Spec(
            "tf_invalid",
            "toolfront tool.validate_input(invalid), 5 errors",
            tool.validate_input,
            n["fast"],
            arg=INVALID,
            baseline="js_invalid",
            target=0.1,
        ),
        Spec(
            "rs_invalid",
            "ref: jsonschema-rs list(iter_errors(invalid))",
            lambda x: list(rs.iter_errors(x)),
            n["fast"],
            arg=INVALID,
            baseline="js_invalid",
        ),
    ]
    oneoff = [
        Spec(
            "js_check",
            "one-off: jsonschema Draft202012Validator.check_schema",
            Draft202012Validator.check_schema,
            n["check"],
            arg=SCHEMA,
        ),
        Spec(
            "tf_check_cold",
            "one-off: toolfront check_schema, first time",
            tf_schema.check_schema,
            n["oneoff"],
            setup=lambda: (tf_schema.clear_check_cache(), SCHEMA)[1],
            baseline="js_check",
            note="check cache cleared before each call (untimed); re's own pattern cache stays warm",
        ),
        Spec(
            "tf_check_cached",
            "one-off: toolfront check_schema, cached",
            tf_schema.check_schema,
            n["fast"],
            arg=SCHEMA,
            baseline="js_check",
            note="canonical JSON of the schema + an LRU hit",
        ),
    ]
    first_call = [
        Spec(
            "js_first",
            "one-off: jsonschema construct + first is_valid",
            lambda x: Draft202012Validator(
                SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
            ).is_valid(x),
            n["oneoff"],
            arg=VALID,
        ),
        Spec(
            "tf_first",
            "one-off: toolfront first validate_input (compile)",
            lambda t: t.validate_input(VALID),
            n["oneoff"],
            setup=_fresh_tools(tool),
            baseline="js_first",
            note="each call on a fresh Tool whose schema differs by a description, so never cached",
        ),
        Spec(
            "rs_construct",
            "ref: jsonschema-rs Draft202012Validator(schema)",
            lambda s: jsonschema_rs.Draft202012Validator(s, validate_formats=True),
            n["oneoff"],
            arg=SCHEMA,
            baseline="js_first",
        ),
    ]
    if fastjsonschema is not None:
        fjs = fastjsonschema.compile(SCHEMA)
        fjs_all = fastjsonschema.compile(SCHEMA, fast_fail=False)
        valid.append(
            Spec(
                "fjs_valid",
                "ref: fastjsonschema compiled(valid)",
                fjs,
                n["fast"],
                arg=VALID,
                baseline="js_valid",
            )
        )
        invalid.append(
            Spec(
                "fjs_invalid",
                "ref: fastjsonschema fast_fail=False(invalid)",
                lambda x: _fjs_errors(fjs_all, x),
                n["fast"],
                arg=INVALID,
                baseline="js_invalid",
            )
        )
        oneoff.append(
            Spec(
                "fjs_compile",
                "ref: fastjsonschema.compile(schema)",
                fastjsonschema.compile,
                n["compile"],
                arg=SCHEMA,
                baseline="js_check",
            )
        )
    return [valid, invalid, oneoff, first_call]


def _fresh_tools(tool: toolfront.Tool) -> Callable[[], toolfront.Tool]:
    """Untimed setup: a copy of ``tool`` never validated, with a schema no validator was compiled for.

    A ``description`` (an annotation, never enforced) numbered per call makes each schema distinct,
    so the first ``validate_input`` pays the canonical JSON and the compile, as on a cold start.
    """
    counter = itertools.count()

    def fresh() -> toolfront.Tool:
        schema = {**SCHEMA, "description": f"fresh schema {next(counter)}"}
        return dataclasses.replace(tool, input_schema=schema)

    return fresh


def run(quick: bool = False) -> Section:
    """Check the instances, then measure every row."""
    tool = make_tool()
    found = sanity_check(tool)
    section = measure_section("validation", specs(quick))
    section.extra["sanity"] = found
    section.extra["fastjsonschema"] = None if fastjsonschema is None else fastjsonschema.VERSION
    tf_schema.clear_check_cache()
    return section


if __name__ == "__main__":
    import sys

    from harness import format_table

    print(format_table([run(quick="--quick" in sys.argv)]))
