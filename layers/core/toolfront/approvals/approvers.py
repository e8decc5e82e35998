"""Approvers who sign in (``ApproverSignIn``): who may decide an admin tool's held call.

The confirmation page sends a person to Cognito's managed login (the code flow with PKCE, the
approvers' app client, found by its name) and back to ``/approvals/callback``, where the code is
exchanged for an ID token and a session begins: a random token in an ``HttpOnly`` cookie, its hash
in the approvals table for eight hours. The sign-in's ``state`` is bound to the browser that started
it (a secret in a cookie of its own, its hash kept with the state): someone else's callback URL
cannot sign a person in as someone else (login CSRF). A decision then needs that session, a CSRF
token bound to it and to the approval (an HMAC, so nothing more is stored), the ``approver``
permission (through the person's Cognito groups, which are principals) and someone else's call:
deciding one's own is refused. ``/approvals/sign-out`` deletes the session. The ID token comes
straight from Cognito's token endpoint over TLS, so its issuer and audience are checked
and its signature is not (OpenID Connect Core 3.1.3.7).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfront.auth.actors import ActorKind
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.errors import ApproverRequiredError, ConfigurationError, InvalidConfirmationError

# The approvals function imports this module for its cookie's name on every path; what only a
# signed-in decision needs (the approver's permissions, Cognito's token endpoint) is imported there.
if TYPE_CHECKING:
    from toolfront.approvals.records import Approval, Requester
    from toolfront.auth.keystore import KeyStore

SIGN_IN_SECONDS = 600  # a sign-in must come back within ten minutes
SESSION_SECONDS = 8 * 3600
SESSION_COOKIE = "tf_approver"
SIGN_IN_COOKIE = "tf_approver_signin"  # binds a sign-in's state to the browser that started it


@dataclass(frozen=True, slots=True)
class Approver:
    """A signed-in person: the Cognito user's ``sub``, name and groups."""

    sub: str
    username: str
    groups: tuple[str, ...]


class ApproverSignIn:
    """Sign-in, sessions and the four-eyes rule for one deployment's approvers."""

    client = aws.LazyClient("dynamodb")

    def __init__(
        self,
        table: str,
        *,
        user_pool_id: str,
        domain_url: str,
        client_name: str,
        keys: KeyStore,
        region: str,
        client: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._table, self._pool, self._domain = table, user_pool_id, domain_url.rstrip("/")
        self._client_name, self._keys, self._region = client_name, keys, region
        self._client, self._clock = client, clock
        self._client_id: str | None = None

    def start(self, return_to: str, base_url: str) -> tuple[str, str]:
        """Remember where to come back to; answer the managed login's URL to send the person to and
        the browser's secret (for ``SIGN_IN_COOKIE``), which ``finish`` needs besides the state."""
        state, verifier, browser = (secrets.token_urlsafe(n) for n in (32, 48, 32))
        fields = {"verifier": verifier, "return_to": return_to, "browser": _digest(browser)}
        self._put(f"signin#{_digest(state)}", fields, SIGN_IN_SECONDS)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        query = {
            "response_type": "code",
            "client_id": self.client_id(),
            "redirect_uri": f"{base_url}/approvals/callback",
            "scope": "openid email",
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        return f"{self._domain}/oauth2/authorize?{urllib.parse.urlencode(query)}", browser

    def finish(self, code: str, state: str, browser: str, base_url: str) -> tuple[str, str]:
        """The managed login came back: a new session's token and where to go (once per state).

        Args:
            code: Cognito's authorization code.
            state: The state ``start`` sent.
            browser: The secret ``start`` gave the browser that began this sign-in (its cookie).
            base_url: The API's own address (the callback's).

        Raises:
            InvalidConfirmationError: an unknown, used or expired state, a state begun in another
                browser, or a code Cognito refused.
        """
        found = self._take(f"signin#{_digest(state)}") if state else None
        if found is None or not code:
            raise InvalidConfirmationError("this sign-in is unknown or expired; open the approval link again")
        bound = found.get("browser", {}).get("S", "")
        if not (browser and bound and hmac.compare_digest(_digest(browser), bound)):
            raise InvalidConfirmationError(
                "this sign-in was started in another browser; open the approval link again"
            )
        claims = self._exchange(code, found["verifier"]["S"], f"{base_url}/approvals/callback")
        token = secrets.token_urlsafe(32)
        groups = claims.get("cognito:groups") or []
        person = {
            "sub": claims["sub"],
            # what the person knows themselves by (with e-mail sign-in, cognito:username is a UUID)
            "username": str(claims.get("email") or claims.get("cognito:username") or claims["sub"]),
            "groups": json.dumps([g for g in groups if isinstance(g, str)]),
        }
        self._put(f"session#{_digest(token)}", person, SESSION_SECONDS)
        return token, found["return_to"]["S"]

    def approver(self, session_token: str | None) -> Approver | None:
        """The person a session cookie stands for (``None``: no session, or an expired one)."""
        if not session_token:
            return None
        item = dynamodb.call(
            self.client,
            "get_item",
            TableName=self._table,
            Key={"approval_id": {"S": f"session#{_digest(session_token)}"}},
            ConsistentRead=True,
        ).get("Item")
        if item is None or int(item["expires_at_epoch"]["N"]) <= self._clock():
            return None
        groups = tuple(json.loads(item["groups"]["S"]))
        return Approver(item["sub"]["S"], item["username"]["S"], groups)

    def end(self, session_token: str) -> None:
        """Sign out: the session is gone at once (its cookie alone no longer stands for anyone)."""
        dynamodb.call(
            self.client,
            "delete_item",
            TableName=self._table,
            Key={"approval_id": {"S": f"session#{_digest(session_token)}"}},
        )

    @staticmethod
    def csrf_token(session_token: str, approval_id: str) -> str:
        """The decision form's token: bound to this session and this approval."""
        return hmac.new(session_token.encode(), approval_id.encode(), hashlib.sha256).hexdigest()

    def check(self, approver: Approver, approval: Approval) -> None:
        """Refuse (403) a person without the approval's approver permission (``approver`` unless
        its tool's policy names another), or deciding their own call."""
        why = self.refusal(approver, approval.requester, approval.policy.approver_permission)
        if why is not None:
            raise ApproverRequiredError(why)

    def refusal(
        self,
        approver: Approver,
        requester: Requester,
        needed: str,
        permissions: frozenset[str] | None = None,
    ) -> str | None:
        """Why ``approver`` may not decide a call of ``requester`` needing the permission
        ``needed`` (``None``: they may). ``permissions``: theirs, when already read (the inbox reads
        them once for all its rows); otherwise read here, after the four-eyes check."""
        own = (requester.kind == ActorKind.COGNITO and requester.id == approver.sub) or (
            requester.principal is not None and requester.principal in approver.groups
        )
        if own:
            return "this is your own call (or your team's): another approver must decide it (four eyes)"
        held = self.permissions(approver) if permissions is None else permissions
        if needed not in held:
            return (
                f"{approver.username} may not decide this approval: it needs the {needed!r} "
                "permission (through one of its Cognito groups)"
            )
        return None

    def permissions(self, approver: Approver) -> frozenset[str]:
        """What a person holds through their Cognito groups (principals) now: one read."""
        from toolfront.auth.authenticator import permissions_of

        principals = self._keys.get_principals(list(approver.groups)) if approver.groups else []
        return permissions_of(principals)

    def client_id(self) -> str:
        """The approvers' app client, found by its name once per process."""
        if self._client_id is None:
            cognito = aws.client("cognito-idp")
            request: dict[str, Any] = {"UserPoolId": self._pool, "MaxResults": 60}
            while self._client_id is None:
                page = cognito.list_user_pool_clients(**request)
                for found in page.get("UserPoolClients", []):
                    if found["ClientName"] == self._client_name:
                        self._client_id = str(found["ClientId"])
                if "NextToken" not in page:
                    break
                request["NextToken"] = page["NextToken"]
            if self._client_id is None:
                raise ConfigurationError(f"no app client {self._client_name} in {self._pool}")
        return self._client_id

    def _exchange(self, code: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
        from toolfront.oauth.token import post_token_request

        fields = {
            "grant_type": "authorization_code",
            "client_id": self.client_id(),
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        status, tokens = post_token_request(f"{self._domain}/oauth2/token", fields)
        if status != 200 or not isinstance(tokens, dict):  # a spent code, or no answer: sign in again
            raise InvalidConfirmationError("the sign-in could not be completed; open the approval link again")
        claims = _claims(str(tokens.get("id_token", "")))
        issuer = f"https://cognito-idp.{self._region}.amazonaws.com/{self._pool}"
        audience = claims.get("aud")
        if (
            claims.get("token_use") != "id"
            or audience != self.client_id()
            or not str(claims.get("iss", "")).endswith(f"/{self._pool}")
            or int(claims.get("exp", 0)) <= self._clock()
            or not claims.get("sub")
        ):
            raise InvalidConfirmationError(f"the sign-in's token is not {issuer}'s for this page")
        return claims

    def _put(self, key: str, fields: dict[str, str], seconds: int) -> None:
        item = {k: {"S": v} for k, v in fields.items()}
        item |= {"approval_id": {"S": key}, "expires_at_epoch": {"N": str(int(self._clock()) + seconds)}}
        dynamodb.call(self.client, "put_item", TableName=self._table, Item=item)

    def _take(self, key: str) -> dict[str, Any] | None:
        """Delete the item and answer it (once: a second take finds nothing)."""
        try:
            answer = dynamodb.call(
                self.client,
                "delete_item",
                TableName=self._table,
                Key={"approval_id": {"S": key}},
                ConditionExpression="attribute_exists(approval_id) AND expires_at_epoch > :now",
                ExpressionAttributeValues={":now": {"N": str(int(self._clock()))}},
                ReturnValues="ALL_OLD",
            )
        except dynamodb.ConditionFailedError:
            return None
        found: dict[str, Any] | None = answer.get("Attributes")
        return found


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _claims(token: str) -> dict[str, Any]:
    """A JWT's payload, unverified (the token came over TLS straight from the issuer)."""
    try:
        payload = token.split(".")[1]
        claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        raise InvalidConfirmationError(
            "the sign-in answered no usable token; open the approval link again"
        ) from None
    return claims
