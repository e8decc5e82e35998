"""JSON text and time stamps as toolfront writes them: one encoder per use, one RFC 3339 form.

Every module that turns data into text takes its encoder from here, so that "compact", "canonical"
(fingerprints, cache keys) and "exact answer" mean the same thing everywhere.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

#: Compact JSON, non-ASCII kept as it is (what MCP results and log lines carry).
compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
#: Compact JSON that refuses NaN and Infinity (the answers sent and stored: they must be JSON).
strict_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
#: Compact JSON that never fails: anything not JSON is written as its ``str`` (log lines only).
lenient_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces, no NaN or Infinity."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def rfc3339(moment: datetime, timespec: str = "seconds") -> str:
    """``moment`` in UTC, ``Z``-suffixed: ``2026-12-01T20:00:00Z``; to the ``timespec`` its use needs
    (``milliseconds`` for the audit trail's order, ``microseconds`` for a key's times)."""
    return moment.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 time stamp (``Z`` or an offset) as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
