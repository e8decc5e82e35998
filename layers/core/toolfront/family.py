"""``Family`` and ``@family.tool``: a tool from a typed function, its schemas from its annotations.

```python
notes = Family("notes", permission="notes")

@notes.tool(scope="notes.entries:write")
def add_note(data: AddNote, ctx: CallContext) -> NoteOut:
    '''Add a note.'''
    ...

lambda_handler = notes.lambda_handler
```

The name is ``<family>.<function>``, the title the docstring's first line, the description the whole
docstring. The input schema comes from the first parameter's annotation and the output schema from
the return annotation when each is a pydantic model or a ``TypedDict`` (rewritten into the portable
subset, ``tools/portable.py``); an explicit ``input_schema=``/``output_schema=`` wins, and ``dict``
means "the schema is given" (an input annotated ``dict`` without ``input_schema=`` is refused). The
handler gets an instance of its input model; a model it returns is dumped to JSON data. pydantic is
imported only for a pydantic model, or a ``TypedDict`` with fields beyond the plain ones
``tools/typeddicts.py`` writes itself: a family without them never loads it.
"""

from __future__ import annotations

import inspect
import re
import sys
import typing
from collections.abc import Callable
from typing import Any

from toolfront.errors import ToolDefinitionError
from toolfront.tools.definition import Tool
from toolfront.tools.portable import portable_schema
from toolfront.tools.typeddicts import typed_dict_schema

_FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]*")
_LIST_ITEM = re.compile(r"\d+[.)] ")
Handler = Callable[..., Any]


class Family:
    """A tool family: its name, its defaults (audience, permission) and its tools."""

    def __init__(self, name: str, *, audience: str = "admin", permission: str | None = None) -> None:
        if not isinstance(name, str) or not _FAMILY_NAME.fullmatch(name) or name in ("core", "system"):
            raise ToolDefinitionError(
                [f"a family name is a lowercase word (notes, shop_orders), got {name!r}"]
            )
        self.name, self.audience, self.permission = name, audience, permission
        self._tools: list[Tool] = []
        self._handler: Any = None

    def tool(self, handler: Handler | None = None, /, **fields: Any) -> Any:
        """Declare ``handler`` as one of this family's tools (with or without arguments); the
        function is returned unchanged. Raises ``ToolDefinitionError`` naming every problem."""

        # The decorating scope's names: a model defined in a function body resolves too (annotations
        # are strings under ``from __future__ import annotations``).
        scope = dict(sys._getframe(1).f_locals)

        def declare(function: Handler) -> Handler:
            self._tools.append(self._tool_of(function, fields, scope))
            return function

        return declare(handler) if handler is not None else declare

    def api_tools(self) -> list[Tool]:
        """The family's tools, as a family module's ``api_tools`` answers them."""
        return list(self._tools)

    @property
    def lambda_handler(self) -> Any:
        """The family function's handler (``lambda_handler = notes.lambda_handler``)."""
        if self._handler is None:
            from toolfront.wiring import family_handler

            self._handler = family_handler(self.name, self.api_tools)
        return self._handler

    def _tool_of(self, function: Handler, fields: dict[str, Any], scope: dict[str, Any]) -> Tool:
        name = f"{self.name}.{getattr(function, '__name__', '?')}"
        _check_signature(function, name)
        try:
            hints = typing.get_type_hints(function, localns=scope)
        except Exception as exc:  # a forward reference that does not resolve, ...
            raise ToolDefinitionError(
                [f"{name}: its annotations cannot be read ({exc})"], name=name
            ) from None
        parameters = list(inspect.signature(function).parameters.values())
        given, returned = hints.get(parameters[0].name), hints.get("return")
        values: dict[str, Any] = {"audience": self.audience, "permission": self.permission}
        doc = inspect.getdoc(function)
        if doc:
            values["title"] = doc.splitlines()[0].strip()
            values["description"] = _unwrapped(doc)
        values.update(fields)
        values.setdefault("name", name)
        values["module"] = self.name
        if _is_plain_dict(given) and "input_schema" not in fields:
            raise ToolDefinitionError(
                [
                    f"{name}: its input is annotated dict, which means the schema is given: pass "
                    "input_schema= (or annotate a TypedDict or a pydantic model)"
                ],
                name=name,
            )
        model_in = _model(given)
        if model_in is not None and "input_schema" not in fields:
            values["input_schema"] = _schema(model_in, what="input", name=name)
        model_out = _model(returned)
        if model_out is not None and "output_schema" not in fields:
            values["output_schema"] = _schema(model_out, what="output", name=name)
        values["handler"] = _typed_handler(function, model_in, model_out)
        return Tool.new(**values)


def _unwrapped(doc: str) -> str:
    """The docstring with each paragraph on one line: a model reads the description, and a source
    file's line width is no break of the text (list items and indented lines keep their breaks)."""
    paragraphs = []
    for paragraph in doc.split("\n\n"):
        lines = paragraph.splitlines()
        merged = lines[:1]
        for line in lines[1:]:
            if line.startswith((" ", "\t", "- ", "* ")) or _LIST_ITEM.match(line):
                merged.append(line)
            else:
                merged[-1] = f"{merged[-1]} {line}"
        paragraphs.append("\n".join(merged))
    return "\n\n".join(paragraphs)


def _check_signature(function: Handler, name: str) -> None:
    if not callable(function):
        raise ToolDefinitionError([f"{name}: a tool is a function handler(input, ctx)"], name=name)
    try:
        inspect.signature(function).bind(None, None)
    except TypeError:
        shown = str(inspect.signature(function))
        raise ToolDefinitionError(
            [f"{name}: a handler takes two arguments (input, ctx); {function.__name__}{shown} cannot"],
            name=name,
        ) from None
    except ValueError:  # a builtin without a signature: it cannot be checked, so it is refused
        raise ToolDefinitionError([f"{name}: the handler's signature cannot be read"], name=name) from None
    if len(inspect.signature(function).parameters) < 2:  # (*args) binds anything but names nothing
        raise ToolDefinitionError([f"{name}: a handler names its two arguments (input, ctx)"], name=name)


def _model(annotation: Any) -> Any:
    """The annotation when it is a pydantic model or a ``TypedDict`` (without importing pydantic for
    anything else: a pydantic model's module imported it already)."""
    if annotation is None or annotation is dict or annotation is Any:
        return None
    if _is_typed_dict(annotation):
        return annotation
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    return None


def _is_plain_dict(annotation: Any) -> bool:
    """``dict``, ``dict[str, Any]`` or ``typing.Dict[...]``: a mapping whose keys say nothing."""
    return annotation is dict or typing.get_origin(annotation) is dict


def _is_typed_dict(annotation: Any) -> bool:
    """``typing``'s and ``typing_extensions``' TypedDicts alike (pydantic wants the latter before 3.12)."""
    return (
        isinstance(annotation, type)
        and issubclass(annotation, dict)
        and hasattr(annotation, "__required_keys__")
    )


def _schema(model: Any, *, what: str, name: str) -> dict[str, Any]:
    if _is_typed_dict(model):  # plain TypedDicts need no pydantic (its import is most of a cold start)
        plain = typed_dict_schema(model)
        if plain is not None:
            return plain
    from pydantic import TypeAdapter  # a model is there: pydantic is loaded already or wanted now

    try:
        generated = TypeAdapter(model).json_schema()
    except Exception as exc:  # pydantic refuses the type itself (a typing.TypedDict before 3.12, ...)
        reason = str(exc).splitlines()[0]
        raise ToolDefinitionError(
            [f"{name}: the {what} type cannot become a schema: {reason}"], name=name
        ) from None
    try:
        return portable_schema(generated, what=what)
    except ToolDefinitionError as refused:
        raise ToolDefinitionError([f"{name}: {problem}" for problem in refused.details], name=name) from None


def _typed_handler(function: Handler, model_in: Any, model_out: Any) -> Handler:
    """``function`` as the pipeline calls it: input dict in (made the input model's instance),
    JSON data out (a returned model dumped)."""
    builds = model_in is not None and not _is_typed_dict(model_in)
    dumps = model_out is not None and not _is_typed_dict(model_out)
    if not builds and not dumps:
        return function

    def typed(data: dict[str, Any], ctx: Any) -> Any:
        answer = function(model_in.model_validate(data) if builds else data, ctx)
        if dumps and hasattr(answer, "model_dump"):
            return answer.model_dump(mode="json")
        return answer

    typed.__name__ = getattr(function, "__name__", "handler")
    typed.__doc__ = function.__doc__
    return typed
