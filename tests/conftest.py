"""Shared fixtures: the family modules loaded the way Lambda loads them (from their CodeUri)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import boto3
import pytest
from moto import mock_aws

from tests.aws import (
    APPROVALS_FUNCTION,
    FUNCTION_IDS,
    FUNCTION_PREFIX,
    TABLE_ENV,
    create_tables,
    template_enforcement,
)
from tests.moto_cognito import share_the_signing_key
from toolfront import wiring
from toolfront.aws import clients as toolfront_aws
from toolfront_dev.iam.enforcement import RunsAs, enforce
from toolfront_dev.moto_atomic import make_dynamodb_atomic

ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["tests.iam_account"]  # the least-privilege account of a whole run
share_the_signing_key()


def import_file(path: Path, name: str) -> ModuleType:
    """Import one file as Lambda finds it (its folder on the path), under a name of its own."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would; the module may look itself up
    sys.path.insert(0, str(path.parent))  # Lambda puts the function's folder on the path
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def load_family(name: str) -> ModuleType:
    """A fresh import of ``functions/<name>/app.py`` (every family's module is called ``app``), its
    ``lambda_handler`` running as that function (IAM checks its requests against its policy)."""
    module = import_file(ROOT / "functions" / name / "app.py", f"family_{name}_app")
    module.lambda_handler = RunsAs(FUNCTION_IDS[name], module.lambda_handler)
    return module


def approval_pages() -> ModuleType:
    """``functions/approvals/pages.py``, imported once."""
    found = sys.modules.get("approvals_pages")
    return found or import_file(ROOT / "functions" / "approvals" / "pages.py", "approvals_pages")


@pytest.fixture(scope="session")
def catalogue() -> ModuleType:
    return load_family("catalogue")


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto in-process, every table of template.yaml created, the TOOLFRONT_* variables set."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "TOOLFRONT_APPROVALS_FUNCTION": APPROVALS_FUNCTION,
        "TOOLFRONT_FUNCTION_PREFIX": FUNCTION_PREFIX,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("TOOLFRONT_COGNITO_ISSUER", raising=False)
    make_dynamodb_atomic()
    with mock_aws():
        # moto drops boto3's default session; the tests' clients share botocore's parsed data files,
        # as toolfront's own do (aws.clients.new_session), instead of parsing them for each client
        boto3.DEFAULT_SESSION = toolfront_aws.new_session()
        tables = create_tables(boto3.client("dynamodb"))
        for logical_id, name in tables.items():
            monkeypatch.setenv(TABLE_ENV[logical_id], name)
        reset_process_state()
        previous = enforce(template_enforcement(tables))  # what AWS would refuse, refused here too
        try:
            yield
        finally:
            enforce(previous)
    reset_process_state()


def reset_process_state() -> None:
    """Forget what a warm Lambda process remembers: clients, settings, the authenticator."""
    toolfront_aws.reset_clients()
    wiring.reset()
