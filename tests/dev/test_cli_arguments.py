"""The values management commands take: --expires-in durations, scopes, permissions, and the target flags."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.dev.conftest import Toolfront
from toolfront_dev.arguments import parse_duration, permission_problem, scope_problem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("45s", timedelta(seconds=45)),
        ("15m", timedelta(minutes=15)),
        ("12h", timedelta(hours=12)),
        ("30d", timedelta(days=30)),
        ("1d", timedelta(days=1)),
    ],
)
def test_parse_duration_each_unit_gives_its_timedelta(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text", ["", "30", "d", "30w", "-1d", "1.5h", " 3d", "3d ", "3 d", "3D", "0d", "99999d"]
)
def test_parse_duration_malformed_or_out_of_range_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"<n>s|positive|at most"):
        parse_duration(text)


@pytest.mark.parametrize(
    "scope", ["catalogue.products:read", "catalogue.products:*", "catalogue.*", "my_mod.res_2:do_it"]
)
def test_scope_problem_documented_forms_are_valid(scope: str) -> None:
    assert scope_problem(scope) is None


@pytest.mark.parametrize(
    "scope",
    ["catalogue", "*", "catalogue.products", "catalogue.*:read", "Catalogue.products:read", ".a:b", ""],
)
def test_scope_problem_other_forms_name_the_expected_forms(scope: str) -> None:
    assert "expected <module>.<resource>:<action>" in (scope_problem(scope) or "")


def test_permission_problem_blank_or_uppercase_is_reported() -> None:
    assert permission_problem("catalogue") is None
    assert permission_problem("") is not None
    assert permission_problem("Catalogue") is not None


@pytest.mark.parametrize("value", ["30", "0d", "2w", "-5m"])
def test_keys_create_bad_expires_in_exits_2_naming_the_forms(toolfront: Toolfront, value: str) -> None:
    outcome = toolfront(
        "keys", "create", "--local", "--owner", "a", "--scope", "x.y:z", f"--expires-in={value}"
    )

    assert outcome.code == 2
    assert "--expires-in" in outcome.err
    assert value in outcome.err


def test_keys_create_bad_scope_exits_2_naming_the_scope(toolfront: Toolfront) -> None:
    outcome = toolfront("keys", "create", "--local", "--owner", "a", "--scope", "catalogue")

    assert outcome.code == 2
    assert "invalid scope 'catalogue'" in outcome.err


def test_keys_create_without_scope_exits_2(toolfront: Toolfront) -> None:
    assert toolfront("keys", "create", "--local", "--owner", "a").code == 2


def test_keys_list_local_and_stack_name_together_exits_2(toolfront: Toolfront) -> None:
    outcome = toolfront("keys", "list", "--local", "--stack-name", "prod")

    assert outcome.code == 2
    assert "not allowed with argument" in outcome.err


def test_keys_list_without_target_exits_2_naming_both_flags(toolfront: Toolfront) -> None:
    outcome = toolfront("keys", "list")

    assert outcome.code == 2
    assert "--local --stack-name is required" in outcome.err


def test_principals_grant_bad_permission_exits_2(toolfront: Toolfront) -> None:
    outcome = toolfront("principals", "grant", "alice", "--local", "--permission", "Not OK")

    assert outcome.code == 2
    assert "invalid permission 'Not OK'" in outcome.err


def test_keys_list_local_without_dev_json_exits_1_telling_to_run_make_dev(
    toolfront: Toolfront, tmp_path: Path
) -> None:
    outcome = toolfront("keys", "list", "--local", "--project", str(tmp_path))

    assert outcome.code == 1
    assert "no local stack: run `make dev` first" in outcome.err
    assert "Traceback" not in outcome.err
