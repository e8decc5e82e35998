"""The local API server: the template's HttpApi routes, each served by its function's own lambda_handler.

Requests become payload 2.0 events; handlers are imported from their CodeUri and run in this process,
each on a worker thread held to its function's ``Timeout`` (and to API Gateway's 30 s), with the 6 MB
response limit applied as Lambda applies it. Apps of the local stack's own (the managed login) are
mounted beside the routes, under a path prefix.
"""

from __future__ import annotations

import contextvars
import importlib.util
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from toolfront_dev.errors import TemplateError
from toolfront_dev.iam.enforcement import RunsAs
from toolfront_dev.net import check_port_free, http_url
from toolfront_dev.payload import (
    LOCAL_ACCOUNT_ID,
    LOCAL_API_ID,
    LambdaContext,
    build_event,
    build_response,
    gateway_error,
    response_payload,
    too_large,
)
from toolfront_dev.routing import RouteMatch, RouteTable
from toolfront_dev.template import FunctionSpec, Template

logger = logging.getLogger(__name__)


def loggable(text: str) -> str:
    """``text`` for a one-line text log: control characters escaped (a decoded ``%0a`` in a path
    would otherwise start a forged line)."""
    return text.encode("unicode_escape").decode("ascii")


Handler = Callable[[dict[str, Any], Any], Any]

#: API Gateway's limit on an HTTP API's Lambda integration: past it the caller gets 503
#: ``{"message":"Service Unavailable"}`` while the function runs on to its own Timeout.
INTEGRATION_TIMEOUT_SECONDS = 30.0


class Mountable(Protocol):
    """An app the local API serves under a path prefix, beside the template's routes."""

    def dispatch(self, request: Request) -> Response:
        """Answer one request whose ``path`` is relative to the prefix (its ``script_root``)."""
        ...


# sys.path and sys.modules belong to the whole process, so handler imports take turns.
_IMPORT_LOCK = threading.Lock()


def silence_werkzeug() -> None:
    """Drop werkzeug's per-request access lines (moto's server logs through the same logger)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


def handler_module_name(function: FunctionSpec) -> str:
    """The ``sys.modules`` name of a function's handler module, unique per function."""
    return f"toolfront_fn_{function.logical_id.lower()}_{function.handler_module.replace('.', '_')}"


class HandlerLoader:
    """Imports each function's handler module on first use and keeps it."""

    def __init__(self, functions: Iterable[FunctionSpec]) -> None:
        """Index the functions.

        Raises:
            TemplateError: two CodeUri directories ship sibling modules of the same name; in one
                process the second function would silently import the first one's module.
        """
        self._functions = {function.logical_id: function for function in functions}
        self._handlers: dict[str, Handler] = {}
        _check_sibling_modules(self._functions.values())

    def handler(self, function_id: str) -> Handler:
        """The function's handler callable, imported now if it is the first call."""
        found = self._handlers.get(function_id)
        if found is None:
            with _IMPORT_LOCK:
                found = self._handlers.get(function_id)
                if found is None:
                    # Each invocation runs as its function: IAM checks its requests against its policy.
                    found = RunsAs(function_id, _import_handler(self._functions[function_id]))
                    self._handlers[function_id] = found
        return found


def build_context(
    function: FunctionSpec, name: str, *, region: str = "us-east-1", account_id: str = LOCAL_ACCOUNT_ID
) -> LambdaContext:
    """A fresh context for one invocation of ``function`` deployed as ``name``."""
    return LambdaContext(
        function_name=name,
        memory_limit_in_mb=function.memory_size_mb,
        invoked_function_arn=f"arn:aws:lambda:{region}:{account_id}:function:{name}",
        aws_request_id=str(uuid.uuid4()),
        deadline_epoch_ms=int(time.time() * 1000) + function.timeout_seconds * 1000,
        log_group_name=f"/aws/lambda/{name}",
    )


@dataclass(frozen=True, slots=True)
class Invocation:
    """How one run of a handler ended: its result, its exception, or still running at the deadline."""

    result: Any = None
    error: BaseException | None = None
    timed_out: bool = False


def run_handler(
    handler: Handler, event: dict[str, Any], context: LambdaContext, *, timeout_seconds: float
) -> Invocation:
    """Run ``handler(event, context)`` on a worker thread, waiting at most ``timeout_seconds``.

    Lambda stops a function at its Timeout; Python cannot stop a thread, so a handler past its
    deadline is abandoned instead: the caller is answered as if it had been stopped, and the thread
    runs on (its writes may still land, as a write already sent does on AWS). The worker starts in a
    copy of the caller's context variables.
    """
    finished = threading.Event()
    ended: list[Invocation] = []

    def work() -> None:
        try:
            ended.append(Invocation(result=handler(event, context)))
        except BaseException as exc:  # a handler's SystemExit too: Lambda reports every exit
            ended.append(Invocation(error=exc))
        finally:
            finished.set()

    worker = threading.Thread(
        target=contextvars.copy_context().run,
        args=(work,),
        name=f"lambda-{context.function_name}",
        daemon=True,
    )
    worker.start()
    if finished.wait(timeout_seconds):
        return ended[0]
    logger.warning(
        "%s ran past %g s and was answered as timed out; Python cannot stop its thread, which runs on",
        context.function_name,
        timeout_seconds,
    )
    return Invocation(timed_out=True)


class LocalApi:
    """A WSGI application that routes like API Gateway and invokes handlers in-process."""

    def __init__(
        self,
        template: Template,
        *,
        function_name_prefix: str = "toolfront-local",
        function_names: Mapping[str, str] | None = None,
        loader: HandlerLoader | None = None,
        region: str = "us-east-1",
        account_id: str = LOCAL_ACCOUNT_ID,
    ) -> None:
        """Build the route table and the handler loader.

        Args:
            template: the functions and routes to serve.
            function_name_prefix: unnamed functions are called ``<prefix>-<LogicalId>``.
            function_names: the deployed name of each function, by logical id, over the prefix rule.
            loader: the handler loader to share (Step Functions' Lambda tasks run the same modules).
            region: the region in the functions' ARNs.
            account_id: the account in the functions' ARNs.

        Raises:
            RouteConflictError: two routes share a method and a path.
            TemplateError: handler modules of two functions would collide.
        """
        self.routes = RouteTable(template.routes)
        self._functions: Mapping[str, FunctionSpec] = {f.logical_id: f for f in template.functions}
        self.loader = loader or HandlerLoader(template.functions)
        self._names = {
            logical_id: (function_names or {}).get(logical_id) or f"{function_name_prefix}-{logical_id}"
            for logical_id in self._functions
        }
        self._region = region
        self._account_id = account_id
        self._mounts: dict[str, tuple[Mountable, str]] = {}

    def mount(self, prefix: str, app: Mountable, name: str) -> None:
        """Serve ``prefix`` and every path under it with ``app`` (``name`` in the request log).

        Raises:
            TemplateError: a template route lies under ``prefix`` (the mount would hide it).
        """
        hidden = [r.route_key for r in self.routes.routes if _under(r.path, prefix)]
        if hidden:
            raise TemplateError(f"{', '.join(hidden)}: under {prefix}, which the local stack serves itself")
        self._mounts[prefix] = (app, name)

    def function_name(self, logical_id: str) -> str:
        """The name the function's context reports (``KeyError`` for an unknown function)."""
        return self._names[logical_id]

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        """WSGI entry point."""
        response = self.dispatch(Request(environ))
        return response(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        """Answer one request as API Gateway plus Lambda would."""
        request_id = str(uuid.uuid4())
        started = time.monotonic()
        mounted = next(((p, m) for p, m in self._mounts.items() if _under(request.path, p)), None)
        match = None if mounted else self.routes.match(request.method, request.path)
        if mounted is not None:
            prefix, (app, target) = mounted
            response = app.dispatch(_below(request, prefix))
        elif match is None:
            response, target = gateway_error(404, "Not Found"), "-"
        else:
            target = match.route.function_id
            response = self._invoke(self._functions[target], request, match, request_id)
        if mounted is None:
            response.headers["apigw-requestid"] = request_id  # API Gateway adds it to every reply
        elapsed_ms = (time.monotonic() - started) * 1000
        # The path only: a query string may carry codes and states (the managed login's redirects).
        logger.info(
            "%s %s -> %d (%s, %.0f ms)",
            request.method,
            loggable(request.path),
            response.status_code,
            target,
            elapsed_ms,
        )
        return response

    def _invoke(
        self, function: FunctionSpec, request: Request, match: RouteMatch, request_id: str
    ) -> Response:
        """Run the route's function as API Gateway's Lambda integration does.

        Lambda's failures reach the caller as API Gateway shows them: a handler that raised, ran
        past its Timeout, or answered over 6 MB is 500 ``{"message":"Internal Server Error"}``; one
        still running after the integration's 30 s is 503 ``{"message":"Service Unavailable"}``.
        """
        event = build_event(
            request, match, request_id=request_id, api_id=LOCAL_API_ID, account_id=self._account_id
        )
        where = f"{function.logical_id} on {request.method} {loggable(request.path)}"
        gateway_gives_up = function.timeout_seconds >= INTEGRATION_TIMEOUT_SECONDS
        wait = INTEGRATION_TIMEOUT_SECONDS if gateway_gives_up else function.timeout_seconds
        try:
            handler = self.loader.handler(function.logical_id)
        except Exception:
            logger.exception("%s could not be loaded", where)
            return gateway_error(500, "Internal Server Error")
        run = run_handler(handler, event, self._context(function), timeout_seconds=wait)
        if run.timed_out and gateway_gives_up:
            logger.error("%s: no answer within API Gateway's %g s", where, INTEGRATION_TIMEOUT_SECONDS)
            return gateway_error(503, "Service Unavailable")
        if run.timed_out:
            logger.error("%s: Task timed out after %d seconds (its Timeout)", where, function.timeout_seconds)
            return gateway_error(500, "Internal Server Error")
        if run.error is not None:
            # Lambda reports the failure and API Gateway hides it behind a bare 500; the developer
            # still needs the traceback, so it goes to the log (stderr).
            logger.error("%s failed", where, exc_info=run.error)
            return gateway_error(500, "Internal Server Error")
        try:
            if too_large(response_payload(run.result)):
                logger.error("%s answered over Lambda's 6 MB response limit", where)
                return gateway_error(500, "Internal Server Error")
            return build_response(run.result)
        except Exception:
            logger.exception("%s answered what API Gateway cannot send", where)
            return gateway_error(500, "Internal Server Error")

    def _context(self, function: FunctionSpec) -> LambdaContext:
        return build_context(
            function, self._names[function.logical_id], region=self._region, account_id=self._account_id
        )


class LocalApiServer:
    """A threaded werkzeug HTTP server for a :class:`LocalApi`, run on a background thread."""

    def __init__(self, app: LocalApi, host: str = "127.0.0.1", port: int = 3000) -> None:
        """Bind the socket now (port 0 picks a free one); serving starts with :meth:`start`.

        Raises:
            StackError: the port cannot be bound.
        """
        check_port_free(host, port)
        silence_werkzeug()
        self._host = host
        self._server: BaseWSGIServer = make_server(host, port, app, threaded=True)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_port)

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:3000``."""
        return http_url(self._host, self.port)

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="toolfront-api", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is None:
            self._server.server_close()
            return
        self._server.shutdown()  # serve_forever closes the socket on its way out
        self._thread.join()
        self._thread = None


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _below(request: Request, prefix: str) -> Request:
    """The request as an app mounted at ``prefix`` sees it (WSGI's SCRIPT_NAME and PATH_INFO)."""
    environ = dict(request.environ)
    # PATH_INFO stays in WSGI's own (latin-1) form; the ASCII prefix has the same length in both.
    path_info = "/" + str(environ.get("PATH_INFO", "")).lstrip("/")
    environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
    environ["PATH_INFO"] = path_info[len(prefix) :] or "/"
    return Request(environ)


def _import_handler(function: FunctionSpec) -> Handler:
    source = function.code_uri.joinpath(*function.handler_module.split(".")).with_suffix(".py")
    name = handler_module_name(function)
    spec = importlib.util.spec_from_file_location(name, source)
    if spec is None or spec.loader is None or not source.is_file():
        raise ImportError(f"{function.logical_id}: no handler module at {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look a module up by name while it runs
    code_dir = str(function.code_uri)
    # The CodeUri is the Lambda task root: the handler's own sibling imports resolve from it.
    sys.path.insert(0, code_dir)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.path.remove(code_dir)
    handler = getattr(module, function.handler_function, None)
    if not callable(handler):
        raise ImportError(f"{function.logical_id}: {source} has no callable {function.handler_function}")
    return cast(Handler, handler)


def _check_sibling_modules(functions: Iterable[FunctionSpec]) -> None:
    owners: dict[str, FunctionSpec] = {}
    for function in functions:
        for module in _sibling_modules(function):
            other = owners.setdefault(module, function)
            # Functions sharing one CodeUri share its modules too, which is harmless.
            if other.code_uri != function.code_uri:
                raise TemplateError(
                    f"{function.logical_id} and {other.logical_id} both ship a top-level module "
                    f"{module!r}; in one process they would share it. Rename one."
                )


def _sibling_modules(function: FunctionSpec) -> set[str]:
    root: Path = function.code_uri
    if not root.is_dir():
        return set()
    modules = {path.stem for path in root.glob("*.py")}
    modules |= {path.name for path in root.iterdir() if (path / "__init__.py").is_file()}
    # The handler module itself is imported under a unique name (handler_module_name).
    return modules - {function.handler_module.split(".")[0], "__init__"}
