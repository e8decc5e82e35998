#!/usr/bin/env python3
"""A manual check's browser: signs the seeded user in through the local stack as a person would.

Linked on PATH as ``xdg-open``, ``x-www-browser``, ``sensible-browser`` and ``gio`` (``gio open URL``),
it returns at once, as a real opener does, and after BROWSER_STANDIN_DELAY seconds (default 2:
mcp-remote opens the browser before its callback listener is up) it GETs the authorize URL (the
consent page), posts ``consent_id`` + ``decision=allow``, GETs the local managed login it is sent to,
posts BROWSER_STANDIN_USER / BROWSER_STANDIN_PASSWORD (the README's seeded user by default) and
follows the redirects to the client's loopback callback. Each step is appended to BROWSER_STANDIN_LOG
(passwords and codes never are). Stdlib only; see README.md beside this file.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from html import unescape
from typing import Any

FORM_ACTION = r'<form method="post" action="([^"]+)"'


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Each redirect is followed by hand, so the log shows every hop."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def log(line: str) -> None:
    with open(os.environ.get("BROWSER_STANDIN_LOG", "/tmp/browser-standin.log"), "a") as out:
        out.write(f"{time.strftime('%H:%M:%S')} {line}\n")


def fetch(
    opener: urllib.request.OpenerDirector, url: str, form: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """One GET (or POST of FORM), redirects not followed: (status, Location, body)."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with opener.open(urllib.request.Request(url, data=data), timeout=30) as answer:
            return answer.status, answer.headers.get("Location", ""), answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location", ""), exc.read().decode("utf-8", "replace")


def field(body: str, pattern: str) -> str:
    found = re.search(pattern, body)
    if not found:
        raise RuntimeError(f"not on the page: {pattern}")
    return unescape(found.group(1))


def where(url: str) -> str:
    """Host and path only: query strings carry codes and states."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.netloc}{parts.path}"


def sign_in(url: str) -> None:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect()
    )
    status, _, body = fetch(opener, url)
    log(f"GET consent page {where(url)} -> {status}")
    action = urllib.parse.urljoin(url, field(body, FORM_ACTION))
    consent = {"consent_id": field(body, r'name="consent_id" value="([^"]+)"'), "decision": "allow"}
    status, location, _ = fetch(opener, action, consent)
    log(f"POST consent allow -> {status} {where(location)}")
    status, _, body = fetch(opener, location)
    log(f"GET managed login -> {status}")
    login = urllib.parse.urljoin(location, field(body, FORM_ACTION))
    user = os.environ.get("BROWSER_STANDIN_USER", "ann@example.com")
    password = os.environ.get("BROWSER_STANDIN_PASSWORD", "Correct-Horse-42-battery")
    status, location, _ = fetch(opener, login, {"username": user, "password": password})
    log(f"POST sign-in as {user} -> {status} {where(location)}")
    for _ in range(5):  # to the client's loopback callback, through the facade's if there is one
        if not location:
            break
        status, location, body = fetch(opener, location)
        log(f"GET redirect -> {status} {where(location) if location else ' '.join(body.split())[:80]}")


def main() -> None:
    urls = [arg for arg in sys.argv[1:] if arg.startswith(("http://", "https://"))]
    if not urls:
        sys.exit(3)  # what xdg-open answers when it cannot open something
    if os.fork():
        return
    os.setsid()
    time.sleep(float(os.environ.get("BROWSER_STANDIN_DELAY", "2")))
    try:
        sign_in(urls[0])
    except Exception as exc:
        log(f"FAILED: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
