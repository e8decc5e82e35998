"""The JSON Schema of a plain ``TypedDict``, written without pydantic.

A family that types its tools with ``TypedDict``s of plain fields (str, int, float, bool, None,
lists, optional scalars, string or integer ``Literal``s, nested ``TypedDict``s) then never imports
pydantic, whose own import costs a cold start about 60-75 ms (bench ``families``). The schema is
the one pydantic's generator followed by ``tools/portable.py`` gives (a test holds the two equal);
for anything else (``Annotated`` constraints, dates, enums, unions of objects, recursion...) this
answers ``None`` and the caller asks pydantic, which knows every type and refuses with the field's
path what the portable subset cannot say.
"""

from __future__ import annotations

import types
import typing
from typing import Any

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_WRAPPERS = frozenset({"Required", "NotRequired", "ReadOnly"})


class _Unsupported(Exception):
    """A type this module leaves to pydantic."""


def typed_dict_schema(typed_dict: type) -> dict[str, Any] | None:
    """The portable schema of ``typed_dict``, or ``None`` when pydantic must derive it."""
    try:
        return _object(typed_dict, frozenset())
    except _Unsupported:
        return None


def _object(typed_dict: Any, seen: frozenset[Any]) -> dict[str, Any]:
    if typed_dict in seen:
        raise _Unsupported  # recursion: pydantic's path refuses it with a message
    try:
        hints = typing.get_type_hints(typed_dict, include_extras=True)
    except Exception:  # a forward reference that does not resolve here
        raise _Unsupported from None
    inner = seen | {typed_dict}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _field(hint, inner) for name, hint in hints.items()},
        "additionalProperties": False,
    }
    required = [name for name, hint in hints.items() if _required(name, hint, typed_dict)]
    if required:
        schema["required"] = required
    return schema


def _required(name: str, hint: Any, typed_dict: Any) -> bool:
    """A ``Required``/``NotRequired`` wrapper decides (``__required_keys__`` misses it when the
    annotations are strings before Python 3.12), else the dict's own ``total``."""
    wrapper = getattr(typing.get_origin(hint), "_name", None)
    if wrapper == "NotRequired":
        return False
    return wrapper == "Required" or name in typed_dict.__required_keys__


def _field(hint: Any, seen: frozenset[Any]) -> dict[str, Any]:
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin is not None and getattr(origin, "_name", None) in _WRAPPERS:
        return _field(arguments[0], seen)  # Required[X], NotRequired[X]: X (required-ness is the dict's)
    if hint in _SCALARS and type(hint) is type:
        return {"type": _SCALARS[hint]}
    if hint is type(None):
        return {"type": "null"}
    if origin is list and len(arguments) == 1:
        return {"type": "array", "items": _field(arguments[0], seen)}
    if origin in (typing.Union, types.UnionType):
        present = [a for a in arguments if a is not type(None)]
        if len(arguments) == 2 and len(present) == 1 and present[0] in _SCALARS:
            return {"type": [_SCALARS[present[0]], "null"]}
        raise _Unsupported
    if origin is typing.Literal:
        return _literal(arguments)
    if isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__"):
        return _object(hint, seen)
    raise _Unsupported  # Annotated, datetime, Enum, dict[...], tuples, other unions: pydantic's


def _literal(values: tuple[Any, ...]) -> dict[str, Any]:
    kinds = {type(value) for value in values}
    if kinds == {str}:
        kind = "string"
    elif kinds == {int}:
        kind = "integer"
    else:
        raise _Unsupported
    if len(values) == 1:
        return {"const": values[0], "type": kind}
    return {"enum": list(values), "type": kind}
