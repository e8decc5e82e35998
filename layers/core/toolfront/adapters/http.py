"""The HTTP edge: how every function of ``template.yaml`` reads a request and answers it (the
contract's "One HTTP edge": docs/contract.md).

API Gateway hands each function a payload v2 event; ``Edge`` turns it into one ``Request`` (headers
lower-cased once, the body decoded once), applies the rules every route shares (credentials in the
URL, the 1 MiB body limit, 405 with ``Allow``), runs the route from the function's one table and
answers its ``Response`` with ``X-Request-Id`` and the header set of its kind (JSON, HTML page, raw
bytes, redirect). A refusal is answered in the route's own form (the REST envelope, JSON-RPC, an
OAuth error, an HTML page): each route names its form, so a rule is written once and holds on all.

Standard library only, on purpose: a web framework would cost the cold start more than it gives
(Powertools' resolver alone imports in about 100 ms); the shapes are Starlette's and Chalice's.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from html import escape
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

from toolfront.calls.call import TASK_FIELD
from toolfront.calls.envelopes import error_body
from toolfront.calls.inputs import MAX_BODY_BYTES, parse_json
from toolfront.calls.redaction import refuse_credentials_in_url
from toolfront.errors import (
    InvalidFormError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    ToolfrontError,
    UnsupportedMediaTypeError,
)

Event = dict[str, Any]
_API_ID = re.compile(r"[a-z0-9]{1,32}")
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 16 * 1024  # a form of a few short fields (codes, a decision): anything larger is not one

# --- the header set of each kind of answer, written once ----------------------------------------------
JSON_HEADERS = {"content-type": "application/json", "x-content-type-options": "nosniff"}
#: A page: nothing but inline CSS runs or loads; it posts only to itself and is never framed (a framed
#: Approve or Allow button could be clicked through unseen; frame-ancestors works only as a header).
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": PAGE_CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
#: A tool's bytes (an SVG, say) served from the API's origin, which also serves the approval and consent
#: pages: never sniffed into another type, never running script.
RAW_HEADERS = {"x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox"}
#: A redirect may carry a one-time code in its ``Location``: kept from caches and from the next page.
REDIRECT_HEADERS = {"cache-control": "no-store", "referrer-policy": "no-referrer"}


class Request(NamedTuple):
    """One HTTP request as API Gateway (payload v2) delivers it, read once.

    (Named tuples, and a plain class for ``Response``, rather than dataclasses: creating a dataclass
    generates its code at import, about 2 ms of every function's cold start for these three.)
    """

    route_key: str
    method: str
    path: str
    path_params: Mapping[str, str]
    query: Mapping[str, str]  # API Gateway's: a repeated name's values joined with commas
    raw_query: str
    headers: Mapping[str, str]  # names lower-cased (HTTP names are case-insensitive)
    cookies: Mapping[str, str]
    body: bytes | None
    source_ip: str
    request_id: str
    api_id: str = ""
    function: str = ""  # the invoked function's ARN

    @classmethod
    def of(cls, event: Event, context: Any = None) -> Request:
        http = event.get("requestContext", {}).get("http", {})
        rid = event.get("requestContext", {}).get("requestId")
        return cls(
            route_key=str(event.get("routeKey", "")),
            method=str(http.get("method", "POST")).upper(),
            path=str(event.get("rawPath") or http.get("path", "")),
            path_params={str(k): str(v) for k, v in (event.get("pathParameters") or {}).items()},
            query={str(k): str(v) for k, v in (event.get("queryStringParameters") or {}).items()},
            raw_query=str(event.get("rawQueryString") or ""),
            headers={str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()},
            cookies=_cookies(event.get("cookies") or []),
            body=_body(event),
            source_ip=str(http.get("sourceIp", "")),
            request_id=str(rid) if rid else uuid.uuid4().hex,  # hand-made events carry none
            api_id=str(event.get("requestContext", {}).get("apiId", "")),
            function=str(getattr(context, "invoked_function_arn", "") or ""),
        )

    @property
    def media_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self, *, what: str = "the body") -> Any:
        """The body's JSON value, read by the one JSON reader (``InvalidJsonError`` otherwise)."""
        return parse_json(self.body or b"", what=what)

    def form(self, *, max_bytes: int = MAX_FORM_BYTES) -> dict[str, str]:
        """The fields of a form post (``application/x-www-form-urlencoded``): the one form reader.

        A repeated field is refused (RFC 6749 section 3.1; on a decision form it would be ambiguous);
        a malformed percent-escape becomes U+FFFD, never a lone surrogate. ``max_bytes``: a route
        whose forms carry more (Slack's interactions carry the whole message) says so.
        """
        if self.media_type != FORM_MEDIA_TYPE:
            raise UnsupportedMediaTypeError(f"send the form as {FORM_MEDIA_TYPE}")
        body = self.body or b""
        if len(body) > max_bytes:
            raise InvalidFormError(f"the form is over {max_bytes} bytes")
        return _fields(body.decode("utf-8", "replace"))

    @property
    def query_names(self) -> frozenset[str]:
        """Every name of the query, as API Gateway parsed it and as it was sent."""
        return frozenset(self.query) | {name for name, _ in parse_qsl(self.raw_query, keep_blank_values=True)}

    def query_fields(self) -> dict[str, str]:
        """The query's fields as sent (a repeated name refused, unlike API Gateway's joined ``query``)."""
        return _fields(self.raw_query)

    def base_url(self, public_url: str | None, region: str) -> str:
        """The API's own address: where approvers' links, pages and stored URLs point.

        The configured public URL (``PublicUrl``: a custom domain, or the local stack's own address),
        else the HTTP API's default endpoint built from the API id API Gateway put in the event. Never
        ``Host`` or ``X-Forwarded-*``: a caller sets those, and would get the approvers' link (with its
        single-use code) pointed at a host of its own.
        """
        if public_url:
            return public_url
        if self.api_id and region and _API_ID.fullmatch(self.api_id):
            return f"https://{self.api_id}.execute-api.{region}.amazonaws.com"
        return ""


class Response:
    """What a route answers; ``to_event`` adds ``X-Request-Id`` (every answer carries it)."""

    __slots__ = ("base64", "body", "cookies", "headers", "status")

    def __init__(
        self,
        status: int,
        body: str = "",
        headers: dict[str, str] | None = None,
        cookies: list[str] | None = None,
        base64: bool = False,  # ``body`` is base64 that API Gateway decodes: the client gets the bytes
    ) -> None:
        self.status, self.body, self.base64 = status, body, base64
        self.headers: dict[str, str] = headers if headers is not None else {}
        self.cookies: list[str] = cookies if cookies is not None else []

    def __repr__(self) -> str:
        return f"Response({self.status}, {self.body[:60]!r}, {self.headers!r})"

    @classmethod
    def json(cls, status: int, value: Any, headers: Mapping[str, str] | None = None) -> Response:
        return cls.json_text(status, json.dumps(value, ensure_ascii=False, separators=(",", ":")), headers)

    @classmethod
    def json_text(cls, status: int, text: str, headers: Mapping[str, str] | None = None) -> Response:
        """JSON already encoded (a stored answer is sent byte for byte)."""
        return cls(status, text, {**JSON_HEADERS, **(headers or {})})

    @classmethod
    def page(cls, status: int, html: str, cookies: Iterable[str] = ()) -> Response:
        return cls(status, html, dict(PAGE_HEADERS), list(cookies))

    @classmethod
    def raw(cls, data_base64: str, mime_type: str, headers: Mapping[str, str] | None = None) -> Response:
        return cls(
            200, data_base64, {**(headers or {}), "content-type": mime_type, **RAW_HEADERS}, base64=True
        )

    @classmethod
    def redirect(cls, location: str, cookies: Iterable[str] = ()) -> Response:
        return cls(302, "", {**REDIRECT_HEADERS, "location": location}, list(cookies))

    @classmethod
    def empty(cls, status: int, headers: Mapping[str, str] | None = None) -> Response:
        return cls(status, "", dict(headers or {}))

    def to_event(self, request_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "statusCode": self.status,
            "headers": {**self.headers, "x-request-id": request_id},
            "body": self.body,
            "isBase64Encoded": self.base64,
        }
        if self.cookies:
            answer["cookies"] = list(self.cookies)
        return answer


def plain_page(status: int, title: str, message: str) -> Response:
    """A page saying what went wrong, for a browser's route that has no page of its own here (the
    gateway's 405 on an approval page's address, say)."""
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title></head><body><main><h1>{escape(title)}</h1>"
        f'<p id="message">{escape(message)}</p></main></body></html>'
    )
    return Response.page(status, page)


Handler = Callable[[Request], Response]
#: How a route answers a refusal: the REST envelope, JSON-RPC, an OAuth error, an HTML page.
ErrorForm = Callable[[Request, Exception], Response]


def envelope(request: Request, error: Exception) -> Response:
    """The REST envelope form of a refusal (the default of every route)."""
    assert isinstance(error, ToolfrontError)
    return error_answer(error, request.request_id)


def error_answer(
    error: ToolfrontError, request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """The error envelope (docs/contract.md, "Errors") with the error's status and headers (a 401 says how
    to authenticate)."""
    sent = {**(headers or {}), **error.headers}
    if error.http_status == 401:
        sent["www-authenticate"] = 'Bearer realm="toolfront"'
    return Response.json_text(error.http_status, error_body(error, request_id), sent)


class Route(NamedTuple):
    """One route of a function's table: its handler, its error form, and the query names it may
    carry although they look like credentials (only ``code``, a one-time code by design)."""

    handler: Handler
    form: ErrorForm = envelope
    code_in_query: bool = False


class Edge:
    """A function's ``lambda_handler``: its workflow tasks, then its routes, through the edge's rules.

    ``refusals`` are the exceptions a route's form answers (``ToolfrontError``, and e.g. the OAuth
    facade's own); anything else is a bug, left to Lambda (a 500 and a traceback in the log). A route
    key not in the table is a 405 where a route of the table (or of ``elsewhere``: the API's other
    functions, for the gateway's ``$default``) serves its path with another method, else ``fallback``.
    """

    def __init__(
        self,
        routes: Mapping[str, Route | Handler],
        *,
        tasks: Mapping[str, Callable[[Event, Any], Any]] | None = None,
        refusals: tuple[type[Exception], ...] = (ToolfrontError,),
        fallback: Route | None = None,
        elsewhere: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        self.routes = {key: r if isinstance(r, Route) else Route(r) for key, r in routes.items()}
        self._tasks = dict(tasks or {})
        self._refusals = refusals
        self._fallback = fallback or Route(_not_found)
        self._elsewhere = elsewhere

    def __call__(self, event: Event, context: Any = None) -> Any:
        task = event.get(TASK_FIELD)
        if task is not None:
            return self._tasks[str(task)](event, context)
        request = Request.of(event, context)
        return self.answer(request).to_event(request.request_id)

    def answer(self, request: Request) -> Response:
        route = self.routes.get(request.route_key) or self._elsewhere_route(request)
        try:
            allowed = _CODE if route.code_in_query else frozenset()
            refuse_credentials_in_url(request.query_names, allowed=allowed)
            if request.body is not None and len(request.body) > MAX_BODY_BYTES:
                raise PayloadTooLargeError(
                    f"the body is {len(request.body)} bytes; the limit is {MAX_BODY_BYTES} bytes (1 MiB)",
                    details={"limit_bytes": MAX_BODY_BYTES},
                )
            return route.handler(request)
        except self._refusals as refused:
            answer = route.form(request, refused)
            for name, value in getattr(refused, "headers", {}).items():  # Allow, Retry-After: every form
                answer.headers.setdefault(name, value)
            return answer

    def _elsewhere_route(self, request: Request) -> Route:
        """The 405 of a path served for other methods (in the form of a route at that path), or the
        fallback."""
        here = [key for key in self.routes if request.path and methods_at((key,), request.path)]
        methods = {key.partition(" ")[0] for key in here} | methods_at(self._elsewhere(), request.path)
        methods.discard(request.method)
        if not methods:
            return self._fallback
        form = self.routes[here[0]].form if here else self._fallback.form

        def refuse(request: Request) -> Response:
            raise method_not_allowed(methods)

        return Route(refuse, form)


_CODE = frozenset({"code"})


def _not_found(request: Request) -> Response:
    raise NotFoundError("there is nothing at this address")


def method_not_allowed(methods: Iterable[str]) -> MethodNotAllowedError:
    allowed = ", ".join(sorted(set(methods)))
    return MethodNotAllowedError(f"this address answers {allowed} only", headers={"allow": allowed})


def methods_at(route_keys: Iterable[str], path: str) -> set[str]:
    """The methods the routes ``route_keys`` (``"GET /approvals/{id}"``) serve at ``path``."""
    return {method for method, pattern in map(_pattern, route_keys) if pattern and pattern.fullmatch(path)}


@cache
def _pattern(route_key: str) -> tuple[str, re.Pattern[str] | None]:
    method, _, path = route_key.partition(" ")
    if not path.startswith("/"):
        return method, None  # $default
    parts = re.split(r"(\{[^}]+\})", path)
    regex = "".join(
        (".+" if part.endswith("+}") else "[^/]+") if part.startswith("{") else re.escape(part)
        for part in parts
    )
    return method, re.compile(regex)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased (what a browser's ``Origin`` header names)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def _body(event: Event) -> bytes | None:
    body = event.get("body")
    if body is None:
        return None
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            pass  # API Gateway never sends this; take the text as it is and let the readers speak
    return str(body).encode("utf-8", "surrogatepass")


def _cookies(cookies: Iterable[Any]) -> dict[str, str]:
    """Payload 2.0 carries cookies in ``cookies``; the first of a name wins."""
    found: dict[str, str] = {}
    for cookie in cookies:
        name, _, value = str(cookie).partition("=")
        found.setdefault(name.strip(), value.strip())
    return found


def _fields(encoded: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for name, value in parse_qsl(encoded, keep_blank_values=True):
        if name in fields:
            raise InvalidFormError(f"the field {name!r} is repeated")
        fields[name] = value
    return fields
