"""``toolfront approvals list``: the held calls of the local or a deployed stack, and their status.

Only the listed attributes are ever read from the table (a projection): an approval's task token
and code hash never leave DynamoDB. Locally, a pending approval's link comes from the outbox.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.output import note, print_json, print_table
from toolfront_dev.targets import StackTables, add_target_arguments, open_tables

APPROVALS_TABLE = "ApprovalsTable"
STATUSES = ("pending", "approved", "rejected", "expired", "succeeded", "failed", "cancelled")
PENDING = "pending"
# The attributes shown, in order; nothing else is read from an item.
FIELDS = ("approval_id", "tool", "status", "reason", "created_at", "expires_at")
COLUMNS = ("APPROVAL ID", "TOOL", "STATUS", "REASON", "CREATED", "EXPIRES")
LINK_COLUMN = "LINK"


def _configure_list(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument("--status", choices=STATUSES, help="only approvals with this status")
    add_json_flag(parser)


def _run_list(args: argparse.Namespace) -> int:
    from toolfront_dev.outbox import outbox_links

    tables = open_tables(args)
    [table] = tables.table_names(APPROVALS_TABLE)
    approvals = scan_approvals(tables, table, args.status)
    # Only the local stack has links: in AWS the code exists only in the approvers' e-mail.
    links = outbox_links(tables.outbox) if tables.outbox is not None else {}
    for approval in approvals:
        pending = approval["status"] == PENDING
        approval["link"] = links.get(approval["approval_id"] or "") if pending else None
    if args.json:
        print_json(approvals)
    elif not approvals:
        note(f"no {args.status + ' ' if args.status else ''}approvals in {tables.name}")
    else:
        local = tables.outbox is not None
        columns = (*COLUMNS, LINK_COLUMN) if local else COLUMNS
        print_table(columns, [_row(approval, with_link=local) for approval in approvals])
    return 0


def scan_approvals(tables: StackTables, table: str, status: str | None) -> list[dict[str, Any]]:
    """The approvals in ``table`` (those with ``status`` if given), oldest first.

    Raises:
        CommandError: the stack did not answer or refused the scan.
    """
    names = {f"#f{i}": field for i, field in enumerate(FIELDS)}
    request: dict[str, Any] = {
        "TableName": table,
        "ProjectionExpression": ", ".join(names),
        "ExpressionAttributeNames": names,
    }
    # The parts of a large result (``toolfront.aws.bodies``) and approvers' sign-ins and sessions
    # (``approvals.approvers``) share the table: they are no approvals.
    approval_id = next(key for key, field in names.items() if field == "approval_id")
    request["FilterExpression"] = f"attribute_not_exists(chunk) AND begins_with({approval_id}, :apr)"
    request["ExpressionAttributeValues"] = {":apr": {"S": "apr_"}}
    if status is not None:
        # "status" is a DynamoDB reserved word: compared through its placeholder.
        placeholder = next(key for key, field in names.items() if field == "status")
        request["FilterExpression"] += f" AND {placeholder} = :status"
        request["ExpressionAttributeValues"][":status"] = {"S": status}
    items: list[Mapping[str, Any]] = []
    with tables.reached() as client:
        for page in client.get_paginator("scan").paginate(**request):
            items.extend(page.get("Items", []))
    approvals = [{field: _text(item.get(field)) for field in FIELDS} for item in items]
    approvals.sort(key=lambda a: (a["created_at"] or "", a["approval_id"] or ""))
    return approvals


def _text(attribute: Any) -> str | None:
    if isinstance(attribute, Mapping):
        for kind in ("S", "N"):
            if kind in attribute:
                return str(attribute[kind])
    return None


def _row(approval: Mapping[str, Any], *, with_link: bool) -> list[str]:
    row = [approval[field] or "-" for field in FIELDS]
    return [*row, approval["link"] or "-"] if with_link else row


APPROVALS = command_group(
    "approvals",
    "see the calls held for a person's approval",
    [
        Command(
            "list",
            "list approvals (with --local, each pending one's link)",
            _configure_list,
            _run_list,
        ),
    ],
)
