"""A tool's handler, run: in a span of its own when tracing is on, and a store that did not answer
it told as the 503 core's own stores give, not as a crash."""

from __future__ import annotations

from typing import Any

from toolfront import tracing
from toolfront.aws.dynamodb import translated
from toolfront.errors import StoreUnavailableError, ToolfrontError
from toolfront.tools.definition import CallContext, Tool

HANDLER_STORE_DOWN = (
    "a store did not answer while the tool ran; check whether it took effect, then retry "
    "(with a new idempotency key if you sent one: this key keeps this answer)"
)


def run_handler(tool: Tool, arguments: dict[str, Any], ctx: CallContext) -> Any:
    """What ``tool``'s handler returns for ``arguments``; its own errors raised as they are."""
    scope = tracing.handler_span(tool.name)
    try:
        if scope is None:
            return tool.handler(arguments, ctx)
        with scope:
            return tool.handler(arguments, ctx)
    except ToolfrontError:
        raise
    except Exception as exc:
        # A store that did not answer the handler (throttled, down) is a 503 like core's own, not a
        # crash; the outcome is kept for the key, since the handler may have written before it.
        if isinstance(translated(exc), StoreUnavailableError):
            raise StoreUnavailableError(HANDLER_STORE_DOWN) from exc
        raise
