"""Secrets in every place a caller can put them never reach a log line, a stored item or an error."""

from __future__ import annotations

import json
import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.http.conftest import Api
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront.tools.manifest import load_manifest
from toolfront_dev.aws import moto_client
from toolfront_dev.stack import LocalStack

PASSWORD = "pw-" + uuid.uuid4().hex
FIELD_TOKEN = "ft-" + uuid.uuid4().hex
QUERY_TOKEN = "qt-" + uuid.uuid4().hex
IDEMPOTENCY_KEY = "ik-" + uuid.uuid4().hex


def scan_everything(stack: LocalStack) -> str:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    dump = []
    for table in stack.table_names.values():
        for page in client.get_paginator("scan").paginate(TableName=table):
            dump.extend(page["Items"])
    return json.dumps(dump)


def test_secrets_stay_out_of_logs_items_and_errors(
    api: Api,
    stack: LocalStack,
    store: DynamoDBKeyStore,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    owner = f"secrets-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    key = issue_key(store, owner=owner, scopes=["catalogue.*"])[0]
    session = api.call("guest.start_session").json()["data"]["session_token"]
    secrets = {
        "key": key,
        "key secret": key[-32:],
        "session token": session,
        "password": PASSWORD,
        "field token": FIELD_TOKEN,
        "query token": QUERY_TOKEN,
        "idempotency key": IDEMPOTENCY_KEY,
    }
    caplog.clear()
    caplog.set_level(logging.DEBUG)  # every record of every logger, with its extra fields
    capsys.readouterr()  # the per-call lines are written to stdout
    answers: list[str] = []

    def send(tool: str, body: dict[str, Any], **options: Any) -> None:
        answers.append(api.call(tool, body, **options).body.decode())

    for tool in (t["name"] for t in load_manifest()["tools"]):
        everywhere = {
            "password": PASSWORD,
            "refresh_token": FIELD_TOKEN,
            "session_token": session,
            "idempotency_key": IDEMPOTENCY_KEY,
        }
        send(tool, everywhere, key=key)  # mostly refused: unexpected properties
        send(tool, everywhere, headers={"X-Api-Key": key, "Idempotency-Key": IDEMPOTENCY_KEY})
        namespace, verb = tool.split(".")
        reply = api.request(
            "POST",
            f"/v1/tools/{namespace}/{verb}?refresh_token={QUERY_TOKEN}",
            body=b"{}",
            headers={"Content-Type": "application/json"},
            key=key,
        )
        answers.append(reply.body.decode())
    # calls that run, with the secrets in their control fields and headers
    sku = f"S-{uuid.uuid4().hex[:6]}"
    item = {
        "sku": sku,
        "name": "Mug",
        "price_cents": 1,
        "currency": "EUR",
        "idempotency_key": IDEMPOTENCY_KEY,
    }
    send("catalogue.create_product", item, key=key)
    send("catalogue.create_product", item, key=key)  # the replay
    send("catalogue.get_product", {"sku": sku}, key=key)
    send("guest.get_subscription", {"session_token": session})
    send("guest.subscribe_newsletter", {"session_token": session, "email": "ada@example.org"})
    send("guest.start_session", {}, headers={"Authorization": f"Bearer {key}"})
    send("catalogue.list_products", {}, headers={"Authorization": f"Basic {PASSWORD}"})

    logs = capsys.readouterr().out + caplog.text + json.dumps([vars(r) for r in caplog.records], default=str)
    stored = scan_everything(stack)
    assert "tool call" in logs  # the request log was captured
    for name, secret in secrets.items():
        assert secret not in logs, f"the {name} is in the logs"
        assert secret not in stored, f"the {name} is in a DynamoDB item"
        for answer in answers:
            assert secret not in answer, f"the {name} is in an answer: {answer[:200]}"
