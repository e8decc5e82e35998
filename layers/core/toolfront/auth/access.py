"""Authorization: may this actor call this tool? (audience, then scope, then permission), and the
listing of the tools an actor may call."""

from __future__ import annotations

from typing import Any

from toolfront.auth.actors import Actor
from toolfront.errors import MissingPermissionError, MissingScopeError, UnauthenticatedError


def authorize(*, audience: str, scope: str | None, permission: str | None, actor: Actor) -> None:
    """Raise the refusal that applies, in the contract's order; return when the call may go on.

    Public tools need nothing; core's system tools (admin, no scope) need any valid credential;
    other admin tools need a held scope and, held by the owner right now, the permission.
    """
    if audience == "public":
        return
    if not actor.authenticated:
        raise UnauthenticatedError("this tool needs an API key or access token (Authorization: Bearer ...)")
    if scope is not None and not actor.has_scope(scope):
        raise MissingScopeError(f"this key lacks the scope {scope!r}", details={"scope": scope})
    if permission is not None and not actor.holds(permission):
        raise MissingPermissionError(
            f"the key's owner does not hold the permission {permission!r}", details={"permission": permission}
        )


def may_call(*, audience: str, scope: str | None, permission: str | None, actor: Actor) -> bool:
    """``authorize`` as a yes/no (for listings)."""
    try:
        authorize(audience=audience, scope=scope, permission=permission, actor=actor)
    except (UnauthenticatedError, MissingScopeError, MissingPermissionError):
        return False
    return True


#: What a listing shows of each tool (``GET /v1/tools``, ``system.list_tools``).
LISTED_FIELDS = ("name", "title", "description", "audience", "scope", "annotations", "danger")


def callable_tools(tools: list[dict[str, Any]], actor: Actor) -> list[dict[str, Any]]:
    """The tools ``actor`` may call now (scope held and permission held), in manifest order."""
    return [
        {name: tool[name] for name in LISTED_FIELDS}
        for tool in tools
        if may_call(
            audience=tool["audience"], scope=tool["scope"], permission=tool["permission"], actor=actor
        )
    ]
