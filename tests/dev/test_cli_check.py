"""``toolfront check``: a sound project passes; a broken tool, a stale manifest and a missing
template entry each fail with a message naming the family, the tool or the entry."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.dev.conftest import Toolfront, copy_project
from toolfront_dev.families import MANIFEST_PATH

PROJECT_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy_project(tmp_path)
    (tmp_path / MANIFEST_PATH).parent.mkdir(parents=True)
    shutil.copy(PROJECT_DIR / MANIFEST_PATH, tmp_path / MANIFEST_PATH)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_shipped_project_is_sound(toolfront: Toolfront, project: Path) -> None:
    outcome = toolfront("check", "--project", project)
    assert (outcome.code, outcome.err) == (0, "")
    assert "every family is sound" in outcome.out


def test_a_broken_tool_is_named_with_its_problem(toolfront: Toolfront, project: Path) -> None:
    edit(
        project / "functions/catalogue/app.py",
        'name="catalogue.get_product",',
        'name="catalogue.get-product",',
    )
    outcome = toolfront("check", "--project", project)
    assert outcome.code == 1
    assert (
        "  - family catalogue, tool catalogue.get-product: name 'catalogue.get-product' must be "
        "'<namespace>.<verb>_<noun>' in lowercase" in outcome.err
    )


def test_a_stale_manifest_fails(toolfront: Toolfront, project: Path) -> None:
    edit(project / "functions/catalogue/app.py", 'title="Get a product",', 'title="Fetch a product",')
    outcome = toolfront("check", "--project", project)
    assert outcome.code == 1
    assert f"{MANIFEST_PATH} is stale (it differs from the code): run `toolfront manifest`" in outcome.err


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "            Path: /mcp/catalogue\n",
            "            Path: /mcp/catalogue-old\n",
            "template.yaml, family catalogue: CatalogueFunction has no POST /mcp/catalogue route",
        ),
        (
            # the first such line is the gateway's (the workflow's comes later in the file)
            '        - LambdaInvokePolicy: {FunctionName: !Sub "${AWS::StackName}-guest"}\n',
            "",
            "template.yaml, family guest: GatewayFunction may not invoke ${AWS::StackName}-guest",
        ),
        (
            '        - {ScopeName: "catalogue.products:write", '
            "ScopeDescription: Change catalogue products}\n",
            "",
            "template.yaml, family catalogue: the Cognito resource server lacks the scope "
            "'catalogue.products:write'",
        ),
        (
            "      CodeUri: functions/guest/\n",
            "      CodeUri: functions/guests/\n",
            "template.yaml, family guest: no AWS::Serverless::Function with CodeUri functions/guest/",
        ),
    ],
)
def test_a_missing_template_entry_is_named(
    toolfront: Toolfront, project: Path, old: str, new: str, message: str
) -> None:
    edit(project / "template.yaml", old, new)
    outcome = toolfront("check", "--project", project)
    assert outcome.code == 1
    assert message in outcome.err, outcome.err
    assert re.search(r"\d+ problem\(s\)", outcome.err)
