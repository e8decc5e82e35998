"""``toolfront new family NAME [--table]``: a family that passes the check and serves at once, written
beside its kin in template.yaml; a refused name or a second run changes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cfnlint.decode import decode

from tests.dev.conftest import Toolfront, copy_project
from toolfront_dev.commands_check import problems_of
from toolfront_dev.families import MANIFEST_PATH
from toolfront_dev.scaffold import NewFamily

PROJECT_DIR = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).with_name("ruff")


def unused(name: str) -> str:
    """``name``, or ``name`` with a suffix where this project has that family already (the suite
    passes after `toolfront new family notes` too)."""
    while (PROJECT_DIR / "functions" / name).exists():
        name += "x"
    return name


NOTES, MEMO, SHOP = unused("notes"), unused("memo"), unused("shop_orders")
SHOP_ID = NewFamily(SHOP, table=True).pascal


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project with its layer (so the copy's own manifest is the one served)."""
    copy_project(tmp_path)
    shutil.copytree(PROJECT_DIR / "layers", tmp_path / "layers", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` by its digest (caches left out)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def resources(project: Path) -> dict[str, dict[str, object]]:
    template, problems = decode(str(project / "template.yaml"))
    assert not problems
    found: dict[str, dict[str, object]] = template["Resources"]
    return found


def test_a_new_family_with_a_table_is_sound_and_has_every_entry(toolfront: Toolfront, project: Path) -> None:
    outcome = toolfront("new", "family", SHOP, "--table", "--project", project)
    assert outcome.code == 0, outcome.err
    assert f"functions/{SHOP}/app.py" in outcome.out and f"tests/families/test_{SHOP}.py" in outcome.out
    assert problems_of(project) == []
    found = resources(project)
    function = found[f"{SHOP_ID}Function"]["Properties"]
    assert function["CodeUri"] == f"functions/{SHOP}/"  # type: ignore[index]
    assert function["Environment"] == {  # type: ignore[index]
        "Variables": {f"TOOLFRONT_{SHOP.upper()}_TABLE": {"Ref": f"{SHOP_ID}Table"}}
    }
    assert {"DynamoDBCrudPolicy": {"TableName": {"Ref": f"{SHOP_ID}Table"}}} in function["Policies"]  # type: ignore[index]
    assert found[f"{SHOP_ID}Table"]["Type"] == "AWS::DynamoDB::Table"
    manifest = json.loads((project / MANIFEST_PATH).read_text(encoding="utf-8"))
    assert f"{SHOP}.add_item" in {tool["name"] for tool in manifest["tools"]}
    scopes = found["UserPoolResourceServer"]["Properties"]["Scopes"]  # type: ignore[index]
    assert {"ScopeName": f"{SHOP}.items:write", "ScopeDescription": f"Change {SHOP} items"} in scopes


def test_the_template_keeps_its_comments_and_only_gains_lines(toolfront: Toolfront, project: Path) -> None:
    before = (project / "template.yaml").read_text(encoding="utf-8").splitlines()
    assert toolfront("new", "family", NOTES, "--project", project).code == 0
    after = (project / "template.yaml").read_text(encoding="utf-8").splitlines()
    remaining = iter(after)
    assert all(line in remaining for line in before), "a line of the template was changed or moved"
    assert f"{NewFamily(NOTES, table=False).pascal}Table" not in "\n".join(after)  # no table unless asked
    assert problems_of(project) == []


def test_the_written_code_passes_the_linters(toolfront: Toolfront, project: Path) -> None:
    assert toolfront("new", "family", NOTES, "--table", "--project", project).code == 0
    assert toolfront("new", "family", MEMO, "--project", project).code == 0
    files = [
        str(project / p)
        for p in (f"functions/{NOTES}/app.py", f"functions/{MEMO}/app.py", f"tests/families/test_{NOTES}.py")
    ]
    config = str(PROJECT_DIR / "pyproject.toml")
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [str(RUFF), *command, "--config", config, *files], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_second_run_changes_nothing(toolfront: Toolfront, project: Path) -> None:
    assert toolfront("new", "family", NOTES, "--project", project).code == 0
    before = snapshot(project)
    outcome = toolfront("new", "family", NOTES, "--table", "--project", project)
    assert outcome.code == 1
    assert f"functions/{NOTES} exists already: the family '{NOTES}' is there" in outcome.err
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "Notes",
            "a family name is a lowercase word of at most 40 characters (notes, shop_orders), got 'Notes'",
        ),
        ("shop-orders", "a family name is a lowercase word"),
        ("1notes", "a family name is a lowercase word"),
        ("n" * 41, "a family name is a lowercase word of at most 40 characters"),
        ("system", "'system' is reserved; choose another family name"),
        ("gateway", "'gateway' is reserved"),
        ("catalogue", "functions/catalogue exists already"),
    ],
)
def test_a_refused_name_changes_nothing(toolfront: Toolfront, project: Path, name: str, message: str) -> None:
    before = snapshot(project)
    outcome = toolfront("new", "family", name, "--project", project)
    assert outcome.code in (1, 2)
    assert message in outcome.err
    assert snapshot(project) == before


def test_a_template_entry_already_there_is_refused(toolfront: Toolfront, project: Path) -> None:
    template, table = project / "template.yaml", f"{NewFamily(NOTES, table=True).pascal}Table"
    template.write_text(
        template.read_text(encoding="utf-8") + f"  {table}:\n    Type: AWS::SNS::Topic\n", encoding="utf-8"
    )
    before = snapshot(project)
    outcome = toolfront("new", "family", NOTES, "--project", project)
    assert (outcome.code, snapshot(project)) == (1, before)
    assert f"template.yaml already declares {table}" in outcome.err


def test_a_template_without_the_anchors_puts_everything_back(toolfront: Toolfront, project: Path) -> None:
    template = project / "template.yaml"
    text = template.read_text(encoding="utf-8")
    template.write_text(text.replace("  UserPoolClient:\n", "  UserPoolAppClient:\n"), encoding="utf-8")
    before = snapshot(project)
    outcome = toolfront("new", "family", NOTES, "--project", project)
    assert outcome.code == 1
    assert "template.yaml has no UserPoolClient: add the family's entries by hand" in outcome.err
    assert snapshot(project) == before


def test_the_new_family_passes_its_own_tests_and_serves_on_every_endpoint(
    toolfront: Toolfront, project: Path
) -> None:
    """In a fresh interpreter whose toolfront is the copy's (its manifest is what /mcp lists): the
    written test passes, and the family answers on REST, /mcp/notes and /mcp."""
    assert toolfront("new", "family", NOTES, "--table", "--project", project).code == 0
    (project / "check_endpoints.py").write_text(ENDPOINTS.replace("notes", NOTES), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{project / 'layers' / 'core'}{os.pathsep}{PROJECT_DIR}"}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/families/test_{NOTES}.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "3 passed" in tests.stdout
    served = subprocess.run(
        [sys.executable, "check_endpoints.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    assert json.loads(served.stdout.splitlines()[-1]) == {
        "rest": [200, "Buy milk"],
        "family_mcp": [f"{NOTES}-add_item", "Buy milk"],
        "all_mcp": [f"{NOTES}-add_item", "Buy milk"],
    }


ENDPOINTS = """
import json
import toolfront
from toolfront.testing import local_family

assert toolfront.__file__.startswith(__import__("os").getcwd()), toolfront.__file__
with local_family("notes") as notes:
    rest = notes.call("add_item", {"text": "Buy milk"})
    seen = {"rest": [rest.status, rest.data["text"]]}
    for label, path in (("family_mcp", None), ("all_mcp", "/mcp")):
        listed = notes.mcp("tools/list", path=path).body["result"]["tools"]
        name = next(t["name"] for t in listed if t["name"].startswith("notes-"))
        called = notes.mcp("tools/call", {"name": name, "arguments": {"text": "Buy milk"}}, path=path)
        seen[label] = [name, called.body["result"]["structuredContent"]["text"]]
print(json.dumps(seen))
"""
