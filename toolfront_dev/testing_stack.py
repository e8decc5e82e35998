"""The local stack as ``toolfront.testing`` meets it: the seam (``TestStack``) implemented over
``LocalStack``, offered through the ``toolfront.testing`` entry point ``local_stack`` (pyproject.toml),
so the module that ships in the layer never imports this package."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolfront.auth.keystore import issue_key
from toolfront.tools.definition import Tool
from toolfront_dev.aws import dynamodb_client
from toolfront_dev.families import as_family, load_app
from toolfront_dev.stack import LocalStack
from toolfront_dev.targets import key_store


class StackForTests:
    """A started ``LocalStack`` of ``project``, as a family's tests use it."""

    def __init__(self, stack: LocalStack, project: Path) -> None:
        self.stack, self._project = stack, project

    @property
    def app(self) -> Any:
        return self.stack.app

    @property
    def outbox_path(self) -> Path:
        return Path(self.stack.outbox_path)

    def family_tools(self, family: str) -> list[Tool]:
        return list(as_family(load_app(self._project, family)).api_tools())

    def issue_key(
        self, *, owner: str, scopes: list[str], permissions: list[str], requires_approval: bool = False
    ) -> str:
        store = key_store(
            self.stack.table_names, dynamodb_client(self.stack.moto_endpoint), where="the test stack"
        )
        now = datetime.now(UTC)
        if permissions:
            store.grant(owner, permissions, now)
        issued, _ = issue_key(
            store,
            owner=owner,
            scopes=scopes,
            requires_approval=requires_approval,
            description="test",
            now=now,
        )
        return issued


@contextmanager
def open_stack(project: Path, parameters: Mapping[str, str] | None = None) -> Iterator[StackForTests]:
    """The stack of ``project``, started for the block on a free port, with a dev.json of its own
    (a ``make dev`` of the same project keeps its own)."""
    with tempfile.TemporaryDirectory(prefix="toolfront-testing-") as scratch:
        stack = LocalStack(
            project, port=0, dev_json_path=Path(scratch) / "dev.json", parameters=parameters, stage="test"
        )
        with stack:
            yield StackForTests(stack, project)
