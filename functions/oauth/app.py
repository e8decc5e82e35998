"""The sign-in facade's function: OAuth metadata, client registration, authorize and token, in front
of Cognito's managed login, for MCP clients that sign people in (docs/contract.md, "Signing in")."""

from __future__ import annotations

from typing import Any

from toolfront.wiring import sign_in_facade


def lambda_handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    return sign_in_facade().handle(event, context)
