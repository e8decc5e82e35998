"""A seed file is read by the one JSON reader before anything starts (security round 3, N17): deep
nesting is a clean error, and a lone surrogate is refused naming its field, never met by moto."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dev.conftest import Toolfront
from toolfront_dev.errors import SeedError
from toolfront_dev.seeds import load_seed, parse_seed

KEY = "tfk_alice0000001_" + "A" * 32
DEEP = "[" * 5000 + "]" * 5000


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_seed_json_deep_nesting_is_a_clean_seed_error(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match=r"seed file .*seed\.json is not valid JSON: .*nested"):
        load_seed(write(tmp_path, '{"principals": ' + DEEP + "}"))


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"principals": [{"id": "al\\ud800ice", "permissions": ["catalogue"]}]}', "principals[0].id"),
        (
            '{"principals": [{"id": "alice", "permissions": ["catalogue"]}], "keys": [{"key": "'
            + KEY
            + '", "owner": "alice", "scopes": ["catalogue.*"], "description": "x\\udfff"}]}',
            "keys[0].description",
        ),
    ],
)
def test_seed_json_lone_surrogate_is_refused_naming_the_field(tmp_path: Path, text: str, field: str) -> None:
    with pytest.raises(SeedError) as refused:
        load_seed(write(tmp_path, text))

    assert field in str(refused.value) and "lone surrogate" in str(refused.value)
    assert KEY not in str(refused.value)


def test_seed_json_parse_seed_refuses_a_surrogate_given_as_a_document() -> None:
    with pytest.raises(SeedError, match=r"principals\[0\]\.permissions\[1\]: .*lone surrogate"):
        parse_seed({"principals": [{"id": "alice", "permissions": ["catalogue", "x\ud800"]}]})


def test_seed_json_utf16_file_is_a_clean_seed_error(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text('{"principals": []}', encoding="utf-16")

    with pytest.raises(SeedError, match=r"seed file .*seed\.json is not valid JSON"):
        load_seed(path)


@pytest.mark.parametrize(
    "text", ['{"principals": ' + DEEP + "}", '{"principals": [{"id": "\\ud800", "permissions": ["c"]}]}']
)
def test_seed_json_cli_dev_refuses_before_anything_starts(
    toolfront: Toolfront, tmp_path: Path, text: str
) -> None:
    seed = write(tmp_path, text)

    # No template in tmp_path: had the stack started, the error would be about the template.
    outcome = toolfront("dev", "--port", "0", "--project", tmp_path, "--seed", seed)

    assert outcome.code == 1
    assert "Traceback" not in outcome.err and "template" not in outcome.err
    assert "seed.json" in outcome.err
    assert not (tmp_path / ".toolfront").exists()
