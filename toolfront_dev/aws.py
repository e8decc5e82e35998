"""Local AWS: a moto server on a loopback port, configured for Step Functions, with the template's tables.

Everything here talks to moto over HTTP with explicit endpoint and credentials, never to real AWS.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from typing import Any

from toolfront_dev.errors import StackError
from toolfront_dev.net import check_port_free, http_url
from toolfront_dev.server import silence_werkzeug
from toolfront_dev.template import TableSpec

logger = logging.getLogger(__name__)

REGION = "us-east-1"
MOTO_HOST = "127.0.0.1"
# Step Functions must really execute the approval state machine, and moto's Lambda backend must
# not look for Docker (the local stack needs no Docker: docs/contract.md, "The local stack").
MOTO_CONFIG: Mapping[str, Any] = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
_DUMMY_SECRET = "testing"  # moto accepts any credentials; these only keep botocore from looking further
# moto is on loopback: an HTTP(S)_PROXY from the shell must not see these calls.
_LOOPBACK_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def physical_table_name(stage: str, logical_id: str) -> str:
    """The local name of a table: ``toolfront-<stage>-<LogicalId>``."""
    return f"toolfront-{stage}-{logical_id}"


class MotoServer:
    """moto's ThreadedMotoServer on the loopback interface, with a known port."""

    def __init__(self, port: int = 0) -> None:
        """Prepare the server; ``port`` 0 lets the OS pick a free one when it starts."""
        self._requested_port = port
        self._server: Any = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The bound port (only once started)."""
        if self._port is None:
            raise StackError("the moto server is not running")
        return self._port

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return http_url(MOTO_HOST, self.port)

    def start(self) -> str:
        """Start serving on a daemon thread and return the endpoint.

        Raises:
            StackError: the requested port is taken.
        """
        from moto.server import ThreadedMotoServer  # deferred: importing moto takes a while

        check_port_free(MOTO_HOST, self._requested_port)
        silence_werkzeug()
        self._server = ThreadedMotoServer(ip_address=MOTO_HOST, port=self._requested_port, verbose=False)
        self._server.start()
        self._port = int(self._server.get_host_and_port()[1])
        return self.endpoint

    def stop(self) -> None:
        """Stop serving; werkzeug closes the socket when its serve loop ends."""
        if self._server is not None:
            self._server.stop()
            self._server = None
            self._port = None


def configure_moto(endpoint: str) -> None:
    """Wipe moto's state and switch on real Step Functions execution without Docker.

    moto keeps its backends in module globals, so a server started after another one in the same
    process would otherwise inherit the earlier stack's tables.

    Raises:
        StackError: moto refused a call.
    """
    _post(f"{endpoint}/moto-api/reset", None)
    _post(f"{endpoint}/moto-api/config", MOTO_CONFIG)


def moto_client(endpoint: str, service: str) -> Any:
    """A low-level client bound to moto, whatever the process environment says."""
    import boto3  # deferred: costs ~200 ms, paid only when the stack starts
    from botocore.config import Config

    return boto3.session.Session().client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=_DUMMY_SECRET,
        aws_secret_access_key=_DUMMY_SECRET,
        config=Config(connect_timeout=2, read_timeout=10, retries={"mode": "standard", "max_attempts": 3}),
    )


def dynamodb_client(endpoint: str) -> Any:
    """A low-level DynamoDB client bound to moto."""
    return moto_client(endpoint, "dynamodb")


def create_tables(endpoint: str, tables: Iterable[TableSpec], names: Mapping[str, str]) -> None:
    """Create each table on demand (PAY_PER_REQUEST) and switch on its TTL when declared.

    Args:
        endpoint: the moto endpoint.
        tables: the template's tables.
        names: physical name of each table, by logical id.
    """
    dynamodb = dynamodb_client(endpoint)
    for table in tables:
        request: dict[str, Any] = {
            "TableName": names[table.logical_id],
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": _key_schema(table.key_schema),
            "AttributeDefinitions": [
                {"AttributeName": d.attribute_name, "AttributeType": d.attribute_type}
                for d in table.attribute_definitions
            ],
        }
        if table.global_secondary_indexes:
            request["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.index_name,
                    "KeySchema": _key_schema(index.key_schema),
                    "Projection": {"ProjectionType": index.projection_type}
                    | (
                        {"NonKeyAttributes": list(index.non_key_attributes)}
                        if index.non_key_attributes
                        else {}
                    ),
                }
                for index in table.global_secondary_indexes
            ]
        dynamodb.create_table(**request)
        if table.time_to_live is not None and table.time_to_live.enabled:
            dynamodb.update_time_to_live(
                TableName=names[table.logical_id],
                TimeToLiveSpecification={"Enabled": True, "AttributeName": table.time_to_live.attribute_name},
            )
        logger.debug("created table %s", names[table.logical_id])


def _key_schema(elements: Iterable[Any]) -> list[dict[str, str]]:
    return [{"AttributeName": e.attribute_name, "KeyType": e.key_type} for e in elements]


def _post(url: str, payload: Mapping[str, Any] | None) -> None:
    data = b"" if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with _LOOPBACK_OPENER.open(request, timeout=10) as response:
            response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise StackError(f"moto refused POST {url}: {exc}") from exc
