"""``toolfront.Family`` and ``@family.tool``: names, texts and schemas from a typed function, the
handler's model in and out, the refusals (each with its message), and no pydantic for a family that
uses no models."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,  # pydantic needs it before Python 3.12
)

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from toolfront import CallContext, Family, ToolDefinitionError
from toolfront.tools.validation import validator_for

ROOT = Path(__file__).resolve().parents[2]


class AddNote(BaseModel):
    text: str = Field(min_length=1, max_length=500, description="What to remember.")
    kind: Literal["todo", "idea"] = "idea"
    due: datetime | None = None


class NoteOut(BaseModel):
    note_id: str
    text: str


def test_a_first_tool_from_types() -> None:
    notes = Family("notes", permission="notes")
    seen: list[Any] = []

    @notes.tool(scope="notes.entries:write")
    def add_note(data: AddNote, ctx: CallContext) -> NoteOut:
        """Add a note.

        Keeps one short note for later."""
        seen.append(data)
        return NoteOut(note_id="n1", text=data.text)

    (tool,) = notes.api_tools()
    assert (tool.name, tool.title, tool.module, tool.permission) == (
        "notes.add_note",
        "Add a note.",
        "notes",
        "notes",
    )
    assert tool.description == "Add a note.\n\nKeeps one short note for later."
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What to remember."},
            "kind": {"type": "string", "enum": ["todo", "idea"], "default": "idea"},
            "due": {"type": ["string", "null"], "format": "date-time", "default": None},
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    assert tool.output_schema == {
        "type": "object",
        "properties": {"note_id": {"type": "string"}, "text": {"type": "string"}},
        "required": ["note_id", "text"],
        "additionalProperties": False,
    }
    assert add_note.__name__ == "add_note"  # the decorator returns the function unchanged
    answer = tool.handler({"text": "buy milk", "due": "2026-12-24T10:00:00Z"}, CallContext("r", tool.name))
    assert answer == {"note_id": "n1", "text": "buy milk"}
    assert isinstance(seen[0], AddNote) and seen[0].due == datetime.fromisoformat("2026-12-24T10:00:00+00:00")
    assert validator_for(tool.input_schema).errors({"text": ""})  # the schema holds what the model says


def test_the_description_is_the_docstring_with_each_paragraph_on_one_line() -> None:
    notes = Family("notes", permission="notes")

    @notes.tool(scope="notes.entries:read", annotations={"read_only": True}, input_schema={"type": "object"})
    def list_notes(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        """List the notes

        Answers every note, newest first,
        at most 100 of them.

        Arguments:
        - prefix: only notes starting with it
        1. then sorted
        """
        return {}

    (tool,) = notes.api_tools()
    assert tool.title == "List the notes"
    assert tool.description == (
        "List the notes\n\nAnswers every note, newest first, at most 100 of them.\n\n"
        "Arguments:\n- prefix: only notes starting with it\n1. then sorted"
    )


class Query(TypedDict):
    prefix: str


class Listed(TypedDict):
    names: list[str]


def test_typed_dicts_in_and_out_and_explicit_schemas_win() -> None:
    shop = Family("shop", permission="shop")

    @shop.tool(scope="shop.items:read", annotations={"read_only": True})
    def list_items(data: Query, ctx: CallContext) -> Listed:
        return {"names": [data["prefix"] + "1"]}

    given = {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False}

    @shop.tool(scope="shop.items:read", input_schema=given)
    def count_items(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return {"n": data.get("n", 0)}

    listed, counted = shop.api_tools()
    assert listed.input_schema["properties"] == {"prefix": {"type": "string"}}
    assert listed.output_schema is not None and listed.output_schema["required"] == ["names"]
    assert listed.handler({"prefix": "a"}, CallContext("r", listed.name)) == {"names": ["a1"]}
    assert (counted.input_schema, counted.output_schema) == (given, None)


def test_a_model_that_allows_extra_fields_stays_open() -> None:
    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")
        a: int

    loose = Family("loose", audience="public")

    @loose.tool
    def take_things(data: Loose, ctx: CallContext) -> dict[str, Any]:
        return {}

    assert loose.api_tools()[0].input_schema["additionalProperties"] is True


ONE_MODEL = "use one model with optional fields"


class A(BaseModel):
    x: int


class B(BaseModel):
    y: int


class Union(BaseModel):
    pick: A | B


class Tree(BaseModel):
    child: Tree | None = None


class Counts(BaseModel):
    per_tag: dict[str, int]


class Tagged(BaseModel):
    tags: list[A | B]


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            Union,
            "input field 'pick': a union of objects (anyOf) cannot be expressed; " + ONE_MODEL,
        ),
        (
            Tree,
            "input field 'child': a recursive model (Tree) cannot be expressed; flatten it to a fixed depth",
        ),
        (
            Counts,
            "input field 'per_tag': a dict with free keys (additionalProperties) cannot be expressed; "
            "use a model with named fields",
        ),
        (
            Tagged,
            "input field 'tags.0': a union of objects (anyOf) cannot be expressed; " + ONE_MODEL,
        ),
    ],
)
def test_what_the_portable_subset_cannot_say_is_refused_with_the_fields_path(
    model: type, message: str
) -> None:
    bad = Family("bad", audience="public")

    def make_things(data: Any, ctx: CallContext) -> dict[str, Any]:
        return {}

    make_things.__annotations__["data"] = model
    with pytest.raises(ToolDefinitionError) as refused:
        bad.tool(make_things)
    assert refused.value.details == [f"bad.make_things: {message}"]


def test_a_handler_that_cannot_take_input_and_ctx_is_refused_at_decoration() -> None:
    bad = Family("bad", audience="public")

    def only_input(data: dict[str, Any]) -> dict[str, Any]:
        return data

    with pytest.raises(ToolDefinitionError) as refused:
        bad.tool(only_input)
    assert refused.value.details == [
        "bad.only_input: a handler takes two arguments (input, ctx); only_input(data: 'dict[str, Any]') -> "
        "'dict[str, Any]' cannot"
    ]
    assert bad.api_tools() == []


@pytest.mark.parametrize("name", ["Notes", "core", "two words", ""])
def test_a_family_name_is_a_lowercase_word(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="a family name is a lowercase word"):
        Family(name)


def test_a_family_without_models_never_imports_pydantic() -> None:
    script = (
        "import sys; sys.path.insert(0, 'layers/core')\n"
        "from toolfront import Family, CallContext\n"
        "plain = Family('plain', audience='public')\n"
        "@plain.tool(input_schema={'type': 'object'})\n"
        "def echo_text(data: dict, ctx: CallContext) -> dict:\n"
        "    '''Echo.'''\n"
        "    return data\n"
        "print(__import__('json').dumps(['pydantic' in sys.modules, plain.api_tools()[0].name]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == [False, "plain.echo_text"]


def test_a_family_of_plain_typed_dicts_never_imports_pydantic() -> None:
    script = (
        "import sys; sys.path.insert(0, 'layers/core')\n"
        "from typing import Literal, TypedDict\n"
        "from typing_extensions import NotRequired\n"
        "from toolfront import Family, CallContext\n"
        "class Line(TypedDict):\n"
        "    sku: str\n"
        "    qty: int\n"
        "class Order(TypedDict):\n"
        "    lines: list[Line]\n"
        "    note: NotRequired[str | None]\n"
        "    speed: Literal['slow', 'fast']\n"
        "class Placed(TypedDict):\n"
        "    order_id: str\n"
        "shop = Family('shop', permission='shop')\n"
        "@shop.tool(scope='shop.orders:write')\n"
        "def place_order(data: Order, ctx: CallContext) -> Placed:\n"
        "    'Place an order.'\n"
        "    return {'order_id': 'o-1'}\n"
        "tool = shop.api_tools()[0]\n"
        "print(__import__('json').dumps(['pydantic' in sys.modules, tool.input_schema]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded, schema = json.loads(done.stdout)
    assert loaded is False
    assert schema["properties"]["lines"]["items"]["required"] == ["sku", "qty"]
    assert schema["required"] == ["lines", "speed"]


class Line(TypedDict):
    sku: str
    qty: int


class Order(TypedDict):
    lines: list[Line]
    note: NotRequired[str | None]
    speed: Literal["slow", "fast"]
    rush: Literal["yes"]
    count: int | None
    weight: float
    gift: bool
    nothing: None


class Partial(TypedDict, total=False):
    label: str
    tags: list[str]


class Dated(TypedDict):
    due: datetime


class Described(TypedDict):
    text: Annotated[str, Field(min_length=1)]


class Tree(TypedDict):
    name: str
    children: list[Tree]


@pytest.mark.parametrize("typed", [Line, Order, Partial, Query, Listed])
def test_a_plain_typed_dicts_schema_is_the_one_pydantic_gives(typed: type) -> None:
    from pydantic import TypeAdapter

    from toolfront.tools.portable import portable_schema
    from toolfront.tools.typeddicts import typed_dict_schema

    assert typed_dict_schema(typed) == portable_schema(TypeAdapter(typed).json_schema(), what="input")


DATED = {
    "type": "object",
    "properties": {"due": {"type": "string", "format": "date-time"}},
    "required": ["due"],
    "additionalProperties": False,
}
DESCRIBED = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1}},
    "required": ["text"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(("typed", "expected"), [(Dated, DATED), (Described, DESCRIBED)])
def test_other_typed_dicts_are_left_to_pydantic(typed: type, expected: dict[str, Any]) -> None:
    from toolfront.tools.typeddicts import typed_dict_schema

    assert typed_dict_schema(typed) is None
    shop = Family("shop", permission="shop")
    shop.tool(scope="shop.items:read")(_echo_of(typed))
    assert shop.api_tools()[0].input_schema == expected


def test_a_recursive_typed_dict_is_refused_by_pydantics_path() -> None:
    from toolfront.tools.typeddicts import typed_dict_schema

    assert typed_dict_schema(Tree) is None
    with pytest.raises(ToolDefinitionError, match="recursi"):
        Family("shop", permission="shop").tool(scope="shop.items:read")(_echo_of(Tree))


def _echo_of(typed: type) -> Any:
    def echo_item(data: Any, ctx: CallContext) -> dict[str, Any]:
        """Echo."""
        return {}

    echo_item.__annotations__ = {"data": typed, "ctx": CallContext, "return": dict[str, Any]}
    return echo_item


def test_the_readmes_first_tool_runs_as_written() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Declaring tools", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    # A first tool is at most 15 lines of one file (lines of code: PEP 8's blank lines not counted).
    assert len([line for line in code.splitlines() if line.strip()]) <= 15
    namespace: dict[str, Any] = {"__name__": "readme_notes"}
    exec(compile(code, "README.md", "exec"), namespace)
    (tool,) = namespace["notes"].api_tools()
    assert (tool.name, tool.title, tool.scope) == (
        "notes.add_note",
        "Add a note. Answers the note as it was kept.",
        "notes.entries:write",
    )
    assert tool.input_schema["properties"]["text"]["maxLength"] == 500
    assert tool.output_schema == {**tool.input_schema, "required": ["text"]}
    answer = tool.handler({"text": "milk", "tags": ["shop"]}, CallContext("req-1", tool.name))
    assert answer == {"text": "milk", "tags": ["shop"]}
    assert callable(namespace["lambda_handler"])
