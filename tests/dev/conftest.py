"""Fixtures for the local development stack: one running stack, free ports and a tiny HTTP client."""

from __future__ import annotations

import http.client
import json
import os
import socket
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolfront_dev.stack import LocalStack

PROJECT_DIR = Path(__file__).resolve().parents[2]


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


def free_port() -> int:
    """A port that was free a moment ago (bound to port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(name="fetch")
def fetch_fixture() -> Fetch:
    return fetch


# Package scope: one stack for every test of tests/dev, stopped when the last of them is done, so its
# os.environ changes (AWS_ENDPOINT_URL...) and moto's global state never reach other test folders.
@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    dev_json = tmp_path_factory.mktemp("toolfront") / "dev.json"
    environment_before = _environment()
    local = LocalStack(PROJECT_DIR, "127.0.0.1", 0, 0, dev_json_path=dev_json).start()
    try:
        yield local
    finally:
        local.stop()
    # Stopping gives the process its environment back (AWS_ENDPOINT_URL, table names, MOTO_PORT...).
    assert _environment() == environment_before


def _environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST"}
