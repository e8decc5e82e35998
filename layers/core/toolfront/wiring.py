"""The composition root: the objects a function needs, built from the settings once per process, on
first use, and the ``lambda_handler`` every family exports.

``family_handler(FAMILY, api_tools)`` is what a family's ``app.py`` exports as its ``lambda_handler``:
it serves the family's REST route, the MCP calls the gateway routes to it, and the approval
workflow's ``execute`` task. Nothing here runs at import: the first request builds what it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from toolfront.calls.call import CALL_TASK, EXECUTE_TASK
from toolfront.errors import ConfigurationError
from toolfront.settings import Settings, current

# Each factory below imports what it builds when it is first called: a function imports only the
# parts its paths use (the OAuth and approvals functions no call pipeline and no tool registry, a
# family no approver sign-in, no function the approved-call runner until the workflow asks it to).
if TYPE_CHECKING:
    from toolfront.adapters.http import Event, Request, Response
    from toolfront.adapters.mcp.endpoint import McpEndpoint, SignIn
    from toolfront.admission.admission import Admission
    from toolfront.admission.keyed import KeyGate
    from toolfront.approvals.approvers import ApproverSignIn
    from toolfront.approvals.decisions import Decisions
    from toolfront.approvals.desk import ApprovalDesk
    from toolfront.approvals.slack import Slack
    from toolfront.approvals.store import ApprovalStore
    from toolfront.approvals.workflow import Resumer, Workflow, WorkflowCallbacks
    from toolfront.audit.log import AuditLog
    from toolfront.auth.authenticator import Authenticator
    from toolfront.auth.keystore import DynamoDBKeyStore
    from toolfront.calls.call import Call, CallResult
    from toolfront.calls.pipeline import CallPipeline
    from toolfront.oauth.facade import SignInFacade
    from toolfront.tools.definition import Tool
    from toolfront.tools.registry import Registry

_NO_APPROVALS = "TOOLFRONT_APPROVAL_STATE_MACHINE_ARN is not set: no approvals here"


@cache
def key_store() -> DynamoDBKeyStore:
    from toolfront.auth.keystore import DynamoDBKeyStore

    settings = current()
    return DynamoDBKeyStore(settings.keys_table, settings.principals_table)


@cache
def authenticator() -> Authenticator:
    """The process's authenticator (its key-owner memory lives as long as the process)."""
    from toolfront.auth.authenticator import Authenticator

    settings = current()
    cognito = None
    if settings.cognito is not None:
        from toolfront.auth.cognito import CognitoVerifier
        from toolfront.auth.registered import RegisteredClients

        table = settings.cognito.clients_table
        cognito = CognitoVerifier(settings.cognito, RegisteredClients(table) if table else frozenset())
    return Authenticator(key_store(), cognito)


@cache
def admission() -> Admission:
    """The process's admission (its memory of buckets lives as long as the process); keys' buckets
    are kept on their items, so a keyed call's one request spends from them (``key_gate``)."""
    from toolfront.admission.admission import Admission

    settings = current()
    return Admission(
        settings.rate_limits_table,
        settings.idempotency_table,
        settings.limits,
        keys_table=settings.keys_table,
    )


@cache
def key_gate() -> KeyGate:
    """Keyed calls' one request (sharing the admission's memory of buckets)."""
    from toolfront.admission.keyed import KeyGate

    settings = current()
    return KeyGate(
        key_store(),
        settings.keys_table,
        settings.limits,
        admission().memory,
        idempotency_table=settings.idempotency_table,
    )


@cache
def audit_log() -> AuditLog | None:
    """The process's audit log (its chain lives as long as the process)."""
    audit = current().audit
    if audit is None:
        return None
    from toolfront.audit.log import AuditLog

    return AuditLog(audit.table, retention_days=audit.retention_days, reads=audit.reads)


@cache
def approval_store() -> ApprovalStore | None:
    from toolfront.approvals.store import ApprovalStore

    approvals = current().approvals
    return ApprovalStore(approvals.table) if approvals else None


@cache
def workflow() -> Workflow | None:
    from toolfront.approvals.workflow import Workflow

    approvals = current().approvals
    return Workflow(approvals.state_machine_arn) if approvals else None


@cache
def approver_sign_in() -> ApproverSignIn | None:
    """Approvers' sign-in and sessions, when ApproverSignIn is on (the approvals function)."""
    approvals = current().approvals
    if approvals is None or approvals.sign_in is None:
        return None
    from toolfront.approvals.approvers import ApproverSignIn

    sign_in = approvals.sign_in
    return ApproverSignIn(
        approvals.table,
        user_pool_id=sign_in.user_pool_id,
        domain_url=sign_in.domain_url,
        client_name=sign_in.client_name,
        keys=key_store(),
        region=current().region,
    )


@cache
def slack() -> Slack | None:
    """The stack's Slack app when ``SlackChannel`` is set (the approvals function): its secrets are
    read once per process, and ``slack_sdk`` only when a Slack path first needs it."""
    from toolfront.approvals.slack import Slack, SlackSettings

    settings = SlackSettings.from_env()
    return Slack(settings) if settings is not None else None


@cache
def workflow_callbacks() -> WorkflowCallbacks:
    """The approvals function's own: the parked task tokens, and the callbacks that resume workflows."""
    from toolfront.approvals.workflow import WorkflowCallbacks

    approvals = current().approvals
    if approvals is None or not approvals.tokens_table:
        raise ConfigurationError("TOOLFRONT_APPROVAL_TOKENS_TABLE is not set: no workflow to resume here")
    return WorkflowCallbacks(approvals.tokens_table)


def decisions(*, resumes_itself: bool = False) -> Decisions:
    """Deciding and cancelling approvals: the approvals function resumes the workflow itself
    (``resumes_itself``), every other function hands that to it (it alone holds task tokens)."""
    from toolfront.approvals.decisions import Decisions

    store, approvals = approval_store(), current().approvals
    if store is None or approvals is None:
        raise ConfigurationError(_NO_APPROVALS)
    return Decisions(store, workflow_callbacks() if resumes_itself else _handover(), audit=audit_log())


@cache
def _handover() -> Resumer:
    from toolfront.approvals.workflow import WorkflowHandover

    approvals = current().approvals
    if approvals is None or not approvals.approvals_function:
        raise ConfigurationError("TOOLFRONT_APPROVALS_FUNCTION is not set: no workflow to resume")
    return WorkflowHandover(approvals.approvals_function)


def approval_desk() -> ApprovalDesk | None:
    approvals, store, flow = current().approvals, approval_store(), workflow()
    if approvals is None or store is None or flow is None:
        return None
    from toolfront.approvals.desk import ApprovalDesk

    return ApprovalDesk(store, flow, approvals.lifetime_seconds)


def core_tools() -> list[Tool]:
    """Core's ``system.*`` tools, wired to this process's approvals."""
    from toolfront.tools.system import system_tools

    return system_tools(approvals=approval_store, decisions=decisions)


def pipeline_for(registry: Registry) -> CallPipeline:
    from toolfront.calls.pipeline import CallPipeline

    settings = current()
    return CallPipeline(
        registry,
        authenticator().authenticate,
        admission(),
        desk=approval_desk(),
        batch_confirm_items=settings.batch_confirm_items,
        lease_seconds=settings.idempotency_lease_seconds,
        audit=audit_log(),
        gate=key_gate(),
    )


@cache
def sign_in_facade() -> SignInFacade:
    """The OAuth function's facade in front of Cognito (its settings exist only in that function)."""
    from toolfront.oauth import metadata
    from toolfront.oauth.apps import CognitoApps
    from toolfront.oauth.authorize import Authorizer
    from toolfront.oauth.facade import SignInFacade
    from toolfront.oauth.registration import Registrar
    from toolfront.oauth.store import FacadeStore
    from toolfront.oauth.token import TokenExchange
    from toolfront.settings import FacadeSettings
    from toolfront.tools.system import all_tools

    settings, facade = current(), FacadeSettings.from_env()
    if settings.cognito is None or settings.cognito.clients_table is None:
        raise ConfigurationError("the sign-in facade needs Cognito and its clients table (EnableCognito)")
    tools, prefix = all_tools(), settings.cognito.scope_prefix
    scopes = metadata.api_scopes(tools, prefix)
    store = FacadeStore(settings.cognito.clients_table, settings.rate_limits_table)
    registrar = Registrar(store, CognitoApps(facade.user_pool_id, scopes), facade, audit=audit_log())
    return SignInFacade(
        tools=tools,
        scope_prefix=prefix,
        base_url=lambda request: request.base_url(settings.public_url, settings.region),
        registrar=registrar,
        authorizer=Authorizer(registrar, store, facade.managed_login_url, scopes=scopes, scope_prefix=prefix),
        tokens=TokenExchange(registrar, facade.managed_login_url),
    )


def sign_in_of(settings: Settings, tools: list[dict[str, Any]], family: str | None = None) -> SignIn | None:
    """How an MCP endpoint challenges for a sign-in: ``None`` without Cognito; for a family with no
    public tool, every request without a credential is challenged with the family's scopes."""
    from toolfront.adapters.mcp.endpoint import SignIn
    from toolfront.oauth import metadata

    if settings.cognito is None:
        return None
    scopes = tuple(metadata.api_scopes(tools, settings.cognito.scope_prefix, family))
    required = family is not None and not metadata.has_public_tool(tools, family)
    return SignIn(family, scopes, required)


def reset() -> None:
    """Forget every process-wide object (tests, and the local stack when its endpoints change).

    Pipelines need no forgetting: each handler rebuilds its own when the settings object changes.
    """
    current.cache_clear()
    for built in (key_store, authenticator, admission, key_gate, audit_log, approval_store, workflow):
        built.cache_clear()
    workflow_callbacks.cache_clear()
    _handover.cache_clear()
    approver_sign_in.cache_clear()
    slack.cache_clear()
    sign_in_facade.cache_clear()


class FamilyHandler:
    """A family function's ``lambda_handler``: the REST route, its own MCP endpoint, the MCP calls the
    gateway routes here and the workflow's ``execute`` task, all through the one pipeline this handler
    owns, behind the one HTTP edge."""

    def __init__(self, family: str, api_tools: Callable[[], list[Tool]], *, core: bool = False) -> None:
        from toolfront.adapters.http import Edge, Route
        from toolfront.adapters.rest import RestAdapter
        from toolfront.tools.registry import Registry

        self.family = family
        if core:  # the gateway: core's own system.* tools
            self.registry = Registry.from_modules([], core_tools=api_tools())
        else:  # the family's tools, and core's for its own MCP endpoint (/mcp/<family>)
            module = SimpleNamespace(FAMILY=family, api_tools=api_tools)
            self.registry = Registry.from_modules([module], core_tools=core_tools())
            # Every request to a family runs the pipeline: load it with the function, not on its first
            # call. (The gateway runs it only for core's tools: there it waits for the first of those.)
            import toolfront.calls.pipeline  # noqa: F401
        self._built: tuple[Settings, CallPipeline] | None = None
        self.rest = RestAdapter(self.pipeline)
        self._mcp: McpEndpoint | None = None
        self._mcp_settings: Settings | None = None
        routes: dict[str, Route] = {f"POST /v1/tools/{family}/{{verb_noun}}": Route(self.rest)}
        if not core:
            routes[f"POST /mcp/{family}"] = Route(self._serve_mcp, _rpc_refusal)
        tasks = {EXECUTE_TASK: self._execute_task, CALL_TASK: self.run_call}
        self._edge = Edge(routes, tasks=tasks)

    def pipeline(self) -> CallPipeline:
        """This function's pipeline, built on first use (never at import: no AWS at init) and again
        whenever the process's settings were read anew (tests, the local stack)."""
        settings = current()
        built = self._built
        if built is None or built[0] is not settings:
            built = self._built = (settings, pipeline_for(self.registry))
        return built[1]

    def __call__(self, event: Event, context: Any = None) -> Any:
        return self._edge(event, context)

    def _serve_mcp(self, request: Request) -> Response:
        return self.mcp()(request)

    def _execute_task(self, event: Event, context: Any = None) -> dict[str, Any]:
        return self.run_approved(str(event["approval_id"]))

    def mcp(self) -> McpEndpoint:
        """This family's own MCP endpoint: its tools and core's, every call run in this function."""
        settings = current()
        if self._mcp is None or self._mcp_settings is not settings:  # settings read anew: rebuild
            # deferred: a family's cold start pays for MCP only when its MCP route is called
            from toolfront.adapters.mcp.endpoint import McpEndpoint
            from toolfront.adapters.mcp.results import ToolCatalog
            from toolfront.adapters.mcp.router import LocalRouter
            from toolfront.tools.system import all_tools

            served = [t for t in all_tools() if t.get("module") in (self.family, "core")]
            self._mcp_settings = settings
            self._mcp = McpEndpoint(
                ToolCatalog(served),
                LocalRouter(self.run),
                authenticator().authenticate,
                records=admission().recorded,
                public_url=settings.public_url,
                region=settings.region,
                allowed_origins=settings.allowed_origins,
                page_size=settings.mcp_tools_page_size,
                sign_in=sign_in_of(settings, served, self.family),
            )
        return self._mcp

    def run(self, call: Call) -> CallResult:
        """Run one call through this function's pipeline."""
        return self.pipeline().run(call)

    def run_call(self, event: Event, context: Any = None) -> dict[str, Any]:
        from toolfront.adapters.rest import result_response
        from toolfront.calls.remote import pipeline_call  # routed MCP calls only

        call = pipeline_call(event, str(getattr(context, "invoked_function_arn", "") or ""))
        return result_response(self.run(call), call.request_id)

    def run_approved(self, approval_id: str) -> dict[str, Any]:
        from toolfront.approvals.runner import ApprovedCallRunner  # the workflow's task, not a call's

        store = approval_store()
        if store is None:
            raise ConfigurationError(_NO_APPROVALS)
        return ApprovedCallRunner(self.registry, store, key_store(), audit=audit_log()).run(approval_id)


def _rpc_refusal(request: Request, error: Exception) -> Response:
    """An MCP route's form of the edge's refusals (loaded with MCP, as the endpoint is)."""
    from toolfront.adapters.mcp.endpoint import rpc_refusal

    return rpc_refusal(request, error)


def family_handler(family: str, api_tools: Callable[[], list[Tool]], *, core: bool = False) -> FamilyHandler:
    """The ``lambda_handler`` of a family: ``lambda_handler = family_handler(FAMILY, api_tools)``."""
    return FamilyHandler(family, api_tools, core=core)
