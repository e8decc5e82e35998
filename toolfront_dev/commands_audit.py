"""``toolfront audit list``, ``audit verify`` and ``audit anchor``: the audit trail of the local or a
deployed stack.

``list`` shows the records newest first (filtered by tool, actor or age); ``verify`` walks every
hash chain and checks it against the anchors (``toolfront.audit.verification``), exiting 1 naming
each chain that was changed, rewritten, forged or truncated; ``anchor`` runs an anchoring pass now,
through the stack's own anchoring function (moto runs no schedule: the local stack runs one when
asked). ``list`` and ``verify`` read whole tables (a scan): the trail is read by people, rarely, and
every record is needed to check a chain.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from toolfront.audit.anchors import AnchorBook, read_anchors
from toolfront.audit.log import DEFAULT_RETENTION_DAYS
from toolfront.audit.trail import Trail, matching, read_trail
from toolfront.audit.verification import Verdict, verify
from toolfront_dev.arguments import parse_duration
from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.errors import CommandError
from toolfront_dev.output import note, print_json, print_table
from toolfront_dev.targets import StackTables, add_target_arguments, open_tables, reaching

AUDIT_TABLE = "AuditTable"
ANCHORS_TABLE = "AuditAnchorsTable"
#: template.yaml: AuditAnchorFunction's FunctionName is ``${AWS::StackName}-audit-anchor``.
ANCHOR_FUNCTION_SUFFIX = "-audit-anchor"
#: What `audit anchor` sends the function (the handler reads nothing of it).
ANCHOR_EVENT = {"source": "toolfront.cli", "detail-type": "Audit anchoring pass", "detail": {}}
#: Longer than the function's Timeout (60 s); one attempt: a pass that may have run is not resent.
_INVOKE_CONFIG = {"connect_timeout": 2, "read_timeout": 90, "retries": {"total_max_attempts": 1}}
COLUMNS = ("AT", "EVENT", "TOOL", "ACTOR", "STATUS", "ERROR", "APPROVAL", "ENTRY", "REQUEST ID")
_LISTED_UNANCHORED = 10


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


def _configure_anchor(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    add_json_flag(parser)


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
    anchors = _anchors(tables, args)
    verdict = verify(trail, now=datetime.now(UTC), retention_days=args.retention_days, anchors=anchors)
    if verdict.problems:
        raise CommandError(
            f"the audit trail of {tables.name} is not intact ({len(verdict.problems)} chain(s)):\n"
            + "\n".join(f"  - {problem}" for problem in verdict.problems)
        )
    chains = len({record.chain for record in trail.records} | set(trail.heads))
    print(f"the audit trail of {tables.name} is intact: {len(trail.records)} records in {chains} chain(s)")
    _tell_anchoring(tables, anchors, verdict)
    return 0


def _tell_anchoring(tables: StackTables, anchors: AnchorBook | None, verdict: Verdict) -> None:
    if anchors is None:
        note(
            f"{tables.name} has no {ANCHORS_TABLE}: a chain rewritten with recomputed hashes, a forged "
            "chain or a truncated one cannot be told from an intact one"
        )
        return
    if verdict.last_run is None:
        note(
            "no anchoring pass has run yet (`toolfront audit anchor`): the chains' hashes alone were checked"
        )
    else:
        print(f"anchored by {verdict.runs} pass(es), the last at {verdict.last_run.started_at}")
    if verdict.unanchored:
        shown = ", ".join(verdict.unanchored[:_LISTED_UNANCHORED])
        more = len(verdict.unanchored) - _LISTED_UNANCHORED
        print(
            f"{len(verdict.unanchored)} chain(s) not yet anchored (newer than the last pass): {shown}"
            + (f" and {more} more" if more > 0 else "")
        )


def _anchors(tables: StackTables, args: argparse.Namespace) -> AnchorBook | None:
    """The anchors table's runs and anchors; ``None`` for a stack without one."""
    table = tables.tables.get(ANCHORS_TABLE)
    if table is None and tables.deployed:
        table = _deployed_resource(args.stack_name, args.region, ANCHORS_TABLE)
    if table is None:
        return None
    with tables.reached() as client:
        return read_anchors(client, table)


def _deployed_resource(stack_name: str, region: str | None, logical_id: str) -> str | None:
    """A deployed stack's resource by logical id, for a table the stack's outputs do not name."""
    import boto3
    from botocore.exceptions import ClientError

    where = f"stack {stack_name!r}"
    cloudformation = boto3.session.Session(region_name=region).client("cloudformation")
    try:
        with reaching(where):
            found = cloudformation.describe_stack_resource(StackName=stack_name, LogicalResourceId=logical_id)
    except CommandError as exc:
        if isinstance(exc.__cause__, ClientError) and "does not exist" in str(exc):
            return None  # a stack from before anchoring
        raise
    return str(found["StackResourceDetail"]["PhysicalResourceId"])


def _run_anchor(args: argparse.Namespace) -> int:
    client, function, where, hint = _anchor_function(args)
    with reaching(where, hint):
        answer = client.invoke(FunctionName=function, Payload=json.dumps(ANCHOR_EVENT).encode())
    summary: dict[str, Any] = json.loads(answer["Payload"].read() or b"null") or {}
    if answer.get("FunctionError"):
        raise CommandError(
            f"the anchoring pass of {where} failed: "
            f"{summary.get('errorType', 'error')}: {summary.get('errorMessage', '')}"
        )
    if args.json:
        print_json(summary)
    else:
        print(
            f"anchored {summary['anchored']} chain head(s) of the {summary['watched']} watched in {where}"
            + (" (the first pass: every chain of the table)" if summary.get("baseline") else "")
        )
    if summary.get("conflicts"):
        raise CommandError(
            "chains no longer match their anchors or their records: "
            + ", ".join(summary["conflicts"])
            + "; run `toolfront audit verify`"
        )
    return 0


def _anchor_function(args: argparse.Namespace) -> tuple[Any, str, str, str]:
    """A Lambda client, the anchoring function's name, the stack's name for messages, a hint."""
    if args.local:
        from toolfront_dev.aws import moto_client
        from toolfront_dev.devinfo import DEV_JSON
        from toolfront_dev.environment import local_stack_name

        tables = open_tables(args)  # refuses a missing or unreadable dev.json
        info = json.loads((args.project / DEV_JSON).read_text(encoding="utf-8"))
        client = moto_client(info["moto_endpoint"], "lambda")
        return client, local_stack_name(info["stage"]) + ANCHOR_FUNCTION_SUFFIX, tables.name, tables.hint
    import boto3
    from botocore.config import Config

    tables = open_tables(args)  # refuses a stack that does not exist, or no credentials
    session = boto3.session.Session(region_name=args.region)
    client = session.client("lambda", config=Config(**_INVOKE_CONFIG))
    return client, args.stack_name + ANCHOR_FUNCTION_SUFFIX, tables.name, ""


AUDIT = command_group(
    "audit",
    "read and check the audit trail: who called which tool, who decided",
    [
        Command("list", "list audit records, newest first", _configure_list, _run_list),
        Command(
            "verify",
            "check that no record was changed, removed or reordered, and every chain against its anchors",
            _configure_verify,
            _run_verify,
        ),
        Command(
            "anchor",
            "run an anchoring pass now (the stack runs one every 5 minutes)",
            _configure_anchor,
            _run_anchor,
        ),
    ],
)
