"""``toolfront dev --seed FILE`` and the demo admin: seed files checked up front, keys that work over HTTP."""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.dev.conftest import Fetch, Reply, Toolfront, copy_project
from tests.helpers import free_port
from toolfront_dev.aws import dynamodb_client
from toolfront_dev.errors import SeedError
from toolfront_dev.seeds import DEMO_PRINCIPAL, load_seed, parse_seed, seed_store
from toolfront_dev.stack import LocalStack
from toolfront_dev.targets import key_store

TOOLFRONT = Path(sys.executable).parent / "toolfront"
LIST_PRODUCTS = "/v1/tools/catalogue/list_products"
START_TIMEOUT_SECONDS = 20
ALICE_KEY = "tfk_alice0000001_" + "A" * 32
EXPIRED_KEY = "tfk_expired00001_" + "B" * 32
ALICE_PASSWORD = "Alice-Secret-2030"
GOOD_SEED: dict[str, Any] = {
    "principals": [{"id": "alice", "permissions": ["catalogue"]}],
    "keys": [
        {
            "key": ALICE_KEY,
            "owner": "alice",
            "scopes": ["catalogue.products:read"],
            "requires_approval": False,
            "expires_at": None,
        },
        {
            "key": EXPIRED_KEY,
            "owner": "alice",
            "scopes": ["catalogue.*"],
            "requires_approval": True,
            "expires_at": "2020-01-01T00:00:00Z",
        },
    ],
    "users": [
        {
            "username": "alice@example.com",
            "password": ALICE_PASSWORD,
            "groups": ["alice"],
            "scopes": ["catalogue.products:read"],
        }
    ],
}


def with_key(**changes: Any) -> dict[str, Any]:
    """GOOD_SEED with its first key changed (a field set to ``...`` is removed)."""
    entry = {**GOOD_SEED["keys"][0], **changes}
    return {**GOOD_SEED, "keys": [{k: v for k, v in entry.items() if v is not ...}]}


def list_products(fetch: Fetch, api_url: str, key: str) -> Reply:
    return fetch(
        f"{api_url}{LIST_PRODUCTS}",
        method="POST",
        body=b"{}",
        headers=[("Authorization", f"Bearer {key}"), ("Content-Type", "application/json")],
    )


def problem_of(document: Any) -> str:
    with pytest.raises(SeedError) as raised:
        parse_seed(document, source="seed.json")
    return str(raised.value)


# --- checking a seed file ---------------------------------------------------------------------


def test_parse_seed_good_document_gives_principals_and_keys() -> None:
    seed = parse_seed(GOOD_SEED)

    assert [(p.principal_id, p.permissions) for p in seed.principals] == [("alice", ("catalogue",))]
    assert [k.key for k in seed.keys] == [ALICE_KEY, EXPIRED_KEY]
    assert seed.keys[1].expires_at == datetime(2020, 1, 1, tzinfo=UTC)
    assert seed.keys[1].requires_approval is True


def test_parse_seed_bad_key_format_names_entry_without_echoing_the_key() -> None:
    message = problem_of(with_key(key="tfk_short_" + "S" * 40))

    assert "keys[0] (owner 'alice'): bad key format" in message
    assert "S" * 40 not in message


def test_parse_seed_unknown_field_names_entry_and_field() -> None:
    message = problem_of(with_key(expires="2030-01-01T00:00:00Z"))

    assert "keys[0]: unknown field 'expires'" in message


def test_parse_seed_unknown_top_level_field_is_named() -> None:
    assert "unknown field 'groups' (expected principals, keys, users)" in problem_of(
        {**GOOD_SEED, "groups": []}
    )


@pytest.mark.parametrize(
    "value", ["2030-01-01", "tomorrow", "2030-13-01T00:00:00Z", "2030-01-01T00:00:00", 5]
)
def test_parse_seed_bad_date_names_entry_and_value(value: object) -> None:
    message = problem_of(with_key(expires_at=value))

    assert "keys[0] (owner 'alice'): bad date in expires_at" in message
    assert repr(value) in message


def test_parse_seed_missing_owner_and_bad_scope_are_all_reported() -> None:
    document = {"keys": [{**GOOD_SEED["keys"][0], "scopes": ["catalogue"]}, {"key": ALICE_KEY, "scopes": []}]}

    message = problem_of(document)

    assert "keys[0] (owner 'alice'): invalid scope 'catalogue'" in message
    assert "keys[1]: missing field 'owner'" in message


def test_parse_seed_same_key_id_twice_names_both_entries() -> None:
    document = {"keys": [GOOD_SEED["keys"][0], {**GOOD_SEED["keys"][0], "key": ALICE_KEY[:-1] + "C"}]}

    assert "keys[1]: key id 'alice0000001' already used by keys[0]" in problem_of(document)


def test_parse_seed_principal_bad_permission_names_principal() -> None:
    message = problem_of({"principals": [{"id": "bob", "permissions": ["Bad Perm"]}]})

    assert "principals[0] ('bob'): invalid permission 'Bad Perm'" in message


def test_load_seed_not_json_names_file(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text("{not json", encoding="utf-8")

    with pytest.raises(SeedError, match=r"seed file .*seed\.json is not valid JSON"):
        load_seed(path)


def test_load_seed_missing_file_names_file(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match=r"cannot read seed file .*nope\.json"):
        load_seed(tmp_path / "nope.json")


def test_cli_dev_bad_seed_exits_1_before_anything_starts(toolfront: Toolfront, tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(with_key(expires_at="soon")), encoding="utf-8")

    # No template in tmp_path: had the stack started, the error would be about the template.
    outcome = toolfront("dev", "--port", "0", "--project", tmp_path, "--seed", seed)

    assert outcome.code == 1
    assert "keys[0] (owner 'alice'): bad date in expires_at" in outcome.err
    assert "template" not in outcome.err
    assert not (tmp_path / ".toolfront").exists()


# --- seeding a running stack ------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeded(stack: LocalStack) -> str:
    """GOOD_SEED written into the shared stack's tables; the demo admin key that came with it."""
    store = key_store(stack.table_names, dynamodb_client(stack.moto_endpoint), where="test")
    return seed_store(store, parse_seed(GOOD_SEED))


def test_seed_store_seeded_key_of_permitted_owner_answers_200(
    seeded: str, stack: LocalStack, fetch: Fetch
) -> None:
    assert list_products(fetch, stack.api_url, ALICE_KEY).status == 200


def test_seed_store_seeded_expired_key_answers_401(seeded: str, stack: LocalStack, fetch: Fetch) -> None:
    assert list_products(fetch, stack.api_url, EXPIRED_KEY).status == 401


def test_seed_store_answers_working_demo_admin_key(seeded: str, stack: LocalStack, fetch: Fetch) -> None:
    assert list_products(fetch, stack.api_url, seeded).status == 200


def test_stack_start_seeds_demo_admin_and_keeps_its_key_off_disk(
    stack: LocalStack, fetch: Fetch, toolfront: Toolfront, local_project: Path
) -> None:
    assert stack.admin_key is not None
    listed = toolfront("keys", "list", "--local", "--project", local_project, "--json").json()

    assert list_products(fetch, stack.api_url, stack.admin_key).status == 200
    assert any(entry["owner"] == DEMO_PRINCIPAL for entry in listed)
    assert stack.admin_key not in stack.dev_json_path.read_text(encoding="utf-8")


# --- `toolfront dev --seed` as a process: the banner's curl ----------------------------------


class Dev:
    """A running ``toolfront dev`` process and the banner lines it printed."""

    def __init__(self, process: subprocess.Popen[str], banner: list[str]) -> None:
        self.process, self.banner = process, banner

    def line(self, prefix: str) -> str:
        return next(line for line in self.banner if line.startswith(prefix))


def read_banner(process: subprocess.Popen[str]) -> list[str]:
    """stdout lines up to the sample curl (a reader thread, so a hung process cannot hang the test)."""
    stdout = process.stdout
    assert stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    banner: list[str] = []
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not banner or not banner[-1].startswith("try: curl"):
        try:
            banner.append(lines.get(timeout=max(0.0, deadline - time.monotonic())).rstrip("\n"))
        except queue.Empty:
            raise AssertionError(f"no curl line within {START_TIMEOUT_SECONDS} s: {banner}") from None
    return banner


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dev]:
    project = copy_project(tmp_path_factory.mktemp("dev-seed"))
    seed = project / "seed.json"
    seed.write_text(json.dumps(GOOD_SEED), encoding="utf-8")
    command = [str(TOOLFRONT), "dev", "--port", str(free_port()), "--moto-port", str(free_port())]
    with (project / "err.txt").open("w") as err:
        process = subprocess.Popen(
            [*command, "--project", str(project), "--seed", str(seed)],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            yield Dev(process, read_banner(process))
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_cli_dev_banner_curl_pasted_as_is_lists_products(dev: Dev) -> None:
    command = shlex.split(dev.line("try: curl").removeprefix("try: "))
    # The exact command line; only a shell's proxy settings are kept from reaching loopback.
    environment = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}

    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=10, check=False, env=environment
    )

    assert finished.returncode == 0, finished.stderr
    body = json.loads(finished.stdout)
    assert isinstance(body["data"]["products"], list)


def test_cli_dev_banner_prints_admin_key_used_by_the_curl(dev: Dev) -> None:
    key = dev.line("admin key").rsplit(" ", 1)[1]

    assert key.startswith("tfk_")
    assert f"'Authorization: Bearer {key}'" in dev.line("try: curl")


def test_cli_dev_banner_names_managed_login_and_seeded_user_never_the_password(dev: Dev) -> None:
    api_url = dev.line("toolfront dev: API").split()[-1]

    assert dev.line("  managed login") == f"  managed login {api_url}/_cognito/oauth2/authorize"
    expected = "  seeded user alice@example.com (groups alice; scopes catalogue.products:read)"
    assert dev.line("  seeded user") == expected
    assert not any(ALICE_PASSWORD in line for line in dev.banner)


def test_cli_dev_seed_file_key_authenticates_over_http(dev: Dev, fetch: Fetch) -> None:
    api_url = dev.line("toolfront dev: API").split()[-1]

    assert list_products(fetch, api_url, ALICE_KEY).status == 200
