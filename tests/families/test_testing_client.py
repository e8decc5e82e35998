"""``toolfront.testing`` on the shipped catalogue family: its tools called in-process through the
real pipeline on moto, as the caller the family needs, as another caller, without a key, and over
the family's MCP endpoint. (tests/families shares no stack: each module starts its own.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolfront.testing import FamilyClient, local_family
from toolfront_dev.devinfo import DEV_JSON

PROJECT_DIR = Path(__file__).resolve().parents[2]
MUG = {"sku": "MUG-1", "name": "Mug", "price_cents": 1200, "currency": "EUR"}


@pytest.fixture(scope="module")
def catalogue() -> Iterator[FamilyClient]:
    dev_json = PROJECT_DIR / DEV_JSON
    before = dev_json.read_bytes() if dev_json.exists() else None
    with local_family("catalogue", project=PROJECT_DIR) as client:
        yield client
    after = dev_json.read_bytes() if dev_json.exists() else None
    assert after == before, "a test stack must leave the project's dev.json (a running `make dev`'s) alone"


def test_the_default_caller_holds_the_familys_scopes_and_permission(catalogue: FamilyClient) -> None:
    created = catalogue.call("create_product", MUG)
    assert (created.status, created.data) == (200, {"product": MUG})
    assert catalogue.call("catalogue.get_product", {"sku": "MUG-1"}).data == {"product": MUG}
    assert created.headers["RateLimit-Policy"]  # the real pipeline's headers


def test_errors_come_with_their_code(catalogue: FamilyClient) -> None:
    missing = catalogue.call("get_product", {"sku": "NOPE"})
    assert (missing.status, missing.error_code, missing.data) == (404, "not_found", None)
    invalid = catalogue.call("get_product", {})
    assert (invalid.status, invalid.error_code) == (422, "invalid_input")


def test_a_retry_with_the_key_gets_the_first_answer(catalogue: FamilyClient) -> None:
    first = catalogue.call("create_product", {**MUG, "sku": "MUG-2"}, idempotency_key="k-1")
    again = catalogue.call("create_product", {**MUG, "sku": "MUG-2"}, idempotency_key="k-1")
    assert first.status == again.status == 200
    assert again.headers.get("Idempotent-Replayed") == "true"


def test_other_callers_are_refused_as_the_contract_says(catalogue: FamilyClient) -> None:
    assert catalogue.caller().call("list_products").error_code == "missing_scope"
    no_permission = catalogue.caller(scopes=["catalogue.products:read"]).call("list_products")
    assert (no_permission.status, no_permission.error_code) == (403, "missing_permission")
    reader = catalogue.caller(scopes=["catalogue.products:read"], permissions=["catalogue"])
    assert reader.call("list_products").status == 200
    assert catalogue.caller(key=False).call("list_products").status == 401


def test_a_dangerous_call_is_held(catalogue: FamilyClient) -> None:
    held = catalogue.call("delete_product", {"sku": "MUG-1"})
    assert (held.status, held.data["status"]) == (202, "pending_approval")


def test_the_familys_mcp_endpoint(catalogue: FamilyClient) -> None:
    listed = catalogue.mcp("tools/list").body["result"]["tools"]
    assert "catalogue-get_product" in {tool["name"] for tool in listed}
    called = catalogue.mcp("tools/call", {"name": "catalogue-get_product", "arguments": {"sku": "MUG-1"}})
    assert called.body["result"]["structuredContent"] == {"product": MUG}


def test_a_project_without_a_template_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LookupError, match=r"no template\.yaml in .* or above: pass project="):  # noqa: SIM117
        with local_family("catalogue"):
            pass
