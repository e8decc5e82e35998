"""The benches' moto DynamoDB: fake credentials, every table of template.yaml, toolfront's settings
pointed at them (the same set-up as the test suite's ``aws`` fixture, for benches that count)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
from moto import mock_aws

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.aws import TABLE_ENV, create_tables  # noqa: E402
from tests.conftest import reset_process_state  # noqa: E402

FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@contextlib.contextmanager
def moto_tables() -> Iterator[None]:
    """moto in this process with the template's tables; toolfront's process state reset around it."""
    os.environ.update(FAKE_AWS)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    with mock_aws():
        for logical_id, table in create_tables(boto3.client("dynamodb")).items():
            os.environ[TABLE_ENV[logical_id]] = table
        reset_process_state()
        try:
            yield
        finally:
            reset_process_state()
