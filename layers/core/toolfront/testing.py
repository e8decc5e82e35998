"""``toolfront.testing``: a family's tests call its tools in-process, through the real pipeline on moto.

```python
@pytest.fixture(scope="module")
def notes() -> Iterator[FamilyClient]:
    with local_family("notes") as client:  # the local stack of `make dev`, every table of template.yaml
        yield client


def test_add_note(notes: FamilyClient) -> None:
    answer = notes.call("add_note", {"text": "Buy milk"})
    assert answer.status == 200, answer.error
```

The client calls the very handlers ``make dev`` serves (the family's function, its REST route and its
``/mcp/<family>`` endpoint) as a caller holding the family's permission and every scope of its tools;
``client.caller(...)`` makes another caller (fewer scopes, no permission, no key at all). For tests
only: no function ever imports it. The stack itself comes from the development install (``pip install
-e '.[dev]'``: moto, werkzeug), found through the ``toolfront.testing`` entry point ``local_stack``,
so this module (which ships in the layer) never imports the local stack's package.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolfront.tools.definition import Tool

TESTER = "tester"  # the principal the default caller's key belongs to
ENTRY_POINTS = "toolfront.testing"  # the group where a local stack offers itself as ``local_stack``
MCP_VERSION = "2025-11-25"
MODERN_MCP_VERSION = "2026-07-28"


def mcp_request_headers(message: Mapping[str, Any]) -> dict[str, str]:
    """The headers a 2026-07-28 client mirrors from a request's body: ``Mcp-Method`` and, for a
    named target, ``Mcp-Name`` (Base64 in its sentinel when it is not plain ASCII)."""
    from toolfront.adapters.mcp.protocol import BASE64_SENTINEL, NAMED_BY

    headers = {"Mcp-Method": str(message["method"])}
    params = message.get("params") or {}
    target = params.get(NAMED_BY.get(str(message["method"]), ""))
    if isinstance(target, str):
        plain = target.isascii() and target.isprintable() and target == target.strip()
        start, end = BASE64_SENTINEL
        headers["Mcp-Name"] = target if plain else f"{start}{base64.b64encode(target.encode()).decode()}{end}"
    return headers


class TestStack(Protocol):
    """The seam a local stack implements for this client (``toolfront_dev.testing_stack``)."""

    @property
    def app(self) -> Any:
        """The stack's WSGI application: API Gateway and the functions, in this process."""

    @property
    def outbox_path(self) -> Path:
        """Where the stack writes the messages it would send (approvers' links)."""

    def family_tools(self, family: str) -> list[Tool]:
        """The tools ``functions/<family>/app.py`` declares."""

    def issue_key(
        self, *, owner: str, scopes: list[str], permissions: list[str], requires_approval: bool = False
    ) -> str:
        """Grant ``permissions`` to ``owner`` and issue it a key; answer the key."""


class Headers(Mapping[str, str]):
    """An answer's headers, looked up whatever the case of the name (HTTP's rule)."""

    def __init__(self, items: Mapping[str, str]) -> None:
        self._items = {name.lower(): value for name, value in items.items()}

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer: its status, headers and JSON body, with the envelope's parts at hand."""

    status: int
    headers: Mapping[str, str]
    body: Any

    @property
    def data(self) -> Any:
        """The success envelope's ``data`` (``None`` for an error)."""
        return self.body.get("data") if isinstance(self.body, dict) else None

    @property
    def error(self) -> dict[str, Any] | None:
        """The error envelope's ``error`` (``{"code", "message", ...}``), ``None`` for a success."""
        found = self.body.get("error") if isinstance(self.body, dict) else None
        return found if isinstance(found, dict) else None

    @property
    def error_code(self) -> str | None:
        """The error's stable ``code`` (``invalid_input``, ``forbidden``, ...), ``None`` for a success."""
        return None if self.error is None else str(self.error.get("code"))


@dataclass(frozen=True, slots=True)
class FamilyClient:
    """Calls one family's tools on a running local stack as one caller (``key=None``: no key)."""

    family: str
    stack: TestStack
    key: str | None
    headers: Mapping[str, str] = field(default_factory=dict)

    def call(
        self,
        tool: str,
        data: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """``POST /v1/tools/<family>/<verb_noun>`` with ``data`` as the JSON body.

        ``tool`` is ``add_note`` or ``notes.add_note``; ``idempotency_key`` is sent as its header.
        """
        verb_noun = tool.removeprefix(f"{self.family}.")
        sent = dict(headers or {})
        if idempotency_key is not None:
            sent["Idempotency-Key"] = idempotency_key
        return self._post(f"/v1/tools/{self.family}/{verb_noun}", dict(data or {}), sent)

    def mcp(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        path: str | None = None,
        version: str = MCP_VERSION,
    ) -> Answer:
        """One JSON-RPC request to the family's MCP endpoint (``/mcp/<family>``; ``path="/mcp"`` for
        the endpoint of every family); ``body["result"]`` holds the result (``tools/call`` names
        tools the MCP way: ``notes-add_note``). ``version="2026-07-28"`` speaks the revision without
        a handshake (the version in ``params._meta``)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        sent = dict(params or {})
        if version == MODERN_MCP_VERSION:  # no handshake: version and capabilities in every _meta
            sent["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
                **sent.get("_meta", {}),
            }
        if sent:
            message["params"] = sent
        headers = {"MCP-Protocol-Version": version, "Accept": "application/json, text/event-stream"}
        if version == MODERN_MCP_VERSION:
            headers.update(mcp_request_headers(message))
        return self._post(path or f"/mcp/{self.family}", message, headers)

    def caller(
        self,
        *,
        scopes: Sequence[str] | None = None,
        permissions: Sequence[str] = (),
        requires_approval: bool = False,
        key: bool = True,
        owner: str = "other",
    ) -> FamilyClient:
        """Another caller of the same stack: a new key of ``owner`` holding ``permissions`` with
        ``scopes`` (default: none), or no key at all (``key=False``, a public caller)."""
        if not key:
            return FamilyClient(self.family, self.stack, None, self.headers)
        issued = self.stack.issue_key(
            owner=owner,
            scopes=list(scopes or ()),
            permissions=list(permissions),
            requires_approval=requires_approval,
        )
        return FamilyClient(self.family, self.stack, issued, self.headers)

    def _post(self, path: str, body: Any, headers: Mapping[str, str]) -> Answer:
        from werkzeug.test import Client

        sent = {"Content-Type": "application/json", **self.headers, **headers}
        if self.key is not None:
            sent["Authorization"] = f"Bearer {self.key}"
        response = Client(self.stack.app).post(path, data=json.dumps(body), headers=sent)
        text = response.get_data()
        try:
            parsed: Any = json.loads(text) if text else None
        except ValueError:
            parsed = text  # raw bytes (an exact Accept of a binary answer)
        return Answer(response.status_code, Headers(dict(response.headers)), parsed)


@contextmanager
def local_family(
    family: str, *, project: Path | str | None = None, parameters: Mapping[str, str] | None = None
) -> Iterator[FamilyClient]:
    """The local stack of ``project`` (default: the folder holding template.yaml, from here up),
    started for the block, and a client of ``family`` whose key holds every scope of the family's
    tools and whose owner holds their permissions.

    Raises:
        LookupError: no template.yaml here or above, or ``family`` declares no tools.
    """
    root = Path(project) if project is not None else _project_root(Path.cwd())
    with open_stack(root, parameters) as stack:
        tools = stack.family_tools(family)
        if not tools:
            raise LookupError(f"functions/{family}/app.py declares no tools")
        scopes = sorted({t.scope for t in tools if t.scope})
        permissions = sorted({t.permission for t in tools if t.permission})
        yield FamilyClient(
            family, stack, stack.issue_key(owner=TESTER, scopes=scopes, permissions=permissions)
        )


def open_stack(project: Path, parameters: Mapping[str, str] | None) -> AbstractContextManager[TestStack]:
    """The local stack of ``project``, from the installed ``local_stack`` entry point."""
    found = entry_points(group=ENTRY_POINTS, name="local_stack")
    if not found:
        raise LookupError("no local stack is installed: pip install -e '.[dev]' (toolfront_dev)")
    factory = next(iter(found)).load()
    stack: AbstractContextManager[TestStack] = factory(project, parameters)
    return stack


def _project_root(start: Path) -> Path:
    for folder in (start, *start.parents):
        if (folder / "template.yaml").is_file():
            return folder
    raise LookupError(f"no template.yaml in {start} or above: pass project=")
