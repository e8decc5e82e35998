"""Approvals in DynamoDB: every status change a conditional write from the one status it may follow.

The records' rules (statuses, ids, codes) live in ``records``; this module only converts items and
builds the conditional writes.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolfront.approvals.pending import LEAVE_INDEX, index_fields
from toolfront.aws import bodies, dynamodb
from toolfront.aws import clients as aws
from toolfront.encoding import parse_rfc3339, rfc3339
from toolfront.errors import StoreUnavailableError

# Every function with approvals builds a store at its first call (wiring); the records' classes are
# loaded when an approval is first read or written, which most calls never do.
if TYPE_CHECKING:
    from toolfront.approvals.records import Approval, ApprovalStatus

PARTS_KEPT_SECONDS = 31 * 86400
_DEFAULT_POLICY_DICT = {
    "quorum": 1,
    "approver_permission": "approver",
    "escalate_after_s": None,
    "channels": [],
}
#: Reads the ``count`` parts of a large field (its name) of the approval being read.
PartsReader = Callable[[str, int], list[bytes]]


class ApprovalStore:
    """Approvals in DynamoDB (hash key ``approval_id``); every status change is conditional."""

    client = aws.LazyClient("dynamodb")

    def __init__(self, table: str, client: Any = None) -> None:
        self._table = table
        self._client = client

    def create(self, approval: Approval) -> None:
        dynamodb.call(
            self.client,
            "put_item",
            TableName=self._table,
            Item=_to_item(approval),
            ConditionExpression="attribute_not_exists(approval_id)",
        )

    def get(self, approval_id: str) -> Approval | None:
        found = dynamodb.call(
            self.client, "get_item", TableName=self._table, Key=_key(approval_id), ConsistentRead=True
        )
        return self._from(found["Item"]) if "Item" in found else None

    def park(self, approval_id: str, code_hash: str) -> Approval:
        """Keep the code's hash with a pending approval: its workflow waits (its token is kept by
        the approvals function, ``workflow.WorkflowCallbacks``, never in this table)."""
        from toolfront.approvals.records import ApprovalStatus

        return self._update(
            approval_id,
            "SET code_hash = :code",
            {":code": {"S": code_hash}},
            condition="#status = :pending",
            extra_values={":pending": {"S": ApprovalStatus.PENDING}},
        )

    def add_vote(self, approval: Approval, vote: dict[str, Any], now: datetime) -> Approval:
        """Count one person's approval of a pending call, or (the quorum's last vote) approve it:
        conditional on the votes being those ``approval`` holds, so two votes at once never both
        count (the loser reads the approval again); raises ``ConditionFailedError``."""
        from toolfront.approvals.records import ApprovalStatus

        votes = [*approval.approved_by, vote]
        sets = ["approved_by = :votes"]
        values: dict[str, Any] = {
            ":votes": {"S": json.dumps(votes, ensure_ascii=False)},
            ":pending": {"S": ApprovalStatus.PENDING},
            ":seen": {"S": json.dumps(list(approval.approved_by), ensure_ascii=False)},
        }
        names: dict[str, str] = {}
        removes = ""
        if len(votes) >= approval.approvals_needed:
            sets += ["#status = :to", "decided_at = :now", "#decided_by = :by"]
            values |= {
                ":to": {"S": ApprovalStatus.APPROVED},
                ":now": {"S": rfc3339(now)},
                ":by": {"S": json.dumps(vote, ensure_ascii=False)},
            }
            names["#decided_by"] = "decided_by"
            removes = LEAVE_INDEX  # approved: out of the approvers' inbox
        seen = "approved_by = :seen" if approval.approved_by else "attribute_not_exists(approved_by)"
        if not approval.approved_by:
            del values[":seen"]
        return self._update(
            approval.approval_id,
            "SET " + ", ".join(sets) + removes,
            values,
            condition=f"#status = :pending AND {seen}",
            names=names,
        )

    def mark_escalated(self, approval_id: str, now: datetime) -> Approval:
        """Note that a pending call was escalated (once); raises ``ConditionFailedError``."""
        from toolfront.approvals.records import ApprovalStatus

        return self._update(
            approval_id,
            "SET escalated_at = :now",
            {":now": {"S": rfc3339(now)}, ":pending": {"S": ApprovalStatus.PENDING}},
            condition="#status = :pending AND attribute_not_exists(escalated_at)",
        )

    def start_run(self, approval_id: str, now: datetime) -> bool:
        """Mark an approved call as running; False when a run already started (the handler runs once)."""
        from toolfront.approvals.records import ApprovalStatus

        try:
            self._update(
                approval_id,
                "SET run_started_at = :now",
                {":now": {"S": rfc3339(now)}, ":approved": {"S": ApprovalStatus.APPROVED}},
                condition="#status = :approved AND attribute_not_exists(run_started_at)",
            )
        except dynamodb.ConditionFailedError:
            return False
        return True

    def transition(
        self,
        approval_id: str,
        to: ApprovalStatus,
        now: datetime,
        *,
        code_hash: str | None = None,
        **fields: Any,
    ) -> Approval:
        """Move to ``to`` from the one status it may follow (and, given ``code_hash``, only with the
        right code); raises ``ConditionFailedError`` carrying the old item otherwise.

        ``fields`` are stored beside the status: strings as they are, anything else as JSON.
        """
        from toolfront.approvals.records import ALLOWED_FROM

        sets = ["#status = :to", "decided_at = if_not_exists(decided_at, :now)"]
        values: dict[str, Any] = {":to": {"S": to}, ":now": {"S": rfc3339(now)}}
        names = {f"#{name}": name for name in fields}  # "result" and "error" are reserved words
        for name, value in fields.items():
            sets.append(f"#{name} = :{name}")
            values[f":{name}"] = self._packed(approval_id, name, value, now)
        allowed = ALLOWED_FROM[to]
        condition = " OR ".join(f"#status = :from{i}" for i in range(len(allowed)))
        if len(allowed) > 1:
            condition = f"({condition})"  # DynamoDB refuses parentheses around a single comparison
        values.update({f":from{i}": {"S": status} for i, status in enumerate(allowed)})
        if code_hash is not None:
            condition += " AND code_hash = :code_hash"
            values[":code_hash"] = {"S": code_hash}
        expression = "SET " + ", ".join(sets) + LEAVE_INDEX  # no status after pending waits
        return self._update(approval_id, expression, values, condition=condition, names=names)

    def _packed(self, approval_id: str, name: str, value: Any, now: datetime) -> dict[str, Any]:
        """A field's attribute value: a string as it is, anything else as JSON, which a large result
        keeps compressed or in parts of this table (``aws.bodies``), written first."""
        if isinstance(value, str):
            return {"S": value}
        packed = bodies.pack(json.dumps(value, ensure_ascii=False))
        if packed.parts:  # kept a month past the decision, like the approval itself past its expiry
            ttl = {"expires_at_epoch": {"N": str(int(now.timestamp()) + PARTS_KEPT_SECONDS)}}
            bodies.write_parts(self.client, self._table, "approval_id", f"{approval_id}#{name}", packed, ttl)
        return packed.value

    def _from(self, item: dict[str, Any]) -> Approval:
        approval_id = item.get("approval_id", {}).get("S", "")

        def parts(name: str, count: int) -> list[bytes]:
            key = f"{approval_id}#{name}"
            return bodies.read_parts(self.client, self._table, "approval_id", key, count)

        return _from_item(item, parts)

    def _update(
        self,
        approval_id: str,
        expression: str,
        values: dict[str, Any],
        *,
        condition: str,
        extra_values: dict[str, Any] | None = None,
        names: dict[str, str] | None = None,
    ) -> Approval:
        answer = dynamodb.call(
            self.client,
            "update_item",
            TableName=self._table,
            Key=_key(approval_id),
            UpdateExpression=expression,
            ConditionExpression=f"attribute_exists(approval_id) AND {condition}",
            ExpressionAttributeNames={"#status": "status", **(names or {})},
            ExpressionAttributeValues={**values, **(extra_values or {})},
            ReturnValues="ALL_NEW",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        return self._from(answer["Attributes"])

    def keep_slack_message(self, approval_id: str, channel: str, ts: str) -> None:
        """Where the approval's Slack message is, so that later updates edit that message."""
        message = {":message": {"S": json.dumps({"channel": channel, "ts": ts})}}
        condition = "attribute_exists(#status)"
        self._update(approval_id, "SET slack_message = :message", message, condition=condition)


def old_approval(failed: dynamodb.ConditionFailedError) -> Approval | None:
    """The approval as a failed conditional write found it (None when it does not exist)."""
    return _from_item(failed.item) if failed.item else None


def _key(approval_id: str) -> dict[str, Any]:
    return {"approval_id": {"S": approval_id}}


def _to_item(a: Approval) -> dict[str, Any]:
    from toolfront.approvals.records import RETENTION

    item: dict[str, Any] = {
        "approval_id": {"S": a.approval_id},
        "tool": {"S": a.tool},
        "function": {"S": a.function},
        "input": {"S": json.dumps(a.input, ensure_ascii=False)},
        "input_digest": {"S": a.input_digest},
        "requester": {"S": json.dumps(a.requester.as_dict())},
        "reason": {"S": a.reason},
        "status": {"S": a.status},
        "created_at": {"S": rfc3339(a.created_at)},
        "expires_at": {"S": rfc3339(a.expires_at)},
        "expires_at_epoch": {"N": str(int((a.expires_at + RETENTION).timestamp()))},
        "request_id": {"S": a.request_id},
        "base_url": {"S": a.base_url},
    }
    if a.client_token_hash:
        item["client_token_hash"] = {"S": a.client_token_hash}
    if a.traceparent:
        item["traceparent"] = {"S": a.traceparent}
    if a.policy.as_dict() != _DEFAULT_POLICY_DICT:
        item["policy"] = {"S": json.dumps(a.policy.as_dict())}
    return item | index_fields(a, time.time_ns())  # in the approvers' inbox while it waits


def _text(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    return value["S"] if value else None


def _decided_by(item: dict[str, Any]) -> dict[str, Any] | None:
    """Who decided: ``{"kind", "id"}`` (an approval decided before this field had a kind was
    decided by its link or its requester, which the old text says)."""
    text = _text(item, "decided_by")
    if text is None:
        return None
    if text.startswith("{"):
        found: dict[str, Any] = json.loads(text)
        return found
    return {"kind": "requester" if text == "requester" else "link", "id": None}


def _moment(item: dict[str, Any], name: str) -> datetime | None:
    text = _text(item, name)
    return parse_rfc3339(text) if text else None


def _json_field(item: dict[str, Any], name: str, parts: PartsReader | None) -> Any:
    value = item.get(name)
    if value is None:
        return None
    if "S" in value:
        return json.loads(value["S"])
    if parts is None:  # a failed condition's old item: its result is never what is read there
        return None
    return json.loads(bodies.unpack(value, lambda count: parts(name, count)))


def _from_item(item: dict[str, Any], parts: PartsReader | None = None) -> Approval:
    from toolfront.approvals.records import Approval, ApprovalStatus, Requester
    from toolfront.tools.approval_policy import ApprovalPolicy

    try:
        error = _text(item, "error")
        created, expires = _moment(item, "created_at"), _moment(item, "expires_at")
        assert created is not None and expires is not None
        return Approval(
            approval_id=item["approval_id"]["S"],
            tool=item["tool"]["S"],
            function=item["function"]["S"],
            input=json.loads(item["input"]["S"]),
            input_digest=item["input_digest"]["S"],
            requester=Requester.from_dict(json.loads(item["requester"]["S"])),
            reason=item["reason"]["S"],
            status=ApprovalStatus(item["status"]["S"]),
            created_at=created,
            expires_at=expires,
            request_id=item["request_id"]["S"],
            base_url=item["base_url"]["S"],
            client_token_hash=_text(item, "client_token_hash"),
            decided_at=_moment(item, "decided_at"),
            decided_by=_decided_by(item),
            result=_json_field(item, "result", parts),
            result_content=_json_field(item, "result_content", parts),
            error=json.loads(error) if error is not None else None,
            code_hash=_text(item, "code_hash"),
            policy=ApprovalPolicy.of(json.loads(_text(item, "policy") or "null")),
            approved_by=tuple(json.loads(_text(item, "approved_by") or "[]")),
            escalated_at=_moment(item, "escalated_at"),
            slack_message=json.loads(_text(item, "slack_message") or "null"),
            traceparent=_text(item, "traceparent"),
        )
    except (KeyError, ValueError, AssertionError, zlib.error) as exc:  # a damaged record: never half-read
        raise StoreUnavailableError("an approval record could not be read") from exc
