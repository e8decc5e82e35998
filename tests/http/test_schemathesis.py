"""Property tests of the running stack against its OpenAPI document (schemathesis).

The operations are generated from the document the code builds, and the first thing the run
checks is that the stack serves exactly that document, so what is tested is what a client reads.
(``schemathesis.pytest.from_fixture``, which would load it from the stack, reads
``request.node._nodeid``, which pytest 9.2 no longer has.) Every operation gets a bounded,
derandomized run (examples, coverage and fuzzing phases; valid and invalid inputs) with one admin
key that may call every tool.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.http.conftest import Api
from toolfront.adapters.openapi.document import build_document
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront.tools.system import all_tools
from toolfront_dev.stack import LocalStack

MAX_EXAMPLES = 20  # per operation, fuzzing phase; the coverage phase adds its own boundary cases
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
]
DOCUMENT = build_document(all_tools())  # a copy of its own: schemathesis may annotate it
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 20260728,
        # "all": schema-valid inputs (positive) as well as invalid ones (negative), for every operation
        "generation": {
            "mode": "all",
            "max-examples": MAX_EXAMPLES,
            "deterministic": True,
            "database": "none",
        },
        "request-timeout": 10,
    }
)
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)


@pytest.fixture(scope="module")
def fuzz_key(store: DynamoDBKeyStore) -> str:
    """An admin key that may call every tool, with a budget no run can spend.

    Anonymous budgets are per IP and every test shares 127.0.0.1, so every case sends this key.
    """
    owner = f"fuzz-{uuid.uuid4().hex[:8]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=1_000_000)[0]


@pytest.fixture(scope="module")
def served(api: Api, stack: LocalStack) -> dict[str, Any]:
    """The stack's own document: the one the cases come from, naming the stack as its server."""
    document: dict[str, Any] = api.request("GET", "/v1/openapi.json").json()
    assert document.pop("servers") == [{"url": stack.api_url}]
    assert document == DOCUMENT
    return document


@schema.parametrize()
def test_stack_answers_as_its_document_says(
    case: schemathesis.Case, stack: LocalStack, fuzz_key: str, served: dict[str, Any]
) -> None:
    response = case.call(base_url=stack.api_url, headers={"Authorization": f"Bearer {fuzz_key}"})
    case.validate_response(response, checks=CHECKS)
    if not _header_key_overridden(case):
        case.validate_response(response, checks=[negative_data_rejection])


def _header_key_overridden(case: schemathesis.Case) -> bool:
    """Whether the body's idempotency_key wins over an Idempotency-Key header (which is then unread).

    The contract takes the key from the body or the header, and the body's comes first: a
    malformed header beside a body key is ignored, not refused, which negative_data_rejection
    (expecting every invalid part to be refused) cannot know.
    """
    headers = {name.lower() for name in case.headers or {}}
    return "idempotency-key" in headers and isinstance(case.body, dict) and "idempotency_key" in case.body
