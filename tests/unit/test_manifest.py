"""The layer's manifest matches the code, and the Cognito scopes match the tools' scopes."""

from __future__ import annotations

import json
from pathlib import Path

from cfnlint.decode import decode

from toolfront.tools.manifest import load_manifest
from toolfront_dev.families import MANIFEST_PATH, manifest_text, tool_scopes

ROOT = Path(__file__).resolve().parents[2]


def test_committed_manifest_is_what_the_families_declare() -> None:
    # Regenerate with `.venv/bin/toolfront manifest` after changing a tool.
    assert (ROOT / MANIFEST_PATH).read_text(encoding="utf-8") == manifest_text(ROOT)


def test_packaged_manifest_is_the_committed_file() -> None:
    assert load_manifest() == json.loads((ROOT / MANIFEST_PATH).read_text(encoding="utf-8"))


def test_cognito_resource_server_scopes_are_the_tools_scopes() -> None:
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    resources = template["Resources"]
    declared = sorted(s["ScopeName"] for s in resources["UserPoolResourceServer"]["Properties"]["Scopes"])
    assert declared == tool_scopes(load_manifest())
    allowed = resources["UserPoolClient"]["Properties"]["AllowedOAuthScopes"]
    assert sorted(s.removeprefix("toolfront/") for s in allowed if s.startswith("toolfront/")) == declared
