"""Test helpers for AWS through moto: tables made from template.yaml, keys and principals seeded."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
from cfnlint.decode import decode

from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.iam.enforcement import Enforcement

ROOT = Path(__file__).resolve().parents[1]
TABLE = "AWS::DynamoDB::Table"


@functools.cache
def _template() -> Any:
    """template.yaml as cfn-lint reads it, parsed once per process (~80 ms a parse; every test's
    tables come from it). Read only: ``template_tables`` hands out copies."""
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems, problems
    return template


def table_variables() -> dict[str, str]:
    """The variable each function reads a table's name from, by the table's logical id (every
    ``NAME: !Ref SomeTable`` of Globals and of the functions' environments, so a family added by
    ``toolfront new family --table`` is there too)."""
    template = _template()
    resources = template["Resources"]
    environments = [template.get("Globals", {}).get("Function", {}).get("Environment", {})]
    environments += [r["Properties"].get("Environment", {}) for r in resources.values() if "Properties" in r]
    found = {}
    for environment in environments:
        for name, given in environment.get("Variables", {}).items():
            # Cognito's tables are named only with it on: !If [CognitoEnabled, !Ref T, ""]
            value = given["Fn::If"][1] if isinstance(given, dict) and "Fn::If" in given else given
            if isinstance(value, dict) and resources.get(value.get("Ref", ""), {}).get("Type") == TABLE:
                found[value["Ref"]] = name
    return found


TABLE_ENV = table_variables()


def function_ids() -> dict[str, str]:
    """Each function's logical id by its code folder's name (``catalogue`` -> ``CatalogueFunction``)."""
    template = _template()
    return {
        Path(res["Properties"]["CodeUri"]).name: lid
        for lid, res in template["Resources"].items()
        if res["Type"] == "AWS::Serverless::Function"
    }


FUNCTION_IDS = function_ids()
# The keys the events/*.json fixtures carry (seeded by the tests that replay those events).
EVENT_ADMIN_KEY = "tfk_eventsadmin1_EventsAdminSecret0123456789abcde"
EVENT_READER_KEY = "tfk_eventsreadr1_EventsReaderSecret123456789abcde"


def template_tables() -> dict[str, dict[str, Any]]:
    template = _template()
    return {
        lid: copy.deepcopy(res["Properties"])
        for lid, res in template["Resources"].items()
        if res["Type"] == "AWS::DynamoDB::Table"
    }


def create_tables(client: Any) -> dict[str, str]:
    """Create every table of the template (named by logical id); answer logical id -> name."""
    names = {}
    for logical_id, props in template_tables().items():
        request: dict[str, Any] = {
            "TableName": logical_id,
            "KeySchema": props["KeySchema"],
            "AttributeDefinitions": props["AttributeDefinitions"],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if "GlobalSecondaryIndexes" in props:
            request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        client.create_table(**request)
        names[logical_id] = logical_id
    return names


def key_store() -> DynamoDBKeyStore:
    return DynamoDBKeyStore("KeysTable", "PrincipalsTable", boto3.client("dynamodb"))


def seed(
    owner: str,
    scopes: list[str],
    *,
    permissions: list[str] = (),  # type: ignore[assignment]
    key: str | None = None,
    **options: Any,
) -> str:
    """Grant ``permissions`` to ``owner`` and issue it a key; answer the key."""
    store = key_store()
    if permissions:
        store.grant(owner, list(permissions), datetime.now(UTC))
    issued, _ = issue_key(store, owner=owner, scopes=scopes, key=key, **options)
    return issued


@contextmanager
def counting_requests(client: Any) -> Iterator[list[str]]:
    """Record the DynamoDB operations ``client`` sends while the block runs: at ``before-send``, where
    botocore's requests and toolfront's own (``aws.wire``) both pass, ahead of moto's answer."""
    seen: list[str] = []

    def record(request: Any, **_: Any) -> None:
        seen.append(request.headers["X-Amz-Target"].rpartition(".")[2])

    client.meta.events.register_first("before-send.dynamodb", record)
    try:
        yield seen
    finally:
        client.meta.events.unregister("before-send.dynamodb", record)


#: The stage the unit tests' names stand for (``toolfront-<stage>-catalogue`` ...): the template's
#: policies name functions and the state machine after the stack, so the tests' must match them.
TEST_STAGE = "unit"
APPROVAL_STATE_MACHINE = f"toolfront-{TEST_STAGE}-approval"
FUNCTION_PREFIX = f"toolfront-{TEST_STAGE}-"
APPROVALS_FUNCTION = f"{FUNCTION_PREFIX}approvals"


def approval_state_machine() -> str:
    """A state machine (moto) named as the template's policies grant, that ends at once: its ARN."""
    return str(
        boto3.client("stepfunctions").create_state_machine(
            name=APPROVAL_STATE_MACHINE,
            definition=json.dumps({"StartAt": "Wait", "States": {"Wait": {"Type": "Pass", "End": True}}}),
            roleArn="arn:aws:iam::123456789012:role/approval",
        )["stateMachineArn"]
    )


def template_enforcement(
    tables: dict[str, str],
    *,
    user_pool: str = "us-east-1_unit",
    template_path: Path = ROOT / "template.yaml",
    parameters: dict[str, str] | None = None,
) -> Enforcement:
    """IAM as template.yaml grants it (with ``parameters`` over its defaults), for the names the
    unit tests give tables and functions."""
    from toolfront_dev.environment import active_template, stack_intrinsics
    from toolfront_dev.iam.policies import stack_enforcement
    from toolfront_dev.payload import LOCAL_ACCOUNT_ID
    from toolfront_dev.template import load_template
    from toolfront_dev.workflow import name_resources

    template = load_template(template_path)
    intrinsics = stack_intrinsics(template, TEST_STAGE, parameters)
    template = active_template(template, intrinsics)
    names = name_resources(template, intrinsics, prefix=f"toolfront-{TEST_STAGE}")
    pools = {"UserPool": user_pool}
    refs = names.refs() | tables | pools | {"UserPoolClient": "unit-client", "UserPoolDomain": "unit"}
    intrinsics = intrinsics.with_refs(refs, names.attributes())
    return stack_enforcement(
        template.path, intrinsics, tables, pools, region="us-east-1", account=LOCAL_ACCOUNT_ID
    )
