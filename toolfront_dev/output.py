"""How management commands print: JSON documents for scripts, aligned text tables for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Rows under their headers, each column as wide as its widest cell."""
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        sys.stdout.write(
            "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n"
        )


def note(message: str) -> None:
    """A line for the person at the terminal (stderr), kept out of what a script captures."""
    print(message, file=sys.stderr)


def rfc3339(moment: datetime | None, *, none: str = "-") -> str:
    """A moment as RFC 3339 (``Z`` for UTC), or ``none``."""
    return none if moment is None else moment.isoformat().replace("+00:00", "Z")
