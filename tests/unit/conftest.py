"""Fixtures of the unit tests that need more than moto's tables."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.oauth import facade_pool


@pytest.fixture
def pool(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The sign-in facade's user pool (moto), the facade configured for it."""
    yield from facade_pool(monkeypatch)
