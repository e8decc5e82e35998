"""What the approvers' inbox costs, on the local stack (moto over HTTP, ``ApproverSignIn=true``).

The approvals table is filled with ``PENDING`` approvals an approver may decide and ``DECIDED`` ones
(the 30 days of history the table keeps), then three readings, each the median of ``ROUNDS``:

- ``GET /approvals`` over HTTP with a signed-in approver's session (the page with every row);
- the index's Query alone (``PendingApprovals.newest``): items and bytes read, the read units AWS
  would bill (eventually consistent: half a unit per 4 KB);
- the alternative, a Scan of the table filtered on ``status = pending``: the same figures.

moto evaluates a Query by walking the whole table, so its time here grows with history as a Scan's
does; in DynamoDB a Query reads only its partition. The bytes and units read are what tell them apart.

Usage: ``.venv/bin/python bench/inbox_listing.py [PENDING] [DECIDED]`` (defaults 500 and 5000).
"""

from __future__ import annotations

import http.cookiejar
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import free_port  # noqa: E402
from toolfront.approvals import store as store_module  # noqa: E402
from toolfront.approvals.pending import PendingApprovals  # noqa: E402
from toolfront.approvals.records import Approval, ApprovalStatus, Requester, new_approval_id  # noqa: E402
from toolfront_dev.aws import moto_client  # noqa: E402
from toolfront_dev.seeds import parse_seed  # noqa: E402
from toolfront_dev.stack import LocalStack  # noqa: E402

ROUNDS = 7
PASSWORD = "Correct-Horse-42"
SEED = {
    "principals": [{"id": "approvers", "permissions": ["approver"]}],
    "users": [{"username": "ann@example.com", "password": PASSWORD, "groups": ["approvers"], "scopes": []}],
}


def approval(number: int, status: ApprovalStatus, now: datetime) -> Approval:
    created = now - timedelta(seconds=number)
    return Approval(
        approval_id=new_approval_id(),
        tool="catalogue.delete_product",
        function="toolfront-dev-catalogue",
        input={"sku": f"SKU-{number:06d}", "note": "discontinued by the supplier; see ticket OPS-4411"},
        input_digest="0" * 64,
        requester=Requester("key", "abcdefghijkl", f"requester-{number % 7}", ("catalogue.*",)),
        reason="danger",
        status=status,
        created_at=created,
        expires_at=created + timedelta(days=1),
        request_id=f"req-{number}",
        base_url="http://127.0.0.1",
    )


def fill(client: Any, table: str, pending: int, decided: int) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    batch: list[dict[str, Any]] = []
    for number in range(pending + decided):
        status = ApprovalStatus.PENDING if number < pending else ApprovalStatus.REJECTED
        batch.append({"PutRequest": {"Item": store_module._to_item(approval(number, status, now))}})
        if len(batch) == 25:
            client.batch_write_item(RequestItems={table: batch})
            batch = []
    if batch:
        client.batch_write_item(RequestItems={table: batch})


def signed_in(api_url: str) -> urllib.request.OpenerDirector:
    """A browser-like client signed in from the inbox through the local managed login."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(f"{api_url}/approvals", timeout=30) as login:  # redirected to the sign-in form
        form_url = login.geturl()
    fields = urllib.parse.urlencode({"username": SEED["users"][0]["username"], "password": PASSWORD})
    with opener.open(form_url, data=fields.encode(), timeout=30) as inbox:
        assert inbox.geturl().endswith("/approvals"), inbox.geturl()
    return opener


def item_bytes(item: dict[str, Any]) -> int:
    """An item's size as DynamoDB counts it (names plus values; strings and numbers as text)."""
    total = 0
    for name, value in item.items():
        [(_, text)] = value.items()
        total += len(name.encode()) + len(str(text).encode())
    return total


def read_all(client: Any, operation: str, request: dict[str, Any]) -> tuple[int, int, int, int]:
    """Pages, items examined, items returned and their bytes, of a Query or Scan read to its end."""
    pages = examined = returned = size = 0
    while True:
        page = getattr(client, operation)(**request)
        pages += 1
        examined += page.get("ScannedCount", 0)
        returned += page.get("Count", 0)
        size += sum(item_bytes(item) for item in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return pages, examined, returned, size
        request = request | {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def median_ms(action: Any) -> float:
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main(pending: int, decided: int) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalStack(
            ROOT,
            port=free_port(),
            dev_json_path=Path(tmp) / "dev.json",
            parameters={"ApproverSignIn": "true"},
            seed=parse_seed(SEED),
        ) as stack,
    ):
        client = moto_client(stack.moto_endpoint, "dynamodb")
        table = stack.table_names["ApprovalsTable"]
        started = time.perf_counter()
        fill(client, table, pending, decided)
        print(
            f"filled {pending} pending + {decided} decided approvals in {time.perf_counter() - started:.1f} s"
        )
        opener = signed_in(stack.api_url)

        def page() -> str:
            with opener.open(f"{stack.api_url}/approvals", timeout=60) as answer:
                return str(answer.read().decode())

        body = page()
        rows = len(re.findall(r'<section class="row"', body))
        print(f"GET /approvals: {rows} rows, {len(body) // 1024} KiB, median {median_ms(page):.0f} ms")

        reader = PendingApprovals(table, client)
        print(f"  its Query alone (PendingApprovals.newest): median {median_ms(reader.newest):.0f} ms")
        query = {
            "TableName": table,
            "IndexName": "PendingApprovals",
            "KeyConditionExpression": "inbox = :p",
            "ExpressionAttributeValues": {":p": {"S": "pending"}},
            "ScanIndexForward": False,
        }
        scan = {
            "TableName": table,
            "FilterExpression": "#s = :p AND begins_with(approval_id, :apr)",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":p": {"S": "pending"}, ":apr": {"S": "apr_"}},
        }
        everything = {"TableName": table}  # what a Scan reads (and bills) before its filter
        for label, operation, request, read in (
            ("Query of the index", "query", query, query),
            ("Scan filtered on status", "scan", scan, everything),
        ):
            pages, _, returned, _ = read_all(client, operation, request)
            _, examined, _, size = read_all(client, operation, read)
            taken = median_ms(lambda op=operation, req=request: read_all(client, op, req))
            print(
                f"{label}: {pages} page(s), {examined} items read ({size // 1024} KiB, "
                f"~{size / 4096 * 0.5:.0f} read units), {returned} returned, median {taken:.0f} ms"
            )


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:3]]
    main(*(arguments + [500, 5000][len(arguments) :]))
