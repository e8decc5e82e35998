"""One local stack (`toolfront dev` in-process) for the HTTP tests, and a client that calls it."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import free_port
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.aws import moto_client
from toolfront_dev.seeds import parse_seed
from toolfront_dev.stack import LocalStack

PROJECT_DIR = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def error_code(self) -> str | None:
        body = self.json()
        return body["error"]["code"] if "error" in body else None


class Api:
    """A small HTTP client for the stack (http.client: no proxies, raw bodies allowed)."""

    def __init__(self, base_url: str) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or (443 if self.https else 80)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        key: str | None = None,
    ) -> Reply:
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=10)
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()

    def call(self, tool: str, data: Any = None, *, key: str | None = None, **options: Any) -> Reply:
        """POST a tool call with a JSON body."""
        namespace, verb_noun = tool.split(".")
        body = json.dumps({} if data is None else data).encode()
        headers = {"Content-Type": "application/json", **options.pop("headers", {})}
        return self.request("POST", f"/v1/tools/{namespace}/{verb_noun}", body=body, headers=headers, key=key)


#: Every call of this suite comes from 127.0.0.1: the per-address guards are raised for it, as
#: ``toolfront dev --parameter`` would (the tests of the guards lower them again where they test them).
#: The sign-in tests serve client ID metadata documents from a loopback https server of their own.
ONE_ADDRESS_SUITE = {
    "RateLimitPublicIpGuardPerMinute": "100000",
    "MaxPublicHoldsPerIpPerHour": "100000",
    "MaxRegistrationsPerIpPerHour": "100000",
    "ClientMetadataHosts": "127.0.0.1",
    # tools/list in pages of 4: every MCP client these tests drive (the SDKs, fastmcp, mcp-remote,
    # the conformance suite) must follow nextCursor to see the 17 tools
    "McpToolsPageSize": "4",
}
#: A person who signs in on the local managed login: a member of the group (principal) ``shop``.
USER, PASSWORD = "ann@example.com", "Correct-Horse-42-battery"
SEED = {
    "principals": [{"id": "shop", "permissions": ["catalogue"]}],
    "users": [{"username": USER, "password": PASSWORD, "groups": ["shop"], "scopes": ["catalogue.*"]}],
}


@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    dev_json = tmp_path_factory.mktemp("stack") / "dev.json"  # never the developer's own
    with LocalStack(
        PROJECT_DIR,
        port=free_port(),
        dev_json_path=dev_json,
        parameters=ONE_ADDRESS_SUITE,
        seed=parse_seed(SEED),
    ) as running:
        yield running


@pytest.fixture(scope="package")
def api(stack: LocalStack) -> Api:
    return Api(stack.api_url)


@pytest.fixture(scope="package")
def store(stack: LocalStack) -> DynamoDBKeyStore:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    tables = stack.table_names
    return DynamoDBKeyStore(tables["KeysTable"], tables["PrincipalsTable"], client)


# --- a principal with a key and a product, for the tests that hold calls ---------------------


def wait_for(condition: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


@pytest.fixture
def owner(store: DynamoDBKeyStore) -> str:
    principal = f"approver-test-{uuid.uuid4().hex[:8]}"
    store.grant(principal, ["catalogue"], datetime.now(UTC))
    return principal


@pytest.fixture
def key(store: DynamoDBKeyStore, owner: str) -> str:
    return issue_key(store, owner=owner, scopes=["catalogue.*"])[0]


@pytest.fixture
def sku(api: Api, key: str) -> str:
    made = f"D-{uuid.uuid4().hex[:8]}"
    product = {"sku": made, "name": "Mug", "price_cents": 1000, "currency": "EUR"}
    assert api.call("catalogue.create_product", product, key=key).status == 200
    return made
