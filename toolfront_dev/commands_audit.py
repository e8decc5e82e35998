"""``toolfront audit list`` and ``audit verify``: the audit trail of the local or a deployed stack.

``list`` shows the records newest first (filtered by tool, actor or age); ``verify`` walks every
hash chain and exits 1 naming the first record of each chain that was changed, removed or
reordered. Both read the whole table (a scan): the trail is read by people, rarely, and every
record is needed to check a chain.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from toolfront.audit.log import DEFAULT_RETENTION_DAYS
from toolfront.audit.trail import Trail, matching, problems, read_trail
from toolfront_dev.arguments import parse_duration
from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.errors import CommandError
from toolfront_dev.output import note, print_json, print_table
from toolfront_dev.targets import StackTables, add_target_arguments, open_tables

AUDIT_TABLE = "AuditTable"
COLUMNS = ("AT", "EVENT", "TOOL", "ACTOR", "STATUS", "ERROR", "APPROVAL", "ENTRY", "REQUEST ID")


def _configure_list(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument("--tool", metavar="T", help="only records of this tool")
    parser.add_argument("--actor", metavar="ID", help="only records of this actor (its id or its principal)")
    parser.add_argument(
        "--since", type=parse_duration, metavar="AGE", help="only records this recent: 30m, 1h, 7d"
    )
    add_json_flag(parser)


def _configure_verify(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument(
        "--retention-days",
        type=int,
        default=DEFAULT_RETENTION_DAYS,
        metavar="N",
        help="the stack's AuditRetentionDays: older records may be gone (default: %(default)s)",
    )


def _trail(tables: StackTables) -> Trail:
    [table] = tables.table_names(AUDIT_TABLE)
    with tables.reached() as client:
        return read_trail(client, table)


def _run_list(args: argparse.Namespace) -> int:
    tables = open_tables(args)
    trail = _trail(tables)
    since = datetime.now(UTC) - args.since if args.since is not None else None
    records = matching(trail.newest_first(), tool=args.tool, actor=args.actor, since=since)
    if args.json:
        print_json(records)
    elif not records:
        note(f"no audit records in {tables.name} that match")
    else:
        print_table(COLUMNS, [_row(record) for record in records])
    return 0


def _row(record: dict[str, object]) -> list[str]:
    actor = record.get("actor") or {}
    assert isinstance(actor, dict)
    who = actor.get("principal") or actor.get("id")
    shown = f"{actor.get('kind')}:{who}" if actor else None
    values = (
        record.get("at"),
        record.get("event"),
        record.get("tool"),
        shown,
        record.get("status"),
        record.get("error_code"),
        record.get("approval_id"),
        record.get("entry"),
        record.get("request_id"),
    )
    return ["-" if value is None else str(value) for value in values]


def _run_verify(args: argparse.Namespace) -> int:
    tables = open_tables(args)
    trail = _trail(tables)
    found = problems(trail, now=datetime.now(UTC), retention_days=args.retention_days)
    if found:
        raise CommandError(
            f"the audit trail of {tables.name} is not intact ({len(found)} chain(s)):\n"
            + "\n".join(f"  - {problem}" for problem in found)
        )
    chains = len({record.chain for record in trail.records} | set(trail.heads))
    print(f"the audit trail of {tables.name} is intact: {len(trail.records)} records in {chains} chain(s)")
    return 0


AUDIT = command_group(
    "audit",
    "read and check the audit trail: who called which tool, who decided",
    [
        Command("list", "list audit records, newest first", _configure_list, _run_list),
        Command(
            "verify", "check that no record was changed, removed or reordered", _configure_verify, _run_verify
        ),
    ],
)
