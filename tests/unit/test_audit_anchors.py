"""The audit trail against its writers' own rights: every put of the log is conditional, the anchoring
pass (the function's own handler, fed the schedule's event) copies chain heads where no other function
may write, and verify names the chain for each attack of section F of the round-3 probe (tampering
with a plain PutItem, TTL deletion simulated with DeleteItem), while intact chains and chains newer
than the last pass still verify."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.audit_tampering import (
    Chain,
    delete_all,
    forged_chain,
    put_all,
    read_chain,
    rehashed,
    with_expiry,
    write_chain,
)
from tests.aws import FUNCTION_IDS
from tests.conftest import load_family
from tests.helpers import load_event
from toolfront.audit.anchoring import Anchorer
from toolfront.audit.anchors import Anchor, put_once, read_anchors
from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditEntry, AuditEvent
from toolfront.audit.trail import read_trail
from toolfront.audit.verification import Verdict, verify
from toolfront.aws import clients
from toolfront_dev.iam.enforcement import RunsAs

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@pytest.fixture
def anchor_function(aws: None) -> Handler:
    handler: Handler = load_family("audit_anchor").lambda_handler
    return handler


def audit_table() -> str:
    return os.environ["TOOLFRONT_AUDIT_TABLE"]


def anchors_table() -> str:
    return os.environ["TOOLFRONT_AUDIT_ANCHORS_TABLE"]


def anchor(handler: Handler) -> dict[str, Any]:
    """One anchoring pass, as the schedule runs it."""
    return handler(load_event("audit_anchor_schedule"), None)


def verdict(*, now: datetime | None = None) -> Verdict:
    client = boto3.client("dynamodb")
    return verify(
        read_trail(client, audit_table()),
        now=now or datetime.now(UTC),
        retention_days=400,
        anchors=read_anchors(client, anchors_table()),
    )


def chain_of(count: int) -> Chain:
    return write_chain(boto3.client("dynamodb"), audit_table(), count)


def the_problem_of(chain: Chain) -> str:
    (problem,) = verdict().problems
    assert f"chain {chain.id}" in problem
    return problem


def test_an_anchored_chain_verifies_and_an_unchanged_one_is_not_anchored_twice(
    anchor_function: Handler,
) -> None:
    chain = chain_of(3)
    first = anchor(anchor_function)
    assert (first["baseline"], first["watched"], first["anchored"], first["conflicts"]) == (True, 1, 1, [])
    second = anchor(anchor_function)
    assert (second["baseline"], second["watched"], second["anchored"]) == (False, 1, 0)
    found = verdict()
    assert found.problems == [] and found.unanchored == [] and found.runs == 2
    [only] = read_anchors(boto3.client("dynamodb"), anchors_table()).anchors[chain.id]
    assert (only.seq, only.sha256) == (3, chain.head["sha256"]["S"])


def test_a_chain_newer_than_the_last_pass_is_not_yet_anchored_and_verifies(anchor_function: Handler) -> None:
    anchor(anchor_function)
    chain = chain_of(2)
    found = verdict()
    assert found.problems == [] and found.unanchored == [chain.id]


def test_a_chain_rewritten_with_recomputed_hashes_is_named(anchor_function: Handler) -> None:
    chain = chain_of(4)
    anchor(anchor_function)

    def change(content: dict[str, Any]) -> None:
        content["status"], content["actor"] = 403, {"kind": "key", "id": "someone-else", "principal": "x"}

    put_all(boto3.client("dynamodb"), audit_table(), rehashed(chain, 2, change))
    problem = the_problem_of(chain)
    assert problem.startswith(f"record 4 of chain {chain.id}") and "the chain was rewritten" in problem


def test_a_forged_chain_is_named(anchor_function: Handler) -> None:
    chain_of(2)
    anchor(anchor_function)
    forged = forged_chain(2, at=datetime.now(UTC) - timedelta(hours=1))
    put_all(boto3.client("dynamodb"), audit_table(), forged.items)
    problem = the_problem_of(forged)
    assert problem.startswith(f"record 1 of chain {forged.id}") and "was forged" in problem


def test_a_forged_chain_anchored_after_the_fact_is_still_named(anchor_function: Handler) -> None:
    anchor(anchor_function)
    forged = forged_chain(2, at=datetime.now(UTC) - timedelta(hours=1))
    put_all(boto3.client("dynamodb"), audit_table(), forged.items)
    assert anchor(anchor_function)["anchored"] == 1  # registered today: the pass anchors its head
    assert "was not anchored by the run of" in the_problem_of(forged)


def test_a_tail_dropped_through_ttl_is_named_before_and_after_the_ttl_deletes_it(
    anchor_function: Handler,
) -> None:
    chain = chain_of(5)
    anchor(anchor_function)
    client = boto3.client("dynamodb")
    tail = chain.records[-2:]
    head = {**chain.head, "seq": chain.records[2]["sk"], "sha256": chain.records[2]["sha256"]}
    put_all(client, audit_table(), [*(with_expiry(item, 1) for item in tail), head])
    assert "the TTL would remove it early" in the_problem_of(chain)
    delete_all(client, audit_table(), tail)  # what the TTL does next
    problem = the_problem_of(chain)
    assert problem.startswith(f"record 5 of chain {chain.id}") and "the chain was truncated" in problem


def test_a_whole_chain_expired_through_ttl_is_named(anchor_function: Handler) -> None:
    chain = chain_of(3)
    anchor(anchor_function)
    delete_all(boto3.client("dynamodb"), audit_table(), chain.items)
    assert the_problem_of(chain).startswith(f"chain {chain.id} is gone")


def test_a_record_rehashed_to_expire_before_its_retention_is_named(aws: None) -> None:
    chain = chain_of(3)  # not anchored yet: its hashes alone protect it
    short = with_expiry(chain.records[1], int(datetime.now(UTC).timestamp()) + 86400)
    # The content stays; the expiry changes, and every hash from there on is recomputed.
    shortened = Chain(chain.id, [chain.records[0], short, chain.records[2]], chain.head, [])
    rewritten = rehashed(shortened, 2, lambda content: None)
    put_all(boto3.client("dynamodb"), audit_table(), rewritten)
    problem = the_problem_of(chain)
    assert problem.startswith(f"record 2 of chain {chain.id}") and "before its 400 days' retention" in problem


def test_records_gone_through_their_own_ttl_are_allowed(anchor_function: Handler) -> None:
    old = datetime.now(UTC) - timedelta(days=500)
    chain = write_chain(boto3.client("dynamodb"), audit_table(), 3, clock=lambda: old)
    assert anchor(anchor_function)["anchored"] == 1  # the baseline reads every head
    delete_all(boto3.client("dynamodb"), audit_table(), chain.items)  # their TTL came 100 days ago
    assert verdict().problems == []


def test_the_pass_refuses_a_head_that_no_longer_matches_its_anchor(anchor_function: Handler) -> None:
    chain = chain_of(3)
    anchor(anchor_function)
    put_all(boto3.client("dynamodb"), audit_table(), rehashed(chain, 1, lambda c: c.update(status=500)))
    summary = anchor(anchor_function)
    assert summary["conflicts"] == [chain.id] and summary["anchored"] == 0
    [kept] = read_anchors(boto3.client("dynamodb"), anchors_table()).anchors[chain.id]
    assert kept.sha256 == chain.head["sha256"]["S"]  # never overwritten


def test_the_first_pass_anchors_chains_written_before_anchoring_began(anchor_function: Handler) -> None:
    chain = chain_of(2)
    delete_all(boto3.client("dynamodb"), audit_table(), chain.registrations)  # as before registrations
    summary = anchor(anchor_function)
    assert summary["baseline"] and summary["anchored"] == 1
    assert verdict().problems == []


def test_every_put_of_the_log_is_conditional_and_replaying_one_writes_nothing(aws: None) -> None:
    sent: list[list[dict[str, Any]]] = []

    def keep(params: dict[str, Any], **_: Any) -> None:
        sent.append(params["TransactItems"])

    shared = clients.client("dynamodb")
    shared.meta.events.register("provide-client-params.dynamodb.TransactWriteItems", keep)
    try:
        log = AuditLog(audit_table())
        for index in range(2):
            log.append(AuditEntry(AuditEvent.CALL, log.now(), request_id=f"r-{index}"))
    finally:
        shared.meta.events.unregister("provide-client-params.dynamodb.TransactWriteItems", keep)
    first, second = sent
    assert [len(first), len(second)] == [3, 2]  # a chain's first record registers the chain
    puts = [item["Put"] for item in [*first, *second]]
    assert all(put["ConditionExpression"] for put in puts)
    assert [item["Put"]["ConditionExpression"] for item in first] == ["attribute_not_exists(pk)"] * 3
    assert second[1]["Put"]["ConditionExpression"] == "#seq = :prev"  # the head follows its record
    with pytest.raises(ClientError, match="TransactionCanceled"):
        boto3.client("dynamodb").transact_write_items(TransactItems=second)


def test_an_anchor_is_put_once(aws: None) -> None:
    client = boto3.client("dynamodb")
    anchor_ = Anchor("c", 3, "a" * 64, "2026-12-01T10:00:00.000Z", 2_000_000_000, 1)
    assert put_once(client, anchors_table(), anchor_.item()) is None
    replaced = Anchor("c", 3, "b" * 64, "2026-12-01T10:00:00.000Z", 2_000_000_000, 2)
    taken = put_once(client, anchors_table(), replaced.item())
    assert taken is not None and taken["sha256"]["S"] == "a" * 64
    assert read_anchors(client, anchors_table()).anchors["c"] == [anchor_]


def test_no_other_function_may_write_the_anchors_table(aws: None) -> None:
    item = Anchor("c", 1, "a" * 64, "2026-12-01T10:00:00.000Z", 2_000_000_000, 1).item()

    def write(event: Any, context: Any) -> None:
        boto3.client("dynamodb").put_item(TableName=anchors_table(), Item=item)

    writers = sorted(set(FUNCTION_IDS.values()) - {"AuditAnchorFunction"})
    assert writers
    for function in writers:
        with pytest.raises(ClientError, match="AccessDenied"):
            RunsAs(function, write)({}, None)


def test_a_chain_takes_records_of_its_own_day_only(aws: None) -> None:
    moments = iter(
        [datetime(2026, 12, 1, 23, 59, 59, tzinfo=UTC), datetime(2026, 12, 2, 0, 0, 1, tzinfo=UTC)]
    )
    now = next(moments)
    log = AuditLog(audit_table(), clock=lambda: now)
    log.append(AuditEntry(AuditEvent.CALL, log.now(), request_id="before"))
    now = next(moments)
    log.append(AuditEntry(AuditEvent.CALL, log.now(), request_id="after"))
    trail = read_trail(boto3.client("dynamodb"), audit_table())
    assert len(trail.heads) == 2 and {head.seq for head in trail.heads.values()} == {1}
    days = {
        item["pk"]["S"]
        for item in boto3.client("dynamodb").scan(TableName=audit_table())["Items"]
        if item["pk"]["S"].startswith("chains#")
    }
    assert days == {"chains#2026-12-01", "chains#2026-12-02"}


def test_read_chain_sees_what_the_log_wrote(aws: None) -> None:
    chain = chain_of(2)
    again = read_chain(boto3.client("dynamodb"), audit_table(), chain.id)
    assert [int(r["sk"]["N"]) for r in again.records] == [1, 2] and len(again.registrations) == 1


def test_a_pass_after_days_without_one_reads_every_day_since(aws: None) -> None:
    now = datetime.now(UTC)
    client = boto3.client("dynamodb")
    Anchorer(audit_table(), anchors_table(), client=client, clock=lambda: now - timedelta(days=3)).run()
    chain = write_chain(client, audit_table(), 2, clock=lambda: now - timedelta(days=2))
    run = Anchorer(audit_table(), anchors_table(), client=client, clock=lambda: now).run()
    assert (run.baseline, run.watched, run.anchored) == (False, 1, 1)
    assert chain.id in read_anchors(client, anchors_table()).anchors and verdict().problems == []
