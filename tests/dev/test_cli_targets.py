"""``--stack-name``: a deployed stack found through its CloudFormation outputs (moto's, in these tests)."""

from __future__ import annotations

import json
import uuid

from tests.dev.conftest import Toolfront
from toolfront_dev.aws import moto_client
from toolfront_dev.stack import LocalStack


def deploy(stack: LocalStack, outputs: dict[str, str]) -> str:
    """A CloudFormation stack in moto with these outputs; its name."""
    name = f"toolfront-{uuid.uuid4().hex[:8]}"
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    moto_client(stack.moto_endpoint, "cloudformation").create_stack(
        StackName=name, TemplateBody=json.dumps(template)
    )
    return name


# The stack fixture points AWS_ENDPOINT_URL at moto, so --stack-name's boto3 session reaches it.
def test_keys_list_stack_name_reads_tables_from_stack_outputs(
    stack: LocalStack, toolfront: Toolfront
) -> None:
    name = deploy(
        stack,
        {
            "KeysTableName": stack.table_names["KeysTable"],
            "PrincipalsTableName": stack.table_names["PrincipalsTable"],
        },
    )
    created = toolfront(
        "keys", "create", "--stack-name", name, "--owner", "ops", "--scope", "catalogue.*", "--json"
    )

    listed = toolfront("keys", "list", "--stack-name", name, "--region", "us-east-1", "--json")

    assert created.code == 0, created.err
    assert created.json()["key_id"] in {entry["key_id"] for entry in listed.json()}


def test_keys_list_stack_without_principals_output_exits_1_naming_it(
    stack: LocalStack, toolfront: Toolfront
) -> None:
    name = deploy(stack, {"KeysTableName": stack.table_names["KeysTable"]})

    outcome = toolfront("keys", "list", "--stack-name", name)

    assert outcome.code == 1
    assert f"stack {name!r} (us-east-1) has no output PrincipalsTableName" in outcome.err


def test_keys_list_unknown_stack_name_exits_1_naming_stack(stack: LocalStack, toolfront: Toolfront) -> None:
    outcome = toolfront("keys", "list", "--stack-name", "no-such-stack")

    assert outcome.code == 1
    assert "no stack 'no-such-stack' (us-east-1)" in outcome.err
    assert "Traceback" not in outcome.err


def test_keys_list_stack_name_table_missing_exits_1_naming_stack(
    stack: LocalStack, toolfront: Toolfront
) -> None:
    name = deploy(stack, {"KeysTableName": "gone", "PrincipalsTableName": "gone-too"})

    outcome = toolfront("keys", "list", "--stack-name", name)

    assert outcome.code == 1
    assert f"stack {name!r} (us-east-1) refused the request: ResourceNotFoundException" in outcome.err
