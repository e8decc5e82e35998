"""Where a management command acts: the local dev stack (``--local``) or a deployed one (``--stack-name``).

Either way the command gets a :class:`Target`: a DynamoDB key store on that stack's keys and
principals tables, and a name for messages; :meth:`Target.reached` turns AWS failures into messages.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolfront.errors import StoreUnavailableError
from toolfront.keystore import DynamoDBKeyStore
from toolfront_dev.errors import CommandError

# Logical ids in template.yaml (dev.json's "tables") and the deployed stack's outputs naming them.
KEYS_TABLE = "KeysTable"
PRINCIPALS_TABLE = "PrincipalsTable"
KEYS_OUTPUT = "KeysTableName"
PRINCIPALS_OUTPUT = "PrincipalsTableName"
_CONFIG_KWARGS: Mapping[str, Any] = {
    "connect_timeout": 2,
    "read_timeout": 10,
    "retries": {"mode": "standard", "max_attempts": 3},
}


@dataclass(frozen=True, slots=True)
class Target:
    """A stack's key store and how to name the stack in a message."""

    store: DynamoDBKeyStore
    name: str
    hint: str = ""

    @contextmanager
    def reached(self) -> Iterator[DynamoDBKeyStore]:
        """The store, with AWS failures raised as :class:`CommandError` naming the stack.

        Raises:
            CommandError: the stack did not answer or refused the request.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield self.store
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise CommandError(
                f"{self.name} refused the request: {error.get('Code')}: {error.get('Message')}"
            ) from exc
        except (BotoCoreError, StoreUnavailableError) as exc:
            # StoreUnavailableError's own text is generic; botocore's cause says what failed.
            raise CommandError(f"{self.name} did not answer ({exc.__cause__ or exc}){self.hint}") from exc


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
    """The target the parsed ``args`` name.

    Raises:
        CommandError: no local stack, or the deployed stack cannot be described.
    """
    if args.local:
        return local_target(args.project)
    return deployed_target(args.stack_name, args.region)


def local_target(project: Path) -> Target:
    """The stack ``toolfront dev`` runs for ``project``, from its ``.toolfront/dev.json``.

    Raises:
        CommandError: dev.json is missing, unreadable or lacks the key tables.
    """
    # Deferred: the local stack's modules need the dev extras, which --stack-name must not.
    from toolfront_dev.aws import moto_client
    from toolfront_dev.stack import DEV_JSON

    path = project / DEV_JSON
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        endpoint, tables = info["moto_endpoint"], info["tables"]
    except FileNotFoundError:
        raise CommandError(
            f"no local stack: run `make dev` first (no {DEV_JSON} in {project.resolve()})"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CommandError(f"{path} is unreadable ({exc!r}): restart `make dev` to rewrite it") from exc
    name = f"the local stack (moto at {endpoint})"
    store = key_store(tables, moto_client(endpoint, "dynamodb"), where=str(path))
    return Target(store, name, hint=": is `make dev` still running?")


def deployed_target(stack_name: str, region: str | None) -> Target:
    """A deployed stack, found by name through CloudFormation's outputs.

    Raises:
        CommandError: no credentials or region, no such stack, or an output is missing.
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
    missing = [o for o in (KEYS_OUTPUT, PRINCIPALS_OUTPUT) if o not in outputs]
    if missing:
        raise CommandError(f"{where} has no output {' or '.join(missing)}: is it a toolfront stack?")
    store = DynamoDBKeyStore(
        outputs[KEYS_OUTPUT], outputs[PRINCIPALS_OUTPUT], session.client("dynamodb", config=config)
    )
    return Target(store, where)


def key_store(tables: Mapping[str, str], client: Any, *, where: str) -> DynamoDBKeyStore:
    """A store on the keys and principals tables of ``tables`` (physical name by logical id).

    Raises:
        CommandError: one of the two tables is not in ``tables``.
    """
    missing = [t for t in (KEYS_TABLE, PRINCIPALS_TABLE) if t not in tables]
    if missing:
        raise CommandError(f"{where} lists no table {' or '.join(missing)}")
    return DynamoDBKeyStore(tables[KEYS_TABLE], tables[PRINCIPALS_TABLE], client)
