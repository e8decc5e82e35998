"""Idempotent retries (Stripe's rules and the IETF Idempotency-Key draft).

A write call with an ``idempotency_key`` (body field or ``Idempotency-Key`` header) claims a record
scoped to the actor and the tool. The first call holds a lease while it runs; its answer (status
and body, exactly) is then stored for 24 hours and replayed to a retry with the same input. The
rules live here, and so does ``IdempotencyRecord``, which owns one call's record from claim to
answer; the DynamoDB writes are built here and executed by ``admission``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from toolfront.aws.bodies import unpack
from toolfront.encoding import canonical_json
from toolfront.errors import (
    IdempotencyInProgressError,
    IdempotencyKeyReusedError,
    IdempotencyNotSupportedError,
    IdempotencyOutcomeUnknownError,
    InvalidIdempotencyKeyError,
    StoreUnavailableError,
)
from toolfront.tools.definition import Tool
from toolfront.tools.rules import CONTROL_FIELDS

if TYPE_CHECKING:
    from toolfront.audit.log import AuditLog
    from toolfront.audit.records import AuditEntry
    from toolfront.auth.actors import Actor

    AuditWrite = tuple[AuditLog, AuditEntry]  # the log and the call's record, written with the answer

logger = logging.getLogger(__name__)

KEY_FIELD = "idempotency_key"
HEADER = "idempotency-key"
KEEP_US = 24 * 3600 * 1_000_000  # answers are replayed for 24 h, checked from the stored time
_KEY = re.compile(r"[\x20-\x7e]{1,255}")


class Status(StrEnum):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


def requested_key(tool: Tool, arguments: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The call's idempotency key, or ``None`` when the call is not idempotent.

    Read-only and ``replay: false`` tools ignore the header; ``replay: false`` tools refuse the
    body field (their schemas never offer it).
    """
    in_body = arguments.get(KEY_FIELD)
    if not tool.offers_idempotency:
        if KEY_FIELD in arguments and not tool.is_read_only:
            raise IdempotencyNotSupportedError(
                f"{tool.name} takes no idempotency_key: a repeated call is a new call",
                details={"field": KEY_FIELD},
            )
        return None
    key = in_body if KEY_FIELD in arguments else headers.get(HEADER)
    if key is None:
        return None
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InvalidIdempotencyKeyError(
            "an idempotency key is 1 to 255 printable ASCII characters", details={"field": KEY_FIELD}
        )
    return key


def without_control_fields(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if k not in CONTROL_FIELDS}


def fingerprint(tool: str, arguments: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the input (sorted keys, control fields removed)."""
    text = canonical_json({"tool": tool, "input": without_control_fields(arguments)})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_scope(actor: Actor) -> str:
    """Whose records a call's keys name: its key, Cognito user or client token (never a principal's
    other keys: a retry comes from the caller that sent the first call)."""
    return f"{actor.kind}#{actor.id}"


def record_id(scope: str, tool: str, key: str) -> str:
    """The record of ``key`` for the actor ``scope`` and ``tool``."""
    # the key is hashed: it is the caller's string, possibly long, never needed back
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return f"{scope}#{tool}#{digest}"


@dataclass(frozen=True, slots=True)
class Claim:
    """One call's claim on an idempotency record."""

    scope: str  # the actor: key id, Cognito sub or client-token hash
    tool: str
    key: str
    fingerprint: str
    owner: str  # the request id holding the lease
    now_us: int
    lease_us: int

    @property
    def record_id(self) -> str:
        return record_id(self.scope, self.tool, self.key)

    def takes(self, old: dict[str, Any]) -> bool:
        """Whether this claim's ``put`` would take the record ``old`` (kept longer than 24 h)."""
        return int(old.get("created_us", {}).get("N", "0")) < self.now_us - KEEP_US

    @property
    def expires_epoch(self) -> int:
        """When DynamoDB's TTL may drop the record (and the parts of a large answer with it)."""
        return (self.now_us + KEEP_US) // 1_000_000 + 3600

    def put(self, table: str) -> dict[str, Any]:
        """The conditional Put that takes the record: new, or kept longer than 24 h."""
        return {
            "TableName": table,
            "Item": {
                "pk": {"S": self.record_id},
                "status": {"S": Status.IN_PROGRESS},
                "fingerprint": {"S": self.fingerprint},
                "owner": {"S": self.owner},
                "created_us": {"N": str(self.now_us)},
                "lease_until_us": {"N": str(self.now_us + self.lease_us)},
                "expires_at_epoch": {"N": str(self.expires_epoch)},
            },
            # An expired lease is never taken over: its handler may have run (Stripe's rule).
            "ConditionExpression": "attribute_not_exists(pk) OR created_us < :expired",
            "ExpressionAttributeValues": {":expired": {"N": str(self.now_us - KEEP_US)}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }

    def complete(self, table: str, status: int, body: dict[str, Any]) -> dict[str, Any]:
        """Store the answer (``body``: the packed attribute value, ``aws.bodies.pack``); only while
        this call still holds the lease."""
        return {
            "TableName": table,
            "Key": {"pk": {"S": self.record_id}},
            "UpdateExpression": "SET #status = :done, response_status = :code, response_body = :body",
            "ConditionExpression": "#owner = :me",
            "ExpressionAttributeNames": {"#status": "status", "#owner": "owner"},
            "ExpressionAttributeValues": {
                ":done": {"S": Status.COMPLETED},
                ":code": {"N": str(status)},
                ":body": body,
                ":me": {"S": self.owner},
            },
        }

    def release(self, table: str) -> dict[str, Any]:
        """Give the key back (a crash, a store failure, a credential-bearing answer)."""
        return {
            "TableName": table,
            "Key": {"pk": {"S": self.record_id}},
            "ConditionExpression": "#owner = :me",
            "ExpressionAttributeNames": {"#owner": "owner"},
            "ExpressionAttributeValues": {":me": {"S": self.owner}},
        }


@dataclass(frozen=True, slots=True)
class Replay:
    """A stored answer to send again."""

    status: int
    body: str

    def data(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True, slots=True)
class Recorded:
    """A record as its caller may read it back (an MCP task of a call that ran at once)."""

    created_us: int
    answer: Replay | None  # None: the call is still running (or ended with no answer kept)


def recorded(old: dict[str, Any], read_parts: Callable[[int], list[bytes]]) -> Recorded:
    """What the record item ``old`` holds."""
    created = int(old.get("created_us", {}).get("N", "0"))
    if old.get("status", {}).get("S") == Status.COMPLETED and "response_body" in old:
        answer = Replay(int(old["response_status"]["N"]), unpack(old["response_body"], read_parts))
        return Recorded(created, answer)
    return Recorded(created, None)


def outcome_of_conflict(
    claim: Claim, old: dict[str, Any], read_parts: Callable[[int], list[bytes]] = lambda n: []
) -> Replay:
    """What a lost claim means: a replay, or raises 422 (other input) / 409 (still running).

    ``read_parts(n)`` reads the n parts of an answer too large for the record itself.
    """
    if old.get("fingerprint", {}).get("S") != claim.fingerprint:
        raise IdempotencyKeyReusedError(
            "this idempotency key was used with another input; use a new key for a new call",
            details={"field": KEY_FIELD},
        )
    if old.get("status", {}).get("S") == Status.COMPLETED and "response_body" in old:
        return Replay(int(old["response_status"]["N"]), unpack(old["response_body"], read_parts))
    lease_until = int(old.get("lease_until_us", {}).get("N", claim.now_us))
    if lease_until < claim.now_us:  # the first call's lease ran out with no answer kept
        raise IdempotencyOutcomeUnknownError(
            "the first call with this idempotency key started but its outcome was not recorded "
            "(it may have done its work): check whether it took effect, then retry with a new key",
            details={"field": KEY_FIELD},
        )
    wait = max(1, math.ceil((lease_until - claim.now_us) / 1_000_000))
    raise IdempotencyInProgressError(
        "the first call with this idempotency key is still running; retry after the wait",
        details={"retry_after": wait},
        headers={"retry-after": str(wait)},
    )


class RecordWriter(Protocol):
    """Where a record's answer is written (``Admission``, which also made the claim)."""

    def complete(self, claim: Claim, status: int, body: str, audit: AuditWrite | None = None) -> None: ...

    def release(self, claim: Claim) -> None: ...


class IdempotencyRecord:
    """One call's idempotency record from its claim to its answer (Powertools' ``IdempotencyHandler``
    shape): the only owner of the record's lifecycle.

    Admission claims the record (with the call's units, in one transaction); the pipeline runs the
    call inside ``with record:`` and settles it once, with ``complete`` (the answer a retry gets
    back) or ``release`` (the key is free again). Stripe's rule decides what an exception means:
    before the handler ``began``, nothing was done and the key is released; once it began, the
    handler may have written, so the crash is kept as the call's answer (its 500) and a retry gets
    it back rather than running the handler a second time. When the answer cannot be written, the
    caller is still told what happened; the record then stays claimed, and a retry after its lease
    is answered ``idempotency_outcome_unknown``. A call with no idempotency key holds a record with
    no claim, on which all of this is a no-op: the pipeline never asks whether a call is idempotent.
    """

    __slots__ = ("_claim", "_crash_body", "_settled", "_writer", "replay")

    def __init__(self, writer: RecordWriter, claim: Claim | None, replay: Replay | None = None) -> None:
        self._writer = writer
        self._claim = claim
        self._settled = claim is None or replay is not None  # nothing to write, or a stored answer
        self._crash_body: str | None = None  # set once the handler began
        self.replay = replay  # the first answer, when this call is a retry of a completed one

    def began(self, crash_body: str) -> None:
        """The handler starts now: from here a crash is the call's answer (``crash_body``, a 500)."""
        self._crash_body = crash_body

    @property
    def claimed(self) -> bool:
        """Whether this call holds a record to answer (a key, and not a replay)."""
        return not self._settled and self._claim is not None

    def complete(self, status: int, body: str, audit: AuditWrite | None = None) -> None:
        """Keep ``body`` (sent with ``status``) as the answer every retry with this key gets back;
        ``audit`` (the log and the call's record) rides in the same write. Without an audit record,
        a write that fails is only logged; with one, it raises: the call has no record then."""
        if self._settled or self._claim is None:
            return
        self._settled = True
        try:
            self._writer.complete(self._claim, status, body, audit)
        except StoreUnavailableError:
            if audit is not None:
                raise
            # The call happened: its caller gets the true answer. The record stays claimed, so a
            # retry after the lease is told the outcome is unknown instead of running it again.
            logger.warning(
                "the answer to request %s could not be stored for its idempotency key", self._claim.owner
            )

    def release(self) -> None:
        """Give the key back unanswered (nothing was done): a retry runs the call."""
        if not self._settled and self._claim is not None:
            self._settled = True
            self._writer.release(self._claim)

    def __enter__(self) -> IdempotencyRecord:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        if kind is None:
            return
        if self._crash_body is not None:
            self.complete(500, self._crash_body)
        else:
            self.release()
