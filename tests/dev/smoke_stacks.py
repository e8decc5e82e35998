"""Stacks of their own for ``test_smoke.py``: ``toolfront dev`` in another process (this one already
runs the shared stack), and a custom domain in front of one that maps the API at a base path."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.dev.conftest import copy_project, fetch
from toolfront_dev.devinfo import DEV_JSON
from toolfront_dev.net import free_port

TOOLFRONT = Path(sys.executable).parent / "toolfront"
START_TIMEOUT_SECONDS = 30


@dataclass(frozen=True, slots=True)
class DevProcess:
    """A ``toolfront dev`` of its own: its project folder, API and moto."""

    project: Path
    api_url: str
    moto_endpoint: str

    def table(self, logical_id: str) -> str:
        info = json.loads((self.project / DEV_JSON).read_text(encoding="utf-8"))
        return str(info["tables"][logical_id])


@contextmanager
def own_stack(folder: Path, *parameters: str, port: int | None = None) -> Iterator[DevProcess]:
    """``toolfront dev`` of a copy of the project in its own process, stopped after the block."""
    project = copy_project(folder)
    port, moto_port = port or free_port(), free_port()
    command = [
        str(TOOLFRONT),
        "dev",
        "--port",
        str(port),
        "--moto-port",
        str(moto_port),
        "--project",
        str(project),
    ]
    command += [arg for parameter in parameters for arg in ("--parameter", parameter)]
    with (folder / "dev.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            api = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while not (project / DEV_JSON).exists() or not _healthy(api):
                assert process.poll() is None, (folder / "dev.log").read_text(encoding="utf-8")
                assert time.monotonic() < deadline, "toolfront dev did not start"
                time.sleep(0.2)
            yield DevProcess(project, api, f"http://127.0.0.1:{moto_port}")
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _healthy(api: str) -> bool:
    try:
        return fetch(f"{api}/health", timeout=1.0).status == 200
    except OSError:
        return False


class BasePathDomain:
    """A custom domain in front of the API: mapped at ``/base`` (the prefix removed, as API Gateway's
    base path mapping does), and at the root too when ``root_mapped``; anything else is API
    Gateway's own 404."""

    def __init__(self, port: int, upstream: str) -> None:
        self.root_mapped = False
        self.url = f"http://127.0.0.1:{port}/base"
        domain = self
        target = upstream.removeprefix("http://")

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                path = self.path
                if path == "/base" or path.startswith(("/base/", "/base?")):
                    path = path[len("/base") :] or "/"
                elif not domain.root_mapped:
                    self._answer(404, {"content-type": "application/json"}, b'{"message":"Not Found"}')
                    return
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                connection = http.client.HTTPConnection(target, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                connection.request(self.command, path, body=body, headers=headers)
                response = connection.getresponse()
                kept = {
                    k: v
                    for k, v in response.getheaders()
                    if k.lower() not in ("transfer-encoding", "connection")
                }
                self._answer(response.status, kept, response.read())
                connection.close()

            def _answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    if name.lower() != "content-length":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _forward

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
