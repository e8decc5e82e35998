"""``toolfront smoke``'s key checks: a throwaway principal and key, made as ``principals grant`` and
``keys create`` make them (audited; the key short-lived and requiring approval, so that no write it
sends can run), a read with it, a held call sent with an ``Idempotency-Key`` and its replay, the call
cancelled and its workflow stopped. Whatever happens, the approval is cancelled, the key revoked and
removed, the principal removed: the last result says so, or names what is left.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from toolfront_dev.errors import CommandError
from toolfront_dev.smoke import (
    AUDIT_TABLE,
    CheckFailed,
    CheckResult,
    PublishedTool,
    SmokeOptions,
    SmokeStack,
    Status,
    checked,
    failed,
    passed,
    skipped,
)
from toolfront_dev.smoke_http import Answer, refusal_fix
from toolfront_dev.targets import KEYS_TABLE, PRINCIPALS_TABLE, Target

HELD_TOOL = "catalogue.delete_product"  # the shipped tool held on every call
WORKFLOW_STOP_SECONDS = 30.0
_POLL_SECONDS = 0.25


class KeyScenario:
    """The key checks against one stack; :meth:`run` answers their results, cleanup last."""

    def __init__(self, stack: SmokeStack, tools: Sequence[PublishedTool], options: SmokeOptions) -> None:
        self._stack, self._tools, self._options = stack, tools, options
        suffix = uuid.uuid4().hex[:10]
        self._principal = f"smoke-{suffix}"
        self._marker = f"SMOKE-{suffix.upper()}"  # e.g. the sku a held delete_product names
        self._idempotency_key = f"toolfront-smoke-{suffix}"
        self._tool: PublishedTool | None = None
        self._input: dict[str, Any] = {}
        self._target: Target | None = None
        self._granted = self._made = False
        self._key = self._key_id = self._approval = ""
        self._first: Answer | None = None
        self._cancelled = False

    def run(self) -> list[CheckResult]:
        """Each step's result (a step after a failed one is skipped), then the cleanup's."""
        try:
            self._tool, self._input = self._choose()
        except CheckFailed as exc:
            return [failed("held call", str(exc))]
        steps: list[tuple[str, Callable[[], str]]] = [
            ("key reads a tool", self._read),
            ("held call", self._hold),
            ("idempotent replay", self._replay),
            ("cancelled call", self._cancel),
        ]
        results: list[CheckResult] = []
        try:
            broken = ""
            for name, step in steps:
                results.append(skipped(name, f"{broken} failed") if broken else checked(name, step))
                broken = broken or (name if results[-1].status is Status.FAILED else "")
        finally:  # also on Ctrl-C: nothing the smoke made stays behind
            results.append(self._clean_up())
        return results

    def _choose(self) -> tuple[PublishedTool, dict[str, Any]]:
        by_name = {tool.name: tool for tool in self._tools}
        wanted = self._options.tool
        if wanted is not None:
            tool = by_name.get(wanted)
            if tool is None:
                raise CheckFailed(f"--tool {wanted}: the stack publishes no such tool")
            if tool.audience != "admin" or tool.read_only or not tool.scope:
                raise CheckFailed(
                    f"--tool {wanted}: choose an admin tool that writes (a key's call to it is held)"
                )
        else:
            held = [t for t in self._tools if t.danger == "always" and t.audience == "admin" and t.scope]
            if not held:
                raise CheckFailed(
                    "the stack publishes no admin tool whose danger is 'always' — pass --tool NAME "
                    "--input JSON (an admin tool that writes: the smoke's key requires approval)"
                )
            tool = by_name[HELD_TOOL] if HELD_TOOL in {t.name for t in held} else held[0]
        given = self._options.tool_input
        return tool, dict(given) if given is not None else example_input(tool.input_schema, self._marker)

    # --- the steps ------------------------------------------------------------------------------

    def _read(self) -> str:
        assert self._tool is not None and self._tool.scope is not None
        target = self._target = _target_of(self._stack)
        now = datetime.now(UTC).replace(microsecond=0)
        self._made = True  # from here on the principal may exist: cleanup removes it
        from toolfront.audit.records import AuditActor, AuditEvent
        from toolfront.auth.keystore import issue_key

        actor = AuditActor("principal", self._principal, self._principal)
        with target.reached() as store:
            if self._tool.permission:
                store.grant(self._principal, [self._tool.permission], now)
                self._granted = True
        if self._granted:
            target.record(AuditEvent.PERMISSION_GRANTED, actor, f"granted {self._tool.permission}")
        with target.reached() as store:
            self._key, record = issue_key(
                store,
                owner=self._principal,
                scopes=[self._tool.scope],
                requires_approval=True,
                expires_at=now + self._options.key_lifetime,
                description="toolfront smoke (revoked and removed when it ends)",
                now=now,
            )
        self._key_id = record.key_id
        target.record(AuditEvent.KEY_CREATED, AuditActor("key", record.key_id, self._principal), "created")
        answer = self._call("POST", "/v1/tools/system/get_actor", {})
        who = ((answer.data() or {}).get("actor") or {}).get("principal")
        if answer.status != 200 or who != self._principal:
            raise CheckFailed(
                refusal_fix(answer, "POST /v1/tools/system/get_actor with the new key")
                + " (do the functions read this stack's KeysTable?)"
            )
        return f"system.get_actor answers as {self._principal} (key {self._key_id})"

    def _hold(self) -> str:
        assert self._tool is not None
        answer = self._first = self._tool_call()
        data = answer.data() or {}
        if answer.status == 202 and data.get("status") == "pending_approval" and data.get("approval_id"):
            self._approval = str(data["approval_id"])
        else:
            raise CheckFailed(
                refusal_fix(answer, f"{self._tool.name} (expected 202 pending_approval)")
                + " — pass --tool NAME --input JSON for a tool this stack holds"
            )
        status = self._execution_status()
        if status is None:
            return f"{self._tool.name}: 202, approval {self._approval} (workflow not visible to the smoke)"
        return f"{self._tool.name}: 202, approval {self._approval}, workflow {status}"

    def _replay(self) -> str:
        assert self._first is not None
        again = self._tool_call()
        if again.status != self._first.status or _json(again) != _json(self._first):
            raise CheckFailed(
                f"the retry with the same Idempotency-Key answered {again.status}, not the first answer "
                "again — does the IdempotencyTable exist, and do the functions reach it?"
            )
        if again.headers.get("idempotent-replayed") != "true":
            raise CheckFailed("the replayed answer lacks `Idempotent-Replayed: true` — deploy this version")
        return "the first answer again (same approval), Idempotent-Replayed: true"

    def _cancel(self) -> str:
        answer = self._call("POST", "/v1/tools/system/cancel_approval", {"approval_id": self._approval})
        if answer.status != 200 or (answer.data() or {}).get("status") != "cancelled":
            raise CheckFailed(refusal_fix(answer, "system.cancel_approval"))
        self._cancelled = True
        read = self._call("GET", f"/v1/approvals/{self._approval}")
        if (read.data() or {}).get("status") != "cancelled":
            raise CheckFailed(refusal_fix(read, f"GET /v1/approvals/{self._approval} (expected cancelled)"))
        status = self._execution_status()
        deadline = time.monotonic() + WORKFLOW_STOP_SECONDS
        while status == "RUNNING" and time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS)
            status = self._execution_status()
        if status == "RUNNING":
            raise CheckFailed(
                f"the workflow of {self._approval} still runs {WORKFLOW_STOP_SECONDS:.0f} s after the cancel "
                "— the approvals function did not end it: read its log"
            )
        return "approval cancelled" + ("" if status is None else f", workflow stopped ({status})")

    # --- requests -------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: Any = None, **headers: str) -> Answer:
        sent = {"Authorization": f"Bearer {self._key}", **headers}
        return self._stack.call(method, path, body=body, headers=sent)

    def _tool_call(self) -> Answer:
        assert self._tool is not None
        path = "/v1/tools/" + self._tool.name.replace(".", "/", 1)
        return self._call("POST", path, self._input, **{"Idempotency-Key": self._idempotency_key})

    def _execution_status(self) -> str | None:
        """The approval's workflow execution's status; ``None`` where the smoke cannot see it."""
        client, machine = self._stack.stepfunctions, self._stack.state_machine_arn
        if client is None or not machine:
            return None
        arn = machine.replace(":stateMachine:", ":execution:", 1) + f":{self._approval}"
        try:
            return str(client.describe_execution(executionArn=arn)["status"])
        except Exception as exc:
            code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
            if code == "ExecutionDoesNotExist":
                raise CheckFailed(
                    f"the call is held but its workflow never started ({arn}) — does the function "
                    "that served it hold states:StartExecution on the ApprovalStateMachine?"
                ) from None
            return None  # no right to describe it (AccessDenied), or Step Functions did not answer

    # --- cleanup --------------------------------------------------------------------------------

    def _clean_up(self) -> CheckResult:
        if not self._made:
            return passed("cleanup", "nothing was made")
        problems: list[str] = []
        if self._approval and not self._cancelled:  # before the key goes: only its owner may cancel
            problems.extend(self._withdraw())
        try:
            self._remove()
        except CommandError as exc:
            problems.append(str(exc))
        if problems:
            where = "--local" if not self._stack.tables.deployed else "--stack-name <stack>"
            return failed(
                "cleanup",
                "; ".join(problems) + f" — remove what is left: `toolfront keys revoke {where} "
                f"{self._key_id or '<key id>'}`, `toolfront principals revoke {where} {self._principal} ...`",
            )
        removed = f"key {self._key_id} revoked and removed, " if self._key_id else ""
        return passed("cleanup", f"{removed}principal {self._principal} removed")

    def _withdraw(self) -> list[str]:
        """Cancel the held call a failed step left pending; what went wrong, if anything."""
        try:
            answer = self._call("POST", "/v1/tools/system/cancel_approval", {"approval_id": self._approval})
        except CheckFailed as exc:
            return [f"approval {self._approval} may still be pending ({exc})"]
        if answer.status == 200 or "approval_closed" in answer.body.decode("utf-8", "replace"):
            return []
        return [f"approval {self._approval} may still be pending (its cancel answered {answer.status})"]

    def _remove(self) -> None:
        """Revoke the key and the grant as the CLI does (audited), then delete both items."""
        from toolfront.audit.records import AuditActor, AuditEvent
        from toolfront.auth.keyitems import key_key, principal_key

        target = self._target or _target_of(self._stack)
        now = datetime.now(UTC).replace(microsecond=0)
        keys, principals = self._stack.tables.table_names(KEYS_TABLE, PRINCIPALS_TABLE)
        if self._key_id:
            with target.reached() as store:
                store.revoke_key(self._key_id, now)
            target.record(AuditEvent.KEY_REVOKED, AuditActor("key", self._key_id, self._principal), "revoked")
        if self._granted and self._tool is not None and self._tool.permission:
            with target.reached() as store:
                store.revoke_permissions(self._principal, [self._tool.permission], now)
            actor = AuditActor("principal", self._principal, self._principal)
            target.record(AuditEvent.PERMISSION_REVOKED, actor, f"revoked {self._tool.permission}")
        with self._stack.tables.reached() as client:
            if self._key_id:  # revoked first, so a call racing the delete is refused either way
                client.delete_item(
                    TableName=keys,
                    Key=key_key(self._key_id),
                    ConditionExpression="attribute_exists(revoked_at)",
                )
            client.delete_item(
                TableName=principals,
                Key=principal_key(self._principal),
                ConditionExpression="attribute_not_exists(key_ids) AND attribute_not_exists(#p)",
                ExpressionAttributeNames={"#p": "permissions"},
            )


def _target_of(stack: SmokeStack) -> Target:
    """The stack's key store and audit log, as ``principals grant`` and ``keys create`` use them."""
    from toolfront.audit.log import AuditLog
    from toolfront.auth.keystore import DynamoDBKeyStore

    tables = stack.tables
    keys, principals = tables.table_names(KEYS_TABLE, PRINCIPALS_TABLE)
    audit_table = tables.tables.get(AUDIT_TABLE)
    audit = AuditLog(audit_table, client=tables.client) if audit_table else None
    store = DynamoDBKeyStore(keys, principals, tables.client)
    return Target(store, tables.name, tables.hint, audit, tables.operator)


def _json(answer: Answer) -> Any:
    try:
        return answer.json()
    except ValueError:
        return answer.body


def example_input(schema: Mapping[str, Any], marker: str) -> dict[str, Any]:
    """An input of the schema's required properties, strings set to ``marker`` (an object no real
    record names, e.g. the sku ``SMOKE-…``).

    Raises:
        CheckFailed: a required property of a kind this cannot make up (``--input`` then).
    """
    properties = schema.get("properties") or {}
    made: dict[str, Any] = {}
    for name in schema.get("required") or []:
        spec = properties.get(name) or {}
        kind = spec.get("type")
        if spec.get("enum"):
            made[name] = spec["enum"][0]
        elif kind == "string":
            made[name] = marker[: int(spec.get("maxLength", len(marker)))]
        elif kind in ("integer", "number"):
            made[name] = max(1, spec.get("minimum", 1))
        elif kind == "boolean":
            made[name] = False
        else:
            raise CheckFailed(f"cannot make up the required input {name!r} ({kind}) — pass --input JSON")
    return made
