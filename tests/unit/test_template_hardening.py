"""The template's own hardening (security round 3, N16): the HTTP API's access log, the approvers'
topic encrypted, the user pool kept through a stack delete and protected as the tables are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    parsed, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    found: dict[str, Any] = parsed["Resources"]
    return found


def test_template_http_api_logs_access_to_a_group_with_retention(resources: dict[str, Any]) -> None:
    settings = resources["HttpApi"]["Properties"]["AccessLogSettings"]
    group_id = settings["DestinationArn"]["Fn::GetAtt"][0]
    group = resources[group_id]

    assert group["Type"] == "AWS::Logs::LogGroup" and group["Properties"]["RetentionInDays"] > 0
    assert "$context.requestId" in settings["Format"]
    # a credential put in the URL (refused) must not be kept in the log either
    assert "querystring" not in settings["Format"].lower() and "$context.rawpath" not in settings["Format"]


def test_template_approver_topic_is_encrypted_with_the_aws_managed_key(resources: dict[str, Any]) -> None:
    assert resources["ApproverTopic"]["Properties"]["KmsMasterKeyId"] == "alias/aws/sns"


def test_template_user_pool_is_retained_and_protected_with_the_tables(resources: dict[str, Any]) -> None:
    pool = resources["UserPool"]

    assert pool["DeletionPolicy"] == "Retain" and pool["UpdateReplacePolicy"] == "Retain"
    assert pool["Properties"]["DeletionProtection"] == {"Fn::If": ["DeletionProtected", "ACTIVE", "INACTIVE"]}
