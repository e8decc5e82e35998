"""Approvers' sign-in parts on moto: a sign-in state is used once, a session expires, the CSRF token
is bound to one session and one approval, and the four-eyes rule reads the groups' permissions."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest

from tests.aws import key_store
from toolfront.approvals.approvers import Approver, ApproverSignIn
from toolfront.approvals.records import Approval, ApprovalStatus, Requester
from toolfront.errors import ApproverRequiredError, InvalidConfirmationError

NOW = 1_800_000_000.0


def sign_in(clock: list[float]) -> ApproverSignIn:
    return ApproverSignIn(
        "ApprovalsTable",
        user_pool_id="us-east-1_pool",
        domain_url="https://login.example.com",
        client_name="toolfront-test-approvers",
        keys=key_store(),
        region="us-east-1",
        client=boto3.client("dynamodb"),
        clock=lambda: clock[0],
    )


def held(requester: Requester) -> Approval:
    moment = datetime.fromtimestamp(NOW, UTC)
    return Approval(
        "apr_1", "shop.delete_item", "fn", {}, "d", requester, "danger", ApprovalStatus.PENDING,
        moment, moment, "req-1", "https://api.example.com",
    )  # fmt: skip


def test_a_sign_in_state_is_taken_once_and_not_after_it_expires(aws: None) -> None:
    clock = [NOW]
    signing = sign_in(clock)
    signing._put("signin#one", {"verifier": "v", "return_to": "/approvals/apr_1"}, 600)
    assert signing._take("signin#one") is not None
    assert signing._take("signin#one") is None  # a replayed callback finds nothing
    signing._put("signin#two", {"verifier": "v", "return_to": "/x"}, 600)
    clock[0] += 601
    assert signing._take("signin#two") is None
    with pytest.raises(InvalidConfirmationError, match="unknown or expired"):
        signing.finish("a-code", "no-such-state", "browser", "https://api.example.com")


def test_a_session_lasts_eight_hours(aws: None) -> None:
    clock = [NOW]
    signing = sign_in(clock)
    person = {"sub": "s-1", "username": "ann@example.com", "groups": '["approvers"]'}
    signing._put("session#" + hashlib.sha256(b"tok").hexdigest(), person, 8 * 3600)
    assert signing.approver("tok") == Approver("s-1", "ann@example.com", ("approvers",))
    assert signing.approver("other") is None and signing.approver(None) is None
    clock[0] += 8 * 3600
    assert signing.approver("tok") is None


def test_the_csrf_token_is_bound_to_the_session_and_the_approval() -> None:
    token = ApproverSignIn.csrf_token("session-a", "apr_1")
    assert token != ApproverSignIn.csrf_token("session-b", "apr_1")
    assert token != ApproverSignIn.csrf_token("session-a", "apr_2")
    assert token == ApproverSignIn.csrf_token("session-a", "apr_1")


def test_four_eyes_and_the_approver_permission(aws: None) -> None:
    store = key_store()
    store.grant("approvers", ["approver"], datetime.now(UTC))
    store.grant("readers", ["shop"], datetime.now(UTC))
    signing = sign_in([NOW])
    ann = Approver("sub-ann", "ann@example.com", ("approvers",))
    signing.check(ann, held(Requester("key", "k1", "alice")))  # someone else's call: allowed
    with pytest.raises(ApproverRequiredError, match="your own call"):
        signing.check(ann, held(Requester("cognito", "sub-ann", "ann")))
    with pytest.raises(ApproverRequiredError, match="your own call"):
        signing.check(ann, held(Requester("key", "k2", "approvers")))
    with pytest.raises(ApproverRequiredError, match="needs the 'approver' permission"):
        signing.check(
            Approver("sub-olga", "olga@example.com", ("readers",)), held(Requester("key", "k1", "alice"))
        )


def test_finish_refuses_a_state_started_in_another_browser(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ApproverSignIn, "client_id", lambda self: "approvers-client")
    monkeypatch.setattr(ApproverSignIn, "_exchange", lambda self, code, verifier, uri: {"sub": "s-1"})
    signing = sign_in([NOW])
    url, browser = signing.start("/approvals/apr_1", "https://api.example.com")
    state = parse_qs(urlsplit(url).query)["state"][0]
    with pytest.raises(InvalidConfirmationError, match="another browser"):
        signing.finish("a-code", state, "someone-elses-" + browser, "https://api.example.com")
    with pytest.raises(InvalidConfirmationError, match="unknown or expired"):  # the state is spent
        signing.finish("a-code", state, browser, "https://api.example.com")
    url, browser = signing.start("/approvals/apr_1", "https://api.example.com")
    token, back = signing.finish("a-code", parse_qs(urlsplit(url).query)["state"][0], browser, "https://x")
    assert back == "/approvals/apr_1" and signing.approver(token) is not None


def test_end_deletes_the_session(aws: None) -> None:
    signing = sign_in([NOW])
    person = {"sub": "s-1", "username": "ann@example.com", "groups": '["approvers"]'}
    signing._put("session#" + hashlib.sha256(b"tok").hexdigest(), person, 8 * 3600)
    signing.end("tok")
    assert signing.approver("tok") is None
