"""``toolfront keys create | list | revoke``: API keys of the local or a deployed stack.

A new key is printed once and never again: only the hash of its secret is stored.
"""

from __future__ import annotations

import argparse
import dataclasses
from datetime import UTC, datetime

from toolfront.audit.records import AuditActor, AuditEvent
from toolfront.auth.keys import KeyRecord
from toolfront.auth.keystore import issue_key
from toolfront.errors import NotFoundError
from toolfront_dev.arguments import SCOPE_FORMS, duration_type, principal_type, scope_type
from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.errors import CommandError
from toolfront_dev.output import note, print_json, print_table, rfc3339
from toolfront_dev.targets import add_target_arguments, open_target

CREATED_FIELDS = ("key_id", "owner", "scopes", "requires_approval", "expires_at", "rate_limit", "lease")
LEASE_HELP = (
    "units a warm function takes at once and spends without a request, for at most LeaseMaxAgeMs "
    "(default 1 s): one write per N calls instead of one per call, for keys called faster than one "
    "DynamoDB item takes writes (~1,000/s); never more admitted than the limit, but a revocation or "
    "a permission change reaches the key only when its leases end (docs/operating.md, Leased keys)"
)
KEY_COLUMNS = ("KEY ID", "OWNER", "SCOPES", "APPROVAL", "EXPIRES", "REVOKED", "DESCRIPTION")


def _configure_create(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument(
        "--owner", required=True, type=principal_type, metavar="ID", help="principal owning the key"
    )
    parser.add_argument(
        "--scope",
        dest="scopes",
        required=True,
        action="append",
        type=scope_type,
        metavar="S",
        help=f"a scope the key holds: {SCOPE_FORMS} (repeatable)",
    )
    parser.add_argument(
        "--requires-approval",
        action="store_true",
        help="every write made with the key waits for a person's approval",
    )
    parser.add_argument(
        "--expires-in",
        type=duration_type,
        metavar="DURATION",
        help="lifetime: <n>s, <n>m, <n>h or <n>d, e.g. 30d",
    )
    parser.add_argument("--description", default="", metavar="TEXT", help="what the key is for")
    parser.add_argument(
        "--rate-limit",
        type=_positive,
        metavar="N",
        help="units per minute for this key (default: the deployment's admin limit)",
    )
    parser.add_argument("--lease", type=_lease, metavar="N", help=LEASE_HELP)
    add_json_flag(parser)


def _lease(text: str) -> int:
    value = _positive(text)
    if value < 2:  # a lease of one unit is a write per call: no lease at all
        raise argparse.ArgumentTypeError(f"a lease takes at least 2 units, got {value}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _run_create(args: argparse.Namespace) -> int:
    target = open_target(args)
    now = datetime.now(UTC).replace(microsecond=0)
    with target.reached() as store:
        try:
            key, record = issue_key(
                store,
                owner=args.owner,
                scopes=list(dict.fromkeys(args.scopes)),
                requires_approval=args.requires_approval,
                expires_at=None if args.expires_in is None else now + args.expires_in,
                description=args.description,
                rate_limit=args.rate_limit,
                lease=args.lease,
                now=now,
            )
        except ValueError as exc:  # the owner holds as many keys as it may
            raise CommandError(str(exc)) from None
    target.record(AuditEvent.KEY_CREATED, AuditActor("key", record.key_id, record.owner), "created")
    if args.json:
        described = record.describe()
        print_json({"key": key} | {name: described[name] for name in CREATED_FIELDS})
    else:
        print(key)
        expires = rfc3339(record.expires_at, none="never")
        scopes = ", ".join(sorted(record.scopes))
        note(f"key {record.key_id} for {record.owner} (scopes {scopes}; expires {expires})")
    # stderr, so that `KEY=$(toolfront keys create ...)` captures the key alone.
    note("This is the only time the key is shown: it cannot be shown again. Store it now.")
    return 0


def _configure_list(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    add_json_flag(parser)


def _run_list(args: argparse.Namespace) -> int:
    target = open_target(args)
    with target.reached() as store:
        records = store.list_keys()
    if args.json:
        print_json([record.describe() for record in records])
    elif not records:
        note(f"no keys in {target.name}")
    else:
        print_table(KEY_COLUMNS, [_row(record) for record in records])
    return 0


def _row(record: KeyRecord) -> list[str]:
    return [
        record.key_id,
        record.owner,
        ",".join(sorted(record.scopes)),
        "yes" if record.requires_approval else "no",
        rfc3339(record.expires_at, none="never"),
        rfc3339(record.revoked_at, none="no"),
        record.description,
    ]


def _configure_revoke(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "key_id", metavar="KEY_ID", help="the key's id (tfk_<KEY_ID>_...), as `keys list` shows it"
    )
    add_target_arguments(parser)
    add_json_flag(parser)


def _run_revoke(args: argparse.Namespace) -> int:
    target = open_target(args)
    now = datetime.now(UTC).replace(microsecond=0)
    with target.reached() as store:
        try:
            before = store.revoke_key(args.key_id, now)
        except NotFoundError as exc:
            raise CommandError(f"no key with id {args.key_id!r} in {target.name}") from exc
    record = dataclasses.replace(before, revoked_at=before.revoked_at or now)
    if before.revoked_at is None:
        target.record(AuditEvent.KEY_REVOKED, AuditActor("key", record.key_id, record.owner), "revoked")
    if args.json:
        print_json(record.describe())
    elif before.revoked_at is not None:
        print(f"key {record.key_id} of {record.owner} was already revoked at {rfc3339(before.revoked_at)}")
    else:
        print(f"revoked key {record.key_id} of {record.owner}: refused from the next call on")
    return 0


def _configure_lease(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "key_id", metavar="KEY_ID", help="the key's id (tfk_<KEY_ID>_...), as `keys list` shows it"
    )
    parser.add_argument("units", metavar="N|off", help=f"the lease: {LEASE_HELP}; off: none")
    add_target_arguments(parser)
    add_json_flag(parser)


def _run_lease(args: argparse.Namespace) -> int:
    if args.units.strip().lower() == "off":
        lease = None
    else:
        try:
            lease = _lease(args.units)
        except argparse.ArgumentTypeError as exc:
            raise CommandError(f"N|off: {exc}") from None
    target = open_target(args)
    with target.reached() as store:
        try:
            record = store.set_lease(args.key_id, lease)
        except NotFoundError as exc:
            raise CommandError(f"no key with id {args.key_id!r} in {target.name}") from exc
    if args.json:
        print_json(record.describe())
    elif lease is None:
        print(f"key {record.key_id} of {record.owner}: no lease (every call decided by its own write)")
    else:
        owner = f"key {record.key_id} of {record.owner}"
        print(f"{owner}: a lease of {lease} units from each warm function's next write")
    return 0


KEYS = command_group(
    "keys",
    "create, list and revoke API keys",
    [
        Command(
            "create",
            "issue a key; it is printed once and cannot be shown again",
            _configure_create,
            _run_create,
        ),
        Command("list", "list keys (never their secrets)", _configure_list, _run_list),
        Command("revoke", "revoke a key at once", _configure_revoke, _run_revoke),
        Command("lease", "set or remove a key's lease (hot keys)", _configure_lease, _run_lease),
    ],
)
