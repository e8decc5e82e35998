"""``toolfront approvals list`` against the running local stack and a "deployed" stack in moto."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.dev.conftest import Toolfront
from toolfront_dev.aws import dynamodb_client, moto_client
from toolfront_dev.stack import LocalStack

FIELDS = ["approval_id", "tool", "status", "reason", "created_at", "expires_at"]
SECRETS = ("SECRET-TOKEN", "SECRET-HASH")


@dataclass(frozen=True, slots=True)
class Approvals:
    """Approvals put in the stack's table for one test: ids by status, and the outbox links."""

    pending: str
    pending_without_link: str
    approved: str
    expired: str
    links: dict[str, str]

    @property
    def ids(self) -> set[str]:
        return {self.pending, self.pending_without_link, self.approved, self.expired}


def put_approval(stack: LocalStack, approval_id: str, status: str, created_at: str) -> None:
    item = {
        "approval_id": approval_id,
        "tool": "catalogue.delete_product",
        "status": status,
        "reason": "danger check",
        "created_at": created_at,
        "expires_at": "2026-01-02T00:00:00Z",
        "task_token": f"SECRET-TOKEN-{approval_id}",
        "code_hash": f"SECRET-HASH-{approval_id}",
    }
    dynamodb_client(stack.moto_endpoint).put_item(
        TableName=stack.table_names["ApprovalsTable"], Item={k: {"S": v} for k, v in item.items()}
    )


@pytest.fixture
def approvals(stack: LocalStack) -> Approvals:
    run = uuid.uuid4().hex[:8]
    made = Approvals(f"apr_p1{run}", f"apr_p2{run}", f"apr_ok{run}", f"apr_old{run}", {})
    statuses = [
        (made.pending, "pending"),
        (made.pending_without_link, "pending"),
        (made.approved, "approved"),
        (made.expired, "expired"),
    ]
    for index, (approval_id, status) in enumerate(statuses):
        put_approval(stack, approval_id, status, f"2026-01-01T00:00:0{index}Z")
    # An approved approval's link is in the outbox too: it was pending when it was written.
    with stack.outbox_path.open("a", encoding="utf-8") as outbox:
        for approval_id in (made.pending, made.approved):
            link = f"{stack.api_url}/approvals/{approval_id}?code=code-{approval_id}"
            made.links[approval_id] = link
            outbox.write(json.dumps({"approval_id": approval_id, "tool": "t", "link": link}) + "\n")
    return made


@pytest.fixture
def local(local_project: Path) -> tuple[str, ...]:
    return ("--local", "--project", str(local_project))


def ours(listed: list[dict[str, Any]], made: Approvals) -> dict[str, dict[str, Any]]:
    return {entry["approval_id"]: entry for entry in listed if entry["approval_id"] in made.ids}


def deploy(stack: LocalStack, outputs: dict[str, str]) -> str:
    """A CloudFormation stack in moto with these outputs; its name."""
    name = f"toolfront-{uuid.uuid4().hex[:8]}"
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    moto_client(stack.moto_endpoint, "cloudformation").create_stack(
        StackName=name, TemplateBody=json.dumps(template)
    )
    return name


def test_approvals_list_local_json_has_fields_and_links_only_for_pending(
    toolfront: Toolfront, local: tuple[str, ...], approvals: Approvals
) -> None:
    outcome = toolfront("approvals", "list", *local, "--json")

    assert outcome.code == 0, outcome.err
    found = ours(outcome.json(), approvals)
    assert set(found) == approvals.ids
    assert all(list(entry) == [*FIELDS, "link"] for entry in found.values())
    assert found[approvals.pending]["link"] == approvals.links[approvals.pending]
    assert found[approvals.pending_without_link]["link"] is None
    assert found[approvals.approved]["link"] is None  # decided: its code is spent
    assert found[approvals.expired] == {
        "approval_id": approvals.expired,
        "tool": "catalogue.delete_product",
        "status": "expired",
        "reason": "danger check",
        "created_at": "2026-01-01T00:00:03Z",
        "expires_at": "2026-01-02T00:00:00Z",
        "link": None,
    }
    assert not any(secret in outcome.out + outcome.err for secret in SECRETS)


def test_approvals_list_status_filter_keeps_only_that_status(
    toolfront: Toolfront, local: tuple[str, ...], approvals: Approvals
) -> None:
    outcome = toolfront("approvals", "list", *local, "--status", "pending", "--json")

    assert outcome.code == 0, outcome.err
    assert {entry["status"] for entry in outcome.json()} == {"pending"}
    assert set(ours(outcome.json(), approvals)) == {approvals.pending, approvals.pending_without_link}


def test_approvals_list_local_text_shows_columns_and_pending_link(
    toolfront: Toolfront, local: tuple[str, ...], approvals: Approvals
) -> None:
    outcome = toolfront("approvals", "list", *local)

    assert outcome.code == 0, outcome.err
    header, *rows = outcome.out.splitlines()
    assert header.split() == ["APPROVAL", "ID", "TOOL", "STATUS", "REASON", "CREATED", "EXPIRES", "LINK"]
    by_id = {row.split()[0]: row for row in rows}
    assert by_id[approvals.pending].split()[-1] == approvals.links[approvals.pending]
    assert by_id[approvals.approved].split()[-1] == "-"
    assert "danger check" in by_id[approvals.expired]
    assert not any(secret in outcome.out + outcome.err for secret in SECRETS)


def test_approvals_list_no_match_notes_it_on_stderr(toolfront: Toolfront, local: tuple[str, ...]) -> None:
    outcome = toolfront("approvals", "list", *local, "--status", "cancelled")

    assert outcome.code == 0
    assert outcome.out == ""
    assert "no cancelled approvals in the local stack" in outcome.err


def test_approvals_list_stack_name_reads_output_and_never_links(
    stack: LocalStack, toolfront: Toolfront, approvals: Approvals
) -> None:
    name = deploy(stack, {"ApprovalsTableName": stack.table_names["ApprovalsTable"]})

    listed = toolfront("approvals", "list", "--stack-name", name, "--json")
    text = toolfront("approvals", "list", "--stack-name", name, "--status", "pending")

    assert listed.code == 0, listed.err
    found = ours(listed.json(), approvals)
    assert set(found) == approvals.ids
    assert {entry["link"] for entry in found.values()} == {None}
    assert text.code == 0, text.err
    assert "LINK" not in text.out.splitlines()[0]
    assert approvals.links[approvals.pending] not in text.out


def test_approvals_list_stack_without_approvals_output_exits_1(
    stack: LocalStack, toolfront: Toolfront
) -> None:
    name = deploy(stack, {"KeysTableName": stack.table_names["KeysTable"]})

    outcome = toolfront("approvals", "list", "--stack-name", name)

    assert outcome.code == 1
    assert f"stack {name!r} (us-east-1) has no output ApprovalsTableName" in outcome.err


def test_approvals_list_unknown_status_is_usage_error(toolfront: Toolfront) -> None:
    outcome = toolfront("approvals", "list", "--local", "--status", "lost")

    assert outcome.code == 2
    assert "invalid choice: 'lost'" in outcome.err


def test_approvers_sign_ins_and_sessions_are_no_approvals(
    toolfront: Toolfront, stack: LocalStack, local_project: Path
) -> None:
    table = stack.table_names["ApprovalsTable"]
    for key in ("signin#abc", "session#def"):
        item = {"approval_id": {"S": key}, "expires_at_epoch": {"N": "4102444800"}}
        dynamodb_client(stack.moto_endpoint).put_item(TableName=table, Item=item)
    listed = toolfront("approvals", "list", "--local", "--project", local_project, "--json")
    assert listed.code == 0
    assert not [a for a in json.loads(listed.out) if not str(a["approval_id"]).startswith("apr_")]
