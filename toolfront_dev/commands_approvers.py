"""``toolfront approvers link-slack | unlink-slack``: which toolfront principal a Slack user is.

A link is an item of the stack's approvals table, ``slack#<team>:<user>`` (``*`` for any team:
``toolfront.approvals.slack_people``), which the approvals function reads when that user clicks
Approve or Reject: the principal's permissions then say whether they may decide, and their vote is
counted as that principal's (one person, whatever channel). Linking and unlinking are audited as
the operator's acts, like granting a permission.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, datetime

from toolfront.approvals.slack_people import link_key
from toolfront.audit.records import AuditActor, AuditEvent
from toolfront.encoding import rfc3339
from toolfront_dev.arguments import principal_type
from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.commands_approvals import APPROVALS_TABLE
from toolfront_dev.output import print_json
from toolfront_dev.targets import add_target_arguments, open_tables, open_target

_SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,20}")
_SLACK_TEAM = re.compile(r"[TE][A-Z0-9]{2,20}")


def _slack_id(pattern: re.Pattern[str], what: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        if not pattern.fullmatch(text):
            raise argparse.ArgumentTypeError(
                f"not a Slack {what} id (like {pattern.pattern[1]}0123ABCD): {text!r}"
            )
        return text

    return check


def _configure(parser: argparse.ArgumentParser, *, linking: bool) -> None:
    parser.add_argument("--slack-user", required=True, type=_slack_id(_SLACK_USER, "user"), metavar="U123")
    parser.add_argument(
        "--team",
        type=_slack_id(_SLACK_TEAM, "workspace"),
        metavar="T123",
        help="only in this Slack workspace (default: in any)",
    )
    if linking:
        parser.add_argument("--principal", required=True, type=principal_type, help="the principal they are")
    add_target_arguments(parser)
    add_json_flag(parser)


def _run_link(args: argparse.Namespace) -> int:
    target, tables = open_target(args), open_tables(args)
    [table] = tables.table_names(APPROVALS_TABLE)
    now = datetime.now(UTC)
    item = {
        "approval_id": {"S": link_key(args.team, args.slack_user)},
        "principal": {"S": args.principal},
        "slack_user": {"S": args.slack_user},
        "slack_team": {"S": args.team or "*"},
        "linked_at": {"S": rfc3339(now)},
    }
    with tables.reached() as client:
        client.put_item(TableName=table, Item=item)
    with target.reached() as store:
        found = store.get_principals([args.principal])
    held = sorted(found[0].permissions) if found else []
    target.record(AuditEvent.SLACK_LINKED, _actor(args), f"linked to {args.principal}")
    where = f"in {args.team}" if args.team else "in any workspace"
    if args.json:
        link = {"slack_user": args.slack_user, "team": args.team, "principal": args.principal}
        print_json(link | {"permissions": held})
    else:
        print(f"{args.slack_user} ({where}) is {args.principal}: {', '.join(held) or '(no permissions yet)'}")
    return 0


def _run_unlink(args: argparse.Namespace) -> int:
    target, tables = open_target(args), open_tables(args)
    [table] = tables.table_names(APPROVALS_TABLE)
    with tables.reached() as client:
        answer = client.delete_item(
            TableName=table,
            Key={"approval_id": {"S": link_key(args.team, args.slack_user)}},
            ReturnValues="ALL_OLD",
        )
    was = answer.get("Attributes", {}).get("principal", {}).get("S")
    target.record(AuditEvent.SLACK_LINKED, _actor(args), f"unlinked from {was}" if was else "no link")
    if args.json:
        print_json({"slack_user": args.slack_user, "team": args.team, "unlinked": was})
    else:
        print(f"{args.slack_user}: {'no longer ' + was if was else 'was not linked'}")
    return 0


def _actor(args: argparse.Namespace) -> AuditActor:
    return AuditActor("slack", f"{args.team or '*'}:{args.slack_user}", getattr(args, "principal", None))


APPROVERS = command_group(
    "approvers",
    "tie people's chat identities to toolfront principals (who may approve where they work)",
    [
        Command(
            "link-slack",
            "a Slack user is this principal when they approve or reject in Slack",
            lambda parser: _configure(parser, linking=True),
            _run_link,
        ),
        Command(
            "unlink-slack",
            "remove a Slack user's link",
            lambda parser: _configure(parser, linking=False),
            _run_unlink,
        ),
    ],
)
