"""``toolfront smoke``'s checks: a deployed (or the local) stack end to end, one result per check.

Each check is a function of the stack answering a :class:`CheckResult` (passed, failed with what
failed and the fix in one line, or skipped with why); :func:`run_smoke` runs them in order and
yields each as it is known, so the command prints as it goes and tests read the results. The key
checks (``smoke_key``) clean up what they create whatever happens; the OAuth discovery checks are in
``smoke_discovery``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from toolfront_dev.errors import CommandError
from toolfront_dev.smoke_http import Answer, Unreachable, refusal_fix, send
from toolfront_dev.targets import KEYS_TABLE, StackTables

AUDIT_TABLE = "AuditTable"
ANCHORS_TABLE = "AuditAnchorsTable"
TOOL_PREFIX = "/v1/tools/"
OPENAPI_PATH = "/v1/openapi.json"
KEY_LIFETIME = timedelta(minutes=15)


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


SKIP_MARK = "\u2013"  # an en dash: the check did not run
MARKS = {Status.PASSED: "✓", Status.FAILED: "✗", Status.SKIPPED: SKIP_MARK}


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome: ``detail`` says what failed and the fix (or why it was skipped)."""

    name: str
    status: Status
    detail: str = ""

    @property
    def line(self) -> str:
        """``✓ name``, ``✗ name: what failed — the fix``, or the skip mark, ``name: why not``."""
        return f"{MARKS[self.status]} {self.name}" + (f": {self.detail}" if self.detail else "")


def passed(name: str, detail: str = "") -> CheckResult:
    return CheckResult(name, Status.PASSED, detail)


def failed(name: str, detail: str) -> CheckResult:
    return CheckResult(name, Status.FAILED, detail)


def skipped(name: str, why: str) -> CheckResult:
    return CheckResult(name, Status.SKIPPED, why)


class CheckFailed(Exception):
    """A check's failure: its message is the line's detail (what failed — the fix)."""


def checked(name: str, body: Callable[[], str]) -> CheckResult:
    """Run ``body`` (answering a detail for the ✓ line, or ``""``) as the check ``name``."""
    try:
        return passed(name, body())
    except (CheckFailed, CommandError) as exc:
        return failed(name, str(exc))


@dataclass(frozen=True, slots=True)
class SmokeStack:
    """What the smoke checks: where clients reach the API, the stack's tables, and how to fix it.

    Attributes:
        url: the address clients use (``PublicUrl``, else ``ApiUrl``; or ``--url``).
        tables: the stack's DynamoDB tables (moto's for the local stack).
        oauth: whether the stack signs people in (a Cognito user pool).
        state_machine_arn: the approval workflow, when the smoke can see it.
        stepfunctions: a Step Functions client on it (moto's locally), or ``None``.
        unreachable_fix: what to do when nothing answers.
    """

    url: str
    tables: StackTables
    oauth: bool
    state_machine_arn: str | None = None
    stepfunctions: Any = None
    unreachable_fix: str = "is the stack deployed (`sam deploy`) and --url its address?"

    @property
    def name(self) -> str:
        return self.tables.name

    def call(self, method: str, path: str, **options: Any) -> Answer:
        """A request to the API; nothing answering is a :class:`CheckFailed` naming the fix."""
        url = self.url.rstrip("/") + path
        try:
            return send(method, url, **options)
        except Unreachable as exc:
            raise CheckFailed(f"nothing answered at {url} ({exc}) — {self.unreachable_fix}") from None


@dataclass(frozen=True, slots=True)
class SmokeOptions:
    """``--tool NAME --input JSON``: the held call to make instead of the one the smoke picks."""

    tool: str | None = None
    tool_input: Mapping[str, Any] | None = None
    key_lifetime: timedelta = KEY_LIFETIME


@dataclass(frozen=True, slots=True)
class PublishedTool:
    """A tool as the OpenAPI document publishes it (its operation's ``x-toolfront-*``)."""

    name: str
    audience: str
    scope: str | None
    permission: str | None
    danger: str | None
    read_only: bool
    input_schema: Mapping[str, Any] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return self.name.partition(".")[0]


def run_smoke(stack: SmokeStack, options: SmokeOptions | None = None) -> Iterator[CheckResult]:
    """Every check, in order, each result as soon as it is known."""
    from toolfront_dev.smoke_discovery import discovery_checks
    from toolfront_dev.smoke_key import KeyScenario

    health = check_health(stack)
    yield health
    if health.status is Status.FAILED:
        for name in ("openapi", "oauth discovery", "key"):
            yield skipped(name, "GET /health failed")
    else:
        tools: list[PublishedTool] = []
        opened = checked("openapi", lambda: _openapi(stack, tools))
        yield opened
        yield from discovery_checks(stack, sorted({t.family for t in tools} - {"system"}))
        if opened.status is Status.FAILED:
            yield skipped("key", "no published tool list to choose a held tool from")
        else:
            yield from KeyScenario(stack, tools, options or SmokeOptions()).run()
    yield check_audit(stack)
    yield check_dynamodb(stack)


def check_health(stack: SmokeStack) -> CheckResult:
    """``GET /health`` answers 200 ``{"data": {"status": "ok"}}``."""

    def body() -> str:
        answer = stack.call("GET", "/health")
        if answer.status != 200 or (answer.data() or {}).get("status") != "ok":
            raise CheckFailed(refusal_fix(answer, "GET /health"))
        return ""

    return checked("health", body)


def _openapi(stack: SmokeStack, tools: list[PublishedTool]) -> str:
    answer = stack.call("GET", OPENAPI_PATH)
    if answer.status != 200:
        raise CheckFailed(refusal_fix(answer, f"GET {OPENAPI_PATH}"))
    try:
        document = answer.json()
    except ValueError:
        raise CheckFailed(f"GET {OPENAPI_PATH} is not JSON — is --url this API's address?") from None
    if not isinstance(document, dict) or not str(document.get("openapi", "")).startswith("3."):
        raise CheckFailed(f"GET {OPENAPI_PATH} is no OpenAPI 3 document — is --url this API's address?")
    tools.extend(published_tools(document))
    if not tools:
        raise CheckFailed(f"{OPENAPI_PATH} lists no tool — did the families deploy? (`toolfront check`)")
    return f"{len(tools)} tools"


def published_tools(document: Mapping[str, Any]) -> list[PublishedTool]:
    """The tools of an OpenAPI document: each ``POST /v1/tools/<family>/<verb_noun>``, by name."""
    found = []
    for path, item in (document.get("paths") or {}).items():
        operation = item.get("post") if isinstance(item, dict) else None
        family, _, verb = str(path).removeprefix(TOOL_PREFIX).partition("/")
        if (
            not str(path).startswith(TOOL_PREFIX)
            or not verb
            or "/" in verb
            or not isinstance(operation, dict)
        ):
            continue
        content = (operation.get("requestBody") or {}).get("content") or {}
        schema = (content.get("application/json") or {}).get("schema") or {}
        found.append(
            PublishedTool(
                name=f"{family}.{verb}",
                audience=str(operation.get("x-toolfront-audience")),
                scope=operation.get("x-toolfront-scope"),
                permission=operation.get("x-toolfront-permission"),
                danger=operation.get("x-toolfront-danger"),
                read_only=bool((operation.get("x-toolfront-annotations") or {}).get("read_only")),
                input_schema=schema,
            )
        )
    return sorted(found, key=lambda tool: tool.name)


def check_audit(stack: SmokeStack) -> CheckResult:
    """Every chain of the audit trail intact, as ``toolfront audit verify`` checks it."""
    from toolfront.audit.anchors import read_anchors
    from toolfront.audit.log import DEFAULT_RETENTION_DAYS
    from toolfront.audit.trail import read_trail
    from toolfront.audit.verification import verify

    table, anchors_table = stack.tables.tables.get(AUDIT_TABLE), stack.tables.tables.get(ANCHORS_TABLE)
    if table is None:
        return skipped("audit trail", f"{stack.name} has no {AUDIT_TABLE}")

    def body() -> str:
        with stack.tables.reached() as client:
            trail = read_trail(client, table)
            anchors = read_anchors(client, anchors_table) if anchors_table else None
        verdict = verify(trail, now=datetime.now(UTC), retention_days=DEFAULT_RETENTION_DAYS, anchors=anchors)
        if verdict.problems:
            raise CheckFailed(
                f"{len(verdict.problems)} chain(s) not intact, first: {verdict.problems[0]} — run "
                '`toolfront audit verify` for every one (docs/operating.md, "The audit trail")'
            )
        chains = len({record.chain for record in trail.records} | set(trail.heads))
        return f"{len(trail.records)} records in {chains} chain(s)"

    return checked("audit trail", body)


def check_dynamodb(stack: SmokeStack) -> CheckResult:
    """One ``GetItem`` through toolfront's own transport (``toolfront.aws.wire.Wire``), signed as the
    functions sign theirs: a key that does not exist, on the keys table."""
    from toolfront.auth.keyitems import key_key
    from toolfront.aws.wire import Wire, fallback_reason, forget_fallback

    name = "dynamodb transport"
    before = fallback_reason()
    if before is not None:  # this process already sends through botocore: the wire cannot be tried
        return skipped(name, f"this process sends DynamoDB requests through botocore ({before})")
    try:
        [table] = stack.tables.table_names(KEYS_TABLE)
        wire = Wire(stack.tables.client)
        if fallback_reason() is not None:
            return skipped(name, f"the transport is off in this process ({fallback_reason()})")
        where = f"{table} at {wire.meta.endpoint_url} ({wire.meta.region_name})"
        found = wire.get_item(
            TableName=table, Key=key_key(f"smoke{uuid.uuid4().hex[:7]}"), ConsistentRead=True
        )
        refused = fallback_reason()
        if refused is not None:
            return failed(
                name,
                f"DynamoDB refused the transport's request ({refused}); the functions fall back to "
                "botocore (one warning in their logs) — deploy the layer with the botocore it pins "
                "(layers/core/requirements.txt), or set TOOLFRONT_WIRE=off, and report it",
            )
        if "Item" in found:
            return failed(name, f"GetItem of a key that cannot exist found one in {where}")
        return passed(name, f"GetItem on {where}")
    except CommandError as exc:
        return failed(name, str(exc))
    except Exception as exc:  # botocore's ClientError and connection errors, the wire's own
        return failed(name, _dynamodb_fix(exc, stack))
    finally:
        if before is None and fallback_reason() is not None:
            forget_fallback()  # the check's own fallback ends with it (the CLI may run in a test)


_DYNAMODB_FIXES = {
    "UnrecognizedClientException": "the credentials are not valid there — check AWS_PROFILE, or the "
    "region (--region): a key of another partition or a closed account is unknown",
    "InvalidSignatureException": "the request's signature was refused — check the clock, the region "
    "(--region) and AWS_ENDPOINT_URL",
    "ResourceNotFoundException": "the table does not exist there — is --region the stack's region, "
    "AWS_ENDPOINT_URL unset, and the stack (its KeysTable) deployed?",
    "AccessDeniedException": "these credentials may not dynamodb:GetItem on the keys table",
}


def _dynamodb_fix(exc: Exception, stack: SmokeStack) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = str(response.get("Error", {}).get("Code", ""))
        message = str(response.get("Error", {}).get("Message", ""))[:200]
        fix = _DYNAMODB_FIXES.get(code, "see the message")
        if not stack.tables.deployed and code == "ResourceNotFoundException":
            fix = "the table is gone from the local stack — restart `toolfront dev` (`make dev`)"
        return f"GetItem through the transport: {code}: {message} — {fix}"
    fix = (
        "wrong region or endpoint (--region, AWS_ENDPOINT_URL)?"
        if stack.tables.deployed
        else stack.tables.hint.lstrip(": ")
    )
    return f"GetItem through the transport did not answer ({type(exc).__name__}: {exc}) — {fix}"
