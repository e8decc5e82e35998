"""``toolfront check``: every mistake in the families that deploy would otherwise hide, before it.

It loads every family and exits 1, naming the family, the tool and each problem, when a tool is
invalid (at run time such a tool is ignored with a warning and the family deploys serving nothing
of it), when the manifest is stale, or when a family's entries in ``template.yaml`` are missing
(its function, its REST and MCP routes, the gateway's and the workflow's invoke grants, the Cognito
scopes of its tools). ``make test`` runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolfront.errors import ToolDefinitionError
from toolfront_dev.command import Command
from toolfront_dev.commands_tools import add_project_argument
from toolfront_dev.errors import CommandError
from toolfront_dev.families import MANIFEST_PATH, as_family, family_apps, load_app, manifest_text

INVOKE_GRANT = "${AWS::StackName}-"


def _configure(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser)


def problems_of(project: Path) -> list[str]:
    """Every problem found, each naming where it is (empty when the project is sound)."""
    found: list[str] = []
    families: dict[str, list[Any]] = {}
    for app in family_apps(project):
        name = app.parent.name
        sys.modules.pop(f"toolfront_family_{name}", None)  # this project's code as it is now
        try:
            module = as_family(load_app(project, name))
            tools = list(module.api_tools())
        except ToolDefinitionError as refused:  # Tool.new or @family.tool refused a declaration
            label = f"family {name}, tool {refused.tool}" if refused.tool else f"family {name}"
            found.extend(f"{label}: {problem}" for problem in refused.errors)
            continue
        except Exception as exc:  # the module itself does not import
            found.append(f"family {name}: functions/{name}/app.py fails to load: {type(exc).__name__}: {exc}")
            continue
        families[name] = tools
        for tool in tools:
            found.extend(f"family {name}, tool {getattr(tool, 'name', '?')}: {p}" for p in tool.problems())
    if not found:
        found.extend(_manifest_problems(project))
    found.extend(_template_problems(project, families))
    return found


def _manifest_problems(project: Path) -> list[str]:
    path = project / MANIFEST_PATH
    try:
        committed = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [f"{MANIFEST_PATH} is missing: run `toolfront manifest`"]
    if committed != manifest_text(project):
        return [
            f"{MANIFEST_PATH} is stale (it differs from the code): run `toolfront manifest` and commit it"
        ]
    return []


def _template_problems(project: Path, families: dict[str, list[Any]]) -> list[str]:
    from cfnlint.decode import decode  # type: ignore[import-untyped]

    template, errors = decode(str(project / "template.yaml"))
    if errors or template is None:
        return ["template.yaml cannot be read"]
    resources: dict[str, Any] = template.get("Resources", {})
    functions = {
        str(res["Properties"].get("CodeUri", "")).strip("/").removeprefix("functions/"): (logical_id, res)
        for logical_id, res in resources.items()
        if res.get("Type") == "AWS::Serverless::Function"
    }
    gateway = _grants(resources.get("GatewayFunction", {}))
    machine = _grants(resources.get("ApprovalStateMachine", {}))
    scopes = _cognito_scopes(resources)
    found = []
    for family, tools in families.items():
        where = f"template.yaml, family {family}"
        entry = functions.get(family)
        if entry is None:
            found.append(f"{where}: no AWS::Serverless::Function with CodeUri functions/{family}/")
            continue
        routes = {
            (str(e["Properties"].get("Method", "")).upper(), e["Properties"].get("Path"))
            for e in entry[1]["Properties"].get("Events", {}).values()
            if e.get("Type") == "HttpApi"
        }
        for method, path in (("POST", f"/v1/tools/{family}/{{verb_noun}}"), ("POST", f"/mcp/{family}")):
            if (method, path) not in routes:
                found.append(f"{where}: {entry[0]} has no {method} {path} route")
        invoke = f"{INVOKE_GRANT}{family}"
        if invoke not in gateway:
            found.append(f"{where}: GatewayFunction may not invoke {invoke} (a LambdaInvokePolicy)")
        if invoke not in machine:
            found.append(f"{where}: ApprovalStateMachine may not invoke {invoke} (a LambdaInvokePolicy)")
        if scopes is not None:
            missing = sorted({t.scope for t in tools if t.scope} - scopes)
            found.extend(f"{where}: the Cognito resource server lacks the scope {s!r}" for s in missing)
    return found


def _grants(resource: dict[str, Any]) -> set[str]:
    found = set()
    for policy in resource.get("Properties", {}).get("Policies", []) or []:
        if isinstance(policy, dict) and "LambdaInvokePolicy" in policy:
            name = policy["LambdaInvokePolicy"].get("FunctionName")
            found.add(name.get("Fn::Sub", "") if isinstance(name, dict) else str(name))
    return found


def _cognito_scopes(resources: dict[str, Any]) -> set[str] | None:
    servers = [r for r in resources.values() if r.get("Type") == "AWS::Cognito::UserPoolResourceServer"]
    if not servers:
        return None  # a key-only template: no scopes to declare
    return {str(s.get("ScopeName")) for r in servers for s in r["Properties"].get("Scopes", [])}


def _run(args: argparse.Namespace) -> int:
    found = problems_of(args.project)
    if found:
        raise CommandError(f"{len(found)} problem(s):\n" + "\n".join(f"  - {problem}" for problem in found))
    print(f"every family is sound: tools valid, {MANIFEST_PATH} current, template.yaml complete")
    return 0


CHECK = Command(
    "check",
    "check every family before deploy: tools, the manifest, template.yaml's entries",
    _configure,
    _run,
)
