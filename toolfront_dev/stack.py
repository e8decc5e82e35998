"""The local stack: moto with the template's resources, the functions' environment, the API server, dev.json.

The API server also serves the local managed login (``/_cognito``) when the template has a user pool.

One :class:`LocalStack` starts and stops all of it, for ``toolfront dev`` and for tests alike.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from toolfront_dev.aws import (
    REGION,
    MotoServer,
    configure_moto,
    create_tables,
    dynamodb_client,
    physical_table_name,
)
from toolfront_dev.cognito import (
    EMULATED_TYPES,
    USER_POOL,
    USER_POOL_CLIENT,
    create_user_pools,
    create_users,
    jwks_url,
)
from toolfront_dev.devinfo import DEV_JSON, DevInfo, write_dev_json
from toolfront_dev.environment import (
    EnvironmentPatch,
    active_template,
    function_environment,
    local_stack_name,
    point_at_moto,
    reset_process_clients,
    stack_intrinsics,
)
from toolfront_dev.errors import CommandError, StackError
from toolfront_dev.iam import Enforcement, enforce, stack_enforcement
from toolfront_dev.intrinsics import Intrinsics
from toolfront_dev.managed_login import PREFIX as MANAGED_LOGIN_PREFIX
from toolfront_dev.managed_login import ManagedLogin
from toolfront_dev.moto_atomic import make_dynamodb_atomic
from toolfront_dev.outbox import OUTBOX_NAME
from toolfront_dev.passwords import PasswordPolicy
from toolfront_dev.payload import LOCAL_ACCOUNT_ID
from toolfront_dev.routing import RouteTable
from toolfront_dev.seeds import Seed, check_passwords, seed_store
from toolfront_dev.server import HandlerLoader, LocalApi, LocalApiServer
from toolfront_dev.targets import key_store
from toolfront_dev.template import Template, load_template
from toolfront_dev.workflow import LocalWorkflow, ResourceNames, name_resources

logger = logging.getLogger(__name__)

DEFAULT_STAGE = "local"
# The variable toolfront.settings reads for a pool's signing keys; the issuer's own JWKS is real AWS.
JWKS_URL_VARIABLE = "TOOLFRONT_COGNITO_JWKS_URL"
# Where the sign-in facade sends people to sign in: Cognito's managed login, locally ManagedLogin.
DOMAIN_URL_VARIABLE = "TOOLFRONT_COGNITO_DOMAIN_URL"
# Where the approvals function appends approvers' links locally (SNS e-mail in AWS).
OUTBOX_VARIABLE = "TOOLFRONT_OUTBOX_PATH"
PUBLIC_URL = "PublicUrl"  # the template parameter links are built from


class LocalStack:
    """moto, the template's resources, the API server and dev.json, started and stopped together.

    moto keeps its state in module globals, so only one LocalStack may run per process.
    """

    _running: ClassVar[LocalStack | None] = None
    _running_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        project_dir: Path | str = ".",
        host: str = "127.0.0.1",
        port: int = 3000,
        moto_port: int = 0,
        *,
        stage: str = DEFAULT_STAGE,
        dev_json_path: Path | str | None = None,
        parameters: Mapping[str, str] | None = None,
        seed: Seed | None = None,
        enforce_iam: bool = True,
    ) -> None:
        """Describe the stack; nothing starts before :meth:`start`.

        Args:
            project_dir: the folder holding template.yaml and the functions' CodeUri folders.
            host: interface of the API server.
            port: port of the API server; 0 picks a free one.
            moto_port: port of the moto server (always on 127.0.0.1); 0 picks a free one.
            stage: names the stack ``toolfront-<stage>`` (``AWS::StackName``) and the tables
                ``toolfront-<stage>-<LogicalId>``.
            dev_json_path: where to write dev.json; ``<project_dir>/.toolfront/dev.json`` by default.
                The approvers' outbox is written next to it.
            parameters: template parameter values over the defaults (``{"EnableCognito": "false"}``).
            seed: principals, keys and Cognito users to load once the tables and the pool exist (the
                demo admin always is).
            enforce_iam: check every request a function makes against its policy in the template,
                refused as AWS refuses it (``AccessDeniedException``).
        """
        self.project_dir = Path(project_dir).resolve()
        self.stage = stage
        self.dev_json_path = Path(dev_json_path) if dev_json_path else self.project_dir / DEV_JSON
        self.stack_name = local_stack_name(stage)
        self.outbox_path = self.dev_json_path.parent / OUTBOX_NAME
        self._host, self._port, self._moto_port = host, port, moto_port
        self._parameters = dict(parameters or {})
        self._moto: MotoServer | None = None
        self._api: LocalApi | None = None
        self._server: LocalApiServer | None = None
        self._environment = EnvironmentPatch()
        self._info: DevInfo | None = None
        self._template: Template | None = None
        self._names: ResourceNames | None = None
        self._workflow: LocalWorkflow | None = None
        self._seed = seed or Seed()
        self._admin_key: str | None = None
        self._login: ManagedLogin | None = None
        self._enforce_iam = enforce_iam
        self._iam: Enforcement | None = None

    @property
    def info(self) -> DevInfo:
        """The running stack's URLs and table names (what dev.json holds)."""
        if self._info is None:
            raise StackError("the local stack is not running")
        return self._info

    @property
    def api_url(self) -> str:
        """Base URL of the local API, e.g. ``http://127.0.0.1:3000``."""
        return self.info.api_url

    @property
    def moto_endpoint(self) -> str:
        """Base URL of the moto server."""
        return self.info.moto_endpoint

    @property
    def table_names(self) -> Mapping[str, str]:
        """Physical table name by logical id."""
        return self.info.tables

    @property
    def admin_key(self) -> str | None:
        """The demo admin's key of this run (never written anywhere); ``None`` without key tables."""
        return self._admin_key

    @property
    def template(self) -> Template:
        """The parsed template the stack serves."""
        if self._template is None:
            raise StackError("the local stack is not running")
        return self._template

    @property
    def resource_names(self) -> ResourceNames:
        """The names and ARNs of the functions, state machines and topics created in moto."""
        if self._names is None:
            raise StackError("the local stack is not running")
        return self._names

    @property
    def routes(self) -> RouteTable:
        """The routes being served."""
        if self._api is None:
            raise StackError("the local stack is not running")
        return self._api.routes

    @property
    def app(self) -> LocalApi:
        """The WSGI application the server runs: requests dispatched to it run in this process."""
        if self._api is None:
            raise StackError("the local stack is not running")
        return self._api

    def handler(self, function_id: str) -> Any:
        """The very handler object the stack calls for a function (tests and benches instrument it)."""
        if self._api is None:
            raise StackError("the local stack is not running")
        return self._api.loader.handler(function_id)

    def start(self) -> LocalStack:
        """Start moto, create the tables, set the environment, serve the API and write dev.json.

        Everything that can be checked without a server (the template, route conflicts, the
        environment, free ports) is checked before anything starts. On failure whatever already
        started is stopped again.

        Raises:
            TemplateError: the template cannot be served.
            StackError: a port is taken, moto failed, or another LocalStack runs in this process.
        """
        with LocalStack._running_lock:
            if LocalStack._running is not None:
                raise StackError("a LocalStack is already running in this process")
            LocalStack._running = self
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        intrinsics, template = self._resolve_template()
        self._check_users(template, intrinsics)
        tables = {t.logical_id: physical_table_name(self.stage, t.logical_id) for t in template.tables}
        emulated = [r for r in template.resources if r.type in EMULATED_TYPES]
        # Functions, state machines and topics have predictable names and ARNs: known from here on.
        names = self._names = name_resources(template, intrinsics, prefix=self.stack_name)
        intrinsics = intrinsics.with_refs(names.refs(), names.attributes())
        # A dry run with stand-in ids: an unresolvable variable fails before any server starts.
        stand_ins = {r.logical_id: f"<{r.logical_id}>" for r in emulated}
        function_environment(template, intrinsics.with_refs(tables | stand_ins))
        self._template = template
        loader = HandlerLoader(template.functions)  # one set of modules for HTTP and Lambda invokes
        self._api = LocalApi(template, function_names=names.function_names, loader=loader, region=REGION)
        if any(r.type == USER_POOL for r in emulated):
            self._login = ManagedLogin(REGION)
            self._api.mount(MANAGED_LOGIN_PREFIX, self._login, "managed login")
        self._server = LocalApiServer(self._api, self._host, self._port)  # binds now: a busy port fails early
        self._workflow = LocalWorkflow(template, names, loader, role_name=f"{self.stack_name}-functions")
        self._moto = MotoServer(self._moto_port)
        make_dynamodb_atomic()  # conditional writes under concurrency behave as in DynamoDB
        moto_endpoint = self._moto.start()
        # moto's Step Functions interpreter calls back to localhost:$MOTO_PORT when a state machine
        # runs; ThreadedMotoServer does not set it. Set before any state machine can exist.
        self._environment.set("MOTO_PORT", str(self._moto.port))
        configure_moto(moto_endpoint)
        # Links point at this server (its port is known once bound), unless PublicUrl was given:
        # from here on, so that what is provisioned (the approvers' callback URL) says so too.
        own = {} if self._parameters.get(PUBLIC_URL) else {PUBLIC_URL: self._server.url}
        intrinsics = intrinsics.with_refs(own)
        ids = self._provision(moto_endpoint, template, tables, intrinsics)
        self._admin_key = self._load_seed(moto_endpoint, tables)
        pools = {r.logical_id: ids[r.logical_id] for r in emulated if r.type == USER_POOL}
        self._load_users(moto_endpoint, pools)
        login_url = f"{self._server.url}{MANAGED_LOGIN_PREFIX}" if self._login else ""
        live = intrinsics.with_refs(tables | ids | own)
        self._set_environment(template, live, moto_endpoint, pools, login_url)
        if self._enforce_iam:  # before the first request: every function's request is checked
            account = LOCAL_ACCOUNT_ID
            self._iam = stack_enforcement(template.path, live, tables, pools, region=REGION, account=account)
            enforce(self._iam)
        self._server.start()
        clients = {r.logical_id: ids[r.logical_id] for r in emulated if r.type == USER_POOL_CLIENT}
        machines = {m.logical_id: m.arn for m in names.state_machines}
        outbox = str(self.outbox_path)
        self._info = DevInfo(
            self._server.url,
            moto_endpoint,
            REGION,
            self.stage,
            tables,
            pools,
            clients,
            machines,
            outbox,
            managed_login_url=login_url,
        )
        write_dev_json(self.dev_json_path, self._info)
        logger.info("local stack up: API %s, moto %s", self._info.api_url, moto_endpoint)

    def _provision(
        self, endpoint: str, template: Template, tables: Mapping[str, str], intrinsics: Intrinsics
    ) -> dict[str, str]:
        """Create every emulated resource in moto; the Ref value of each Cognito resource.

        The functions, state machines and topics come last: a definition may name any of the others.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        assert self._workflow is not None
        emulated = [r for r in template.resources if r.type in EMULATED_TYPES]
        try:
            create_tables(endpoint, template.tables, tables)
            ids = create_user_pools(endpoint, emulated, intrinsics.with_refs(tables), stage=self.stage)
            self._workflow.start(endpoint, intrinsics.with_refs({**tables, **ids}))
        except (BotoCoreError, ClientError) as exc:
            raise StackError(f"moto refused to create a resource of the template: {exc}") from exc
        return ids

    def _set_environment(
        self,
        template: Template,
        intrinsics: Intrinsics,
        moto_endpoint: str,
        pools: Mapping[str, str],
        login_url: str,
    ) -> None:
        environment = function_environment(template, intrinsics)
        if len(pools) == 1:
            environment[JWKS_URL_VARIABLE] = jwks_url(moto_endpoint, next(iter(pools.values())))
        if login_url:  # the domain's real URL (<prefix>.auth.<region>.amazoncognito.com) is AWS
            environment[DOMAIN_URL_VARIABLE] = login_url
        self.outbox_path.parent.mkdir(parents=True, exist_ok=True)
        self.outbox_path.write_bytes(b"")  # this run's links only: an earlier run's codes are void
        environment[OUTBOX_VARIABLE] = str(self.outbox_path)
        # Every function runs in this one process, so os.environ gets the union of their
        # environments; function_environment() refused any variable two functions disagree on.
        for name, value in environment.items():
            self._environment.set(name, value)
        point_at_moto(self._environment, moto_endpoint)
        reset_process_clients()

    def _load_seed(self, endpoint: str, tables: Mapping[str, str]) -> str | None:
        """Write the seed and the demo admin into the new tables; the admin's key."""
        from botocore.exceptions import BotoCoreError, ClientError

        from toolfront.errors import StoreUnavailableError

        try:
            store = key_store(tables, dynamodb_client(endpoint), where="template.yaml")
        except CommandError as exc:
            if self._seed.principals or self._seed.keys:
                raise StackError(f"cannot load the seed: {exc}") from exc
            return None  # a template without key tables: nothing to seed, no admin to print
        try:
            return seed_store(store, self._seed)
        except (BotoCoreError, ClientError, StoreUnavailableError) as exc:
            raise StackError(f"moto refused to store the seed: {exc}") from exc

    def _check_users(self, template: Template, intrinsics: Intrinsics) -> None:
        """Before anything starts: the seed's users need the one user pool, and its password policy."""
        if not self._seed.users:
            return
        pools = [r for r in template.resources if r.type == USER_POOL]
        if len(pools) != 1:
            found = "no user pool (is EnableCognito false?)" if not pools else f"{len(pools)} user pools"
            raise StackError(
                f"the seed has users, which need exactly one Cognito user pool; the template has {found}"
            )
        policies = intrinsics.value(pools[0].properties.get("Policies", {}), where=pools[0].logical_id)
        check_passwords(self._seed.users, PasswordPolicy.of_pool({"Policies": policies}))

    def _load_users(self, endpoint: str, pools: Mapping[str, str]) -> None:
        """Create the seed's users in the pool; the managed login keeps the scopes they may be granted."""
        from botocore.exceptions import BotoCoreError, ClientError

        if not self._seed.users:
            return
        assert self._login is not None  # _check_users found the one pool
        [pool_id] = pools.values()
        try:
            created = create_users(endpoint, pool_id, self._seed.users)
        except (BotoCoreError, ClientError) as exc:
            raise StackError(f"moto refused to create the seed's users: {exc}") from exc
        for user in self._seed.users:
            self._login.hold_scopes(pool_id, created[user.username], user.scopes)

    def _resolve_template(self) -> tuple[Intrinsics, Template]:
        template = load_template(self.project_dir / "template.yaml")
        intrinsics = stack_intrinsics(template, self.stage, self._parameters)
        return intrinsics, active_template(template, intrinsics)

    def stop(self) -> None:
        """Stop both servers and restore the environment; safe to call twice."""
        if self._workflow is not None:
            self._workflow.stop()  # moto's own Lambda invoke comes back with the last local stack
            self._workflow = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._moto is not None:
            self._moto.stop()
            self._moto = None
        if self._iam is not None:
            enforce(None)
            self._iam = None
        self._environment.restore()
        reset_process_clients()
        self._info = None
        self._names = None
        self._admin_key = None
        self._login = None
        with LocalStack._running_lock:
            if LocalStack._running is self:
                LocalStack._running = None

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
