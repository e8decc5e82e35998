"""The same HTTP checks against a deployed stack: set AWS_SAM_STACK_NAME (and AWS credentials).

Without it every test here is skipped: the suite runs offline.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest

from tests.http.conftest import Api
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key

STACK = os.environ.get("AWS_SAM_STACK_NAME", "")
pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def outputs() -> dict[str, str]:
    if not STACK:
        pytest.skip("AWS_SAM_STACK_NAME is not set: no deployed stack to check")
    stack = boto3.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


@pytest.fixture(scope="session")
def api(outputs: dict[str, str]) -> Api:
    return Api(outputs["ApiUrl"])


@pytest.fixture(scope="session")
def admin_key(outputs: dict[str, str]) -> Iterator[str]:
    """A key for these tests, revoked afterwards."""
    store = DynamoDBKeyStore(outputs["KeysTableName"], outputs["PrincipalsTableName"])
    owner = f"integration-{uuid.uuid4().hex[:8]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    key, record = issue_key(store, owner=owner, scopes=["catalogue.*"], description="integration tests")
    yield key
    store.revoke_key(record.key_id, datetime.now(UTC))
    store.revoke_permissions(owner, ["catalogue"], datetime.now(UTC))
