"""``/oauth/token``: the code exchange and refresh, passed to Cognito's token endpoint for the app
client the request's ``client_id`` stands for; Cognito checks the PKCE verifier, the code and the
redirect URI, and its tokens (or its OAuth error) are the answer.

The request and the answer carry codes, verifiers and tokens: neither is ever logged.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from toolfront.oauth.errors import OAuthError
from toolfront.oauth.pkce import is_pkce_value

if TYPE_CHECKING:  # handed in: the approvers' sign-in posts here without the facade's registrations
    from toolfront.oauth.registration import Registrar

TIMEOUT_SECONDS = 5
MAX_ANSWER_BYTES = 65536
_ANSWER_FIELDS = ("access_token", "id_token", "refresh_token", "token_type", "expires_in", "scope")
# Cognito is reached directly (no proxy from the environment: Lambda has none, a shell may).
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class TokenExchange:
    """Passes token requests to Cognito for the facade's clients."""

    def __init__(self, registrar: Registrar, login_url: str) -> None:
        self._registrar, self._endpoint = registrar, f"{login_url}/oauth2/token"

    def exchange(self, form: Mapping[str, str], resources: Collection[str]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON answer for a token request's form fields.

        Raises:
            OAuthError: the request is malformed or names no client of this server.
        """
        grant = form.get("grant_type", "")
        resource = form.get("resource")
        if resource is not None and resource.rstrip("/") not in resources:
            raise OAuthError("invalid_target", "resource is not an MCP endpoint of this server")
        if grant == "authorization_code":
            fields = _required(form, ("code", "redirect_uri", "client_id", "code_verifier"))
            if not is_pkce_value(fields["code_verifier"]):
                raise OAuthError(
                    "invalid_grant", "code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]"
                )
        elif grant == "refresh_token":
            fields = _required(form, ("refresh_token", "client_id"))
        else:
            raise OAuthError(
                "unsupported_grant_type", "grant_type must be authorization_code or refresh_token"
            )
        registered = self._registrar.for_token(fields["client_id"])
        if grant not in registered.metadata.grant_types:
            raise OAuthError("unauthorized_client", "this client was not registered for refresh_token")
        status, answer = self._send({**fields, "grant_type": grant, "client_id": registered.cognito_id})
        if status == 200:  # a token was issued: the client no longer expires unused
            self._registrar.used(registered)
        return status, answer

    def _send(self, fields: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        status, answer_json = post_token_request(self._endpoint, fields)
        if status == 0:
            raise OAuthError("temporarily_unavailable", "Cognito did not answer; try again shortly", 503)
        if not isinstance(answer_json, dict):
            raise OAuthError("temporarily_unavailable", f"Cognito answered HTTP {status} without JSON", 503)
        if status == 200 and "access_token" in answer_json:
            return 200, {k: answer_json[k] for k in _ANSWER_FIELDS if k in answer_json}
        error = answer_json.get("error")
        if not isinstance(error, str):
            raise OAuthError("temporarily_unavailable", f"Cognito answered HTTP {status}", 503)
        refusal: dict[str, Any] = {"error": error}
        if isinstance(answer_json.get("error_description"), str):
            refusal["error_description"] = answer_json["error_description"]
        return (status if 400 <= status < 500 else 503), refusal


def post_token_request(endpoint: str, fields: Mapping[str, str]) -> tuple[int, Any]:
    """POST a token request to Cognito's token endpoint: the HTTP status and the parsed JSON answer
    (``None`` when it is not JSON); ``(0, None)`` when Cognito did not answer."""
    request = urllib.request.Request(
        endpoint,
        data=urlencode(fields).encode("ascii"),
        headers={"content-type": "application/x-www-form-urlencoded", "accept": "application/json"},
        method="POST",
    )
    try:
        with _OPENER.open(request, timeout=TIMEOUT_SECONDS) as answer:
            status, body = answer.status, answer.read(MAX_ANSWER_BYTES)
    except urllib.error.HTTPError as refused:
        status, body = refused.code, refused.read(MAX_ANSWER_BYTES)
    except (urllib.error.URLError, OSError):
        return 0, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def _required(form: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    missing = [name for name in names if not form.get(name)]
    if missing:
        raise OAuthError("invalid_request", f"missing {', '.join(missing)}")
    return {name: form[name] for name in names}
