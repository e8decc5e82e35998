"""The seed file's Cognito users: checked up front (passwords against the template's pool policy, never
echoed), created confirmed in the pool at start, refused when the template has no pool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dev.conftest import PROJECT_DIR, USER_EMAIL, USER_GROUP, copy_project
from toolfront_dev.aws import moto_client
from toolfront_dev.cognito import USER_POOL
from toolfront_dev.environment import stack_intrinsics
from toolfront_dev.errors import SeedError
from toolfront_dev.passwords import PasswordPolicy
from toolfront_dev.seeds import SeedUser, check_passwords, parse_seed
from toolfront_dev.stack import LocalStack
from toolfront_dev.template import load_template

TOOLFRONT = Path(sys.executable).parent / "toolfront"
PASSWORD = "Sturdy-Password-99"
USER: dict[str, Any] = {
    "username": "dora@example.com",
    "password": PASSWORD,
    "groups": ["catalogue_team", "ops"],
    "scopes": ["catalogue.products:read", "catalogue.*"],
}
LABEL = "users[0] ('dora@example.com')"
BAD_GROUP = "a group names a principal, 1 to 128 characters without blanks"
SCOPE_FORMS = "expected <module>.<resource>:<action>, <module>.<resource>:* or <module>.*"
WEAK = "the password does not meet the user pool's password policy: it needs"
TEMPLATE_POLICY = PasswordPolicy(12, require_symbols=False)  # upper, lower and digits: Cognito's defaults


def with_user(**changes: Any) -> dict[str, Any]:
    """A seed of USER with fields changed (a field set to ``...`` is removed)."""
    entry = {**USER, **changes}
    return {"users": [{k: v for k, v in entry.items() if v is not ...}]}


def problems_of(document: Any) -> list[str]:
    """The listed problems of an invalid seed document, one per line."""
    with pytest.raises(SeedError) as raised:
        parse_seed(document, source="seed.json")
    first, *listed = str(raised.value).splitlines()
    assert first == "seed.json is invalid:"
    return [line.removeprefix("  - ") for line in listed]


# --- checking the users of a seed file -------------------------------------------------------


def test_parse_seed_user_gives_username_password_groups_scopes() -> None:
    [user] = parse_seed({"users": [USER]}).users

    groups, scopes = ("catalogue_team", "ops"), ("catalogue.products:read", "catalogue.*")
    assert user == SeedUser("dora@example.com", PASSWORD, groups, scopes)
    assert PASSWORD not in repr(user)


def test_parse_seed_user_groups_are_optional() -> None:
    [user] = parse_seed(with_user(groups=...)).users

    assert user.groups == ()


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        (
            {"username": "dora"},
            "users[0]: username must be an e-mail address (the user pool signs in by e-mail)",
        ),
        ({"username": 7}, "users[0]: username must be an e-mail address (the user pool signs in by e-mail)"),
        ({"password": ...}, "users[0]: missing field 'password'"),
        ({"scopes": ...}, "users[0]: missing field 'scopes'"),
        ({"pasword": "x"}, "users[0]: unknown field 'pasword'"),
        ({"password": 12345678}, f"{LABEL}: password must be a non-empty string"),
        ({"password": ""}, f"{LABEL}: password must be a non-empty string"),
        ({"groups": "ops"}, f"{LABEL}: groups must be a list of strings"),
        (
            {"groups": ["two words"]},
            f"{LABEL}: invalid group 'two words': {BAD_GROUP}",
        ),
        (
            {"groups": ["g" * 129]},
            f"{LABEL}: invalid group {'g' * 129!r}: {BAD_GROUP}",
        ),
        ({"scopes": "catalogue.*"}, f"{LABEL}: scopes must be a list of strings"),
        (
            {"scopes": ["catalogue"]},
            f"{LABEL}: invalid scope 'catalogue': {SCOPE_FORMS}, e.g. catalogue.products:read",
        ),
    ],
)
def test_parse_seed_bad_user_field_names_entry_exactly(changes: dict[str, Any], problem: str) -> None:
    assert problems_of(with_user(**changes)) == [problem]


def test_parse_seed_user_not_an_object_and_users_not_a_list() -> None:
    assert problems_of({"users": ["dora@example.com"]}) == ["users[0]: expected an object, got str"]
    assert problems_of({"users": {"username": "x"}}) == ["users: expected a list, got dict"]


def test_parse_seed_same_username_twice_ignoring_case_names_both_entries() -> None:
    document = {"users": [USER, {**USER, "username": "Dora@Example.com"}]}

    assert problems_of(document) == ["users[1]: username 'Dora@Example.com' already used by users[0]"]


def test_parse_seed_every_problem_of_a_user_listed_and_password_never_echoed() -> None:
    problems = problems_of(with_user(groups=["a b"], scopes=["x"], password=PASSWORD))

    assert len(problems) == 2
    assert all(problem.startswith(LABEL) for problem in problems)
    assert all(PASSWORD not in problem for problem in problems)


# --- the password policy ---------------------------------------------------------------------


def template_policy() -> PasswordPolicy:
    template = load_template(PROJECT_DIR / "template.yaml")
    [pool] = [r for r in template.resources if r.type == USER_POOL]
    intrinsics = stack_intrinsics(template, "local")
    return PasswordPolicy.of_pool(intrinsics.value(dict(pool.properties), where=pool.logical_id))


def test_password_policy_of_template_pool_is_its_declared_policy() -> None:
    assert template_policy() == TEMPLATE_POLICY


def test_password_policy_absent_means_cognitos_defaults() -> None:
    assert PasswordPolicy.of_pool({}) == PasswordPolicy(8, True, True, True, True)


@pytest.mark.parametrize(
    ("password", "needs"),
    [
        ("Short-Pass1", "at least 12 characters"),
        ("no-uppercase-99", "an uppercase letter"),
        ("NO-LOWERCASE-99", "a lowercase letter"),
        ("No-Digits-Anywhere", "a digit"),
        ("short", "at least 12 characters, an uppercase letter, a digit"),
        ("Sturdy-Password-99 ", "no blank at its start or end"),
    ],
)
def test_check_passwords_names_user_and_what_the_password_lacks(password: str, needs: str) -> None:
    users = parse_seed(with_user(password=password)).users

    with pytest.raises(SeedError) as raised:
        check_passwords(users, template_policy(), source="seed.json")

    assert str(raised.value) == f"seed.json is invalid:\n  - {LABEL}: {WEAK} {needs}"
    assert password.strip() not in str(raised.value)


def test_check_passwords_symbols_required_only_when_the_policy_says_so() -> None:
    users = parse_seed(with_user(password="NoSymbolsHere99")).users

    check_passwords(users, template_policy())  # the template requires none
    with pytest.raises(SeedError, match=r"it needs a symbol$"):
        check_passwords(users, PasswordPolicy(12))


# --- at start: the shared stack's seeded user ------------------------------------------------


def test_stack_start_creates_seeded_user_confirmed_verified_in_its_group(stack: LocalStack) -> None:
    [pool_id] = stack.info.user_pools.values()
    idp = moto_client(stack.moto_endpoint, "cognito-idp")

    user = idp.admin_get_user(UserPoolId=pool_id, Username=USER_EMAIL)
    groups = idp.admin_list_groups_for_user(UserPoolId=pool_id, Username=USER_EMAIL)["Groups"]

    assert user["UserStatus"] == "CONFIRMED"
    assert user["Enabled"] is True
    attributes = {a["Name"]: a["Value"] for a in user["UserAttributes"]}
    assert (attributes["email"], attributes["email_verified"]) == (USER_EMAIL, "true")
    assert [group["GroupName"] for group in groups] == [USER_GROUP]


# --- at start: a seed the template cannot take -----------------------------------------------


def run_dev(project: Path, seed: dict[str, Any], *parameters: str) -> subprocess.CompletedProcess[str]:
    """``toolfront dev`` with ``seed`` in its own process (this one already runs a stack)."""
    path = project / "seed.json"
    path.write_text(json.dumps(seed), encoding="utf-8")
    command = [str(TOOLFRONT), "dev", "--port", "0", "--project", str(project), "--seed", str(path)]
    extra = [arg for parameter in parameters for arg in ("--parameter", parameter)]
    return subprocess.run([*command, *extra], capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("users"))


def test_cli_dev_users_without_user_pool_exit_1_naming_the_cause(project: Path) -> None:
    finished = run_dev(project, {"users": [USER]}, "EnableCognito=false")

    assert finished.returncode == 1
    assert finished.stderr.strip().endswith(
        "toolfront dev: the seed has users, which need exactly one Cognito user pool; "
        "the template has no user pool (is EnableCognito false?)"
    )
    assert not (project / ".toolfront" / "dev.json").exists()


def test_cli_dev_password_below_pool_policy_exits_1_before_serving(project: Path) -> None:
    finished = run_dev(project, with_user(password="weakpassword"))

    assert finished.returncode == 1
    assert f"{LABEL}: {WEAK} an uppercase letter, a digit" in (finished.stderr)
    assert "weakpassword" not in finished.stderr + finished.stdout
    assert not (project / ".toolfront" / "dev.json").exists()
