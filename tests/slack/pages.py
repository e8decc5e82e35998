"""An approver on the approval page over plain HTTP (``ApproverSignIn``): open the link, sign in
through the local managed login, come back with the session, and decide with the page's form."""

from __future__ import annotations

import http.client
import re
import urllib.parse
from collections.abc import Mapping

from tests.http.conftest import Reply

FORM = "application/x-www-form-urlencoded"


class Browser:
    """Cookies kept across requests to one local server (each ``Set-Cookie`` of every answer)."""

    def __init__(self, base_url: str) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.cookies: dict[str, str] = {}

    def request(self, method: str, target: str, fields: Mapping[str, str] | None = None) -> Reply:
        parts = urllib.parse.urlsplit(target)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        body = None
        if fields is not None:
            body, headers["Content-Type"] = urllib.parse.urlencode(fields).encode(), FORM
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    cookie, _, _ = value.partition(";")
                    key, _, kept = cookie.partition("=")
                    self.cookies[key.strip()] = kept.strip()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()


def sign_in_and_decide(base_url: str, link: str, username: str, password: str, decision: str) -> Reply:
    """Sign in from the approval link's page and decide there; the decision's answer."""
    browser = Browser(base_url)
    parts = urllib.parse.urlsplit(link)
    code = urllib.parse.parse_qs(parts.query)["code"][0]
    approval_id = parts.path.rsplit("/", 1)[1]
    start = browser.request(
        "GET", f"/approvals/sign-in?{urllib.parse.urlencode({'approval': approval_id, 'code': code})}"
    )
    assert start.status == 302, start.body
    login = browser.request("POST", start.headers["location"], {"username": username, "password": password})
    assert login.status == 302, login.body
    back = browser.request("GET", login.headers["location"])
    assert back.status == 302, back.body
    page = browser.request("GET", f"{parts.path}?{parts.query}")
    found = re.search(rb'name="csrf" value="([^"]+)"', page.body)
    assert page.status == 200 and found, page.body
    fields = {"code": code, "csrf": found.group(1).decode(), "decision": decision}
    return browser.request("POST", parts.path, fields)
