"""``toolfront tools list`` and ``toolfront manifest``: read the code, need no stack."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.dev.conftest import Toolfront, copy_project
from toolfront_dev.families import MANIFEST_PATH

PROJECT_DIR = Path(__file__).resolve().parents[2]
CATALOGUE_TOOLS = {
    "catalogue.create_product",
    "catalogue.delete_product",
    "catalogue.discount_products",
    "catalogue.export_products",
    "catalogue.get_product",
    "catalogue.get_product_label",
    "catalogue.list_products",
    "catalogue.set_prices",
}


def copy_project_with_manifest(target: Path) -> Path:
    """The functions and the committed manifest, as a CI checkout would have them."""
    copy_project(target)
    (target / MANIFEST_PATH).parent.mkdir(parents=True)
    shutil.copy(PROJECT_DIR / MANIFEST_PATH, target / MANIFEST_PATH)
    return target


def test_tools_list_json_lists_the_six_catalogue_tools_with_their_fields(toolfront: Toolfront) -> None:
    outcome = toolfront("tools", "list", "--project", PROJECT_DIR, "--json")

    tools = {tool["name"]: tool for tool in outcome.json()}
    assert outcome.code == 0
    assert set(tools) >= CATALOGUE_TOOLS
    assert tools["catalogue.list_products"] == {
        "name": "catalogue.list_products",
        "audience": "admin",
        "scope": "catalogue.products:read",
        "permission": "catalogue",
        "danger": None,
        "title": "List products",
    }


def test_tools_list_text_has_a_row_per_tool_under_headers(toolfront: Toolfront) -> None:
    outcome = toolfront("tools", "list", "--project", PROJECT_DIR)

    header, *rows = outcome.out.splitlines()
    assert header.split() == ["NAME", "AUDIENCE", "SCOPE", "PERMISSION", "DANGER", "TITLE"]
    assert {row.split()[0] for row in rows} >= CATALOGUE_TOOLS
    assert any(
        row.split()[:5]
        == ["catalogue.delete_product", "admin", "catalogue.products:write", "catalogue", "always"]
        for row in rows
    )


def test_tools_list_lists_cores_system_tools_too(toolfront: Toolfront) -> None:
    outcome = toolfront("tools", "list", "--project", PROJECT_DIR, "--json")

    names = [tool["name"] for tool in outcome.json()]
    assert {"system.get_actor", "system.get_approval", "system.confirm_call"} <= set(names)
    assert names == sorted(names)


def test_tools_list_outside_a_project_exits_1_naming_functions_folder(
    toolfront: Toolfront, tmp_path: Path
) -> None:
    outcome = toolfront("tools", "list", "--project", tmp_path)

    assert outcome.code == 1
    assert "no functions/ folder" in outcome.err


def test_manifest_check_on_the_repository_passes(toolfront: Toolfront) -> None:
    outcome = toolfront("manifest", "--check", "--project", PROJECT_DIR)

    assert (outcome.code, outcome.err) == (0, "")
    assert "matches the code" in outcome.out


def test_manifest_check_on_a_stale_copy_exits_1_naming_the_changed_tool(
    toolfront: Toolfront, tmp_path: Path
) -> None:
    project = copy_project_with_manifest(tmp_path)
    manifest = json.loads((project / MANIFEST_PATH).read_text(encoding="utf-8"))
    next(t for t in manifest["tools"] if t["name"] == "catalogue.get_product")["title"] = "Old title"
    (project / MANIFEST_PATH).write_text(json.dumps(manifest, indent=2), encoding="utf-8")

    outcome = toolfront("manifest", "--check", "--project", project)

    assert outcome.code == 1
    assert "differs from the code (tools changed: catalogue.get_product)" in outcome.err
    assert "run `toolfront manifest`" in outcome.err


def test_manifest_check_without_the_file_exits_1_saying_missing(toolfront: Toolfront, tmp_path: Path) -> None:
    project = copy_project_with_manifest(tmp_path)
    (project / MANIFEST_PATH).unlink()

    outcome = toolfront("manifest", "--check", "--project", project)

    assert outcome.code == 1
    assert "is missing" in outcome.err


def test_manifest_rewrites_a_stale_copy_so_check_then_passes(toolfront: Toolfront, tmp_path: Path) -> None:
    project = copy_project_with_manifest(tmp_path)
    (project / MANIFEST_PATH).write_text("{}", encoding="utf-8")

    written = toolfront("manifest", "--project", project)

    assert written.code == 0
    assert (project / MANIFEST_PATH).read_bytes() == (PROJECT_DIR / MANIFEST_PATH).read_bytes()
    assert toolfront("manifest", "--check", "--project", project).code == 0
