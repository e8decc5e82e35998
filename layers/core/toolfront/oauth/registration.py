"""Which clients exist: registering one (RFC 7591), and finding the client an authorization or token
request names, by its registered id or by its metadata document's URL.

Every app client costs one of ``MaxRegisteredClients`` places and one of the source address's
registrations this hour, whichever way it came; a failure part-way gives back what it took, so a
refused or failed registration leaves neither a place taken nor an app client behind. A client no
token was issued for within ``UNUSED_CLIENT_SECONDS`` expires: when the places are all taken, the next
registration removes such clients (item and app client) and takes a freed place, so addresses that
register and never sign in cannot hold ``MaxRegisteredClients`` for good.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditActor, AuditEntry, AuditEvent
from toolfront.errors import StoreUnavailableError
from toolfront.oauth.apps import MAX_CALLBACK_URLS, CognitoApps
from toolfront.oauth.clientmeta import ClientMetadata, client_metadata, registered_redirect
from toolfront.oauth.documents import fetch_document, is_document_url
from toolfront.oauth.errors import OAuthError
from toolfront.oauth.store import Client, FacadeStore
from toolfront.settings import FacadeSettings

logger = logging.getLogger(__name__)

#: A sign-in takes minutes; a day leaves room for a person who registers and comes back later.
UNUSED_CLIENT_SECONDS = 24 * 3600
#: Unused clients removed by one registration that found every place taken (it needs one).
EXPIRED_PER_REGISTRATION = 3
#: App-client updates for loopback ports not seen before, per source address and hour (each is one
#: UpdateUserPoolClient: a native app takes a new port when it starts, not on every request).
NEW_PORTS_PER_IP_PER_HOUR = 20


class Registrar:
    """Registers clients and resolves ``client_id`` values to them."""

    def __init__(
        self,
        store: FacadeStore,
        apps: CognitoApps,
        settings: FacadeSettings,
        clock: Callable[[], float] = time.time,
        audit: AuditLog | None = None,
    ) -> None:
        self._store, self._apps, self._settings, self._clock = store, apps, settings, clock
        self._audit = audit

    def register(self, document: Any, source_ip: str) -> dict[str, Any]:
        """``POST /oauth/register``: the RFC 7591 answer for a new client."""
        metadata = client_metadata(document)
        created = self._create(metadata, source_ip)
        return metadata.registration(created.cognito_id, int(self._clock()))

    def for_authorization(self, client_id: str, source_ip: str) -> Client:
        """The client of an authorization request: registered, or its metadata document fetched
        now (and its app client created on first use, or brought up to date when it changed).

        Raises:
            OAuthError: ``invalid_client``.
        """
        if not is_document_url(client_id):
            return self._registered(client_id)
        metadata = fetch_document(client_id, self._settings.metadata_hosts)
        known = self._store.get_document(client_id)
        if known is None:
            return self._adopt_document(client_id, metadata, source_ip)
        if known.metadata != metadata:  # the document changed: its app client follows it
            known = self._rewrite(Client(known.cognito_id, metadata, client_id, self._kept(known, metadata)))
            self._store.put_document(known, replace=True)
        return known

    def for_token(self, client_id: str) -> Client:
        """The client of a token request (a document is not fetched again: its authorization did)."""
        if is_document_url(client_id):
            known = self._store.get_document(client_id)
            if known is None:
                raise OAuthError("invalid_client", "this client has not been authorized here", 401)
            return known
        return self._registered(client_id, status=401)

    def allow_redirect(self, registered: Client, redirect_uri: str, source_ip: str) -> Client:
        """The client once ``redirect_uri`` is one of its callbacks (a loopback URI on a new port is
        added to its app client, within the address's hourly budget of new ports).

        Raises:
            OAuthError: not a registered redirect URI (``check_redirect``); the budget is spent (429).
        """
        self.check_redirect(registered, redirect_uri)
        if redirect_uri in registered.callbacks:
            return registered
        self._store.spend_new_port(source_ip, NEW_PORTS_PER_IP_PER_HOUR)
        uris = registered.metadata.redirect_uris
        kept = tuple(u for u in registered.extra_callbacks if registered_redirect(u, uris))
        extra = (*kept, redirect_uri)[-(MAX_CALLBACK_URLS - 10) :]
        return self._rewrite(
            Client(registered.cognito_id, registered.metadata, registered.document_url, extra)
        )

    @staticmethod
    def check_redirect(registered: Client, redirect_uri: str) -> None:
        """Refuse (``OAuthError``, a page) a ``redirect_uri`` that is not one of the client's: every
        rule of registration holds for it, and only a loopback URI's port may differ."""
        if not registered_redirect(redirect_uri, registered.metadata.redirect_uris):
            raise OAuthError("invalid_request", "redirect_uri is not registered for this client")

    def used(self, registered: Client) -> None:
        """A token was issued for ``registered``: it no longer expires unused (best effort: the
        tokens are answered anyway; a client left marked unused may expire after a day)."""
        try:
            self._store.forget_unused(registered.cognito_id)
        except StoreUnavailableError:
            logger.warning("could not mark OAuth client %s as used", registered.cognito_id)

    def _registered(self, client_id: str, status: int = 400) -> Client:
        found = self._store.get_client(client_id) if client_id else None
        if found is None or found.document_url is not None:
            raise OAuthError("invalid_client", "unknown client_id: register the client first", status)
        return found

    def _adopt_document(self, url: str, metadata: ClientMetadata, source_ip: str) -> Client:
        created = self._create(metadata, source_ip, url)
        if self._store.put_document(created, replace=False):
            return created
        # Another request adopted the document first: use its app client, give this one back.
        self._undo(created.cognito_id)
        winner = self._store.get_document(url)
        if winner is None:
            raise OAuthError("temporarily_unavailable", "the client is being set up; try again", 503)
        return winner

    def _create(self, metadata: ClientMetadata, source_ip: str, document_url: str | None = None) -> Client:
        self._store.spend_registration(source_ip, self._settings.registrations_per_ip_per_hour)
        self._reserve()
        try:
            cognito_id = self._apps.create(metadata.client_name, metadata.redirect_uris)
        except BaseException:
            self._store.release_client()
            raise
        created = Client(cognito_id, metadata, document_url)
        try:
            self._store.note_unused(cognito_id, int(self._clock()) + UNUSED_CLIENT_SECONDS)
            self._store.put_client(created, source_ip)
        except BaseException:
            self._undo(cognito_id, recorded=False)
            raise
        try:
            self._record(created, source_ip)
        except StoreUnavailableError:  # no client without its record: this one is given back
            self._undo(cognito_id)
            raise OAuthError(
                "temporarily_unavailable", "the client could not be registered; retry", 503
            ) from None
        logger.info("registered OAuth client %s (%s)", cognito_id, "document" if document_url else "dynamic")
        return created

    def _reserve(self) -> None:
        """Take a place; when none is free, first remove clients that expired unused."""
        try:
            self._store.reserve_client(self._settings.max_clients)
            return
        except OAuthError as full:
            if full.error != "registration_limit_reached" or not self._expire_unused():
                raise
        self._store.reserve_client(self._settings.max_clients)

    def _expire_unused(self) -> int:
        """Remove up to ``EXPIRED_PER_REGISTRATION`` clients that expired unused; how many were."""
        removed = 0
        for cognito_id, until in self._store.expired_unused(EXPIRED_PER_REGISTRATION):
            if not self._store.claim_unused(cognito_id, until):
                continue  # a token came first, or another registration removes it
            found = self._store.get_client(cognito_id)
            if found is not None and found.document_url:
                self._store.delete_document(found.document_url, cognito_id)
            self._store.delete_client(cognito_id)
            try:
                self._apps.delete(cognito_id)
            except Exception:  # its item is gone: its tokens (there are none) fail the audience check
                logger.warning("could not delete the app client of expired OAuth client %s", cognito_id)
            self._store.release_client()
            logger.info("expired OAuth client %s: no token was issued for it", cognito_id)
            removed += 1
        return removed

    def _record(self, created: Client, source_ip: str) -> None:
        """The registration's audit record: the address it came from and the client's name."""
        if self._audit is None:
            return
        entry = AuditEntry(
            event=AuditEvent.CLIENT_REGISTERED,
            at=self._audit.now(),
            actor=AuditActor("anonymous", source_ip or None),
            status="registered",
            entry="oauth",
            client=(created.metadata.client_name or created.cognito_id)[:100],
            decided_by={
                "kind": "document" if created.document_url else "registration",
                "id": created.cognito_id,
            },
        )
        self._audit.append(entry)

    def _rewrite(self, updated: Client) -> Client:
        self._apps.update(updated.cognito_id, updated.metadata.client_name, updated.callbacks)
        self._store.put_client(updated, "")
        return updated

    def _undo(self, cognito_id: str, *, recorded: bool = True) -> None:
        """Remove an app client this request created and give its place back (best effort: an app
        client left behind has no item, so its tokens fail the audience check anyway)."""
        try:
            if recorded:
                self._store.delete_client(cognito_id)
            self._store.forget_unused(cognito_id)
            self._apps.delete(cognito_id)
            self._store.release_client()
        except Exception:
            logger.warning("could not remove app client %s after a failed registration", cognito_id)

    @staticmethod
    def _kept(known: Client, metadata: ClientMetadata) -> tuple[str, ...]:
        # Loopback ports stay only while the document still lists their redirect URI.
        return tuple(u for u in known.extra_callbacks if registered_redirect(u, metadata.redirect_uris))
