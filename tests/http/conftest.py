"""One local stack (`toolfront dev` in-process) for the HTTP tests, and a client that calls it."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import free_port
from toolfront.auth.keystore import DynamoDBKeyStore
from toolfront_dev.aws import moto_client
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


@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    dev_json = tmp_path_factory.mktemp("stack") / "dev.json"  # never the developer's own
    with LocalStack(PROJECT_DIR, port=free_port(), dev_json_path=dev_json) as running:
        yield running


@pytest.fixture(scope="package")
def api(stack: LocalStack) -> Api:
    return Api(stack.api_url)


@pytest.fixture(scope="package")
def store(stack: LocalStack) -> DynamoDBKeyStore:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    tables = stack.table_names
    return DynamoDBKeyStore(tables["KeysTable"], tables["PrincipalsTable"], client)
