"""The call pipeline: every entry (REST, MCP, Step Functions) turns a request into a ``Call`` and
runs it here, through the contract's checks in the contract's order:

credentials in the URL, body, tool, actor, scope, permission, rate limit, max_items, input,
idempotency, confirmation, handler.

Rate limits and idempotency are not enforced yet (their stores come next); a call that needs a
person's confirmation is refused with 501 until the approval workflow exists.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolfront.access import authorize
from toolfront.actors import Actor
from toolfront.confirmation import confirmation_reason
from toolfront.credentials import refuse_credentials_in_url
from toolfront.errors import (
    CallRefusedError,
    ConfirmationUnavailableError,
    InternalError,
    InvalidInputError,
    ToolError,
    ToolfrontError,
    TooManyItemsError,
    UnknownToolError,
)
from toolfront.inputs import longest_list, parse_body
from toolfront.logs import log_call
from toolfront.registry import Registry
from toolfront.tools import CallContext, Tool

logger = logging.getLogger("toolfront.pipeline")


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call as an entry hands it over. ``headers`` keys are lower-case.

    REST passes the raw ``body`` and its ``content_type``; entries that already hold parsed
    arguments (MCP, an approved call) pass ``arguments`` instead.
    """

    tool_name: str
    request_id: str
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str | None = None
    arguments: dict[str, Any] | None = None
    source_ip: str = ""
    entry: str = "rest"


@dataclass(frozen=True, slots=True)
class CallResult:
    """What a call produced: ``data`` on success, else ``error``; ``status`` is its HTTP status."""

    status: int
    data: dict[str, Any] | None = None
    error: ToolfrontError | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    actor: Actor | None = None


class CallPipeline:
    """Runs calls against one registry's tools."""

    def __init__(
        self,
        registry: Registry,
        authenticate: Callable[[Mapping[str, str], str], Actor],
        *,
        batch_confirm_items: int = 100,
    ) -> None:
        self._registry = registry
        self._authenticate = authenticate
        self._batch_confirm_items = batch_confirm_items

    def run(self, call: Call) -> CallResult:
        """Run ``call``; never raises (every failure is a result with its status)."""
        started = time.perf_counter()
        actor: Actor | None = None
        try:
            data, actor = self._run(call)
            result = CallResult(200, data=data, actor=actor)
        except (CallRefusedError, ToolError) as exc:
            result = CallResult(exc.http_status, error=exc, actor=actor)
        except Exception:  # a crash or a broken setting: logged in full, answered without detail
            logger.exception("tool %s failed (request %s)", call.tool_name, call.request_id)
            result = CallResult(500, error=InternalError(), actor=actor)
        log_call(call, result, duration_ms=(time.perf_counter() - started) * 1000)
        return result

    def _run(self, call: Call) -> tuple[dict[str, Any], Actor]:
        refuse_credentials_in_url(call.query)
        arguments = call.arguments if call.arguments is not None else parse_body(call.body, call.content_type)
        tool = self._registry.get(call.tool_name)
        if tool is None:
            raise UnknownToolError(f"there is no tool {call.tool_name!r}", details={"tool": call.tool_name})
        actor = self._authenticate(call.headers, call.source_ip)
        authorize(audience=str(tool.audience), scope=tool.scope, permission=tool.permission, actor=actor)
        _check_max_items(tool, arguments)
        errors = tool.validate_input(arguments)
        if errors:
            plural = "s" if len(errors) > 1 else ""
            raise InvalidInputError(
                f"the input does not match the tool's schema ({len(errors)} error{plural})",
                details=[e.as_dict() for e in errors],
            )
        ctx = CallContext(request_id=call.request_id, tool=tool.name, actor=actor)
        reason = confirmation_reason(
            tool, arguments, actor, ctx, batch_confirm_items=self._batch_confirm_items
        )
        if reason is not None:
            raise ConfirmationUnavailableError(
                "this call needs a person's confirmation, which this deployment cannot collect yet; "
                "nothing was changed",
                details={"reason": str(reason)},
            )
        return _run_handler(tool, arguments, ctx), actor


def _check_max_items(tool: Tool, arguments: dict[str, Any]) -> None:
    if tool.max_items is None:
        return
    longest = longest_list(arguments)
    if longest > tool.max_items:
        raise TooManyItemsError(
            f"a list in the input has {longest} items; {tool.name} takes at most {tool.max_items}",
            details={"max_items": tool.max_items, "items": longest},
        )


def _run_handler(tool: Tool, arguments: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    data = tool.handler(arguments, ctx)
    if not isinstance(data, dict):
        raise TypeError(f"handler of {tool.name} returned {type(data).__name__}, not a dict")
    return data
