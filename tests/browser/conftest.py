"""A headless Chromium (Debian's, driven by Playwright) and a tiny server that plays the approvals route.

The server answers like the approvals function: ``GET /approvals/apr_1?code=c0de`` is the decision page
and the form's POST gets the decided page; it records every posted form. Without ``/usr/bin/chromium`` or
the ``playwright`` package the tests are skipped, unless ``TOOLFRONT_REQUIRE_BROWSER`` is set (CI sets
it after ``.ci/install-browser``), in which case they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import approval_pages
from toolfront.adapters.http import PAGE_HEADERS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# --no-sandbox: Chromium refuses to sandbox as root. The rest stop its background connections (updates,
# sync, QUIC probes), which this machine's closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE: ViewportSize = {"width": 390, "height": 844}
APPROVAL_ID, CODE = "apr_1", "c0de"


pages = approval_pages()

VIEW = pages.ApprovalView(
    approval_id=APPROVAL_ID,
    tool="catalogue.delete_product",
    title="Delete a product",
    description="Deletes one product and its stock records for good. Orders keep their copy of it.",
    requester="key k3f9... of alice",
    reason="danger",
    input_json=json.dumps(
        {"sku": "ABC-1", "note": "discontinued by the supplier in 2024; see ticket OPS-4411"}, indent=2
    ),
    created_at="2025-06-01T14:30:00Z",
    expires_at="2025-06-02T14:30:00Z",
    status="pending",
)


@dataclass
class ApprovalSite:
    """The running server: where it listens and every form posted to it, as (name, value) pairs."""

    base_url: str
    posts: list[list[tuple[str, str]]] = field(default_factory=list)

    @property
    def link(self) -> str:
        return f"{self.base_url}/approvals/{APPROVAL_ID}?code={CODE}"


def make_handler(site: ApprovalSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path != f"/approvals/{APPROVAL_ID}":
                self.reply(404, pages.problem_page(404, "Not found", "There is no such approval."))
            elif urllib.parse.parse_qs(url.query).get("code") != [CODE]:
                self.reply(403, pages.problem_page(403, "This link is not valid", "The code is wrong."))
            else:
                self.reply(200, pages.approval_page(VIEW, CODE))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qsl(self.rfile.read(length).decode(), keep_blank_values=True)
            site.posts.append(form)
            values = dict(form)
            if self.path != f"/approvals/{APPROVAL_ID}" or values.get("code") != CODE:
                self.reply(403, pages.problem_page(403, "This link is not valid", "The code is wrong."))
            elif values.get("decision") not in {"approve", "reject"}:
                self.reply(400, pages.problem_page(400, "Unknown decision", "Choose Approve or Reject."))
            else:
                self.reply(200, pages.decided_page(VIEW, values["decision"]))

        def reply(self, status: int, html: str) -> None:
            body = html.encode()
            self.send_response(status)
            for name, value in PAGE_HEADERS.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest's output clean

    return Handler


@pytest.fixture
def site() -> Iterator[ApprovalSite]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.daemon_threads = True
    site = ApprovalSite(base_url=f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = make_handler(site)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="approval-site", daemon=True)
    thread.start()
    yield site
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def missing_browser(reason: str) -> None:
    if os.environ.get("TOOLFRONT_REQUIRE_BROWSER", "") not in {"", "0"}:
        pytest.fail(f"{reason} (TOOLFRONT_REQUIRE_BROWSER is set; run .ci/install-browser)")
    pytest.skip(f"{reason}; run .ci/install-browser to install it")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        missing_browser(f"{CHROMIUM} is missing (Debian package chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing_browser("the Python package playwright is missing")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def phone(browser: Browser, site: ApprovalSite) -> Iterator[Page]:
    """A page in a phone-sized, touch context; fails the test if it fetches anything from elsewhere."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = context.new_page()
    elsewhere: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(site.base_url) else elsewhere.append(r.url))
    yield page
    context.close()
    assert not elsewhere, f"the page fetched from other origins: {elsewhere}"
