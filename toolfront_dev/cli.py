"""The ``toolfront`` command line: one subcommand per entry of :data:`COMMANDS`.

A subcommand is a :class:`Command`: a function adding its arguments and a function running it; a
new subcommand (approvals, openapi) adds an entry, and ``main`` needs no change.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from toolfront_dev.command import Command
from toolfront_dev.commands_approvals import APPROVALS
from toolfront_dev.commands_approvers import APPROVERS
from toolfront_dev.commands_audit import AUDIT
from toolfront_dev.commands_check import CHECK
from toolfront_dev.commands_keys import KEYS
from toolfront_dev.commands_manifest import MANIFEST
from toolfront_dev.commands_new import NEW
from toolfront_dev.commands_openapi import OPENAPI
from toolfront_dev.commands_principals import PRINCIPALS
from toolfront_dev.commands_slack import SLACK
from toolfront_dev.commands_smoke import SMOKE
from toolfront_dev.commands_tools import TOOLS
from toolfront_dev.errors import DevError
from toolfront_dev.seeds import DEMO_PRINCIPAL, DEMO_SCOPES, Seed, demo_curl, load_seed

if TYPE_CHECKING:
    from toolfront_dev.stack import LocalStack


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {port}")
    return port


def _parameter(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def _configure_dev(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface of the API server (default: %(default)s)"
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=os.environ.get("PORT", "3000"),
        help="port of the API server (default: $PORT, else 3000)",
    )
    parser.add_argument(
        "--moto-port", type=_port, default=0, help="port of the moto server (default: any free one)"
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=Path.cwd(),
        help="folder holding template.yaml (default: the current directory)",
    )
    parser.add_argument(
        "--parameter",
        type=_parameter,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a template parameter over its default, e.g. EnableCognito=false (repeatable)",
    )
    parser.add_argument(
        "--approver-sign-in",
        action="store_true",
        help="held admin calls are decided by a signed-in approver (= --parameter ApproverSignIn=true)",
    )
    parser.add_argument(
        "--slack",
        action="store_true",
        help="post held calls to a local stand-in of Slack's Web API (.toolfront/slack.jsonl); "
        "`toolfront slack click` acts as Slack",
    )
    parser.add_argument(
        "--slack-user",
        type=_parameter,
        action="append",
        default=[],
        metavar="U123=EMAIL",
        help="with --slack: a Slack user the stand-in knows, and their profile's e-mail (repeatable)",
    )
    parser.add_argument(
        "--seed",
        type=Path,
        metavar="FILE",
        help="principals, keys and Cognito users to load: "
        '{"principals": [{"id", "permissions"}], "keys": [...], "users": [{"username", "password", ...}]}',
    )


def _configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    # Powertools' Logger(service="toolfront") filters every record whose logger name contains
    # "toolfront" out of the root handlers, which would swallow toolfront_dev's own lines (the
    # handlers' tracebacks among them); a handler of our own is beyond that filter's reach.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    dev_logger = logging.getLogger("toolfront_dev")
    dev_logger.addHandler(handler)
    dev_logger.setLevel(logging.INFO)
    dev_logger.propagate = False


def stack_parameters(args: argparse.Namespace) -> dict[str, str]:
    """The template parameters of ``toolfront dev``: each ``--parameter``, and the flags that are
    parameters by another name (``--approver-sign-in`` is ``ApproverSignIn=true``)."""
    return dict(args.parameter) | ({"ApproverSignIn": "true"} if args.approver_sign_in else {})


def _run_dev(args: argparse.Namespace) -> int:
    # Deferred: moto, werkzeug and cfn-lint are dev extras, and other subcommands must not need them.
    from toolfront_dev.outbox import OutboxWatcher
    from toolfront_dev.slack_local import LocalSlack, SlackLocalStack
    from toolfront_dev.stack import LocalStack

    # Before anything starts: a bad seed file is reported with nothing to stop.
    seed = None if args.seed is None else load_seed(args.seed)
    _configure_logging()
    options = {"host": args.host, "port": args.port, "moto_port": args.moto_port, "seed": seed}
    parameters = stack_parameters(args)
    stack = (
        SlackLocalStack(
            args.project, parameters=parameters, slack=LocalSlack(dict(args.slack_user)), **options
        )
        if args.slack
        else LocalStack(args.project, parameters=parameters, **options)
    )
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # SIGTERM (a supervisor, a test) stops as cleanly as Ctrl-C; the previous handlers come back
    # afterwards, for callers that run main() inside a longer-lived process.
    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        stack.start()
        try:
            _print_banner(stack, seed or Seed())
            # Approvers' links appear on this console as the approvals function writes them.
            with OutboxWatcher(stack.outbox_path):
                while not stop.wait(1.0):
                    pass
        finally:
            stack.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("toolfront dev: stopped", flush=True)
    return 0


def _print_banner(stack: LocalStack, seed: Seed) -> None:
    info = stack.info
    print(f"toolfront dev: API  {info.api_url}")
    print(f"               moto {info.moto_endpoint} (region {info.region})")
    print(f"               wrote {stack.dev_json_path}")
    for route in stack.routes.routes:
        print(f"  {route.route_key:<45} -> {route.function_id}")
    for logical_id, name in info.tables.items():
        print(f"  table {logical_id:<20} {name}")
    for logical_id, pool_id in info.user_pools.items():
        print(f"  user pool {logical_id:<16} {pool_id}")
    for logical_id, client_id in info.user_pool_clients.items():
        print(f"  app client {logical_id:<15} {client_id}")
    if info.managed_login_url:
        print(f"  managed login {info.managed_login_url}/oauth2/authorize")
    for user in seed.users:  # the password stays in the seed file
        groups = f"groups {', '.join(user.groups)}" if user.groups else "no groups"
        print(f"  seeded user {user.username} ({groups}; scopes {', '.join(user.scopes) or 'none'})")
    for logical_id, arn in info.state_machines.items():
        print(f"  state machine {logical_id:<12} {arn}")
    if info.state_machines:
        print(f"  approval links: printed here, and kept in {info.outbox}")
    slack = getattr(stack, "slack", None)
    if slack is not None:  # its token and signing secret stay in the stack's Secrets Manager
        print(f"  slack stand-in {slack.url} (channel {slack.channel}), every call in {slack.log_path}")
        print("     click: toolfront slack click --local APPROVAL_ID --user U123 --approve|--reject")
    health = f"curl {info.api_url}/health"
    if stack.admin_key is None:  # a template without key tables
        print(f"try: {health}")
    else:
        # Printed, never written: the key lives only in this run's tables and this terminal.
        print(f"admin key (principal {DEMO_PRINCIPAL}, scopes {', '.join(DEMO_SCOPES)}): {stack.admin_key}")
        print(f"try: {demo_curl(info.api_url, stack.admin_key)}")
        print(f"     {health}")
    print("Press Ctrl-C to stop.", flush=True)


COMMANDS: tuple[Command, ...] = (
    Command(
        name="dev",
        help="run the whole stack locally: moto, the template's tables and its API routes",
        configure=_configure_dev,
        run=_run_dev,
    ),
    KEYS,
    PRINCIPALS,
    APPROVALS,
    APPROVERS,
    SLACK,
    AUDIT,
    TOOLS,
    MANIFEST,
    CHECK,
    SMOKE,
    NEW,
    OPENAPI,
)


def build_parser(commands: Sequence[Command] = COMMANDS) -> argparse.ArgumentParser:
    """The argument parser with one subparser per command."""
    parser = argparse.ArgumentParser(prog="toolfront", description="Develop and operate a toolfront stack.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolfront`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except DevError as exc:
        name = " ".join(filter(None, [args.command, getattr(args, "action", None)]))
        print(f"toolfront {name}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
