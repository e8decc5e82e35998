"""The audit anchoring function: on its schedule (every 5 minutes), or when `toolfront audit anchor`
invokes it, copies the heads of the audit chains into the anchors table, which it alone may write
(``toolfront.audit.anchoring``)."""

from __future__ import annotations

from typing import Any

from toolfront.audit.anchoring import run_pass


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One anchoring pass; its summary. The event (a schedule's, or the CLI's) is not read."""
    _logging()
    return run_pass()


def _logging() -> None:
    from toolfront.calls.jsonlog import json_logger
    from toolfront.settings import log_settings

    json_logger(log_settings().service)  # configured once per process; the pass logs under toolfront.*
