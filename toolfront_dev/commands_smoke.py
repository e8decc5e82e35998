"""``toolfront smoke``: the step after ``sam deploy`` (or ``make dev``): the stack checked end to end as
its clients meet it, one line per check (``toolfront_dev.smoke``), exit 0 only when every check
passed. What it makes to check with (a principal, a key, a held call) it removes again.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from toolfront_dev.command import Command
from toolfront_dev.errors import CommandError
from toolfront_dev.smoke import SmokeOptions, SmokeStack, Status, run_smoke
from toolfront_dev.targets import add_target_arguments, deployed_tables, local_tables, reaching

APPROVAL_MACHINE = "ApprovalStateMachine"
_CONFIG = {"connect_timeout": 2, "read_timeout": 10, "retries": {"mode": "standard", "max_attempts": 3}}


def _configure(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument(
        "--url",
        metavar="URL",
        help="the address clients use (default: the stack's PublicUrl, else its ApiUrl; "
        "with --local, the local API)",
    )
    parser.add_argument(
        "--tool",
        metavar="NAME",
        help="the tool of the held call (default: catalogue.delete_product, else the first admin "
        "tool whose danger is 'always'); an admin tool that writes",
    )
    parser.add_argument(
        "--input", dest="tool_input", type=_json_object, metavar="JSON", help="that call's input object"
    )


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("the input must be a JSON object")
    return value


def local_stack(project: Path, url: str | None = None) -> SmokeStack:
    """The stack ``toolfront dev`` runs for ``project`` (its dev.json).

    Raises:
        CommandError: no dev.json, or an unreadable one.
    """
    from toolfront_dev.aws import moto_client
    from toolfront_dev.devinfo import DEV_JSON

    tables = local_tables(project)
    info = json.loads((project / DEV_JSON).read_text(encoding="utf-8"))
    machine = (info.get("state_machines") or {}).get(APPROVAL_MACHINE)
    return SmokeStack(
        url=(url or str(info["api_url"])).rstrip("/"),
        tables=tables,
        oauth=bool(info.get("user_pools")),
        state_machine_arn=machine,
        stepfunctions=moto_client(info["moto_endpoint"], "stepfunctions") if machine else None,
        unreachable_fix="is `toolfront dev` (`make dev`) still running for this folder (--project)?",
    )


def deployed_stack(stack_name: str, region: str | None, url: str | None = None) -> SmokeStack:
    """A deployed stack, through CloudFormation's outputs (``ApiUrl``...) and parameters (``PublicUrl``).

    Raises:
        CommandError: no credentials or region, no such stack, or not a toolfront stack.
    """
    import boto3
    from botocore.config import Config

    tables = deployed_tables(stack_name, region)  # refuses no credentials, no region, no stack
    session = boto3.session.Session(region_name=region)
    config = Config(**_CONFIG)
    with reaching(tables.name):
        described = session.client("cloudformation", config=config).describe_stacks(StackName=stack_name)
    found = described["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
    parameters = {p["ParameterKey"]: p.get("ParameterValue", "") for p in found.get("Parameters", [])}
    address = url or parameters.get("PublicUrl") or outputs.get("ApiUrl")
    if not address:
        raise CommandError(f"{tables.name} has no output ApiUrl: is it a toolfront stack?")
    machine = outputs.get("ApprovalStateMachineArn")
    return SmokeStack(
        url=address.rstrip("/"),
        tables=tables,
        oauth="UserPoolId" in outputs,
        state_machine_arn=machine,
        stepfunctions=session.client("stepfunctions", config=config) if machine else None,
        unreachable_fix=f"is {tables.name} deployed (`sam deploy`; status {found.get('StackStatus')}) "
        f"and {address} its address (PublicUrl, --url)?",
    )


def _run(args: argparse.Namespace) -> int:
    if args.local:
        stack = local_stack(args.project, args.url)
    else:
        stack = deployed_stack(args.stack_name, args.region, args.url)
    print(f"toolfront smoke: {stack.name}, API {stack.url}", flush=True)
    counts = dict.fromkeys(Status, 0)
    for result in run_smoke(stack, SmokeOptions(tool=args.tool, tool_input=args.tool_input)):
        print(result.line, flush=True)
        counts[result.status] += 1
    print(
        f"{counts[Status.PASSED]} passed, {counts[Status.FAILED]} failed, {counts[Status.SKIPPED]} skipped"
        + ("" if counts[Status.FAILED] else "; nothing the smoke made is left"),
        flush=True,
    )
    return 1 if counts[Status.FAILED] else 0


SMOKE = Command(
    "smoke",
    "check a deployed (or the local) stack end to end, as its clients meet it; removes what it makes",
    _configure,
    _run,
)
