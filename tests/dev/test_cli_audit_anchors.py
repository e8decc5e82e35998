"""``toolfront audit anchor`` and ``audit verify`` against the running local stack: the anchoring
function's handler runs when asked (moto runs no schedule), and verify exits 1 naming the chain for
each attack of section F of the round-3 probe, then 0 once the tampering is undone.

The stack is shared by every test of tests/dev and anchors are never changed, so a pass here only
ever anchors an intact trail: each test anchors first, then tampers (a plain ``PutItem``, TTL
simulated with ``DeleteItem``), then puts every item back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.audit_tampering import Chain, delete_all, forged_chain, put_all, rehashed, with_expiry, write_chain
from tests.dev.conftest import Outcome, Toolfront
from toolfront_dev.aws import dynamodb_client, moto_client
from toolfront_dev.stack import LocalStack


@pytest.fixture
def audit(stack: LocalStack) -> tuple[Any, str]:
    return dynamodb_client(stack.moto_endpoint), stack.table_names["AuditTable"]


def anchored(toolfront: Toolfront, project: Path) -> Outcome:
    done = toolfront("audit", "anchor", "--local", "--project", project)
    assert done.code == 0, done.err
    return done


def verify(toolfront: Toolfront, project: Path) -> Outcome:
    return toolfront("audit", "verify", "--local", "--project", project)


@contextmanager
def restored(audit: tuple[Any, str], chain: Chain, toolfront: Toolfront, project: Path) -> Iterator[None]:
    """Put ``chain`` back as it was when the block ends, and check the trail is intact again."""
    client, table = audit
    try:
        yield
    finally:
        delete_all(client, table, chain.items)
        put_all(client, table, chain.items)
    again = verify(toolfront, project)
    assert again.code == 0, again.err


def named(outcome: Outcome, chain: Chain) -> str:
    assert outcome.code == 1, outcome.out
    (line,) = [line for line in outcome.err.splitlines() if f"chain {chain.id}" in line]
    return line


def test_anchor_runs_the_functions_pass_and_an_intact_trail_verifies(
    toolfront: Toolfront, local_project: Path, audit: tuple[Any, str]
) -> None:
    write_chain(*audit, 2)
    first = anchored(toolfront, local_project)
    assert first.out.startswith("anchored ") and "chain head(s)" in first.out
    summary = toolfront("audit", "anchor", "--local", "--project", local_project, "--json").json()
    assert summary["anchored"] == 0 and summary["conflicts"] == [] and not summary["baseline"]
    intact = verify(toolfront, local_project)
    assert intact.code == 0, intact.err
    assert "is intact" in intact.out and "anchored by " in intact.out


def test_a_chain_newer_than_the_last_pass_verifies_as_not_yet_anchored(
    toolfront: Toolfront, local_project: Path, audit: tuple[Any, str]
) -> None:
    anchored(toolfront, local_project)
    chain = write_chain(*audit, 2)
    outcome = verify(toolfront, local_project)
    assert outcome.code == 0, outcome.err
    assert "not yet anchored" in outcome.out and chain.id in outcome.out


def test_verify_names_a_chain_rewritten_with_recomputed_hashes(
    toolfront: Toolfront, local_project: Path, audit: tuple[Any, str]
) -> None:
    chain = write_chain(*audit, 4)
    anchored(toolfront, local_project)
    with restored(audit, chain, toolfront, local_project):
        put_all(*audit, rehashed(chain, 2, lambda content: content.update(status=201)))
        assert "the chain was rewritten" in named(verify(toolfront, local_project), chain)


def test_verify_names_a_forged_chain(
    toolfront: Toolfront, local_project: Path, audit: tuple[Any, str]
) -> None:
    anchored(toolfront, local_project)
    forged = forged_chain(2, at=datetime.now(UTC) - timedelta(hours=1))
    put_all(*audit, forged.items)
    try:
        assert "was forged" in named(verify(toolfront, local_project), forged)
        listed = toolfront(
            "audit", "list", "--local", "--project", local_project, "--actor", "erin", "--json"
        )
        assert [r["request_id"] for r in listed.json()] == ["forged-1", "forged-0"]  # listed, but named
    finally:
        delete_all(*audit, forged.items)
    assert verify(toolfront, local_project).code == 0


def test_verify_names_a_tail_dropped_through_ttl(
    toolfront: Toolfront, local_project: Path, audit: tuple[Any, str]
) -> None:
    chain = write_chain(*audit, 5)
    anchored(toolfront, local_project)
    tail = chain.records[-2:]
    moved_back = {**chain.head, "seq": chain.records[2]["sk"], "sha256": chain.records[2]["sha256"]}
    with restored(audit, chain, toolfront, local_project):
        put_all(*audit, [*(with_expiry(item, 1) for item in tail), moved_back])
        assert "the TTL would remove it early" in named(verify(toolfront, local_project), chain)
        delete_all(*audit, tail)  # the TTL's deletion
        assert "the chain was truncated" in named(verify(toolfront, local_project), chain)


def test_verify_names_a_whole_chain_expired_through_ttl(
    toolfront: Toolfront, local_project: Path, audit: tuple[Any, str]
) -> None:
    chain = write_chain(*audit, 3)
    anchored(toolfront, local_project)
    with restored(audit, chain, toolfront, local_project):
        delete_all(*audit, chain.items)
        assert f"chain {chain.id} is gone" in named(verify(toolfront, local_project), chain)


def test_anchor_without_a_local_stack_says_so(toolfront: Toolfront, tmp_path: Path) -> None:
    outcome = toolfront("audit", "anchor", "--local", "--project", tmp_path)
    assert outcome.code == 1 and "no local stack" in outcome.err


def deploy(stack: LocalStack, name: str, outputs: dict[str, str], resources: dict[str, Any]) -> str:
    """A CloudFormation stack in moto with these outputs and resources (``--stack-name`` finds it)."""
    template = {
        "Resources": resources or {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    moto_client(stack.moto_endpoint, "cloudformation").create_stack(
        StackName=name, TemplateBody=json.dumps(template)
    )
    return name


# The stack fixture points AWS_ENDPOINT_URL at moto, so --stack-name's boto3 session reaches it.
def test_stack_name_anchors_through_the_stacks_function_and_verifies_with_its_anchors_table(
    toolfront: Toolfront, stack: LocalStack
) -> None:
    # Named as the local stack, so its function is <name>-audit-anchor; the stack outputs no
    # AuditAnchorsTableName, so verify finds the table as the stack's resource.
    anchors = {"AuditAnchorsTable": _table_resource()}
    name = deploy(stack, stack.stack_name, {"AuditTableName": stack.table_names["AuditTable"]}, anchors)
    done = toolfront("audit", "anchor", "--stack-name", name, "--json")
    assert done.code == 0, done.err
    assert done.json()["conflicts"] == []
    outcome = toolfront("audit", "verify", "--stack-name", name)
    assert outcome.code == 0, outcome.err
    # moto made the stack's own (empty) anchors table: no pass wrote there yet.
    assert "no anchoring pass has run yet" in outcome.err


def test_stack_name_verify_without_an_anchors_table_says_what_it_cannot_tell(
    toolfront: Toolfront, stack: LocalStack
) -> None:
    name = deploy(
        stack, f"toolfront-{uuid.uuid4().hex[:8]}", {"AuditTableName": stack.table_names["AuditTable"]}, {}
    )
    outcome = toolfront("audit", "verify", "--stack-name", name)
    assert outcome.code == 0, outcome.err
    assert "has no AuditAnchorsTable" in outcome.err


def _table_resource() -> dict[str, Any]:
    return {
        "Type": "AWS::DynamoDB::Table",
        "Properties": {
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
            ],
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        },
    }
