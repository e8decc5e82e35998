"""The schemas ``@family.tool`` translates from realistic models are accepted by the project's own
check and by ``jsonschema`` alike, and the project's validator and ``jsonschema`` agree on every
generated instance (hypothesis)."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Any, Literal
from uuid import UUID

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, Field

from toolfront.tools.portable import portable_schema
from toolfront.tools.schema import check_schema
from toolfront.tools.validation import validator_for


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


class Line(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-\d{2}$")
    quantity: int = Field(ge=1, le=99)


class Order(BaseModel):
    order_id: UUID
    placed: datetime
    lines: list[Line] = Field(min_length=1, max_length=5)
    note: str | None = Field(default=None, max_length=20)


class Contact(BaseModel):
    homepage: AnyUrl | None = None  # EmailStr needs email-validator, not installed here
    name: str = Field(min_length=1)
    born: date | None = None


class Paint(BaseModel):
    colour: Colour
    finish: Literal["matt", "gloss"] = "matt"
    coats: int | None = Field(default=None, multiple_of=1, ge=1)
    ratio: float = Field(default=1.0, gt=0, lt=10)


class Tags(BaseModel):
    tags: list[str] = Field(default_factory=list, max_length=3)
    unique: bool = False


MODELS = [Order, Contact, Paint, Tags, Line]
SCHEMAS = {model.__name__: portable_schema(model.model_json_schema(), what="input") for model in MODELS}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_translated_schemas_pass_the_projects_check_and_jsonschemas(name: str) -> None:
    schema = SCHEMAS[name]
    assert check_schema(schema) == ()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False


_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 120),
    st.floats(-1, 12, allow_nan=False),
    st.sampled_from(
        ["red", "blue", "matt", "gloss", "ABC-12", "https://example.com/a", "2026-12-01", "x" * 25, ""]
    ),
    st.sampled_from(["2026-12-01T10:00:00Z", "not a date", "6f1c8a3e-0b8f-4a50-9d4e-2b1f3c4d5e6f"]),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.sampled_from(["sku", "quantity", "x"]), inner, max_size=3)
    ),
    max_leaves=8,
)
_KEYS = sorted({key for schema in SCHEMAS.values() for key in schema["properties"]} | {"extra"})


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(SCHEMAS)),
    instance=st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=6),
)
def test_the_projects_validator_and_jsonschema_agree(name: str, instance: dict[str, Any]) -> None:
    schema = SCHEMAS[name]
    reference = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    assert (not validator_for(schema).errors(instance)) == reference.is_valid(instance)
