"""What the local stack writes at start: a seed file's principals and keys, its Cognito users, the demo admin.

A seed file is checked in full before anything starts; every problem names its entry and never
echoes a key's secret or a user's password. The demo admin's key is random per run and only ever
printed. A user's password is checked against the template's own pool policy once the template is
read (:func:`check_passwords`), before any server starts.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolfront.auth.keys import parse_key
from toolfront.auth.keystore import KeyStore, issue_key
from toolfront.calls.inputs import is_unicode_text, parse_json
from toolfront.errors import InvalidJsonError
from toolfront_dev.arguments import permission_problem, scope_problem
from toolfront_dev.errors import SeedError
from toolfront_dev.passwords import PasswordPolicy

DEMO_PRINCIPAL = "admin"
DEMO_PERMISSION = "catalogue"
DEMO_SCOPES = ("catalogue.*",)
DEMO_DESCRIPTION = "demo admin key of toolfront dev"
DEMO_TOOL_PATH = "/v1/tools/catalogue/list_products"
_PRINCIPAL_FIELDS = {"id": True, "permissions": True}  # field name -> required
_KEY_FIELDS = {
    "key": True,
    "owner": True,
    "scopes": True,
    "requires_approval": False,
    "expires_at": False,
    "description": False,
}
_USER_FIELDS = {"username": True, "password": True, "groups": False, "scopes": True}
# What moto accepts as an e-mail username (the pool's UsernameAttributes is email).
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# A group names a principal; Cognito's GroupName: 1 to 128 characters, none of them blank or control.
_GROUP = re.compile(r"[^\s\x00-\x1f\x7f]{1,128}")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
_KEY_FORMAT = "tfk_<12 lowercase letters or digits>_<32 URL-safe characters>"


@dataclass(frozen=True, slots=True)
class SeedPrincipal:
    """A principal and the permissions it is granted."""

    principal_id: str
    permissions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeedKey:
    """A key to import as it is (its secret known in advance, unlike a key ``keys create`` makes)."""

    key: str = field(repr=False)
    owner: str
    scopes: tuple[str, ...]
    requires_approval: bool = False
    expires_at: datetime | None = None
    description: str = ""


@dataclass(frozen=True, slots=True)
class SeedUser:
    """A Cognito user: signs in with ``username`` (an e-mail) and ``password`` on the local managed login.

    ``groups`` are principals (a token's ``cognito:groups`` bring their permissions); ``scopes``
    bound the tool scopes the local managed login grants the user.
    """

    username: str
    password: str = field(repr=False)
    groups: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Seed:
    """The contents of a seed file."""

    principals: tuple[SeedPrincipal, ...] = ()
    keys: tuple[SeedKey, ...] = ()
    users: tuple[SeedUser, ...] = ()


def load_seed(path: Path) -> Seed:
    """Read and check a seed file with the API's one JSON reader (UTF-8, nesting, NaN, lone surrogates).

    Raises:
        SeedError: the file is unreadable, not JSON, or has invalid entries (all of them named).
    """
    source = f"seed file {path}"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SeedError(f"cannot read seed file {path}: {exc.strerror or exc}") from None
    try:
        document = parse_json(raw, what=source)
    except InvalidJsonError as exc:
        # The reader refuses a lone surrogate without saying where: name its field when it can be.
        _raise(_surrogate_problems(_plain_json(raw)), source)
        raise SeedError(exc.message) from None
    return parse_seed(document, source=source)


def _plain_json(raw: bytes) -> Any:
    """``raw`` as Python's own parser reads UTF-8 JSON (surrogates let through), or None."""
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _surrogate_problems(document: Any) -> list[str]:
    """Each field holding a lone surrogate (which no store takes), by its path; never its value."""
    problems: list[str] = []
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str) and not is_unicode_text(item):
            where = path or "the document"
            problems.append(f"{where}: holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text")
        elif isinstance(item, dict):
            children = []
            for key, value in item.items():
                name = str(key) if is_unicode_text(str(key)) else "?"
                if name == "?":
                    problems.append(f"{path or 'the document'}: a field name holds a lone surrogate")
                children.append((value, f"{path}.{name}" if path else name))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((value, f"{path}[{index}]") for index, value in reversed(list(enumerate(item))))
    return problems


def parse_seed(document: Any, source: str = "seed") -> Seed:
    """Check a parsed seed document and build the :class:`Seed`.

    Raises:
        SeedError: listing every problem, each naming its entry (``keys[1] (owner 'alice')``).
    """
    problems: list[str] = []
    if not isinstance(document, dict):
        raise SeedError(
            f'{source}: expected an object {{"principals": [...], "keys": [...], "users": [...]}}'
        )
    _raise(_surrogate_problems(document), source)  # before any entry is read: moto would fail on one
    problems += [
        f"unknown field {name!r} (expected principals, keys, users)"
        for name in document.keys() - {"principals", "keys", "users"}
    ]
    principals = [
        _principal(e, f"principals[{i}]", problems)
        for i, e in enumerate(_list(document, "principals", problems))
    ]
    keys = [_key(e, f"keys[{i}]", problems) for i, e in enumerate(_list(document, "keys", problems))]
    seen: dict[str, int] = {}
    for index, key in enumerate(keys):
        parsed = parse_key(key.key) if key else None
        if parsed is not None and seen.setdefault(parsed.key_id, index) != index:
            problems.append(
                f"keys[{index}]: key id {parsed.key_id!r} already used by keys[{seen[parsed.key_id]}]"
            )
    users = [_user(e, f"users[{i}]", problems) for i, e in enumerate(_list(document, "users", problems))]
    named: dict[str, int] = {}
    for index, user in enumerate(users):
        # The pool's e-mail usernames are case-insensitive: Ann@ and ann@ are one user.
        first = named.setdefault(user.username.lower(), index) if user else index
        if user and first != index:
            problems.append(f"users[{index}]: username {user.username!r} already used by users[{first}]")
    _raise(problems, source)
    return Seed(tuple(p for p in principals if p), tuple(k for k in keys if k), tuple(u for u in users if u))


def check_passwords(users: Iterable[SeedUser], policy: PasswordPolicy, source: str = "seed") -> None:
    """Check each user's password against the pool's policy (moto enforces it too, less clearly).

    Raises:
        SeedError: naming each user whose password falls short, and what it lacks (never the password).
    """
    problems = [
        f"users[{index}] ({user.username!r}): the password does not meet the user pool's password policy: "
        f"it needs {', '.join(lacks)}"
        for index, user in enumerate(users)
        if (lacks := policy.missing(user.password))
    ]
    _raise(problems, source)


def _raise(problems: list[str], source: str) -> None:
    if problems:
        raise SeedError(f"{source} is invalid:\n" + "\n".join(f"  - {p}" for p in problems))


def _list(document: dict[str, Any], name: str, problems: list[str]) -> list[Any]:
    value = document.get(name, [])
    if not isinstance(value, list):
        problems.append(f"{name}: expected a list, got {type(value).__name__}")
        return []
    return value


def _fields(entry: Any, label: str, allowed: dict[str, bool], problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        problems.append(f"{label}: expected an object, got {type(entry).__name__}")
        return None
    found = len(problems)
    problems += [f"{label}: unknown field {name!r}" for name in sorted(entry.keys() - allowed.keys())]
    problems += [
        f"{label}: missing field {name!r}"
        for name, required in allowed.items()
        if required and name not in entry
    ]
    return entry if len(problems) == found else None


def _strings(value: Any, label: str, what: str, problems: list[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{label}: {what} must be a list of strings")
        return ()
    return tuple(value)


def _principal(entry: Any, label: str, problems: list[str]) -> SeedPrincipal | None:
    fields = _fields(entry, label, _PRINCIPAL_FIELDS, problems)
    if fields is None:
        return None
    principal_id = fields["id"]
    if not isinstance(principal_id, str) or not principal_id.strip():
        problems.append(f"{label}: id must be a non-blank string")
        return None
    label = f"{label} ({principal_id!r})"
    permissions = _strings(fields["permissions"], label, "permissions", problems)
    bad = [problem for p in permissions if (problem := permission_problem(p))]
    problems += [f"{label}: {problem}" for problem in bad]
    return None if bad else SeedPrincipal(principal_id, permissions)


def _key(entry: Any, label: str, problems: list[str]) -> SeedKey | None:
    fields = _fields(entry, label, _KEY_FIELDS, problems)
    if fields is None:
        return None
    owner = fields["owner"]
    if not isinstance(owner, str) or not owner.strip():
        problems.append(f"{label}: owner must be a non-blank string")
        return None
    label, found = f"{label} (owner {owner!r})", len(problems)
    # The key itself is never quoted back: a seed file's keys are real credentials.
    if not isinstance(fields["key"], str) or parse_key(fields["key"]) is None:
        problems.append(f"{label}: bad key format: a key must look like {_KEY_FORMAT}")
    scopes = _strings(fields["scopes"], label, "scopes", problems)
    problems += [f"{label}: {problem}" for s in scopes if (problem := scope_problem(s))]
    requires_approval = fields.get("requires_approval", False)
    if not isinstance(requires_approval, bool):
        problems.append(f"{label}: requires_approval must be true or false")
    description = fields.get("description", "")
    if not isinstance(description, str):
        problems.append(f"{label}: description must be a string")
    expires_at = _moment(fields.get("expires_at"), label, problems)
    if len(problems) != found:
        return None
    return SeedKey(fields["key"], owner, scopes, requires_approval, expires_at, description)


def _user(entry: Any, label: str, problems: list[str]) -> SeedUser | None:
    fields = _fields(entry, label, _USER_FIELDS, problems)
    if fields is None:
        return None
    username = fields["username"]
    if not isinstance(username, str) or not _EMAIL.fullmatch(username):
        problems.append(f"{label}: username must be an e-mail address (the user pool signs in by e-mail)")
        return None
    label, found = f"{label} ({username!r})", len(problems)
    # The password is never quoted back: a seed file's passwords are real credentials.
    if not isinstance(fields["password"], str) or not fields["password"]:
        problems.append(f"{label}: password must be a non-empty string")
    groups = _strings(fields.get("groups", []), label, "groups", problems)
    problems += [
        f"{label}: invalid group {g!r}: a group names a principal, 1 to 128 characters without blanks"
        for g in groups
        if not _GROUP.fullmatch(g)
    ]
    scopes = _strings(fields["scopes"], label, "scopes", problems)
    problems += [f"{label}: {problem}" for s in scopes if (problem := scope_problem(s))]
    if len(problems) != found:
        return None
    return SeedUser(username, fields["password"], groups, scopes)


def _moment(value: Any, label: str, problems: list[str]) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        try:
            return datetime.fromisoformat(value.upper().replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            pass  # the right shape but not a real moment (month 13): reported below
    problems.append(
        f"{label}: bad date in expires_at: expected RFC 3339 (2030-01-31T00:00:00Z) or null, got {value!r}"
    )
    return None


def seed_store(store: KeyStore, seed: Seed, now: datetime | None = None) -> str:
    """Write ``seed``'s principals and keys, then the demo admin; answer the admin's fresh key.

    Raises:
        botocore's errors, and toolfront's ``StoreUnavailableError``, when the store refuses a write.
    """
    at = now or datetime.now(UTC)
    for principal in seed.principals:
        if principal.permissions:  # DynamoDB refuses an empty set; no permissions = no record
            store.grant(principal.principal_id, list(principal.permissions), at)
    for key in seed.keys:
        issue_key(
            store,
            owner=key.owner,
            scopes=list(key.scopes),
            requires_approval=key.requires_approval,
            expires_at=key.expires_at,
            description=key.description,
            key=key.key,
            now=at,
        )
    store.grant(DEMO_PRINCIPAL, [DEMO_PERMISSION], at)
    admin_key, _ = issue_key(
        store, owner=DEMO_PRINCIPAL, scopes=list(DEMO_SCOPES), description=DEMO_DESCRIPTION, now=at
    )
    return admin_key


def demo_curl(api_url: str, key: str) -> str:
    """A shell command calling a catalogue tool with ``key``, quoted to work when pasted."""
    return shlex.join(
        [
            "curl",
            "-s",
            "-X",
            "POST",
            f"{api_url}{DEMO_TOOL_PATH}",
            "-H",
            f"Authorization: Bearer {key}",
            "-H",
            "Content-Type: application/json",
            "-d",
            "{}",
        ]
    )
