"""``toolfront principals grant | revoke``: the permissions a key's owner holds.

Calls check them live, so a change takes effect from the next call on.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from toolfront.audit.records import AuditActor, AuditEvent
from toolfront.auth.keys import PrincipalRecord
from toolfront_dev.arguments import permission_type, principal_type
from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.output import print_json
from toolfront_dev.targets import add_target_arguments, open_target


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "principal_id", metavar="ID", type=principal_type, help="the principal (a key's owner)"
    )
    parser.add_argument(
        "--permission",
        dest="permissions",
        required=True,
        action="append",
        type=permission_type,
        metavar="P",
        help="a permission, e.g. catalogue (repeatable)",
    )
    add_target_arguments(parser)
    add_json_flag(parser)


def _run_grant(args: argparse.Namespace) -> int:
    target = open_target(args)
    with target.reached() as store:
        record = store.grant(args.principal_id, args.permissions, datetime.now(UTC))
    target.record(AuditEvent.PERMISSION_GRANTED, _principal(args), "granted " + ",".join(args.permissions))
    _print(record, args.json)
    return 0


def _run_revoke(args: argparse.Namespace) -> int:
    target = open_target(args)
    with target.reached() as store:
        record = store.revoke_permissions(args.principal_id, args.permissions, datetime.now(UTC))
    target.record(AuditEvent.PERMISSION_REVOKED, _principal(args), "revoked " + ",".join(args.permissions))
    _print(record, args.json)
    return 0


def _principal(args: argparse.Namespace) -> AuditActor:
    return AuditActor("principal", args.principal_id, args.principal_id)


def _print(record: PrincipalRecord, as_json: bool) -> None:
    permissions = sorted(record.permissions)
    if as_json:
        print_json({"principal_id": record.principal_id, "permissions": permissions})
    else:
        print(f"{record.principal_id}: {', '.join(permissions) or '(no permissions)'}")


PRINCIPALS = command_group(
    "principals",
    "grant and revoke the permissions of a principal (a key's owner)",
    [
        Command("grant", "add permissions to a principal; prints what it then holds", _configure, _run_grant),
        Command(
            "revoke",
            "remove permissions from a principal; prints what it then holds",
            _configure,
            _run_revoke,
        ),
    ],
)
