"""``GET /v1/tools`` in pages (``limit``, ``cursor``, ``next_cursor``) and with ``q`` (the search tool
through the pipeline: 1 unit, its rate headers), on the local stack: a read-only key, a key without
the permission and an anonymous caller each see, in the listing and in a search alike, only what they
may call."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from urllib.parse import quote

import pytest

from tests.http.conftest import Api
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key


def listing(api: Api, key: str | None, limit: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        path = f"/v1/tools?limit={limit}" + (f"&cursor={quote(cursor)}" if cursor else "")
        reply = api.request("GET", path, key=key)
        assert reply.status == 200, reply.body
        data = reply.json()["data"]
        pages.append([tool["name"] for tool in data["tools"]])
        cursor = data["next_cursor"]
        if cursor is None:
            return pages


def searched(api: Api, key: str | None, query: str) -> set[str]:
    reply = api.request("GET", f"/v1/tools?q={quote(query)}&limit=50", key=key)
    assert reply.status == 200, reply.body
    assert "ratelimit" in reply.headers  # a read through the pipeline: it spends a unit
    return {tool["name"] for tool in reply.json()["data"]["tools"]}


@pytest.fixture(scope="module")
def callers(store: DynamoDBKeyStore) -> dict[str, str | None]:
    owner = f"listing-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    stranger = f"listing-none-{uuid.uuid4().hex[:6]}"
    store.grant(stranger, ["elsewhere"], datetime.now(UTC))
    return {
        "full": issue_key(store, owner=owner, scopes=["catalogue.*"])[0],
        "read_only": issue_key(store, owner=owner, scopes=["catalogue.products:read"])[0],
        "no_permission": issue_key(store, owner=stranger, scopes=["catalogue.*"])[0],
        "anonymous": None,
    }


@pytest.mark.parametrize("caller", ["full", "read_only", "no_permission", "anonymous"])
def test_pages_and_search_show_the_same_tools_the_caller_may_call(
    api: Api, callers: dict[str, str | None], caller: str
) -> None:
    key = callers[caller]
    pages = listing(api, key, 3)
    names = [name for page in pages for name in page]
    assert names == sorted(set(names)) and all(len(page) <= 3 for page in pages)
    whole = api.request("GET", "/v1/tools", key=key).json()["data"]
    assert [tool["name"] for tool in whole["tools"]] == names and whole["next_cursor"] is None
    found = searched(api, key, "product catalogue price tool actor approval guest newsletter session")
    assert found <= set(names)
    catalogue = {name for name in names if name.startswith("catalogue.")}
    if caller == "full":
        assert "catalogue.delete_product" in catalogue and "catalogue.delete_product" in searched(
            api, key, "remove a product"
        )
    elif caller == "read_only":
        assert catalogue and all("delete" not in n and "create" not in n for n in catalogue)
        assert "catalogue.delete_product" not in searched(api, key, "remove a product")
    else:
        assert not catalogue and not {n for n in searched(api, key, "remove a product") if "catalogue" in n}


@pytest.mark.parametrize(
    ("query", "field"), [("limit=0", "limit"), ("limit=501", "limit"), ("cursor=nope", "cursor")]
)
def test_a_bad_limit_or_cursor_is_invalid_input_naming_it(api: Api, query: str, field: str) -> None:
    reply = api.request("GET", f"/v1/tools?{query}")
    assert reply.status == 422 and reply.json()["error"]["code"] == "invalid_input"
    assert reply.json()["error"]["details"]["field"] == field
