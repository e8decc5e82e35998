"""One call as an entry hands it to the pipeline, and what the pipeline answers.

Shared by the pipeline, the log line and every entry (REST, MCP, an approved call), so none of
them needs to know the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from toolfront.auth.actors import Actor
from toolfront.errors import ToolfrontError

#: Marks an event that is a task for the function, not an HTTP request (its value names the task).
#: Here, beside the entries, because every family handler reads it; ``calls.remote`` builds tasks.
TASK_FIELD = "toolfront_task"
CALL_TASK = "call"  # an MCP tool call routed to the family that owns the tool
EXECUTE_TASK = "execute"  # the approval workflow runs an approved call


class Entry(StrEnum):
    """Where a call came in (the log line's ``entry``)."""

    REST = "rest"
    MCP = "mcp"
    APPROVAL = "approval"  # a held call a person approved, run by the workflow


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
    entry: Entry = Entry.REST
    function: str = ""  # the serving function's ARN: the workflow runs an approved call there
    base_url: str = ""  # where approvers' links point (the API's own address)
    traceparent: str = ""  # the caller's W3C trace context (a header, MCP's _meta, the gateway's)


@dataclass(frozen=True, slots=True)
class CallResult:
    """What a call produced: ``data`` on success, else ``error``; ``status`` is its HTTP status.

    ``body`` is the answer's JSON text when the pipeline wrote it (a success, or on a replay the
    first answer exactly, its request id included).
    """

    status: int
    data: dict[str, Any] | None = None
    error: ToolfrontError | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    actor: Actor | None = None
    body: str | None = None
    replayed: bool = False
