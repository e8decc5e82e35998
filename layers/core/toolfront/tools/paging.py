"""Listing tools a page at a time (MCP ``tools/list``, REST ``GET /v1/tools``): name order, an
opaque cursor that says where the next page starts.

The cursor names the last tool of its page and carries an HMAC of that name keyed by the registry
(every tool's name): a cursor that was changed, or made for another deployment or version, is
refused, and a registry that changed since invalidates it. It carries no rights: each page is
filtered by what the caller may call now, so a forged cursor could only skip tools.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import hmac
from collections.abc import Sequence

DEFAULT_PAGE_SIZE = 100
_MAC_BYTES = 12


class InvalidCursorError(ValueError):
    """A cursor this registry did not write."""


class Pager:
    """Pages over one registry's names (sorted)."""

    def __init__(self, registry: Sequence[str]) -> None:
        self._key = hashlib.sha256("\n".join(sorted(registry)).encode()).digest()

    def page(self, names: Sequence[str], cursor: str | None, limit: int) -> tuple[list[str], str | None]:
        """The names of one page of ``names`` (sorted, the caller's), and the cursor of the next (None
        on the last page); raises ``InvalidCursorError``."""
        start = 0 if not cursor else bisect.bisect_right(names, self._after(cursor))
        chosen = list(names[start : start + limit])
        more = start + limit < len(names)
        return chosen, (self._cursor(chosen[-1]) if more and chosen else None)

    def _cursor(self, last: str) -> str:
        name = last.encode()
        mac = hmac.new(self._key, name, hashlib.sha256).digest()[:_MAC_BYTES]
        return base64.urlsafe_b64encode(mac + name).rstrip(b"=").decode()

    def _after(self, cursor: str) -> str:
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            mac, name = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
            expected = hmac.new(self._key, name, hashlib.sha256).digest()[:_MAC_BYTES]
            if len(cursor) > 400 or not name or not hmac.compare_digest(mac, expected):
                raise InvalidCursorError
            return name.decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise InvalidCursorError("the cursor is not valid: list again from the first page") from None
