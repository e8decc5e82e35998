"""The anchoring pass: every few minutes, each watched chain's head is copied into
``AuditAnchorsTable``, which only the anchoring function may write (``functions/audit_anchor``).

Why anchors: the functions append records with ``PutItem``, and a writer holding that right can write
a whole chain anew with hashes that agree (section F of the round-3 probe). IAM cannot make a put
conditional, so the chain cannot protect itself from its own writers; a copy of its head that those
writers cannot reach can. ``toolfront audit verify`` then checks each chain against its anchors:
the record at an anchored ``seq`` must still carry the anchored hash (a re-chained history does not),
must still be there until its own TTL (a truncated one is not), and every record older than a run
must have been anchored by that run (a forged or back-dated one was not).

Which heads: a pass reads the chains registered since the day before the last pass began (today's
and yesterday's, normally: ``audit.log`` registers each chain under the UTC day it began, and a
chain takes records of that day only), then their heads and the anchors it already holds
(``BatchGetItem``), and anchors each head that moved, after checking that the record the head names
is there and hashes right. The cost so follows the chains written lately, not the table's size; a
scan of the whole table would read every record every five minutes. The first pass of a stack (no
run yet) scans the table once for every head, so that the chains written before anchoring began are
anchored too (the baseline). A pass that completes writes its run; one that fails writes none, and
the next pass does the work again.

What no anchor covers: the records written since the last pass (at most one schedule interval, plus
``audit.verification.RECORD_GRACE``) can still be rewritten or dropped unseen, and whoever may write
the anchors table (the anchoring function's role, an administrator) could rewrite both tables. A
chain begun before anchoring and not registered (a writer of an older version still running after
the baseline) is not watched: records it takes later are named by verify as not anchored.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from toolfront.audit.anchors import RUN_PK, Anchor, AnchorRun, epoch_ms, moment_of, put_once
from toolfront.audit.log import CHAIN_PREFIX, DEFAULT_RETENTION_DAYS, HEAD_SK, REGISTRY_PREFIX
from toolfront.audit.records import expiry_epoch, timestamp
from toolfront.audit.trail import StoredRecord, stored_record
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.errors import ConfigurationError, StoreUnavailableError

logger = logging.getLogger(__name__)

ANCHORS_TABLE_VARIABLE = "TOOLFRONT_AUDIT_ANCHORS_TABLE"
#: A chain takes records of the day it began only, so a chain registered a day before the last pass
#: began can no longer have moved since (normally: yesterday's and today's chains are read).
WATCHED_BEFORE_LAST_PASS = timedelta(days=1)
_BATCH_KEYS = 100  # BatchGetItem's limit
_ATTEMPTS = 5  # of a batch whose keys DynamoDB left unprocessed (throttling)
_BACKOFF_S = 0.05


@dataclass(frozen=True, slots=True)
class AnchorSettings:
    """The anchoring function's configuration (``template.yaml``: AuditAnchorFunction)."""

    audit_table: str
    anchors_table: str
    retention_days: int = DEFAULT_RETENTION_DAYS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AnchorSettings:
        """Raises ``ConfigurationError`` naming the variable that is missing or malformed."""
        env = os.environ if environ is None else environ
        name = "TOOLFRONT_AUDIT_RETENTION_DAYS"
        raw_days = env.get(name, "").strip() or str(DEFAULT_RETENTION_DAYS)
        if not raw_days.isdigit() or int(raw_days) < 1:
            raise ConfigurationError(
                f"environment variable {name} must be a positive integer, got {raw_days!r}"
            )
        return cls(
            _required(env, "TOOLFRONT_AUDIT_TABLE"), _required(env, ANCHORS_TABLE_VARIABLE), int(raw_days)
        )


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


@dataclass(frozen=True, slots=True)
class ChainHead:
    """A chain's head as the audit table holds it: the number and hash of its last record."""

    chain: str
    seq: int
    sha256: str


class Anchorer:
    """Runs anchoring passes from ``audit_table`` into ``anchors_table``."""

    client = aws.LazyClient("dynamodb")

    def __init__(
        self,
        audit_table: str,
        anchors_table: str,
        *,
        retention_days: int = DEFAULT_RETENTION_DAYS,
        client: Any = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.audit_table = audit_table
        self.anchors_table = anchors_table
        self.retention_days = retention_days
        self._client = client
        self._clock = clock

    def run(self) -> AnchorRun:
        """One pass. Raises ``StoreUnavailableError`` when a table did not answer (no run is written)."""
        started = self._clock()
        last = self._last_run_ms()
        baseline = last is None
        if last is None:
            heads = self._all_heads()
        else:  # a pass that did not run for days reads every day since the last one
            heads = self._registered_heads(moment_of(last) - WATCHED_BEFORE_LAST_PASS, started)
        anchored, conflicts = self._anchor(heads, epoch_ms(started))
        run = AnchorRun(
            epoch_ms(started), timestamp(self._clock()), len(heads), anchored, tuple(conflicts), baseline
        )
        put_once(self.client, self.anchors_table, run.item(self.retention_days))
        if conflicts:
            logger.error(
                "audit chains no longer match their anchors or their records: %s", ", ".join(conflicts)
            )
        return run

    def _last_run_ms(self) -> int | None:
        """When the last completed pass began (epoch milliseconds); ``None`` before the first."""
        page = dynamodb.call(
            self.client,
            "query",
            TableName=self.anchors_table,
            KeyConditionExpression="pk = :run",
            ExpressionAttributeValues={":run": {"S": RUN_PK}},
            ProjectionExpression="sk",
            ScanIndexForward=False,
            ConsistentRead=True,
            Limit=1,
        )
        items = page.get("Items") or []
        return int(items[0]["sk"]["N"]) if items else None

    def _all_heads(self) -> list[ChainHead]:
        """The baseline: every head of the table (one scan, the first pass only)."""
        request: dict[str, Any] = {
            "TableName": self.audit_table,
            "FilterExpression": "sk = :head",
            "ExpressionAttributeValues": {":head": {"N": str(HEAD_SK)}},
            "ConsistentRead": True,
        }
        heads = []
        while True:
            page = dynamodb.call(self.client, "scan", **request)
            heads += [_head(item) for item in page.get("Items", []) if _is_chain(item)]
            if "LastEvaluatedKey" not in page:
                return heads
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _registered_heads(self, since: datetime, until: datetime) -> list[ChainHead]:
        """The heads of the chains registered on the UTC days from ``since`` to ``until``."""
        chains: set[str] = set()
        day, last = since.astimezone(UTC).date(), until.astimezone(UTC).date()
        while day <= last:
            chains |= self._registered(day.isoformat())
            day += timedelta(days=1)
        keys = [_key(chain, HEAD_SK) for chain in sorted(chains)]
        return [_head(item) for item in self._batch_get(self.audit_table, keys).values()]

    def _registered(self, day: str) -> set[str]:
        request: dict[str, Any] = {
            "TableName": self.audit_table,
            "KeyConditionExpression": "pk = :day",
            "ExpressionAttributeValues": {":day": {"S": f"{REGISTRY_PREFIX}{day}"}},
            "ProjectionExpression": "#chain",
            "ExpressionAttributeNames": {"#chain": "chain"},
            "ConsistentRead": True,
        }
        chains = set()
        while True:
            page = dynamodb.call(self.client, "query", **request)
            chains |= {item["chain"]["S"] for item in page.get("Items", []) if "chain" in item}
            if "LastEvaluatedKey" not in page:
                return chains
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _anchor(self, heads: list[ChainHead], run_ms: int) -> tuple[int, list[str]]:
        """Anchor every head that moved; the number written and the chains refused."""
        held = self._batch_get(self.anchors_table, [_key(h.chain, h.seq) for h in heads])
        moved, conflicts = [], []
        for head in heads:
            anchor = held.get((head.chain, head.seq))
            if anchor is None:
                moved.append(head)
            elif anchor["sha256"]["S"] != head.sha256:
                conflicts.append(head.chain)  # the record anchored at this seq was replaced
        records = self._batch_get(self.audit_table, [_key(h.chain, h.seq) for h in moved])
        anchored = 0
        for head in moved:
            item = records.get((head.chain, head.seq))
            found = self._anchor_of(head, stored_record(head.chain, head.seq, item), run_ms) if item else None
            if found is None:
                conflicts.append(head.chain)  # the head names a record that is not there, or not intact
                continue
            taken = put_once(self.client, self.anchors_table, found.item())
            if taken is None:
                anchored += 1
            elif taken.get("sha256", {}).get("S") != found.sha256:  # a pass at the same time
                conflicts.append(head.chain)
        return anchored, conflicts

    def _anchor_of(self, head: ChainHead, record: StoredRecord, run_ms: int) -> Anchor | None:
        """The anchor of ``head`` when the record it names hashes right and is the one it names."""
        if record.content is None or not record.intact() or record.sha256 != head.sha256:
            return None
        at = str(record.content.get("at", ""))
        expires = record.expires_at_epoch or expiry_epoch(at, self.retention_days)
        return Anchor(head.chain, head.seq, head.sha256, at, expires, run_ms)

    def _batch_get(self, table: str, keys: Iterable[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
        """The items of ``keys`` that exist, by (chain, seq): consistent reads, 100 keys a request."""
        wanted, found = list(keys), {}
        for start in range(0, len(wanted), _BATCH_KEYS):
            pending: Mapping[str, Any] = {
                table: {"Keys": wanted[start : start + _BATCH_KEYS], "ConsistentRead": True}
            }
            for attempt in range(_ATTEMPTS):
                page = dynamodb.call(self.client, "batch_get_item", RequestItems=pending)
                for item in page.get("Responses", {}).get(table, []):
                    found[(item["pk"]["S"].removeprefix(CHAIN_PREFIX), int(item["sk"]["N"]))] = item
                pending = page.get("UnprocessedKeys") or {}
                if not pending:
                    break
                time.sleep(_BACKOFF_S * 2**attempt)
            else:
                raise StoreUnavailableError("the audit tables did not answer every read; retry shortly")
        return found


def _key(chain: str, seq: int) -> dict[str, Any]:
    return {"pk": {"S": f"{CHAIN_PREFIX}{chain}"}, "sk": {"N": str(seq)}}


def _is_chain(item: Mapping[str, Any]) -> bool:
    return str(item["pk"]["S"]).startswith(CHAIN_PREFIX) and "seq" in item and "sha256" in item


def _head(item: Mapping[str, Any]) -> ChainHead:
    return ChainHead(item["pk"]["S"].removeprefix(CHAIN_PREFIX), int(item["seq"]["N"]), item["sha256"]["S"])


def run_pass() -> dict[str, Any]:
    """One pass configured from the environment (on the process's shared DynamoDB client), logged
    and counted when chains conflict; its summary."""
    settings = AnchorSettings.from_env()
    anchorer = Anchorer(settings.audit_table, settings.anchors_table, retention_days=settings.retention_days)
    run = anchorer.run()
    if run.conflicts:
        from toolfront.calls.logs import emit_metric

        emit_metric("AuditChainConflicts", len(run.conflicts))
    return {
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "baseline": run.baseline,
        "watched": run.watched,
        "anchored": run.anchored,
        "conflicts": list(run.conflicts),
    }
