"""The catalogue's exports: CSV a spreadsheet shows as text, and what an export takes in an answer."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

FIELDS = ["sku", "name", "price_cents", "currency"]
# A spreadsheet reads a cell starting with one of these as a formula (OWASP, CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(rows: list[dict[str, Any]], *, header: bool) -> str:
    """``rows`` as CSV, one ``\\n``-ended line each, formulas neutralised (``cell``)."""
    # "\r\n" as the writer's terminator makes it quote a field holding a lone "\r" too (with "\n"
    # alone it would not, and a reader would start a row there); each row then ends in "\n" as before.
    sheet = io.StringIO()
    writer = csv.DictWriter(sheet, fieldnames=FIELDS, lineterminator="\r\n")
    heading = [dict(zip(FIELDS, FIELDS, strict=True))] if header else []
    lines = []
    for row in heading + rows:
        writer.writerow({key: cell(value) for key, value in row.items()})
        lines.append(sheet.getvalue()[:-2] + "\n")
        sheet.seek(0)
        sheet.truncate()
    return "".join(lines)


def cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as text: a formula's start is prefixed with ``'``."""
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_STARTS) else value


def csv_size(product: dict[str, Any]) -> int:
    """The bytes one product's CSV line takes in the answer."""
    return _in_answer(csv_text([product], header=False))


def json_size(product: dict[str, Any]) -> int:
    """The bytes one product takes in a JSON export's answer."""
    return _in_answer(json.dumps(product) + ", ")


def _in_answer(text: str) -> int:
    """The bytes ``text`` takes in the function's answer: a JSON string in the envelope, which is
    itself a JSON string there (the response's ``body``), so escaped twice."""
    return len(json.dumps(json.dumps(text)))
