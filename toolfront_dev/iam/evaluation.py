"""IAM's decision for one request: an explicit Deny wins, else an Allow must match, else denied.

Why by hand: no maintained Python package evaluates identity policies offline (moto's IAM check
ignores resources and conditions; policy linters such as parliament only read them). The part of
IAM's logic an identity policy of this template can use is small: actions and resources with ``*``
and ``?``, ``NotAction``/``NotResource``, and the condition operators below. An operator it does not
know fails the request loudly, so a policy it cannot read is never taken as allowing anything.
See https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from toolfront_dev.errors import TemplateError


@dataclass(frozen=True, slots=True)
class Access:
    """One (action, resource) a request needs, with the condition keys AWS would supply for it."""

    action: str
    resource: str
    context: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a policy document, intrinsics resolved."""

    effect: str
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    not_resources: tuple[str, ...] = ()
    conditions: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, where: str) -> Statement:
        """A statement from its JSON form (``Action`` or ``NotAction``, ``Resource`` or ``NotResource``)."""
        effect = raw.get("Effect")
        if effect not in ("Allow", "Deny"):
            raise TemplateError(f"{where}: a statement's Effect must be Allow or Deny, not {effect!r}")
        conditions = {
            operator: {key: _strings(values) for key, values in dict(entries).items()}
            for operator, entries in dict(raw.get("Condition", {})).items()
        }
        for operator in conditions:
            _operator(operator, where=where)  # an operator we cannot evaluate fails now, not later
        return cls(
            effect=effect,
            actions=_strings(raw.get("Action", ())),
            not_actions=_strings(raw.get("NotAction", ())),
            resources=_strings(raw.get("Resource", ())),
            not_resources=_strings(raw.get("NotResource", ())),
            conditions=conditions,
        )

    def applies(self, access: Access) -> bool:
        """Whether this statement covers ``access`` (its action, its resource and its conditions)."""
        if self.actions and not any(_matches(p, access.action, fold=True) for p in self.actions):
            return False
        if self.not_actions and any(_matches(p, access.action, fold=True) for p in self.not_actions):
            return False
        if self.resources and not any(_matches(p, access.resource) for p in self.resources):
            return False
        if self.not_resources and any(_matches(p, access.resource) for p in self.not_resources):
            return False
        return all(
            _condition(operator, key, values, access.context.get(key))
            for operator, entries in self.conditions.items()
            for key, values in entries.items()
        )


@dataclass(frozen=True, slots=True)
class Policy:
    """The statements of every policy attached to one role."""

    statements: tuple[Statement, ...]

    @classmethod
    def parse(cls, documents: Iterable[Mapping[str, Any]], *, where: str) -> Policy:
        statements: list[Statement] = []
        for document in documents:
            raw = document.get("Statement", [])
            for entry in raw if isinstance(raw, list) else [raw]:
                statements.append(Statement.parse(entry, where=where))
        return cls(tuple(statements))

    def allows(self, access: Access) -> bool:
        """IAM's answer: no Deny applies and at least one Allow does."""
        applying = [s for s in self.statements if s.applies(access)]
        return bool(applying) and all(s.effect == "Allow" for s in applying)

    def granted(self) -> list[tuple[str, str]]:
        """Every (action pattern, resource pattern) an Allow statement names."""
        return [
            (action, resource)
            for s in self.statements
            if s.effect == "Allow"
            for action in s.actions
            for resource in s.resources or ("*",)
        ]


def _strings(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, bool):
        return ("true" if raw else "false",)
    return tuple(str(item) for item in raw)


@lru_cache(maxsize=4096)
def _pattern(pattern: str, fold: bool) -> re.Pattern[str]:
    # IAM's wildcards: * any run of characters (":" and "/" included), ? one character.
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(body, re.DOTALL | (re.IGNORECASE if fold else 0))


def _matches(pattern: str, value: str, *, fold: bool = False) -> bool:
    """Actions match case-insensitively, resources (ARNs) case-sensitively."""
    return _pattern(pattern, fold).fullmatch(value) is not None


_SET_PREFIXES = ("ForAllValues:", "ForAnyValue:")


def _operator(name: str, *, where: str) -> tuple[str, str, bool]:
    """(set qualifier, base operator, IfExists) of a condition operator, or a TemplateError."""
    qualifier = next((p for p in _SET_PREFIXES if name.startswith(p)), "")
    base = name[len(qualifier) :]
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    if base not in _COMPARISONS and base != "Null":
        raise TemplateError(f"{where}: the local IAM check cannot evaluate the condition operator {name}")
    return qualifier, base, if_exists


_COMPARISONS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda want, got: want == got,
    "StringNotEquals": lambda want, got: want != got,
    "StringEqualsIgnoreCase": lambda want, got: want.lower() == got.lower(),
    "StringLike": _matches,
    "StringNotLike": lambda want, got: not _matches(want, got),
    "ArnEquals": lambda want, got: want == got,
    "ArnLike": _matches,
    "Bool": lambda want, got: want.lower() == got.lower(),
}
_NEGATED = {"StringNotEquals", "StringNotLike"}


def _condition(name: str, key: str, wanted: tuple[str, ...], present: tuple[str, ...] | None) -> bool:
    """One condition key's test, with IAM's rules for missing keys and multivalued keys."""
    qualifier, base, if_exists = _operator(name, where="policy")
    if base == "Null":  # "true": the key must be absent; "false": present
        return (present is None) == (wanted[0].lower() == "true")
    if present is None:
        # ForAllValues over no values is true (IAM's documented edge); IfExists passes when absent.
        return qualifier == "ForAllValues:" or if_exists
    compare = _COMPARISONS[base]
    negated = base in _NEGATED

    def one(value: str) -> bool:
        hits = [compare(want, value) for want in wanted]
        return all(hits) if negated else any(hits)

    if qualifier == "ForAllValues:":
        return all(one(value) for value in present)
    if qualifier == "ForAnyValue:":
        return any(one(value) for value in present)
    return bool(present) and one(present[0])
