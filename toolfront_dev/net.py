"""Loopback networking helpers shared by the moto server and the local API server."""

from __future__ import annotations

import socket

from toolfront_dev.errors import StackError

_WILDCARDS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}


def check_port_free(host: str, port: int) -> None:
    """Fail early if ``host:port`` cannot be bound.

    werkzeug reacts to a busy port with ``sys.exit(1)``, and inside moto's server thread that exit
    is silent and leaves ``ThreadedMotoServer.start()`` waiting forever; a clear error is kinder.

    Raises:
        StackError: the port is taken or the address is not local.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # Same option werkzeug's server sets, so a port in TIME_WAIT counts as free for both.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise StackError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def http_url(host: str, port: int) -> str:
    """The URL a client on this machine uses to reach a server bound to ``host:port``."""
    host = _WILDCARDS.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def free_port() -> int:
    """A loopback port that was free a moment ago (bound to port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
