"""The local API server over real HTTP, against a small project written for the purpose."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client as WerkzeugClient
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from tests.dev.conftest import Fetch
from toolfront_dev.errors import RouteConflictError, TemplateError
from toolfront_dev.server import LocalApi, LocalApiServer
from toolfront_dev.template import load_template

TEMPLATE = """\
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 7
    Environment: {Variables: {SHARED: "1"}}
Resources:
  EchoFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: echo/
      Handler: app.lambda_handler
      Events:
        Get: {Type: HttpApi, Properties: {Path: "/echo/{id}", Method: GET}}
        Post: {Type: HttpApi, Properties: {Path: "/echo/{id}", Method: POST}}
        Files: {Type: HttpApi, Properties: {Path: "/files/{proxy+}", Method: ANY}}
  OddFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: odd/
      Handler: handlers.main
      Events:
        Boom: {Type: HttpApi, Properties: {Path: /boom, Method: GET}}
        Shortcut: {Type: HttpApi, Properties: {Path: /shortcut, Method: GET}}
        Cookies: {Type: HttpApi, Properties: {Path: /cookies, Method: GET}}
        Malformed: {Type: HttpApi, Properties: {Path: /malformed, Method: GET}}
"""

ECHO_APP = """\
import json
import uuid

from helper import describe  # a sibling module of the CodeUri

LOADED = str(uuid.uuid4())


def lambda_handler(event, context):
    body = {
        "event": event,
        "helper": describe(),
        "loaded": LOADED,
        "context": {
            "function_name": context.function_name,
            "memory_limit_in_mb": context.memory_limit_in_mb,
            "invoked_function_arn": context.invoked_function_arn,
            "aws_request_id": context.aws_request_id,
            "remaining_ms": context.get_remaining_time_in_millis(),
        },
    }
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}
"""

ODD_HANDLERS = """\
def main(event, context):
    path = event["rawPath"]
    if path == "/boom":
        raise RuntimeError("kaboom from the handler")
    if path == "/shortcut":
        return {"hello": "world"}
    if path == "/cookies":
        return {"statusCode": 204, "cookies": ["a=1; Path=/", "b=2"]}
    return {"statusCode": "not-a-number"}
"""


def write_project(root: Path) -> Path:
    (root / "echo").mkdir()
    (root / "odd").mkdir()
    (root / "template.yaml").write_text(TEMPLATE, encoding="utf-8")
    (root / "echo" / "app.py").write_text(ECHO_APP, encoding="utf-8")
    (root / "echo" / "helper.py").write_text("def describe():\n    return 'echo helper'\n", encoding="utf-8")
    (root / "odd" / "handlers.py").write_text(ODD_HANDLERS, encoding="utf-8")
    return root / "template.yaml"


@pytest.fixture(scope="module")
def api_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    template = load_template(write_project(tmp_path_factory.mktemp("project")))
    server = LocalApiServer(LocalApi(template), "127.0.0.1", 0)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
        sys.modules.pop("helper", None)  # the echo project's sibling; keep it out of later tests


def echoed(fetch: Fetch, url: str, **request: Any) -> dict[str, Any]:
    reply = fetch(url, **request)
    assert reply.status == 200, reply.body
    return json.loads(reply.body)


def test_server_path_parameter_reaches_handler_event(api_url: str, fetch: Fetch) -> None:
    event = echoed(fetch, f"{api_url}/echo/42")["event"]

    assert event["routeKey"] == "GET /echo/{id}"
    assert event["pathParameters"] == {"id": "42"}


def test_server_percent_encoded_path_parameter_decoded(api_url: str, fetch: Fetch) -> None:
    event = echoed(fetch, f"{api_url}/echo/a%20b")["event"]

    assert event["pathParameters"] == {"id": "a b"}


def test_server_repeated_headers_comma_joined(api_url: str, fetch: Fetch) -> None:
    event = echoed(fetch, f"{api_url}/echo/1", headers=[("X-Multi", "a"), ("X-Multi", "b")])["event"]

    assert event["headers"]["x-multi"] == "a,b"


def test_server_binary_post_body_base64_in_event(api_url: str, fetch: Fetch) -> None:
    event = echoed(fetch, f"{api_url}/echo/1", method="POST", body=b"\xff\x00")["event"]

    assert event["isBase64Encoded"] is True
    assert event["body"] == "/wA="


def test_server_greedy_route_serves_any_method(api_url: str, fetch: Fetch) -> None:
    event = echoed(fetch, f"{api_url}/files/a/b.txt", method="PUT", body=b"x")["event"]

    assert event["routeKey"] == "ANY /files/{proxy+}"
    assert event["pathParameters"] == {"proxy": "a/b.txt"}


def test_server_context_describes_function(api_url: str, fetch: Fetch) -> None:
    context = echoed(fetch, f"{api_url}/echo/1")["context"]

    assert context["function_name"] == "toolfront-local-EchoFunction"
    assert context["memory_limit_in_mb"] == 128
    assert context["invoked_function_arn"].endswith(":function:toolfront-local-EchoFunction")
    assert 0 < context["remaining_ms"] <= 7000


def test_server_handler_sibling_import_and_module_cached(api_url: str, fetch: Fetch) -> None:
    first = echoed(fetch, f"{api_url}/echo/1")
    second = echoed(fetch, f"{api_url}/echo/2")

    assert first["helper"] == "echo helper"
    assert first["loaded"] == second["loaded"]
    assert first["loaded"] == sys.modules["toolfront_fn_echofunction_app"].LOADED


def test_server_request_ids_unique_per_request(api_url: str, fetch: Fetch) -> None:
    ids = {echoed(fetch, f"{api_url}/echo/1")["event"]["requestContext"]["requestId"] for _ in range(3)}

    assert len(ids) == 3


def test_server_handler_exception_answers_500_and_logs_traceback(
    api_url: str, fetch: Fetch, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="toolfront_dev.server"):
        reply = fetch(f"{api_url}/boom")

    assert reply.status == 500
    assert reply.body == b'{"message":"Internal Server Error"}'
    assert "kaboom from the handler" in caplog.text
    assert "Traceback" in caplog.text


def test_server_malformed_result_answers_500(api_url: str, fetch: Fetch) -> None:
    assert fetch(f"{api_url}/malformed").status == 500


def test_server_result_without_status_code_answers_200_json(api_url: str, fetch: Fetch) -> None:
    reply = fetch(f"{api_url}/shortcut")

    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    assert reply.json() == {"hello": "world"}


def test_server_result_cookies_become_set_cookie_headers(api_url: str, fetch: Fetch) -> None:
    reply = fetch(f"{api_url}/cookies")

    assert reply.status == 204
    assert reply.headers["set-cookie"].split("\n") == ["a=1; Path=/", "b=2"]


def test_server_unknown_route_answers_gateway_404(api_url: str, fetch: Fetch) -> None:
    reply = fetch(f"{api_url}/echo")

    assert reply.status == 404
    assert reply.body == b'{"message":"Not Found"}'
    assert reply.headers["apigw-requestid"]


def test_local_api_duplicate_route_across_functions_raises(tmp_path: Path) -> None:
    path = write_project(tmp_path)
    path.write_text(
        TEMPLATE + '        Clash: {Type: HttpApi, Properties: {Path: "/echo/{other}", Method: GET}}\n',
        encoding="utf-8",
    )

    with pytest.raises(RouteConflictError, match=r"OddFunction.*EchoFunction"):
        LocalApi(load_template(path))


def test_local_api_same_sibling_module_in_two_code_uris_raises(tmp_path: Path) -> None:
    path = write_project(tmp_path)
    (tmp_path / "odd" / "helper.py").write_text("def describe():\n    return 'odd'\n", encoding="utf-8")

    with pytest.raises(TemplateError, match="'helper'"):
        LocalApi(load_template(path))


def test_a_newline_in_the_path_cannot_forge_a_log_line() -> None:
    from toolfront_dev.server import loggable

    forged = "/v1/tools/catalogue/x\n2026-12-01 00:00:00,000 INFO forged"
    assert "\n" not in loggable(forged) and "\\n2026" in loggable(forged)


# --- an app mounted beside the routes (the managed login's way in) ---------------------------


class Recording:
    """A mountable app that answers with the path and script root it saw."""

    def dispatch(self, request: Request) -> Response:
        body = {"path": request.path, "script_root": request.script_root, "query": request.args.get("q")}
        return Response(json.dumps(body), status=201, mimetype="application/json")


@pytest.fixture(scope="module")
def mounted_api(tmp_path_factory: pytest.TempPathFactory) -> LocalApi:
    api = LocalApi(load_template(write_project(tmp_path_factory.mktemp("mounted"))))
    api.mount("/_local", Recording(), "recorder")
    return api


@pytest.mark.parametrize(("path", "inner"), [("/_local/a/b", "/a/b"), ("/_local", "/")])
def test_mounted_app_sees_path_below_its_prefix(mounted_api: LocalApi, path: str, inner: str) -> None:
    reply = WerkzeugClient(mounted_api).get(path, query_string={"q": "v"})

    assert reply.status_code == 201
    assert reply.get_json() == {"path": inner, "script_root": "/_local", "query": "v"}
    assert "apigw-requestid" not in reply.headers


def test_mounted_app_path_with_doubled_leading_slash_is_cut_as_matched(mounted_api: LocalApi) -> None:
    environ = EnvironBuilder(path="/").get_environ()
    environ["PATH_INFO"] = "//_local/x"  # werkzeug's request.path reads it as /_local/x

    reply = mounted_api.dispatch(Request(environ))

    assert json.loads(reply.get_data()) == {"path": "/x", "script_root": "/_local", "query": None}


def test_mounted_prefix_is_no_prefix_of_longer_names(mounted_api: LocalApi) -> None:
    reply = WerkzeugClient(mounted_api).get("/_localhost")

    assert reply.status_code == 404
    assert reply.get_json() == {"message": "Not Found"}  # the gateway's own, not the mounted app's


def test_mounted_request_logged_by_path_without_query(
    mounted_api: LocalApi, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="toolfront_dev.server"):
        WerkzeugClient(mounted_api).get("/_local/oauth2/x", query_string={"code": "c0de-secret"})

    assert "GET /_local/oauth2/x -> 201 (recorder" in caplog.text
    assert "c0de-secret" not in caplog.text


def test_mount_over_a_template_route_raises(mounted_api: LocalApi) -> None:
    with pytest.raises(TemplateError, match=r"GET /echo/\{id\}.*under /echo"):
        mounted_api.mount("/echo", Recording(), "clash")
