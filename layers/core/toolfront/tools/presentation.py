"""How a tool presents itself beyond its schemas: its files' MIME types, icons, ``_meta`` and the
hints that help clients which defer tool definitions find it (``search_hint``, ``always_load``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolfront.encoding import strict_json
from toolfront.results import MIME_TYPE

if TYPE_CHECKING:
    from toolfront.tools.definition import Tool

SEARCH_HINT_MAX = 200


def check_presentation(tool: Tool, errors: list[str]) -> None:
    """``mime_type``, ``icons`` and ``meta`` (Phantom.Tool's fields) and the search hints, each
    named when wrong."""
    mime = tool.mime_type
    if isinstance(mime, str) and not MIME_TYPE.fullmatch(mime):
        errors.append(f"mime_type must look like 'type/subtype' (image/png), got {mime!r}")
    elif not (mime is None or isinstance(mime, str) or _mime_types(mime)):
        errors.append(
            f"mime_type must be one MIME type or a non-empty list of them (image/png), got {mime!r}"
        )
    if not isinstance(tool.icons, tuple):
        errors.append("icons must be a list of {src, mime_type?, sizes?} objects")
    else:
        for i, icon in enumerate(tool.icons):
            errors.extend(f"icons[{i}] {problem}" for problem in _icon_problems(icon))
    if tool.meta is not None:
        if not isinstance(tool.meta, dict):
            errors.append(f"meta must be a JSON object (dict), got {type(tool.meta).__name__}")
        else:
            try:
                strict_json(tool.meta)
            except (TypeError, ValueError) as exc:
                errors.append(f"meta must be JSON data: {exc}")
    hint = tool.search_hint
    if hint is not None and not (
        isinstance(hint, str) and len(hint.strip()) > 0 and len(hint) <= SEARCH_HINT_MAX
    ):
        errors.append(f"search_hint must be None or 1 to {SEARCH_HINT_MAX} characters of text, got {hint!r}")
    if not isinstance(tool.always_load, bool):
        errors.append(f"always_load must be true or false, got {tool.always_load!r}")


def _mime_types(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and bool(value)
        and all(isinstance(m, str) and MIME_TYPE.fullmatch(m) for m in value)
    )


def _icon_problems(icon: Any) -> list[str]:
    if not isinstance(icon, dict):
        return [f"must be an object {{src, mime_type?, sizes?}}, got {type(icon).__name__}"]
    found = [f"has unknown field {name!r}" for name in sorted(set(icon) - {"src", "mime_type", "sizes"})]
    src = icon.get("src")
    if not isinstance(src, str) or not (src.startswith("https://") or src.startswith("data:")):
        found.append(f"src must be an https: or data: URI, got {src!r}")
    mime = icon.get("mime_type")
    if mime is not None and not (isinstance(mime, str) and MIME_TYPE.fullmatch(mime)):
        found.append(f"mime_type must look like 'type/subtype' (image/png), got {mime!r}")
    sizes = icon.get("sizes")
    if sizes is not None and not (isinstance(sizes, list) and all(isinstance(s, str) and s for s in sizes)):
        found.append(f"sizes must be a list of strings like '48x48' or 'any', got {sizes!r}")
    return found
