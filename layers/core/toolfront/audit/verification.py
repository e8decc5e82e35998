"""``toolfront audit verify``'s rules: every chain must hold together, and agree with its anchors.

Each chain is walked from its first record to its head: every record's hash must be the hash of its
content and link; its TTL may not come before its time plus the retention it was written under;
every record must name its predecessor's hash and time; sequence numbers leave no gap; and the head
must name the last record. Records the table's TTL removed are allowed at a chain's start only: a
chain may begin after seq 1 when the record before its first had expired (its ``prev_at`` is older
than the retention), as TTL deletes oldest first.

Then against the anchors (``audit.anchors``): the record at every anchored ``seq`` must still be
there, with the anchored hash, until its own TTL (else the chain was rewritten, or truncated, or is
gone); and every record must have been anchored by the first run that began ``RECORD_GRACE`` after
its time (else it was forged, or written back in time). A chain none of whose records any run was
due to anchor yet is "not yet anchored": newer than the last run, it is checked by its hashes alone.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from toolfront.audit.anchors import Anchor, AnchorBook, AnchorRun, epoch_ms, moment_of
from toolfront.audit.log import GENESIS
from toolfront.audit.records import expiry_epoch, timestamp
from toolfront.audit.trail import Head, StoredRecord, Trail
from toolfront.encoding import parse_rfc3339

#: A record reaches the table within this of its ``at`` (a call's last write, retries included), and
#: an anchoring pass reads its heads within this of its start.
RECORD_GRACE = timedelta(minutes=2)
#: A record dated further ahead than this of the verifying machine's clock is refused.
FUTURE_SLACK = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What ``verify`` found: one problem per broken chain, and the chains not yet anchored."""

    problems: list[str]
    unanchored: list[str]
    runs: int  # completed anchoring runs (0 without an anchors table)
    last_run: AnchorRun | None


def verify(trail: Trail, *, now: datetime, retention_days: int, anchors: AnchorBook | None = None) -> Verdict:
    """Every break of every chain, each naming the chain and the first record where it shows.

    Args:
        trail: the audit table's records and heads.
        now: the time TTLs are compared with.
        retention_days: the stack's ``AuditRetentionDays``, for records that do not carry theirs.
        anchors: the anchors table's runs and anchors; ``None`` checks the chains' hashes alone.
    """
    by_chain: dict[str, list[StoredRecord]] = {}
    for record in trail.records:
        by_chain.setdefault(record.chain, []).append(record)
    book = anchors or AnchorBook([], {})
    found, unanchored = [], []
    for chain in sorted(set(by_chain) | set(trail.heads) | set(book.anchors)):
        records = sorted(by_chain.get(chain, []), key=lambda r: r.seq)
        chain_anchors = book.anchors.get(chain, [])
        problem = _chain_problem(chain, records, trail.heads.get(chain), now, retention_days)
        if problem is None and anchors is not None:
            problem = _anchor_problem(chain, records, chain_anchors, now) or _coverage_problem(
                chain, records, chain_anchors, book.runs, now
            )
        if problem:
            found.append(problem)
        elif _live(records, now) and not chain_anchors and not _due(records, book.runs, now):
            unanchored.append(chain)
    last = book.runs[-1] if book.runs else None
    return Verdict(found, unanchored, len(book.runs), last)


def problems(
    trail: Trail, *, now: datetime, retention_days: int, anchors: AnchorBook | None = None
) -> list[str]:
    """``verify``'s problems alone (empty: intact)."""
    return verify(trail, now=now, retention_days=retention_days, anchors=anchors).problems


def _chain_problem(
    chain: str, records: list[StoredRecord], head: Head | None, now: datetime, retention_days: int
) -> str | None:
    previous: StoredRecord | None = None
    for record in records:
        problem = _early_ttl(record, retention_days)
        if problem:
            return problem
        if not record.intact():
            return f"{record.name} was changed: its hash does not match its content"
        if previous is None:
            kept = timedelta(days=record.retention_days or retention_days)
            if record.seq != 1 and not _expired(record.prev_at, now - kept):
                return f"{record.name} follows a record that was removed (the chain starts at {record.seq})"
            if record.seq == 1 and record.prev_sha256 != GENESIS:
                return f"{record.name} was changed: a chain's first record follows nothing"
        elif record.seq != previous.seq + 1:
            return f"{previous.name} is followed by record {record.seq}: records between were removed"
        elif record.prev_sha256 != previous.sha256 or record.prev_at != (previous.content or {}).get("at"):
            return f"{record.name} does not follow {previous.name}: records were reordered or replaced"
        previous = record
    if head is None:
        return f"chain {chain} has no head: its newest record cannot be checked" if records else None
    if previous is None or head.seq != previous.seq or head.sha256 != previous.sha256:
        last = previous.name if previous else "no record"
        return (
            f"chain {chain} ends at record {head.seq}, but {last} is the last one kept: records were removed"
        )
    return None


def _early_ttl(record: StoredRecord, retention_days: int) -> str | None:
    """A record whose TTL comes before its time plus its retention: the TTL would drop it early."""
    at = (record.content or {}).get("at")
    if record.expires_at_epoch is None or not isinstance(at, str):
        return None
    retention = record.retention_days or retention_days
    try:
        due = expiry_epoch(at, retention)
    except ValueError:
        return None  # not a time: the hash check names the record
    if record.expires_at_epoch >= due:
        return None
    return (
        f"{record.name} expires at {_epoch_text(record.expires_at_epoch)}, before its {retention} days' "
        f"retention ends ({_epoch_text(due)}): the TTL would remove it early"
    )


def _anchor_problem(
    chain: str, records: list[StoredRecord], anchors: list[Anchor], now: datetime
) -> str | None:
    """The first anchor whose record is gone before its TTL, or is no longer the anchored one."""
    by_seq = {record.seq: record for record in records}
    for anchor in anchors:
        record = by_seq.get(anchor.seq)
        anchored = f"anchored by the run of {_ms_text(anchor.run_ms)}"
        if record is None:
            if anchor.record_expires_at_epoch <= now.timestamp():
                continue  # its TTL came: gone in time
            kept = f"kept until {_epoch_text(anchor.record_expires_at_epoch)}"
            if not records:
                return (
                    f"chain {chain} is gone: its record {anchor.seq} (at {anchor.at}) was {anchored}, {kept}"
                )
            return (
                f"record {anchor.seq} of chain {chain} (at {anchor.at}) was {anchored}, {kept}, and is gone: "
                "the chain was truncated"
            )
        if record.sha256 != anchor.sha256:
            return f"{record.name} is not the record {anchored}: the chain was rewritten"
    return None


def _coverage_problem(
    chain: str, records: list[StoredRecord], anchors: list[Anchor], runs: list[AnchorRun], now: datetime
) -> str | None:
    """The first record the first run due after it did not anchor (or that is dated after its anchor)."""
    seqs = [anchor.seq for anchor in anchors]
    earliest = _earliest_runs(anchors)
    starts = [run.started_ms for run in runs]
    grace = int(RECORD_GRACE.total_seconds() * 1000)
    for record in _live(records, now):
        at_ms = _at_ms(record)
        if at_ms is None:
            continue
        if at_ms > epoch_ms(now + FUTURE_SLACK):
            return f"{record.name} is dated in the future"
        index = bisect_left(seqs, record.seq)
        covered = earliest[index] if index < len(seqs) else None
        if covered is not None and at_ms > covered + grace:
            anchored = _ms_text(covered)
            return f"{record.name} is dated after the run of {anchored}, which anchored it: its time is false"
        due = bisect_left(starts, at_ms + grace)
        if due < len(runs) and (covered is None or covered > runs[due].started_ms):
            return (
                f"{record.name} was not anchored by the run of {runs[due].started_at}, the first after it: "
                f"chain {chain} was forged, or the record was added to it later"
            )
    return None


def _due(records: list[StoredRecord], runs: list[AnchorRun], now: datetime) -> bool:
    """Whether a run was due to anchor one of ``records`` (a run began after its time and grace)."""
    if not runs:
        return False
    grace = int(RECORD_GRACE.total_seconds() * 1000)
    times = [at for at in (_at_ms(record) for record in _live(records, now)) if at is not None]
    return bool(times) and min(times) + grace <= runs[-1].started_ms


def _earliest_runs(anchors: Sequence[Anchor]) -> list[int]:
    """For each anchor (by seq), the earliest run among it and the anchors above it: the first run
    that vouched for every record up to its seq."""
    earliest: list[int] = []
    for anchor in reversed(anchors):
        earliest.append(min(anchor.run_ms, earliest[-1]) if earliest else anchor.run_ms)
    return earliest[::-1]


def _live(records: list[StoredRecord], now: datetime) -> list[StoredRecord]:
    """The records whose TTL has not come (the others may go any moment)."""
    return [r for r in records if r.expires_at_epoch is None or r.expires_at_epoch > now.timestamp()]


def _at_ms(record: StoredRecord) -> int | None:
    try:
        return epoch_ms(parse_rfc3339(str((record.content or {})["at"])))
    except (KeyError, ValueError):
        return None


def _expired(at: str | None, expired_before: datetime) -> bool:
    try:
        return at is not None and parse_rfc3339(at) < expired_before
    except ValueError:
        return False


def _ms_text(ms: int) -> str:
    return timestamp(moment_of(ms))


def _epoch_text(epoch: int) -> str:
    return timestamp(moment_of(epoch * 1000))
