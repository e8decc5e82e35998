"""Wiring: the objects a function needs, built from the settings once per process, on first use.

``family_handler(module)`` is what a family's ``app.py`` exports as its ``lambda_handler``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import SimpleNamespace
from typing import Any

from toolfront.admission import Admission
from toolfront.authn import Authenticator
from toolfront.cognito import CognitoVerifier
from toolfront.keystore import DynamoDBKeyStore
from toolfront.pipeline import CallPipeline
from toolfront.registry import Registry
from toolfront.rest import Event, Response, RestAdapter
from toolfront.settings import current
from toolfront.tools import Tool


@cache
def authenticator() -> Authenticator:
    """The process's authenticator (its key-owner memory lives as long as the process)."""
    settings = current()
    store = DynamoDBKeyStore(settings.keys_table, settings.principals_table)
    cognito = CognitoVerifier(settings.cognito) if settings.cognito else None
    return Authenticator(store, cognito)


@cache
def admission() -> Admission:
    """The process's admission (its memory of buckets lives as long as the process)."""
    settings = current()
    return Admission(settings.rate_limits_table, settings.idempotency_table, settings.limits)


def pipeline_for(registry: Registry) -> CallPipeline:
    settings = current()
    return CallPipeline(
        registry,
        authenticator().authenticate,
        admission(),
        batch_confirm_items=settings.batch_confirm_items,
        lease_seconds=settings.idempotency_lease_seconds,
    )


class FamilyHandler:
    """A family function's ``lambda_handler``: the family's tools behind the REST adapter."""

    def __init__(self, family: str, api_tools: Callable[[], list[Tool]]) -> None:
        self.registry = Registry.from_modules([SimpleNamespace(FAMILY=family, api_tools=api_tools)])
        self._adapter = RestAdapter(lambda: pipeline_for(self.registry))

    def __call__(self, event: Event, context: Any = None) -> Response:
        return self._adapter.handle(event, context)


def family_handler(family: str, api_tools: Callable[[], list[Tool]]) -> FamilyHandler:
    """The ``lambda_handler`` of a family: ``lambda_handler = family_handler(FAMILY, api_tools)``."""
    return FamilyHandler(family, api_tools)
