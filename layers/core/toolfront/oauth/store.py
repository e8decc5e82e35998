"""What the sign-in facade keeps in DynamoDB: its registered clients, each metadata document's app
client, the count against ``MaxRegisteredClients``, the per-IP registration budget, and pending
consents. Items of the clients table, keyed ``pk``:

- ``client#<Cognito client id>``: a registered client (read by every function's audience check).
- ``document#<URL>``: the app client standing for a client ID metadata document.
- ``count#clients``: how many app clients the facade holds (reserved before one is created).
- ``unused#clients``: one attribute ``c_<Cognito client id>`` per app client no token was issued for
  yet, holding when it expires unused (found without a Scan, which the function may not do).
- ``consent#<id>``: an authorization request waiting for the person's decision (single use, TTL).

The per-IP budgets (registrations, new loopback ports) are fixed one-hour windows in the rate-limits
table.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolfront.auth.registered import client_key
from toolfront.aws.clients import client
from toolfront.aws.dynamodb import ConditionFailedError, call
from toolfront.oauth.clientmeta import ClientMetadata
from toolfront.oauth.errors import OAuthError

_COUNT_KEY = {"pk": {"S": "count#clients"}}
_UNUSED_KEY = {"pk": {"S": "unused#clients"}}
_UNUSED_PREFIX = "c_"
CONSENT_SECONDS = 600


@dataclass(frozen=True, slots=True)
class Client:
    """A client the facade registered: its Cognito app client and what it was registered with."""

    cognito_id: str
    metadata: ClientMetadata
    document_url: str | None = None  # set for a client ID metadata document's app client
    # What the app client's CallbackURLs hold: the redirect URIs, and each loopback port used since
    # (Cognito matches callbacks exactly; RFC 8252 lets a native app take any port).
    extra_callbacks: tuple[str, ...] = ()

    @property
    def callbacks(self) -> tuple[str, ...]:
        return (*self.metadata.redirect_uris, *self.extra_callbacks)


@dataclass(frozen=True, slots=True)
class Consent:
    """An authorization request shown to the person, waiting for Allow or Deny."""

    cognito_id: str
    client_name: str
    redirect_uri: str
    state: str | None
    code_challenge: str
    scopes: tuple[str, ...]
    browser: str  # hash of the cookie the consent page set: the decision must come from that browser


class FacadeStore:
    """The facade's items (see the module docstring)."""

    def __init__(
        self,
        clients_table: str,
        rate_table: str,
        dynamodb: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._table, self._rates = clients_table, rate_table
        self._dynamodb = dynamodb
        self._clock = clock

    def _call(self, operation: str, **request: Any) -> Any:
        return call(self._dynamodb or client("dynamodb"), operation, **request)

    # -- the budgets ---------------------------------------------------------------------------

    def spend_registration(self, source_ip: str, per_hour: int) -> None:
        """Count one registration from ``source_ip`` this hour; refuse the one over ``per_hour``."""
        retry = self._spend_hourly("oauth-register", source_ip, per_hour)
        if retry is not None:
            raise OAuthError(
                "too_many_registrations",
                f"at most {per_hour} client registrations an hour from one address; try again in {retry} s",
                429,
                headers={"retry-after": str(retry)},
            )

    def spend_new_port(self, source_ip: str, per_hour: int) -> None:
        """Count one new loopback port (one app-client update) from ``source_ip`` this hour."""
        retry = self._spend_hourly("oauth-port", source_ip, per_hour)
        if retry is not None:
            raise OAuthError(
                "temporarily_unavailable",
                f"at most {per_hour} new loopback ports an hour from one address; try again in {retry} s,"
                " or use a port this client used before",
                429,
                headers={"retry-after": str(retry)},
            )

    def _spend_hourly(self, kind: str, source_ip: str, per_hour: int) -> int | None:
        """``None`` once counted; the seconds to the next hour when ``per_hour`` is spent."""
        now = int(self._clock())
        hour = now // 3600
        try:
            self._call(
                "update_item",
                TableName=self._rates,
                Key={"pk": {"S": f"{kind}#{source_ip}#{hour}"}},
                UpdateExpression="ADD n :one SET expires_at_epoch = :expires",
                ConditionExpression="attribute_not_exists(n) OR n < :limit",
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":limit": {"N": str(per_hour)},
                    ":expires": {"N": str((hour + 2) * 3600)},
                },
            )
        except ConditionFailedError:
            return (hour + 1) * 3600 - now
        return None

    def reserve_client(self, cap: int) -> None:
        """Take one of the ``cap`` app-client places (given back by ``release_client``)."""
        try:
            self._call(
                "update_item",
                TableName=self._table,
                Key=_COUNT_KEY,
                UpdateExpression="ADD n :one",
                ConditionExpression="attribute_not_exists(n) OR n < :cap",
                ExpressionAttributeValues={":one": {"N": "1"}, ":cap": {"N": str(cap)}},
            )
        except ConditionFailedError:
            raise OAuthError(
                "registration_limit_reached",
                f"this server registers at most {cap} clients and holds that many; ask its operator",
                403,
            ) from None

    def release_client(self) -> None:
        self._call(
            "update_item",
            TableName=self._table,
            Key=_COUNT_KEY,
            UpdateExpression="ADD n :minus",
            ExpressionAttributeValues={":minus": {"N": "-1"}},
        )

    # -- registrations not used yet ------------------------------------------------------------

    def note_unused(self, cognito_id: str, until: int) -> None:
        """Record that no token was issued for ``cognito_id`` yet; it expires at ``until``."""
        self._call(
            "update_item",
            TableName=self._table,
            Key=_UNUSED_KEY,
            UpdateExpression="SET #c = :until",
            ExpressionAttributeNames={"#c": _UNUSED_PREFIX + cognito_id},
            ExpressionAttributeValues={":until": {"N": str(until)}},
        )

    def forget_unused(self, cognito_id: str) -> None:
        """``cognito_id`` was used (or given back): it no longer expires."""
        self._call(
            "update_item",
            TableName=self._table,
            Key=_UNUSED_KEY,
            UpdateExpression="REMOVE #c",
            ExpressionAttributeNames={"#c": _UNUSED_PREFIX + cognito_id},
        )

    def expired_unused(self, limit: int) -> list[tuple[str, int]]:
        """Up to ``limit`` unused app clients past their expiry, the longest expired first."""
        found = self._call("get_item", TableName=self._table, Key=_UNUSED_KEY, ConsistentRead=True)
        now = self._clock()
        expired = [
            (name[len(_UNUSED_PREFIX) :], int(value["N"]))
            for name, value in found.get("Item", {}).items()
            if name.startswith(_UNUSED_PREFIX) and "N" in value and int(value["N"]) <= now
        ]
        return sorted(expired, key=lambda entry: entry[1])[:limit]

    def claim_unused(self, cognito_id: str, until: int) -> bool:
        """Take an expired entry for removal; ``False`` when a token or another request took it first."""
        try:
            self._call(
                "update_item",
                TableName=self._table,
                Key=_UNUSED_KEY,
                UpdateExpression="REMOVE #c",
                ConditionExpression="#c = :until",
                ExpressionAttributeNames={"#c": _UNUSED_PREFIX + cognito_id},
                ExpressionAttributeValues={":until": {"N": str(until)}},
            )
        except ConditionFailedError:
            return False
        return True

    # -- clients -------------------------------------------------------------------------------

    def put_client(self, registered: Client, source_ip: str) -> None:
        item = {
            **client_key(registered.cognito_id),
            "kind": {"S": "document" if registered.document_url else "registered"},
            **_metadata_attributes(registered.metadata),
            "extra_callbacks": {"L": [{"S": u} for u in registered.extra_callbacks]},
            "created_at": {"N": str(int(self._clock()))},
            "registered_from": {"S": source_ip or "-"},
        }
        if registered.document_url:
            item["document_url"] = {"S": registered.document_url}
        self._call("put_item", TableName=self._table, Item=item)

    def get_client(self, cognito_id: str) -> Client | None:
        found = self._call("get_item", TableName=self._table, Key=client_key(cognito_id), ConsistentRead=True)
        item = found.get("Item")
        if item is None:
            return None
        document = item.get("document_url", {}).get("S")
        extra = tuple(u["S"] for u in item.get("extra_callbacks", {}).get("L", []))
        return Client(cognito_id, _metadata_of(item), document, extra)

    def delete_client(self, cognito_id: str) -> None:
        self._call("delete_item", TableName=self._table, Key=client_key(cognito_id))

    def get_document(self, url: str) -> Client | None:
        found = self._call(
            "get_item", TableName=self._table, Key={"pk": {"S": f"document#{url}"}}, ConsistentRead=True
        )
        item = found.get("Item")
        return Client(item["client_id"]["S"], _metadata_of(item), url) if item else None

    def put_document(self, registered: Client, *, replace: bool) -> bool:
        """Record the app client of a document; ``False`` when another request recorded one first
        (``replace`` False) — that one is used, so one document never holds two app clients."""
        assert registered.document_url is not None
        item = {
            "pk": {"S": f"document#{registered.document_url}"},
            "client_id": {"S": registered.cognito_id},
            **_metadata_attributes(registered.metadata),
        }
        condition = {} if replace else {"ConditionExpression": "attribute_not_exists(pk)"}
        try:
            self._call("put_item", TableName=self._table, Item=item, **condition)
        except ConditionFailedError:
            return False
        return True

    def delete_document(self, url: str, cognito_id: str) -> None:
        """Forget a document's app client (only while it is still ``cognito_id``)."""
        with contextlib.suppress(ConditionFailedError):  # another app client now: that one stays
            self._call(
                "delete_item",
                TableName=self._table,
                Key={"pk": {"S": f"document#{url}"}},
                ConditionExpression="client_id = :id",
                ExpressionAttributeValues={":id": {"S": cognito_id}},
            )

    # -- consents ------------------------------------------------------------------------------

    def put_consent(self, consent_id: str, consent: Consent) -> None:
        item: dict[str, Any] = {
            "pk": {"S": f"consent#{consent_id}"},
            "client_id": {"S": consent.cognito_id},
            "client_name": {"S": consent.client_name},
            "redirect_uri": {"S": consent.redirect_uri},
            "code_challenge": {"S": consent.code_challenge},
            "scopes": {"L": [{"S": s} for s in consent.scopes]},
            "browser": {"S": consent.browser},
            "expires_at_epoch": {"N": str(int(self._clock()) + CONSENT_SECONDS)},
        }
        if consent.state is not None:
            item["state"] = {"S": consent.state}
        self._call("put_item", TableName=self._table, Item=item)

    def take_consent(self, consent_id: str) -> Consent | None:
        """The pending consent, removed in the same request (a decision is made once); ``None`` when
        unknown, taken already, or expired (TTL deletes late, so expiry is checked here)."""
        found = self._call(
            "delete_item",
            TableName=self._table,
            Key={"pk": {"S": f"consent#{consent_id}"}},
            ReturnValues="ALL_OLD",
        )
        item = found.get("Attributes")
        if not item or int(item["expires_at_epoch"]["N"]) <= self._clock():
            return None
        return Consent(
            cognito_id=item["client_id"]["S"],
            client_name=item["client_name"]["S"],
            redirect_uri=item["redirect_uri"]["S"],
            state=item.get("state", {}).get("S"),
            code_challenge=item["code_challenge"]["S"],
            scopes=tuple(s["S"] for s in item["scopes"]["L"]),
            browser=item["browser"]["S"],
        )


def _metadata_attributes(metadata: ClientMetadata) -> dict[str, Any]:
    return {
        "client_name": {"S": metadata.client_name},
        "redirect_uris": {"L": [{"S": u} for u in metadata.redirect_uris]},
        "grant_types": {"L": [{"S": g} for g in metadata.grant_types]},
    }


def _metadata_of(item: dict[str, Any]) -> ClientMetadata:
    return ClientMetadata(
        redirect_uris=tuple(u["S"] for u in item["redirect_uris"]["L"]),
        client_name=item["client_name"]["S"],
        grant_types=tuple(g["S"] for g in item["grant_types"]["L"]),
    )
