"""Clients generated from the document the stack serves (``GET /v1/openapi.json``), driving the
README's REST flow against it: a read, a keyed create and its retry, a held delete, its approval by
a person (the link of the outbox, as tests/http/test_approvals.py decides), and the held call's end.

- Python: openapi-python-client 0.29.1 (``.venv-openapi``; any generator warning fails), the flow in
  ``tests/openapi_clients/flow.py``, run by that venv's Python.
- TypeScript: openapi-typescript 7.13.0 and openapi-fetch 0.17.0 (``tests/openapi_ts``), the flow in
  ``tests/openapi_ts/flow.mts``, checked by ``tsc --strict --noEmit`` (no cast in it), run by node.

Both are built in a temporary folder: nothing generated is written into the project.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from tests.http.conftest import PROJECT_DIR, Api
from tests.http.test_approvals import link_of, post
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.stack import LocalStack

OPENAPI_VENV = PROJECT_DIR / ".venv-openapi" / "bin"
PYTHON_FLOW = PROJECT_DIR / "tests" / "openapi_clients" / "flow.py"
TS_DIR = PROJECT_DIR / "tests" / "openapi_ts"
TS_BIN = TS_DIR / "node_modules" / ".bin"
BLOCKS = {"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink"}
Flow = Callable[..., dict[str, Any]]


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``command`` with a PATH of the system's and ``env``; fails the test, output shown, unless 0."""
    done = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,  # the return code is asserted with the output
        env={"PATH": f"{env.pop('PATH', '')}:/usr/local/bin:/usr/bin:/bin", "NO_PROXY": "*", **env},
    )
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def served(api: Api, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stack's own document, written to a folder of this module."""
    reply = api.request("GET", "/v1/openapi.json")
    assert reply.status == 200
    validate(reply.json())
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_bytes(reply.body)
    return path


@pytest.fixture(scope="module")
def key(store: DynamoDBKeyStore) -> str:
    owner = f"openapi-{uuid.uuid4().hex[:8]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]


def drive(flow: Flow, api: Api, stack: LocalStack) -> dict[str, Any]:
    """Both phases of a flow, a person approving the held delete in between."""
    sku = f"GEN-{uuid.uuid4().hex[:8]}"
    hold = flow("hold", sku)
    path, code = link_of(stack, hold["held"]["approval_id"])
    assert post(api, path, code=code, decision="approve").status == 200
    return {"sku": sku, "hold": hold, "settle": flow("settle", sku, hold["held"]["approval_id"])}


def assert_the_readme_flow(seen: dict[str, Any]) -> None:
    hold, settle, sku = seen["hold"], seen["settle"], seen["sku"]
    product = {"sku": sku, "name": hold["created"]["product"]["name"], "price_cents": 1500, "currency": "EUR"}
    assert hold["created"] == {"status": 200, "product": product}
    assert hold["retried"] == {"status": 200, "replayed": "true", "same": True}  # the first answer back
    assert hold["got"] == product
    assert hold["exported"]["count"] >= 1 and "text/csv" in hold["exported"]["mime_types"]
    assert hold["held"]["status"] == 202 and hold["held"]["data_status"] == "pending_approval"
    assert settle == {
        "status": "succeeded",
        "result": {"deleted": sku},
        "decided_by": "link",
        "route_status": "succeeded",
        "after": {"status": 404, "code": "not_found"},
    }


# --- Python: openapi-python-client ----------------------------------------------------------------


@pytest.fixture(scope="module")
def python_client(served: Path) -> Path:
    """The folder holding the generated package ``toolfront_client``."""
    if not (OPENAPI_VENV / "openapi-python-client").exists():
        pytest.fail("run `make install`: it makes .venv-openapi, where openapi-python-client runs")
    generator = str(OPENAPI_VENV / "openapi-python-client")
    command = [generator, "generate", "--path", str(served), "--meta", "none", "--fail-on-warning"]
    # its post-hooks format the code with the venv's ruff
    done = run([*command, "--output-path", "toolfront_client"], served.parent, PATH=str(OPENAPI_VENV))
    said = done.stdout + done.stderr
    assert not re.search(r"warning|unable to|error|not in PATH", said, re.IGNORECASE), said
    return served.parent


@pytest.fixture(scope="module")
def python_flow(python_client: Path, api: Api, stack: LocalStack, key: str) -> dict[str, Any]:
    def flow(*args: str) -> dict[str, Any]:
        phase, sku, *rest = args
        command = [str(OPENAPI_VENV / "python"), str(PYTHON_FLOW), phase, stack.api_url, key, sku, *rest]
        found: dict[str, Any] = json.loads(run(command, python_client, PYTHONPATH=str(python_client)).stdout)
        return found

    return drive(flow, api, stack)


def test_python_client_has_a_model_per_content_block_kind(python_client: Path) -> None:
    models = {path.stem for path in (python_client / "toolfront_client" / "models").glob("*.py")}
    assert {"text_content", "image_content", "audio_content", "embedded_resource", "resource_link"} <= models
    assert "resource_contents" in models and not [name for name in models if "type_" in name]


def test_python_client_drives_the_readme_flow(python_flow: dict[str, Any]) -> None:
    assert_the_readme_flow(python_flow)


def test_python_client_parses_content_blocks_into_their_models(python_flow: dict[str, Any]) -> None:
    hold = python_flow["hold"]
    assert hold["exported"]["blocks"] == ["EmbeddedResource"]
    assert hold["label"]["sku"] == python_flow["sku"]
    assert hold["label"]["blocks"] and set(hold["label"]["blocks"]) <= BLOCKS


# --- TypeScript: openapi-typescript + openapi-fetch -----------------------------------------------


@pytest.fixture(scope="module")
def typescript_client(served: Path) -> Path:
    """A folder with the flow, its generated types, and the flow compiled (``build/flow.mjs``)."""
    if shutil.which("node") is None or not (TS_BIN / "openapi-typescript").exists():
        pytest.fail("node and tests/openapi_ts/node_modules are needed: run `make install`")
    folder = served.parent / "ts"
    folder.mkdir()
    for name in ("flow.mts", "tsconfig.json", "package.json"):
        shutil.copy(TS_DIR / name, folder / name)
    (folder / "node_modules").symlink_to(TS_DIR / "node_modules", target_is_directory=True)
    generated = run([str(TS_BIN / "openapi-typescript"), str(served), "-o", "schema.d.ts"], folder)
    assert not re.search(r"warn|error|⚠", generated.stdout + generated.stderr, re.IGNORECASE), (
        generated.stderr
    )
    run([str(TS_BIN / "tsc"), "-p", "tsconfig.json", "--strict", "--noEmit"], folder)
    run([str(TS_BIN / "tsc"), "-p", "tsconfig.json", "--noCheck"], folder)  # checked above: emit only
    return folder


@pytest.fixture(scope="module")
def typescript_flow(typescript_client: Path, api: Api, stack: LocalStack, key: str) -> dict[str, Any]:
    def flow(*args: str) -> dict[str, Any]:
        phase, sku, *rest = args
        command = ["node", "build/flow.mjs", phase, stack.api_url, key, sku, *rest]
        node = shutil.which("node")
        assert node is not None
        found: dict[str, Any] = json.loads(
            run(command, typescript_client, PATH=str(Path(node).parent)).stdout
        )
        return found

    return drive(flow, api, stack)


def test_typescript_flow_narrows_without_a_cast() -> None:
    code = "\n".join(
        line
        for line in (TS_DIR / "flow.mts").read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith(("import ", "*", "/*", "//"))
    )
    assert not re.search(r"\bas\b|\bany\b|@ts-|\w!\.", code)


def test_typescript_client_drives_the_readme_flow(typescript_flow: dict[str, Any]) -> None:
    assert_the_readme_flow(typescript_flow)
    assert typescript_flow["hold"]["exported"]["blocks"] == ["resource"]
