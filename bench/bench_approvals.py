"""What holding a call for a person adds, on the local stack (moto, real state machine, HTTP):

- hold: a dangerous call's request -> 202, against the same family's plain write -> 200;
- resume: the approver's POST -> the handler starting (the workflow's Lambda task, in-process).
"""

from __future__ import annotations

import socket
import statistics
import sys
import tempfile
import time
import urllib.parse
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import Row, Section, canary

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.http.conftest import Api  # noqa: E402
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key  # noqa: E402
from toolfront_dev.aws import moto_client  # noqa: E402
from toolfront_dev.outbox import outbox_links  # noqa: E402
from toolfront_dev.stack import LocalStack  # noqa: E402


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _row(key: str, label: str, samples_ms: list[float], baseline: str | None = None) -> Row:
    ordered = sorted(samples_ms)
    return Row(
        key,
        label,
        "ms",
        len(ordered),
        1,
        statistics.median(ordered),
        ordered[0],
        ordered[-1],
        [statistics.median(ordered)],
        baseline=baseline,
    )


def _wait(condition: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.002)
    return found


def run(quick: bool = False) -> Section:
    n = 5 if quick else 25
    section = Section("approvals (local stack over HTTP, moto Step Functions)", canary_before=canary())
    started_at: list[float] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalStack(ROOT, port=_free_port(), dev_json_path=Path(tmp) / "dev.json") as stack,
    ):
        client = moto_client(stack.moto_endpoint, "dynamodb")
        store = DynamoDBKeyStore(stack.table_names["KeysTable"], stack.table_names["PrincipalsTable"], client)
        store.grant("bench", ["catalogue"], datetime.now(UTC))
        key = issue_key(store, owner="bench", scopes=["catalogue.*"], rate_limit=100_000)[0]
        api = Api(stack.api_url)
        tool = stack.handler("CatalogueFunction").registry["catalogue.delete_product"]
        original = tool.handler

        def timed_delete(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
            started_at.append(time.perf_counter())
            result: dict[str, Any] = original(data, ctx)
            return result

        object.__setattr__(tool, "handler", timed_delete)  # a frozen Tool: instrumented for the bench only
        plain, held, resume = [], [], []
        for _ in range(n):
            sku = f"A-{uuid.uuid4().hex[:10]}"
            product = {"sku": sku, "name": "Mug", "price_cents": 1, "currency": "EUR"}
            t0 = time.perf_counter()
            assert api.call("catalogue.create_product", product, key=key).status == 200
            plain.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            reply = api.call("catalogue.delete_product", {"sku": sku}, key=key)
            held.append((time.perf_counter() - t0) * 1000)
            approval_id = reply.json()["data"]["approval_id"]
            link = _wait(lambda approval_id=approval_id: outbox_links(stack.outbox_path).get(approval_id))
            parts = urllib.parse.urlsplit(link)
            code = urllib.parse.parse_qs(parts.query)["code"][0]
            before = len(started_at)
            body = urllib.parse.urlencode({"code": code, "decision": "approve"}).encode()
            t0 = time.perf_counter()
            decided = api.request(
                "POST", parts.path, body=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
            )
            assert decided.status == 200
            _wait(lambda before=before: len(started_at) > before)
            resume.append((started_at[-1] - t0) * 1000)
        object.__setattr__(tool, "handler", original)
    section.rows = [
        _row("plain_write", "plain write (create_product) request -> 200", plain),
        _row("held_call", "held call (delete_product) request -> 202", held, baseline="plain_write"),
        _row("resume", "approver POST -> handler start (workflow resumes)", resume),
    ]
    held_row, plain_row = section.rows[1], section.rows[0]
    held_row.ratio = held_row.median / plain_row.median
    section.canary_after = canary()
    section.extra["summary"] = [
        f"approvals: holding adds {held_row.median - plain_row.median:.1f} ms to a call (median, n={n}); "
        f"resuming takes {section.rows[2].median:.1f} ms from the POST to the handler's start"
    ]
    return section
