"""Least privilege from both sides: what each function was granted against what it was seen to use.

A ledger (``enforcement.LEDGERS``, one per template) holds every grant and every allowed request, in
the template's names. A write the template grants that no request used is a grant too many.
"""

from __future__ import annotations

from collections import defaultdict

from toolfront_dev.iam.enforcement import Ledger, Use

_DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "ConditionCheckItem"})
_READ_VERBS = ("Describe", "List", "Get")


def is_write(action: str) -> bool:
    """A DynamoDB write, or any Step Functions or Cognito action that is not a read."""
    prefix, _, verb = action.partition(":")
    if prefix == "dynamodb":
        return verb in _DYNAMODB_WRITES
    if prefix in ("states", "cognito-idp"):  # AdminGetUser, AdminListGroupsForUser: reads too
        return not verb.removeprefix("Admin").startswith(_READ_VERBS)
    return False


def unused_writes(ledger: Ledger) -> list[Use]:
    """The write grants no request of their function used."""
    return ledger.unused(is_write)


def usage_table(ledger: Ledger) -> str:
    """A Markdown table: per function, each (action, resource) used, and the unused write grants."""
    used: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for use in ledger.uses:
        used[use.function].add((use.action, short_resource(use.resource)))
    unused = {(u.function, u.action, short_resource(u.resource)) for u in unused_writes(ledger)}
    lines = ["| function | action | resource | |", "|---|---|---|---|"]
    for function in sorted({g.function for g in ledger.grants} | set(used)):
        for action, resource in sorted(used[function]):
            lines.append(f"| {function} | {action} | {resource} | used |")
        for _, action, resource in sorted(u for u in unused if u[0] == function):
            lines.append(f"| {function} | {action} | {resource} | **granted, never used** |")
    return "\n".join(lines) + "\n"


def short_resource(arn: str) -> str:
    """``table/KeysTable`` for ``arn:aws:dynamodb:<region>:<account>:table/KeysTable``."""
    return arn.split(":", 5)[5] if arn.count(":") >= 5 else arn
