"""IAM enforced in this process: every AWS request a function's code makes is checked against that
function's policy, and refused as AWS refuses it.

Every function of the local stack runs in one process and shares toolfront's cached clients, so the
caller cannot be told apart by its credentials as AWS tells it. Instead each invocation runs
``as`` its function (:class:`RunsAs`, a context variable), and a botocore handler, installed in
every botocore session of the process, checks each request before it is sent. It listens at
``provide-client-params``, which botocore's own calls and toolfront's DynamoDB transport
(``aws.wire``) both emit with the request's parameters. A request made outside any function (the
CLI, the stack's own provisioning, a test's setup) is an administrator's and is not checked.

What was allowed is recorded per function, so a test can hold the template to least privilege from
both sides (:meth:`Enforcement.unused_grants`).
"""

from __future__ import annotations

import contextvars
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from toolfront_dev.iam.evaluation import Access, Policy, Statement
from toolfront_dev.iam.requests import accesses
from toolfront_dev.payload import LOCAL_ACCOUNT_ID

#: The function whose code is running on this thread (its logical id), if any.
_RUNNING_AS: contextvars.ContextVar[str | None] = contextvars.ContextVar("toolfront_iam_role", default=None)
#: How each service answers a request IAM refused (error code, HTTP status).
_DENIALS = {"sns": ("AuthorizationError", 403), "lambda": ("AccessDeniedException", 403)}
_DEFAULT_DENIAL = ("AccessDeniedException", 400)


@dataclass(frozen=True, slots=True)
class Use:
    """One (action, resource) a function was allowed, as the request named it."""

    function: str
    action: str
    resource: str


class Ledger:
    """What the enforcements of one template granted and saw used, with the stack's own names
    taken out (``table/KeysTable``, ``function:catalogue``), so that stacks of different names (the
    unit tests', each local stack's) add up to one account of the template's grants."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.grants: set[Use] = set()
        self.uses: set[Use] = set()

    def grant(self, function: str, policy: Policy) -> None:
        with self._lock:
            self.grants |= {Use(function, a, logical_resource(r)) for a, r in policy.granted()}

    def use(self, function: str, access: Access) -> None:
        with self._lock:
            self.uses.add(Use(function, access.action, logical_resource(access.resource)))

    def unused(self, is_write: Callable[[str], bool]) -> list[Use]:
        """Granted write actions (``is_write``) no recorded request of that function used."""
        unused = []
        for grant in sorted(self.grants, key=lambda g: (g.function, g.action, g.resource)):
            if not is_write(grant.action):
                continue
            statement = Statement("Allow", actions=(grant.action,), resources=(grant.resource,))
            if not any(
                statement.applies(Access(u.action, u.resource))
                for u in self.uses
                if u.function == grant.function
            ):
                unused.append(grant)
        return unused


#: Each template's account, by the template's path (the test suite's least-privilege account).
LEDGERS: dict[str, Ledger] = defaultdict(Ledger)
_STACK_NAME = re.compile(r"(?<=[/:])toolfront-[a-z0-9-]*?-(?=[A-Za-z0-9]+\*?(?:$|[/:]))")
_USER_POOL = re.compile(r"userpool/[\w-]+_[0-9a-zA-Z]+")


def logical_resource(arn: str) -> str:
    """``arn`` with this stack's names replaced by the template's: the stack prefix of tables,
    functions and state machines dropped, a user pool's id as ``UserPool``."""
    return _USER_POOL.sub("userpool/UserPool", _STACK_NAME.sub("", arn))


@dataclass(frozen=True)
class Enforcement:
    """The policies being enforced, by function logical id; what they allowed goes to the ledger of
    their template (``LEDGERS[source]``)."""

    policies: Mapping[str, Policy]
    source: str = ""  # the template the policies come from
    region: str = "us-east-1"
    account: str = LOCAL_ACCOUNT_ID

    def __post_init__(self) -> None:
        for function, policy in self.policies.items():
            LEDGERS[self.source].grant(function, policy)

    def check(self, function: str, prefix: str, operation: str, params: Mapping[str, Any]) -> None:
        """Refuse (``ClientError`` as AWS's) a request ``function``'s policy does not allow."""
        policy = self.policies.get(function)
        for access in accesses(prefix, operation, params, region=self.region, account=self.account):
            if policy is None or not policy.allows(access):
                raise _denied(function, prefix, operation, access, self.account)
            LEDGERS[self.source].use(function, access)


class RunsAs:
    """A function's handler that runs its invocations as that function (attributes pass through)."""

    def __init__(self, function: str, handler: Any) -> None:
        self._function = function
        self._handler = handler

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        token = _RUNNING_AS.set(self._function)
        try:
            return self._handler(*args, **kwargs)
        finally:
            _RUNNING_AS.reset(token)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handler, name)


@contextmanager
def running_as(function: str) -> Iterator[None]:
    """Run the block as ``function`` (tests that call core code the way that function does)."""
    token = _RUNNING_AS.set(function)
    try:
        yield
    finally:
        _RUNNING_AS.reset(token)


def running_function() -> str | None:
    """The function whose code runs on this thread, if any."""
    return _RUNNING_AS.get()


class _Active:
    lock = threading.Lock()
    enforcement: Enforcement | None = None


def enforce(enforcement: Enforcement | None) -> Enforcement | None:
    """Enforce ``enforcement`` from now on in this process (None: stop); answers the one replaced."""
    install_hook()
    with _Active.lock:
        previous, _Active.enforcement = _Active.enforcement, enforcement
    return previous


def active() -> Enforcement | None:
    """The enforcement in force, if any."""
    return _Active.enforcement


def _check_request(params: Any, model: Any, **_: Any) -> None:
    """botocore's ``provide-client-params`` handler: returns nothing, so the parameters stay as given."""
    enforcement = _Active.enforcement
    function = _RUNNING_AS.get()
    if enforcement is None or function is None:
        return
    prefix = model.service_model.signing_name
    enforcement.check(function, prefix, model.name, params)


_installed = threading.Lock()
_hook_installed = False


def install_hook() -> None:
    """Add the check to every botocore session made from now on, and to boto3's default session."""
    global _hook_installed  # noqa: PLW0603 - one registration per process
    with _installed:
        if _hook_installed:
            return
        import boto3
        from botocore import handlers

        # First, so that nothing (moto's in-process mock included) answers a request before IAM has.
        handlers.BUILTIN_HANDLERS.append(("provide-client-params", _check_request, handlers.REGISTER_FIRST))
        if boto3.DEFAULT_SESSION is not None:
            events = boto3.DEFAULT_SESSION._session.get_component("event_emitter")
            events.register_first("provide-client-params", _check_request)
        _hook_installed = True


def _denied(function: str, prefix: str, operation: str, access: Access, account: str) -> Exception:
    from botocore.exceptions import ClientError

    code, status = _DENIALS.get(prefix, _DEFAULT_DENIAL)
    message = (
        f"User: arn:aws:sts::{account}:assumed-role/{function}Role/{function} is not authorized to "
        f"perform: {access.action} on resource: {access.resource} because no identity-based policy "
        f"allows the {access.action} action"
    )
    error: Exception = ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}},
        operation,
    )
    return error
