"""Cognito app clients for the clients the facade registers: one public client (no secret) of the
code flow per registration or metadata document, allowed the API's scopes and nothing else.

UpdateUserPoolClient resets every attribute it is not given, so the whole configuration is written
from one place (``_configuration``) for creation and update alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from toolfront.aws.clients import client, error_code
from toolfront.oauth.errors import OAuthError

ACCESS_TOKEN_MINUTES = 60
REFRESH_TOKEN_DAYS = 30
MAX_CALLBACK_URLS = 100  # Cognito's limit per app client
_NAME_UNSAFE = re.compile(r"[^\w\s+=,.@-]")
_UNAVAILABLE = frozenset({"TooManyRequestsException", "InternalErrorException", "ThrottlingException"})


class CognitoApps:
    """Creates, updates and deletes the facade's app clients in one user pool."""

    def __init__(self, user_pool_id: str, scopes: Iterable[str], cognito: Any = None) -> None:
        self._pool = user_pool_id
        self._scopes = sorted(scopes)
        self._cognito = cognito  # None: the process's shared client

    def create(self, name: str, redirect_uris: Iterable[str]) -> str:
        """A new app client's id."""
        configuration = {**self._configuration(name, redirect_uris), "GenerateSecret": False}
        answer = self._call("create_user_pool_client", **configuration)
        return str(answer["UserPoolClient"]["ClientId"])

    def update(self, client_id: str, name: str, redirect_uris: Iterable[str]) -> None:
        """Rewrite an app client's configuration (its callback URLs above all)."""
        self._call("update_user_pool_client", ClientId=client_id, **self._configuration(name, redirect_uris))

    def delete(self, client_id: str) -> None:
        self._call("delete_user_pool_client", UserPoolId=self._pool, ClientId=client_id)

    def _configuration(self, name: str, redirect_uris: Iterable[str]) -> dict[str, Any]:
        callbacks = list(dict.fromkeys(redirect_uris))[-MAX_CALLBACK_URLS:]
        return {
            "UserPoolId": self._pool,
            "ClientName": ("mcp " + _NAME_UNSAFE.sub("_", name))[:128],
            "AllowedOAuthFlowsUserPoolClient": True,
            "AllowedOAuthFlows": ["code"],
            "AllowedOAuthScopes": self._scopes,
            "CallbackURLs": callbacks,
            "SupportedIdentityProviders": ["COGNITO"],
            "ExplicitAuthFlows": ["ALLOW_REFRESH_TOKEN_AUTH"],
            "PreventUserExistenceErrors": "ENABLED",
            "EnableTokenRevocation": True,
            "AccessTokenValidity": ACCESS_TOKEN_MINUTES,
            "IdTokenValidity": ACCESS_TOKEN_MINUTES,
            "RefreshTokenValidity": REFRESH_TOKEN_DAYS,
            "TokenValidityUnits": {"AccessToken": "minutes", "IdToken": "minutes", "RefreshToken": "days"},
        }

    def _call(self, operation: str, **request: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

        cognito = self._cognito or client("cognito-idp")
        try:
            return getattr(cognito, operation)(**request)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = error_code(exc)
            if code == "InvalidParameterException":  # e.g. a callback URL Cognito will not take
                message = str(error.get("Message", ""))[:200]
                raise OAuthError("invalid_redirect_uri", f"Cognito refused the client: {message}") from exc
            if code == "LimitExceededException":
                raise OAuthError(
                    "registration_limit_reached", "the user pool holds no more app clients", 403
                ) from exc
            if code in _UNAVAILABLE:
                raise _unavailable() from exc
            raise  # a request Cognito finds wrong is a bug here: a 500, logged in full
        except ParamValidationError:
            raise
        except BotoCoreError as exc:  # no connection, a timeout
            raise _unavailable() from exc


def _unavailable() -> OAuthError:
    return OAuthError("temporarily_unavailable", "Cognito did not answer; try again shortly", 503)
