"""Fixtures for the local development stack: one running stack, free ports, a tiny HTTP client, the CLI."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolfront_dev.cli import main
from toolfront_dev.devinfo import DEV_JSON
from toolfront_dev.lambdas import is_patched
from toolfront_dev.seeds import parse_seed
from toolfront_dev.stack import LocalStack

PROJECT_DIR = Path(__file__).resolve().parents[2]
#: The shared stack's seed: one Cognito user, whose group names a principal holding ``catalogue``.
USER_EMAIL = "ann@example.com"
USER_PASSWORD = "Correct-Horse-42"
USER_GROUP = "catalogue_team"
USER_SCOPES = ("catalogue.products:read",)
SHARED_SEED: dict[str, Any] = {
    "principals": [{"id": USER_GROUP, "permissions": ["catalogue"]}],
    "users": [
        {
            "username": USER_EMAIL,
            "password": USER_PASSWORD,
            "groups": [USER_GROUP],
            "scopes": list(USER_SCOPES),
        }
    ],
}


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP response, read in full."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Fetch = Callable[..., Reply]


def fetch(
    url: str,
    method: str = "GET",
    body: bytes | None = None,
    headers: list[tuple[str, str]] | None = None,
    timeout: float = 5.0,
) -> Reply:
    """Send one request with http.client (repeated header names allowed, no proxies)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.putrequest(method, target)
        for name, value in headers or []:
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        received = {
            name.lower(): value for name, value in response.getheaders() if name.lower() != "set-cookie"
        }
        cookies = response.headers.get_all("Set-Cookie") or []
        if cookies:
            received["set-cookie"] = "\n".join(cookies)
        return Reply(response.status, received, response.read())
    finally:
        connection.close()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one in-process run of the ``toolfront`` CLI did."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Toolfront = Callable[..., Outcome]


def copy_project(target: Path) -> Path:
    """template.yaml, functions/ and statemachines/ in ``target``: a run writes its dev.json there."""
    shutil.copy(PROJECT_DIR / "template.yaml", target / "template.yaml")
    for folder in ("functions", "statemachines"):
        shutil.copytree(PROJECT_DIR / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture(name="toolfront")
def toolfront_fixture(capsys: pytest.CaptureFixture[str]) -> Toolfront:
    """``toolfront(*argv)`` runs ``toolfront_dev.cli.main`` and answers its exit status and output.

    A usage error (argparse's SystemExit) answers its exit status like any other run.
    """

    def run(*argv: str | Path) -> Outcome:
        capsys.readouterr()
        try:
            code = main([str(arg) for arg in argv])
        except SystemExit as exited:
            code = int(exited.code or 0)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


@pytest.fixture(name="fetch")
def fetch_fixture() -> Fetch:
    return fetch


# Package scope: one stack for every test of tests/dev, stopped when the last of them is done, so its
# os.environ changes (AWS_ENDPOINT_URL...) and moto's global state never reach other test folders.
@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    # Where `toolfront dev --project DIR` would write it, so `--local --project DIR` finds it.
    dev_json = tmp_path_factory.mktemp("project") / DEV_JSON
    environment_before = _environment()
    seed = parse_seed(SHARED_SEED)
    local = LocalStack(PROJECT_DIR, "127.0.0.1", 0, 0, dev_json_path=dev_json, seed=seed).start()
    try:
        yield local
    finally:
        local.stop()
    # Stopping gives the process its environment back (AWS_ENDPOINT_URL, table names, MOTO_PORT...),
    # and moto its own Lambda invoke.
    assert _environment() == environment_before
    assert not is_patched()


@pytest.fixture(scope="package")
def local_project(stack: LocalStack) -> Path:
    """The folder whose ``.toolfront/dev.json`` describes ``stack`` (for ``--local --project``)."""
    return stack.dev_json_path.parents[1]


def _environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST"}
