"""The app clients the sign-in facade registered: one item each in the clients table, read here for
the audience check of every Cognito token (the facade writes them; every other function reads).

Cognito access tokens carry no ``aud``: the ``client_id`` claim is what says whom a token was issued
to, so a token is accepted only when that client is the stack's own or one of these.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from toolfront.aws.clients import client
from toolfront.aws.dynamodb import call

CLIENT_PREFIX = "client#"  # pk of a registered app client: client#<Cognito client id>
# A client the facade registered stays registered; an operator who deletes one waits this long at
# most before its tokens stop working in a warm function (the app client itself is gone at once).
KNOWN_SECONDS = 300.0
_MAX_REMEMBERED = 4096


def client_key(client_id: str) -> dict[str, dict[str, str]]:
    """The DynamoDB key of a registered app client's item."""
    return {"pk": {"S": CLIENT_PREFIX + client_id}}


class RegisteredClients:
    """``client_id in registered``: whether the facade registered that app client (cached while true)."""

    def __init__(self, table: str, dynamodb: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._table = table
        self._dynamodb = dynamodb  # None: the process's shared client
        self._clock = clock
        self._known: dict[str, float] = {}  # client id -> when it was last seen registered
        self._lock = threading.Lock()

    def __contains__(self, client_id: object) -> bool:
        if not isinstance(client_id, str) or not client_id:
            return False
        now = self._clock()
        seen = self._known.get(client_id)
        if seen is not None and now - seen < KNOWN_SECONDS:
            return True
        found = call(
            self._dynamodb or client("dynamodb"), "get_item", TableName=self._table, Key=client_key(client_id)
        )
        if "Item" not in found:
            return False  # never cached: a client registered a moment later is found next time
        with self._lock:
            if len(self._known) >= _MAX_REMEMBERED:
                self._known.clear()
            self._known[client_id] = now
        return True
