"""Settings read once from the environment into a frozen object; a bad value names its variable.

``template.yaml`` is the only source of deployed values; the local stack sets the same variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from urllib.parse import urlsplit

from toolfront.auth.actors import Actor, ActorKind
from toolfront.errors import ConfigurationError

#: Admin writes with a longer list than this are held for a person (``BatchConfirmItems``).
DEFAULT_BATCH_CONFIRM_ITEMS = 100


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Units per minute by kind of caller (the defaults of every deployment)."""

    admin_per_minute: int = 600
    public_token_per_minute: int = 60
    public_ip_per_minute: int = 30
    public_ip_guard_per_minute: int = 300  # every keyless call from one address, whatever its token
    public_holds_per_ip_per_hour: int = 10  # held calls keyless callers from one address may open
    fail_open: bool = False  # when the table is unavailable: False answers 503, True lets calls through
    # A leased key's units are spent in a warm function for at most this long (admission.leases):
    # the bound on how stale a revocation or a permission change can be for such a key.
    lease_max_age_ms: int = 1000

    def for_actor(self, actor: Actor) -> int:
        if actor.rate_limit is not None:
            return actor.rate_limit
        if actor.kind is ActorKind.CLIENT:
            return self.public_token_per_minute
        if actor.kind is ActorKind.ANONYMOUS:
            return self.public_ip_per_minute
        return self.admin_per_minute


@dataclass(frozen=True, slots=True)
class CognitoSettings:
    """Where access tokens come from: the user pool's issuer, the app client and the JWKS."""

    issuer: str
    client_ids: frozenset[str]  # the stack's own app clients
    jwks_url: str
    scope_prefix: str
    clients_table: str | None = None  # app clients the sign-in facade registered (their tokens count too)


@dataclass(frozen=True, slots=True)
class FacadeSettings:
    """The sign-in facade's own settings (only its function has them): the pool it registers app
    clients in, the managed login it sends people to, and the limits on registration."""

    user_pool_id: str
    managed_login_url: str  # https://<prefix>.auth.<region>.amazoncognito.com (locally the dev stand-in)
    metadata_hosts: frozenset[str]  # hosts whose client ID metadata documents may be fetched
    max_clients: int = 500
    registrations_per_ip_per_hour: int = 10

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FacadeSettings:
        env = os.environ if environ is None else environ
        login = _public_url(env, "TOOLFRONT_COGNITO_DOMAIN_URL")
        if login is None:
            raise ConfigurationError("environment variable TOOLFRONT_COGNITO_DOMAIN_URL is not set")
        return cls(
            user_pool_id=_required(env, "TOOLFRONT_COGNITO_USER_POOL_ID"),
            managed_login_url=login,
            metadata_hosts=frozenset(
                h.strip().lower()
                for h in env.get("TOOLFRONT_CLIENT_METADATA_HOSTS", "").split(",")
                if h.strip()
            ),
            max_clients=_integer(env, "TOOLFRONT_MAX_REGISTERED_CLIENTS", 500, low=1),
            registrations_per_ip_per_hour=_integer(
                env, "TOOLFRONT_MAX_REGISTRATIONS_PER_IP_PER_HOUR", 10, low=1
            ),
        )


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """The audit trail: its table, whether calls of read-only tools are kept too, and for how long."""

    table: str
    reads: bool = False  # AuditReads
    retention_days: int = 400  # AuditRetentionDays


@dataclass(frozen=True, slots=True)
class ApprovalSettings:
    """Where held calls wait: the approvals table, the workflow, and how approvers hear of them."""

    table: str
    state_machine_arn: str
    lifetime_seconds: int = 86400
    approvals_function: str = ""  # resumes workflows for the other functions (it alone holds tokens)
    tokens_table: str = ""  # the waiting workflows' task tokens (the approvals function's alone)
    topic_arn: str | None = None  # SNS topic of the approvers (AWS)
    outbox_path: str | None = None  # local stack: one JSON line per approval link
    sign_in: ApproverSignInSettings | None = None  # ApproverSignIn: deciding needs a signed-in approver


@dataclass(frozen=True, slots=True)
class ApproverSignInSettings:
    """Where approvers sign in: the user pool, its managed login, the approvers' app client's name."""

    user_pool_id: str
    domain_url: str
    client_name: str


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting a function reads from its environment (``from_env``), once per process.

    A docstring of its own also spares ``dataclass`` from writing one out of the signature
    (``inspect.signature``), which cost every cold start ~0.2 ms.
    """

    keys_table: str
    principals_table: str
    idempotency_table: str
    rate_limits_table: str
    cognito: CognitoSettings | None = None
    batch_confirm_items: int = DEFAULT_BATCH_CONFIRM_ITEMS
    limits: RateLimits = field(default_factory=RateLimits)
    idempotency_lease_seconds: int = 60
    approvals: ApprovalSettings | None = None  # None: held calls answer 501 (no workflow deployed)
    audit: AuditSettings | None = None  # None: no audit table (a deployment always has one)
    function_prefix: str = ""  # a family's function is <prefix><family> (MCP routes calls there)
    public_url: str | None = None  # PublicUrl: the API's address for links (None: its default URL)
    region: str = ""  # the function's AWS region (Lambda sets AWS_REGION)
    allowed_origins: frozenset[str] = frozenset()  # AllowedOrigins: pages that may call MCP besides the API's
    mcp_tools_page_size: int = 100  # McpToolsPageSize: tools per page of MCP tools/list

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            keys_table=_required(env, "TOOLFRONT_KEYS_TABLE"),
            principals_table=_required(env, "TOOLFRONT_PRINCIPALS_TABLE"),
            idempotency_table=_required(env, "TOOLFRONT_IDEMPOTENCY_TABLE"),
            rate_limits_table=_required(env, "TOOLFRONT_RATE_LIMITS_TABLE"),
            cognito=_cognito(env),
            batch_confirm_items=_integer(
                env, "TOOLFRONT_BATCH_CONFIRM_ITEMS", DEFAULT_BATCH_CONFIRM_ITEMS, low=1
            ),
            limits=RateLimits(
                admin_per_minute=_integer(env, "TOOLFRONT_RATE_ADMIN_PER_MINUTE", 600, low=1),
                public_token_per_minute=_integer(env, "TOOLFRONT_RATE_PUBLIC_TOKEN_PER_MINUTE", 60, low=1),
                public_ip_per_minute=_integer(env, "TOOLFRONT_RATE_PUBLIC_IP_PER_MINUTE", 30, low=1),
                public_ip_guard_per_minute=_integer(
                    env, "TOOLFRONT_RATE_PUBLIC_IP_GUARD_PER_MINUTE", 300, low=1
                ),
                public_holds_per_ip_per_hour=_integer(
                    env, "TOOLFRONT_MAX_PUBLIC_HOLDS_PER_IP_PER_HOUR", 10, low=1
                ),
                fail_open=_boolean(env, "TOOLFRONT_RATE_LIMIT_FAIL_OPEN", False),
                lease_max_age_ms=_integer(env, "TOOLFRONT_LEASE_MAX_AGE_MS", 1000, low=1),
            ),
            idempotency_lease_seconds=_integer(env, "TOOLFRONT_IDEMPOTENCY_LEASE_SECONDS", 60, low=1),
            approvals=_approvals(env),
            audit=_audit(env),
            function_prefix=env.get("TOOLFRONT_FUNCTION_PREFIX", "").strip(),
            public_url=_public_url(env, "TOOLFRONT_PUBLIC_URL"),
            region=(env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "").strip(),
            allowed_origins=frozenset(
                o.strip() for o in env.get("TOOLFRONT_ALLOWED_ORIGINS", "").split(",") if o.strip()
            ),
            mcp_tools_page_size=_integer(env, "TOOLFRONT_MCP_TOOLS_PAGE_SIZE", 100, low=1),
        )


@cache
def current() -> Settings:
    """The process's settings, read on first use (never at import time)."""
    return Settings.from_env()


@dataclass(frozen=True, slots=True)
class LogSettings:
    """What every log line and metric is filed under (Powertools' own variables, so its Logger agrees).

    Apart from ``Settings`` because a log line must be writable before (and without) the tables'
    settings, e.g. for the line of a call refused by a broken setting.
    """

    service: str = "toolfront"
    metrics_namespace: str = "toolfront"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LogSettings:
        env = os.environ if environ is None else environ
        return cls(
            service=env.get("POWERTOOLS_SERVICE_NAME", "").strip() or "toolfront",
            metrics_namespace=env.get("POWERTOOLS_METRICS_NAMESPACE", "").strip() or "toolfront",
        )


@cache
def log_settings() -> LogSettings:
    return LogSettings.from_env()


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def _integer(env: Mapping[str, str], name: str, default: int, *, low: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} must be an integer, got {raw!r}") from None
    if value < low:
        raise ConfigurationError(f"environment variable {name} must be at least {low}, got {value}")
    return value


def _boolean(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("true", "1", "yes"):
        return True
    if raw in ("false", "0", "no"):
        return False
    raise ConfigurationError(f"environment variable {name} must be true or false, got {raw!r}")


def _public_url(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip().rstrip("/")
    if not raw:
        return None
    parsed = urlsplit(raw)
    if parsed.scheme not in ("https", "http") or not parsed.netloc or parsed.query or parsed.fragment:
        raise ConfigurationError(
            f"environment variable {name} must be an absolute http(s) URL without query or fragment, "
            f"got {raw!r}"
        )
    return raw


def _approvals(env: Mapping[str, str]) -> ApprovalSettings | None:
    machine = env.get("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", "").strip()
    if not machine:
        return None
    return ApprovalSettings(
        table=_required(env, "TOOLFRONT_APPROVALS_TABLE"),
        state_machine_arn=machine,
        lifetime_seconds=_integer(env, "TOOLFRONT_APPROVAL_LIFETIME_SECONDS", 86400, low=1),
        approvals_function=env.get("TOOLFRONT_APPROVALS_FUNCTION", "").strip(),
        tokens_table=env.get("TOOLFRONT_APPROVAL_TOKENS_TABLE", "").strip(),
        topic_arn=env.get("TOOLFRONT_APPROVER_TOPIC_ARN", "").strip() or None,
        outbox_path=env.get("TOOLFRONT_OUTBOX_PATH", "").strip() or None,
        sign_in=_approver_sign_in(env),
    )


def _approver_sign_in(env: Mapping[str, str]) -> ApproverSignInSettings | None:
    if not _boolean(env, "TOOLFRONT_APPROVER_SIGN_IN", False):
        return None
    login = _public_url(env, "TOOLFRONT_COGNITO_DOMAIN_URL")
    if login is None:
        raise ConfigurationError(
            "TOOLFRONT_APPROVER_SIGN_IN needs TOOLFRONT_COGNITO_DOMAIN_URL (Cognito enabled)"
        )
    stage = env.get("TOOLFRONT_STAGE", "").strip() or "dev"
    return ApproverSignInSettings(
        user_pool_id=_required(env, "TOOLFRONT_COGNITO_USER_POOL_ID"),
        domain_url=login,
        client_name=f"toolfront-{stage}-approvers",  # template.yaml's ApproverClient
    )


def _audit(env: Mapping[str, str]) -> AuditSettings | None:
    table = env.get("TOOLFRONT_AUDIT_TABLE", "").strip()
    if not table:
        return None
    return AuditSettings(
        table=table,
        reads=_boolean(env, "TOOLFRONT_AUDIT_READS", False),
        retention_days=_integer(env, "TOOLFRONT_AUDIT_RETENTION_DAYS", 400, low=1),
    )


def _cognito(env: Mapping[str, str]) -> CognitoSettings | None:
    issuer = env.get("TOOLFRONT_COGNITO_ISSUER", "").strip().rstrip("/")
    if not issuer:
        return None
    clients = frozenset(
        c.strip() for c in _required(env, "TOOLFRONT_COGNITO_CLIENT_IDS").split(",") if c.strip()
    )
    return CognitoSettings(
        issuer=issuer,
        client_ids=clients,
        jwks_url=env.get("TOOLFRONT_COGNITO_JWKS_URL", "").strip() or f"{issuer}/.well-known/jwks.json",
        scope_prefix=env.get("TOOLFRONT_COGNITO_SCOPE_PREFIX", "toolfront").strip(),
        clients_table=env.get("TOOLFRONT_OAUTH_CLIENTS_TABLE", "").strip() or None,
    )
