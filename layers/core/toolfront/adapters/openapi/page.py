"""``GET /v1/docs``: the OpenAPI document as one self-contained HTML page for people.

No scripts and no external assets (inline CSS only), readable on a phone; every value from the
document goes through ``html.escape``, since tool descriptions are written by module authors.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

_CSS = """
body{font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1b1f24;background:#fff}
main{max-width:60rem;margin:0 auto;padding:1rem}
h1{margin:.2rem 0}h2{border-bottom:2px solid #d0d7de;padding-bottom:.2rem;margin-top:2.5rem}
section.op{border:1px solid #d0d7de;border-radius:8px;padding:.8rem 1rem;margin:1.2rem 0}
h3{margin:.2rem 0;font-size:1.05rem;word-break:break-all}
.method{display:inline-block;font-weight:700;color:#fff;background:#0969da;border-radius:4px;padding:0 .4rem}
.method.get{background:#1a7f37}
.badge{display:inline-block;font-size:.8rem;border:1px solid #d0d7de;border-radius:1rem;padding:0 .5rem;
margin:.15rem .2rem .15rem 0;background:#f6f8fa}
.badge.danger{border-color:#cf222e;color:#cf222e}
.wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre{background:#f6f8fa;border-radius:6px;padding:.6rem;white-space:pre-wrap;word-break:break-all}
nav ul{padding-left:1.2rem}
@media (max-width:40rem){table,tbody,tr,td{display:block}thead{display:none}
tr{border:1px solid #d0d7de;border-radius:6px;margin:.5rem 0}td{border:0;padding:.15rem .5rem}
td:before{content:attr(data-label) ": ";font-weight:600}}
"""
_CONSTRAINTS = (
    "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "enum", "const", "default",
)  # fmt: skip
_UNTAGGED = "api"
_SAMPLE_FORMATS = {
    "email": "user@example.com",
    "date-time": "2030-01-01T00:00:00Z",
    "date": "2030-01-01",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def docs_page(document: dict[str, Any]) -> str:
    """One HTML page: a table of contents, then per tag its operations (fields, badges, a curl)."""
    info = document.get("info", {})
    server = (document.get("servers") or [{"url": ""}])[0]["url"]
    operations = _operations(document)
    toc, body = [], []
    for tag in document.get("tags", []):
        name = str(tag["name"])
        in_tag = [op for op in operations if op[2].get("tags", [_UNTAGGED])[0] == name]
        if not in_tag:
            continue
        anchor = f"tag-{name}"
        items = "".join(
            f'<li><a href="#{_e(_anchor(op))}">{_e(op[2].get("summary", ""))}</a> '
            f"<code>{_e(op[0].upper())} {_e(op[1])}</code></li>"
            for op in in_tag
        )
        toc.append(f'<li><a href="#{_e(anchor)}">{_e(name)}</a><ul>{items}</ul></li>')
        sections = "".join(_operation_html(method, path, op, server) for method, path, op in in_tag)
        body.append(f'<h2 id="{_e(anchor)}">{_e(name)}</h2><p>{_e(tag.get("description", ""))}</p>{sections}')
    title = _e(info.get("title", "API"))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{title} API</title><style>{_CSS}</style></head><body><main>"
        f"<h1>{title} API</h1><p>Version {_e(info.get('version', ''))}"
        + (f" &middot; <code>{_e(server)}</code>" if server else "")
        + f"</p>{_paragraphs(info.get('description', ''))}"
        f"<nav><h2>Contents</h2><ul>{''.join(toc)}</ul></nav>{''.join(body)}</main></body></html>"
    )


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document.get("paths", {}).items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "responses" in operation
    ]


def _anchor(op: tuple[str, str, dict[str, Any]]) -> str:
    return f"op-{op[2].get('operationId') or op[1]}"


def _operation_html(method: str, path: str, operation: dict[str, Any], server: str) -> str:
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    fields = _fields_table(schema) if schema is not None else ""
    statuses = ", ".join(str(status) for status in operation.get("responses", {}))
    return (
        f'<section class="op" id="{_e(_anchor((method, path, operation)))}">'
        f'<h3><span class="method {_e(method)}">{_e(method.upper())}</span> <code>{_e(path)}</code></h3>'
        f"<p><strong>{_e(operation.get('summary', ''))}</strong> "
        f"<code>{_e(operation.get('operationId', ''))}</code></p>"
        f"<div>{_badges(operation)}</div>{_paragraphs(operation.get('description', ''))}{fields}"
        f"<p>Answers: {_e(statuses)}</p>"
        f"<pre>{_e(_curl(method, path, operation, schema, server))}</pre></section>"
    )


def _badges(operation: dict[str, Any]) -> str:
    shown = [
        ("audience", operation.get("x-toolfront-audience")),
        ("scope", operation.get("x-toolfront-scope")),
        ("permission", operation.get("x-toolfront-permission")),
        ("danger", operation.get("x-toolfront-danger")),
        ("cost", operation.get("x-toolfront-cost")),
        ("max items", operation.get("x-toolfront-max-items")),
    ]
    return "".join(
        f'<span class="badge{" danger" if label == "danger" else ""}">{_e(label)}: {_e(value)}</span>'
        for label, value in shown
        if value is not None
    )


_COLUMNS = ("field", "type", "required", "constraints", "description")


def _fields_table(schema: dict[str, Any]) -> str:
    rows = _field_rows(schema, "")
    if not rows:
        return "<p>Input: an empty object <code>{}</code>.</p>"
    body = "".join(
        "<tr>"
        + "".join(
            # data-label: the narrow-screen layout shows each cell under its column's name
            f'<td data-label="{label}">{cell}</td>'
            for label, cell in zip(
                _COLUMNS,
                (f"<code>{_e(name)}</code>", _e(kind), "yes" if required else "no", _e(rules), _e(text)),
                strict=True,
            )
        )
        + "</tr>"
        for name, kind, required, rules, text in rows
    )
    head = "".join(f"<th>{label}</th>" for label in _COLUMNS)
    return f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _field_rows(schema: dict[str, Any], prefix: str) -> list[tuple[str, str, bool, str, str]]:
    """One row per property, nested objects and arrays of objects flattened as ``a[].b``."""
    rows = []
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        full = f"{prefix}{name}"
        rows.append((full, _type_of(prop), name in required, _constraints(prop), prop.get("description", "")))
        items = prop.get("items") if isinstance(prop.get("items"), dict) else None
        if items and "properties" in items:
            rows.extend(_field_rows(items, f"{full}[]."))
        elif "properties" in prop:
            rows.extend(_field_rows(prop, f"{full}."))
    return rows


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "any")
    text = " | ".join(kind) if isinstance(kind, list) else str(kind)
    items = schema.get("items")
    if text == "array" and isinstance(items, dict):
        text += f" of {_type_of(items)}"
    return text


def _constraints(schema: dict[str, Any]) -> str:
    def shown(key: str) -> str:
        value = schema[key]
        # A pattern reads as the regex itself; JSON quoting would double its backslashes.
        return value if key in ("pattern", "format") and isinstance(value, str) else json.dumps(value)

    return "; ".join(f"{key} {shown(key)}" for key in _CONSTRAINTS if key in schema)


def _sample(schema: dict[str, Any]) -> Any:
    """A plausible value for the curl example (a hint, not a guaranteed-valid input)."""
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("examples"):
        return schema["examples"][0]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _sample(props[name]) for name in schema.get("required", []) if name in props}
    if kind == "array":
        items = schema.get("items")
        return [_sample(items)] if isinstance(items, dict) else []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return _SAMPLE_FORMATS.get(str(schema.get("format")), "...")


def _curl(method: str, path: str, operation: dict[str, Any], schema: Any, server: str) -> str:
    parts = [f"curl -X {method.upper()} '{server}{path}'"]
    if operation.get("security") and {} not in operation["security"]:
        parts.append('-H "Authorization: Bearer $TOOLFRONT_KEY"')  # a key is required
    if isinstance(schema, dict):
        body = json.dumps(_sample(schema), ensure_ascii=False).replace("'", "'\\''")
        parts += ["-H 'Content-Type: application/json'", f"-d '{body}'"]
    return " \\\n  ".join(parts)


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{_e(part)}</p>" for part in str(text).split("\n\n") if part.strip())


def _e(value: Any) -> str:
    return escape(str(value), quote=True)
