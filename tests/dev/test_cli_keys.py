"""``toolfront keys`` and ``toolfront principals`` against the running local stack, checked over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.dev.conftest import Fetch, Reply, Toolfront
from toolfront_dev.stack import LocalStack

TOOLFRONT = Path(sys.executable).parent / "toolfront"
LIST_PRODUCTS = "/v1/tools/catalogue/list_products"


@pytest.fixture
def local(local_project: Path) -> tuple[str, ...]:
    """The target arguments naming the test stack."""
    return ("--local", "--project", str(local_project))


@pytest.fixture
def owner() -> str:
    return f"owner-{uuid.uuid4().hex[:8]}"


def list_products(fetch: Fetch, stack: LocalStack, key: str) -> Reply:
    return fetch(
        f"{stack.api_url}{LIST_PRODUCTS}",
        method="POST",
        body=b"{}",
        headers=[("Authorization", f"Bearer {key}"), ("Content-Type", "application/json")],
    )


def create_key(toolfront: Toolfront, local: tuple[str, ...], owner: str, *options: str) -> dict[str, object]:
    outcome = toolfront(
        "keys", "create", *local, "--owner", owner, "--scope", "catalogue.*", "--json", *options
    )
    assert outcome.code == 0, outcome.err
    created: dict[str, object] = outcome.json()
    return created


def test_keys_create_json_prints_key_and_its_record(toolfront: Toolfront, local: tuple[str, ...]) -> None:
    outcome = toolfront(
        "keys",
        "create",
        *local,
        "--owner",
        "alice",
        "--scope",
        "catalogue.products:read",
        "--scope",
        "catalogue.products:*",
        "--requires-approval",
        "--json",
    )

    created = outcome.json()
    assert outcome.code == 0
    assert list(created) == [
        "key",
        "key_id",
        "owner",
        "scopes",
        "requires_approval",
        "expires_at",
        "rate_limit",
        "lease",
    ]
    assert created["lease"] is None
    assert created["key"].startswith(f"tfk_{created['key_id']}_")
    assert created["owner"] == "alice"
    assert created["scopes"] == ["catalogue.products:*", "catalogue.products:read"]
    assert created["requires_approval"] is True
    assert created["expires_at"] is None
    assert "cannot be shown again" in outcome.err


def test_keys_create_text_prints_key_alone_on_stdout_and_warning_on_stderr(
    toolfront: Toolfront, local: tuple[str, ...]
) -> None:
    outcome = toolfront("keys", "create", *local, "--owner", "bob", "--scope", "catalogue.*")

    assert outcome.code == 0
    key = outcome.out.strip()
    assert key.startswith("tfk_") and "\n" not in key
    assert "cannot be shown again" in outcome.err
    assert key not in outcome.err


def test_keys_create_expires_in_sets_expiry_that_far_ahead(
    toolfront: Toolfront, local: tuple[str, ...], owner: str
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    created = create_key(toolfront, local, owner, "--expires-in", "2h")

    expires_at = datetime.fromisoformat(str(created["expires_at"]).replace("Z", "+00:00"))
    assert before + timedelta(hours=2) <= expires_at <= datetime.now(UTC) + timedelta(hours=2)


def test_keys_create_rate_limit_becomes_the_keys_bucket(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, fetch: Fetch, stack: LocalStack
) -> None:
    assert toolfront("principals", "grant", *local, owner, "--permission", "catalogue").code == 0
    created = create_key(toolfront, local, owner, "--rate-limit", "7")
    assert created["rate_limit"] == 7
    reply = list_products(fetch, stack, str(created["key"]))
    assert reply.status == 200
    assert reply.headers["ratelimit-policy"] == '"default";q=7;w=60'


def test_keys_create_lease_is_kept_and_keys_lease_changes_or_removes_it(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, fetch: Fetch, stack: LocalStack
) -> None:
    assert toolfront("principals", "grant", *local, owner, "--permission", "catalogue").code == 0
    created = create_key(toolfront, local, owner, "--lease", "20")
    assert created["lease"] == 20
    replies = [list_products(fetch, stack, str(created["key"])) for _ in range(3)]
    assert [reply.status for reply in replies] == [200, 200, 200]
    changed = toolfront("keys", "lease", str(created["key_id"]), "5", *local, "--json")
    assert changed.code == 0 and changed.json()["lease"] == 5
    removed = toolfront("keys", "lease", str(created["key_id"]), "off", *local)
    assert removed.code == 0 and "no lease" in removed.out
    listed = toolfront("keys", "list", *local, "--json").json()
    assert [key["lease"] for key in listed if key["key_id"] == created["key_id"]] == [None]


@pytest.mark.parametrize(
    ("value", "why"), [("1", "at least 2"), ("0", "at least 1"), ("many", "whole number")]
)
def test_a_lease_under_two_units_or_not_a_number_is_refused(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, value: str, why: str
) -> None:
    outcome = toolfront(
        "keys", "create", *local, "--owner", owner, "--scope", "catalogue.*", "--lease", value
    )
    assert outcome.code == 2 and why in outcome.err
    created = create_key(toolfront, local, owner)
    refused = toolfront("keys", "lease", str(created["key_id"]), value, *local)
    assert refused.code != 0 and why in refused.err


def test_keys_lease_of_an_unknown_key_exits_1_naming_it(toolfront: Toolfront, local: tuple[str, ...]) -> None:
    outcome = toolfront("keys", "lease", "nosuchkey000", "10", *local)
    assert outcome.code == 1 and "nosuchkey000" in outcome.err


def test_keys_list_shows_created_key_without_secret_or_hash(
    toolfront: Toolfront, local: tuple[str, ...], owner: str
) -> None:
    created = create_key(toolfront, local, owner, "--description", "for the list test")
    secret = str(created["key"])[-32:]

    table = toolfront("keys", "list", *local)

    assert table.code == 0
    row = next(line for line in table.out.splitlines() if str(created["key_id"]) in line)
    assert row.split()[:6] == [created["key_id"], owner, "catalogue.*", "no", "never", "no"]
    assert "for the list test" in row
    assert secret not in table.out
    assert "hash" not in table.out.lower()


def test_keys_list_json_lists_describe_of_each_key_without_hash(
    toolfront: Toolfront, local: tuple[str, ...], owner: str
) -> None:
    created = create_key(toolfront, local, owner)

    listed = toolfront("keys", "list", *local, "--json").json()

    mine = [entry for entry in listed if entry["key_id"] == created["key_id"]]
    assert len(mine) == 1
    documented = {"key_id", "owner", "scopes", "requires_approval", "created_at", "expires_at", "revoked_at"}
    assert set(mine[0]) >= documented | {"description"}
    assert "secret_hash" not in mine[0]
    assert str(created["key"])[-32:] not in json.dumps(listed)


def test_key_created_by_cli_without_owner_permission_answers_403(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, fetch: Fetch, stack: LocalStack
) -> None:
    key = str(create_key(toolfront, local, owner)["key"])

    reply = list_products(fetch, stack, key)

    assert reply.status == 403
    assert reply.json()["error"]["code"] == "missing_permission"


def test_principals_grant_then_cli_key_lists_products_200(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, fetch: Fetch, stack: LocalStack
) -> None:
    key = str(create_key(toolfront, local, owner)["key"])

    granted = toolfront("principals", "grant", owner, "--permission", "catalogue", *local)
    reply = list_products(fetch, stack, key)

    assert (granted.code, granted.out) == (0, f"{owner}: catalogue\n")
    assert reply.status == 200
    assert isinstance(reply.json()["data"]["products"], list)


def test_keys_revoke_then_the_same_call_answers_401(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, fetch: Fetch, stack: LocalStack
) -> None:
    created = create_key(toolfront, local, owner)
    toolfront("principals", "grant", owner, "--permission", "catalogue", *local)
    assert list_products(fetch, stack, str(created["key"])).status == 200

    revoked = toolfront("keys", "revoke", str(created["key_id"]), *local)

    assert revoked.code == 0
    assert f"revoked key {created['key_id']}" in revoked.out
    assert list_products(fetch, stack, str(created["key"])).status == 401


def test_keys_revoke_json_shows_revoked_at_and_list_agrees(
    toolfront: Toolfront, local: tuple[str, ...], owner: str
) -> None:
    key_id = str(create_key(toolfront, local, owner)["key_id"])

    revoked = toolfront("keys", "revoke", key_id, *local, "--json").json()
    listed = next(e for e in toolfront("keys", "list", *local, "--json").json() if e["key_id"] == key_id)

    assert revoked["revoked_at"] is not None
    assert listed == revoked


def test_keys_revoke_unknown_key_exits_1_naming_it(toolfront: Toolfront, local: tuple[str, ...]) -> None:
    outcome = toolfront("keys", "revoke", "nosuchkey000", *local)

    assert outcome.code == 1
    assert "no key with id 'nosuchkey000'" in outcome.err
    assert "Traceback" not in outcome.err


def test_principals_revoke_permission_then_key_answers_403(
    toolfront: Toolfront, local: tuple[str, ...], owner: str, fetch: Fetch, stack: LocalStack
) -> None:
    key = str(create_key(toolfront, local, owner)["key"])
    toolfront("principals", "grant", owner, "--permission", "catalogue", "--permission", "orders", *local)

    revoked = toolfront("principals", "revoke", owner, "--permission", "catalogue", *local, "--json")

    assert revoked.json() == {"principal_id": owner, "permissions": ["orders"]}
    assert list_products(fetch, stack, key).status == 403


def test_cli_keys_create_local_json_subprocess_reads_dev_json_of_cwd(
    local_project: Path, owner: str, toolfront: Toolfront, fetch: Fetch, stack: LocalStack
) -> None:
    finished = subprocess.run(
        [str(TOOLFRONT), "keys", "create", "--local", "--json", "--owner", owner, "--scope", "catalogue.*"],
        cwd=local_project,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    toolfront(
        "principals", "grant", owner, "--permission", "catalogue", "--local", "--project", local_project
    )

    assert finished.returncode == 0, finished.stderr
    created = json.loads(finished.stdout)
    assert created["owner"] == owner
    assert list_products(fetch, stack, created["key"]).status == 200
