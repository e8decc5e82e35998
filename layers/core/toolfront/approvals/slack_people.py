"""Who clicked in Slack: a Slack user as a toolfront principal, and whether that person may decide.

A Slack user is a person toolfront knows by one of two ways. A **link** an operator made
(``toolfront approvers link-slack --slack-user U123 --principal alice [--team T]``): an item of the
approvals table under ``slack#<team>:<user>`` (``*`` for any team), beside the approvers' sign-in
items and never mistaken for an approval (ids begin ``apr_``); the person's permissions are the
principal's own. Else, with Cognito, the **e-mail** of the Slack profile (``users.info``) names one
Cognito user with that verified e-mail: its ``sub`` is the principal, as a signed-in approver's is,
so a person who votes in Slack and on the page is counted once, and its groups carry the
permissions. Section 14's rules then hold as for the page: the policy's approver permission, never
one's own call (nor one's team's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfront.auth.actors import ActorKind
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval
    from toolfront.auth.keystore import KeyStore

LINK_PREFIX = "slack#"
ANY_TEAM = "*"
#: Why a click changes nothing, as the audit record's ``error_code`` says it.
NOT_LINKED, NO_PERMISSION, OWN_CALL = "slack_user_not_linked", "approver_required", "own_call"


def link_key(team: str | None, user: str) -> str:
    """The approvals table's key of a Slack user's link (``*`` when it holds in any team)."""
    return f"{LINK_PREFIX}{team or ANY_TEAM}:{user}"


@dataclass(frozen=True, slots=True)
class SlackPerson:
    """A Slack user (``team:user``) and the principal toolfront knows them as (``None``: nobody);
    ``groups`` are the principals whose permissions they hold (a Cognito user's groups; a linked
    principal holds its own)."""

    slack_id: str
    principal: str | None
    groups: tuple[str, ...] = ()
    via: str = ""  # "link" or "email"

    @property
    def user(self) -> str:
        return self.slack_id.rpartition(":")[2]


class SlackPeople:
    """Slack users to principals, and the rules of who may decide."""

    client = aws.LazyClient("dynamodb")

    def __init__(
        self,
        table: str,
        keys: KeyStore,
        *,
        email_of: Callable[[str], str | None],
        user_pool_id: str | None = None,
        client: Any = None,
        cognito: Any = None,
    ) -> None:
        self._table, self._keys, self._email_of = table, keys, email_of
        self._pool, self._client, self._cognito = user_pool_id, client, cognito

    def identify(self, team: str, user: str) -> SlackPerson:
        """The person a Slack user is: their link (this team's, else any team's), else (with Cognito)
        the Cognito user with their profile's verified e-mail, else nobody."""
        slack_id = f"{team}:{user}"
        principal = self._linked(team, user)
        if principal is not None:
            return SlackPerson(slack_id, principal, (principal,), "link")
        if self._pool:
            email = self._email_of(user)
            found = self._cognito_user(email) if email else None
            if found is not None:
                sub, groups = found
                return SlackPerson(slack_id, sub, groups, "email")
        return SlackPerson(slack_id, None)

    def refusal(self, person: SlackPerson, approval: Approval) -> tuple[str, str] | None:
        """Why ``person`` may not decide ``approval`` (an error code and what to tell them), or ``None``."""
        if person.principal is None:
            return NOT_LINKED, (
                "toolfront does not know your Slack user: ask an operator to run `toolfront approvers "
                f"link-slack --slack-user {person.user} --principal <you>`, or to give you a Cognito "
                "user with your Slack e-mail"
            )
        requester = approval.requester
        own = (
            person.principal == requester.principal
            or (requester.kind == ActorKind.COGNITO and requester.id == person.principal)
            or (requester.principal is not None and requester.principal in person.groups)
        )
        if own:
            return OWN_CALL, "this is your own call (or your team's): another approver must decide it"
        from toolfront.auth.authenticator import permissions_of

        needed = approval.policy.approver_permission
        if needed not in permissions_of(self._keys.get_principals(list(person.groups))):
            return NO_PERMISSION, f"you may not decide this approval: it needs the {needed!r} permission"
        return None

    def _linked(self, team: str, user: str) -> str | None:
        keys = [link_key(team, user), link_key(None, user)]
        answer = dynamodb.call(
            self.client,
            "batch_get_item",
            RequestItems={
                self._table: {
                    "Keys": [{"approval_id": {"S": key}} for key in keys],
                    "ConsistentRead": True,
                    "ProjectionExpression": "approval_id, principal",
                }
            },
        )
        found = {
            item["approval_id"]["S"]: item["principal"]["S"]
            for item in answer.get("Responses", {}).get(self._table, [])
            if "principal" in item
        }
        return next((found[key] for key in keys if key in found), None)

    def _cognito_user(self, email: str) -> tuple[str, tuple[str, ...]] | None:
        """The ``sub`` and groups of the one enabled Cognito user whose verified e-mail this is."""
        if any(c in email for c in '"\\') or len(email) > 254:
            return None  # not an address a filter may quote
        cognito = self._cognito or aws.client("cognito-idp")
        users = cognito.list_users(UserPoolId=self._pool, Filter=f'email = "{email}"', Limit=2)["Users"]
        if len(users) != 1 or not users[0].get("Enabled", True):
            return None  # nobody, or an address two users share: it names no one person
        attributes = {a["Name"]: a["Value"] for a in users[0].get("Attributes", [])}
        if attributes.get("email_verified") != "true" or not attributes.get("sub"):
            return None
        groups = cognito.admin_list_groups_for_user(UserPoolId=self._pool, Username=users[0]["Username"])
        return attributes["sub"], tuple(g["GroupName"] for g in groups.get("Groups", []))
