"""Where a management command acts: the local dev stack (``--local``) or a deployed one (``--stack-name``).

Either way the command gets the stack's tables (:class:`StackTables`: a DynamoDB client, physical
table names by logical id, a name for messages) or a :class:`Target` (a key store on the keys and
principals tables); ``reached()`` turns AWS failures into messages naming the stack.
"""

from __future__ import annotations

import argparse
import getpass
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolfront import __version__
from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditActor, AuditEntry, AuditEvent, decided_by
from toolfront.auth.keystore import DynamoDBKeyStore
from toolfront.errors import StoreUnavailableError
from toolfront_dev.errors import CommandError

# Logical ids in template.yaml (dev.json's "tables").
KEYS_TABLE = "KeysTable"
PRINCIPALS_TABLE = "PrincipalsTable"
AUDIT_TABLE = "AuditTable"
# A deployed stack's output <LogicalId>TableName names the table <LogicalId>.
_TABLE_OUTPUT_SUFFIX = "Name"
_CONFIG_KWARGS: Mapping[str, Any] = {
    "connect_timeout": 2,
    "read_timeout": 10,
    "retries": {"mode": "standard", "max_attempts": 3},
}


@contextmanager
def reaching(name: str, hint: str = "") -> Iterator[None]:
    """Raise AWS failures inside the block as :class:`CommandError` naming the stack.

    Raises:
        CommandError: the stack did not answer or refused the request.
    """
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise CommandError(
            f"{name} refused the request: {error.get('Code')}: {error.get('Message')}"
        ) from exc
    except (BotoCoreError, StoreUnavailableError) as exc:
        # StoreUnavailableError's own text is generic; botocore's cause says what failed.
        raise CommandError(f"{name} did not answer ({exc.__cause__ or exc}){hint}") from exc


@dataclass(frozen=True, slots=True)
class Target:
    """A stack's key store, its audit log (``None`` for a stack without ``AuditTable``), and how to
    name the stack in a message."""

    store: DynamoDBKeyStore
    name: str
    hint: str = ""
    audit: AuditLog | None = None
    operator: Callable[[], str] = lambda: ""  # who runs the command (asked only when it records)

    def record(self, event: AuditEvent, actor: AuditActor, status: str) -> None:
        """The audit record of a change this command made (``decided_by`` names the operator).

        Raises:
            CommandError: the change was made, but its record could not be written.
        """
        if self.audit is None:
            return
        entry = AuditEntry(
            event=event,
            at=self.audit.now(),
            actor=actor,
            status=status,
            decided_by=decided_by("operator", self.operator()),
            entry="cli",
            client=f"toolfront-cli/{__version__}",
        )
        try:
            with reaching(self.name, self.hint):
                self.audit.append(entry)
        except CommandError as exc:
            raise CommandError(f"the change was made, but its audit record was not written: {exc}") from None

    @contextmanager
    def reached(self) -> Iterator[DynamoDBKeyStore]:
        """The store, with AWS failures raised as :class:`CommandError` naming the stack."""
        with reaching(self.name, self.hint):
            yield self.store


@dataclass(frozen=True, slots=True)
class StackTables:
    """A stack's DynamoDB tables and a low-level client on them.

    Attributes:
        client: the DynamoDB client (moto's for the local stack).
        tables: physical table name by logical id.
        name: the stack, for messages.
        source: where the names came from (dev.json's path, or the deployed stack), for messages.
        deployed: whether the names came from CloudFormation outputs.
        hint: appended to "did not answer" messages.
        outbox: the local approvers' outbox (``None`` for a deployed stack).
    """

    client: Any
    tables: Mapping[str, str]
    name: str
    source: str
    deployed: bool = False
    hint: str = ""
    outbox: Path | None = None
    sts: Any = None  # a deployed stack's STS client (who the operator is)

    def operator(self) -> str:
        """Who is acting: the AWS identity's ARN for a deployed stack, the local user's name here."""
        if not self.deployed:
            return f"local:{getpass.getuser()}"
        with reaching(self.name, self.hint):
            identity: dict[str, str] = self.sts.get_caller_identity()
        return identity["Arn"]

    def table_names(self, *logical_ids: str) -> list[str]:
        """The physical names of these tables, in order.

        Raises:
            CommandError: the stack lists no such table.
        """
        missing = [t for t in logical_ids if t not in self.tables]
        if missing and self.deployed:
            outputs = " or ".join(t + _TABLE_OUTPUT_SUFFIX for t in missing)
            raise CommandError(f"{self.source} has no output {outputs}: is it a toolfront stack?")
        if missing:
            raise CommandError(f"{self.source} lists no table {' or '.join(missing)}")
        return [self.tables[t] for t in logical_ids]

    @contextmanager
    def reached(self) -> Iterator[Any]:
        """The client, with AWS failures raised as :class:`CommandError` naming the stack."""
        with reaching(self.name, self.hint):
            yield self.client


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """``--local [--project DIR]`` or ``--stack-name NAME [--region R]``, exactly one of them."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", action="store_true", help="the stack `toolfront dev` runs (its dev.json)")
    where.add_argument(
        "--stack-name", metavar="NAME", help="a deployed stack (AWS credentials from the environment)"
    )
    parser.add_argument("--region", help="with --stack-name: its region (default: the AWS configuration's)")
    parser.add_argument(
        "--project",
        type=Path,
        default=Path(),
        metavar="DIR",
        help="with --local: the folder holding .toolfront/dev.json (default: the current directory)",
    )


def open_target(args: argparse.Namespace) -> Target:
    """The key store of the stack the parsed ``args`` name.

    Raises:
        CommandError: no local stack, the deployed stack cannot be described, or it has no key tables.
    """
    tables = open_tables(args)
    keys, principals = tables.table_names(KEYS_TABLE, PRINCIPALS_TABLE)
    audit_table = tables.tables.get(AUDIT_TABLE)
    audit = AuditLog(audit_table, client=tables.client) if audit_table else None
    store = DynamoDBKeyStore(keys, principals, tables.client)
    return Target(store, tables.name, tables.hint, audit, tables.operator)


def open_tables(args: argparse.Namespace) -> StackTables:
    """The tables of the stack the parsed ``args`` name.

    Raises:
        CommandError: no local stack, or the deployed stack cannot be described.
    """
    if args.local:
        return local_tables(args.project)
    return deployed_tables(args.stack_name, args.region)


def local_tables(project: Path) -> StackTables:
    """The stack ``toolfront dev`` runs for ``project``, from its ``.toolfront/dev.json``.

    Raises:
        CommandError: dev.json is missing or unreadable.
    """
    # Deferred: the local stack's modules need the dev extras, which --stack-name must not.
    from toolfront_dev.aws import moto_client
    from toolfront_dev.devinfo import DEV_JSON
    from toolfront_dev.outbox import OUTBOX_NAME

    path = project / DEV_JSON
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        endpoint, tables = info["moto_endpoint"], dict(info["tables"])
        outbox = Path(info.get("outbox") or path.parent / OUTBOX_NAME)
    except FileNotFoundError:
        raise CommandError(
            f"no local stack: run `make dev` first (no {DEV_JSON} in {project.resolve()})"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CommandError(f"{path} is unreadable ({exc!r}): restart `make dev` to rewrite it") from exc
    return StackTables(
        moto_client(endpoint, "dynamodb"),
        tables,
        name=f"the local stack (moto at {endpoint})",
        source=str(path),
        hint=": is `make dev` still running?",
        outbox=outbox,
    )


def deployed_tables(stack_name: str, region: str | None) -> StackTables:
    """A deployed stack, its tables found by name through CloudFormation's outputs.

    Raises:
        CommandError: no credentials or region, or no such stack.
    """
    import boto3  # deferred: importing boto3 costs ~200 ms
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    session = boto3.session.Session(region_name=region)
    config = Config(**_CONFIG_KWARGS)
    where = f"stack {stack_name!r} ({session.region_name})"
    try:
        answer = session.client("cloudformation", config=config).describe_stacks(StackName=stack_name)
    except NoRegionError:
        raise CommandError("no AWS region: pass --region or set AWS_REGION") from None
    except NoCredentialsError:
        raise CommandError("no AWS credentials in the environment (AWS_PROFILE, aws configure...)") from None
    except ClientError as exc:
        message = exc.response.get("Error", {}).get("Message", str(exc))
        if "does not exist" in message:
            raise CommandError(f"no {where}: check --stack-name and --region") from None
        raise CommandError(f"CloudFormation refused to describe {where}: {message}") from exc
    except BotoCoreError as exc:
        raise CommandError(f"CloudFormation did not answer for {where}: {exc}") from exc
    outputs = {o["OutputKey"]: o["OutputValue"] for o in answer["Stacks"][0].get("Outputs", [])}
    tables = {
        key.removesuffix(_TABLE_OUTPUT_SUFFIX): value
        for key, value in outputs.items()
        if key.endswith("Table" + _TABLE_OUTPUT_SUFFIX)
    }
    return StackTables(
        session.client("dynamodb", config=config),
        tables,
        where,
        where,
        deployed=True,
        sts=session.client("sts", config=config),
    )


def key_store(tables: Mapping[str, str], client: Any, *, where: str) -> DynamoDBKeyStore:
    """A store on the keys and principals tables of ``tables`` (physical name by logical id).

    Raises:
        CommandError: one of the two tables is not in ``tables``.
    """
    missing = [t for t in (KEYS_TABLE, PRINCIPALS_TABLE) if t not in tables]
    if missing:
        raise CommandError(f"{where} lists no table {' or '.join(missing)}")
    return DynamoDBKeyStore(tables[KEYS_TABLE], tables[PRINCIPALS_TABLE], client)
