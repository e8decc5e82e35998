"""The dashboard and the alarms of template.yaml (docs/operating.md, "Metrics, the dashboard and
alarms"): the dashboard's body is JSON once substituted, every metric it graphs is one toolfront
writes (as the lines of a run of every metrics path declare them, not a list), it shows what the
contract names, and the two alarms read series toolfront writes, the overdue one fed by a schedule
the approvals function answers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

from tests.aws import approval_state_machine
from tests.conftest import load_family, reset_process_state
from tests.emf import Series, captured, declared, every_metric_line, series

ROOT = Path(__file__).resolve().parents[2]
REGION, STACK = "us-east-1", "toolfront-unit"
Handler = Callable[[dict[str, Any], Any], Any]
_SEARCH = re.compile(r"^SEARCH\('\{(?P<schema>[^}]*)\}(?P<terms>[^']*)',\s*'(?P<stat>[^']+)',\s*\d+\)$")


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    found, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    return dict(found)


@pytest.fixture
def approvals(aws: None, monkeypatch: pytest.MonkeyPatch) -> Handler:
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", approval_state_machine())
    reset_process_state()
    handler: Handler = load_family("approvals").lambda_handler
    return handler


@pytest.fixture
def emitted(approvals: Handler) -> set[Series]:
    """What toolfront writes: the series the lines of every metrics path declare."""
    import os

    return series(every_metric_line(os.environ["TOOLFRONT_APPROVAL_STATE_MACHINE_ARN"], approvals))


def substituted(template: dict[str, Any], text: str) -> str:
    """``text`` of a ``!Sub`` with the stack's values: parameters' defaults, pseudo parameters, and
    ``${Resource.Arn}`` of an alarm; anything else fails."""
    parameters, resources = template["Parameters"], template["Resources"]

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name in {"AWS::Region", "AWS::StackName"}:
            return REGION if name == "AWS::Region" else STACK
        if name in parameters:
            return str(parameters[name]["Default"])
        resource, _, attribute = name.partition(".")
        assert attribute == "Arn" and resources[resource]["Type"] == "AWS::CloudWatch::Alarm", name
        return f"arn:aws:cloudwatch:{REGION}:123456789012:alarm:{resource}"

    return re.sub(r"\$\{([^}]+)\}", value, text)


def body(template: dict[str, Any]) -> dict[str, Any]:
    sub = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    parsed: dict[str, Any] = json.loads(substituted(template, sub))
    return parsed


def globals_env(template: dict[str, Any], name: str) -> str:
    value = template["Globals"]["Function"]["Environment"]["Variables"][name]
    if isinstance(value, dict):  # !Ref of a parameter
        return str(template["Parameters"][value["Ref"]]["Default"])
    return str(value)


def graphed(dashboard: dict[str, Any]) -> list[tuple[Series, str, str]]:
    """Each metric the dashboard graphs: its series, its statistic and its ``service`` value."""
    found: list[tuple[Series, str, str]] = []
    for widget in dashboard["widgets"]:
        if widget["type"] != "metric":
            continue
        properties = widget["properties"]
        for entry in properties["metrics"]:
            if isinstance(entry[0], dict):  # an expression: a SEARCH, or math over the widget's ids
                match = _SEARCH.match(entry[0]["expression"])
                if match is None:
                    continue
                namespace, *keys = [part.strip().strip('"') for part in match["schema"].split(",")]
                service = re.search(r'service="([^"]+)"', match["terms"])
                for name in re.findall(r'MetricName="([^"]+)"', match["terms"]):
                    found.append(
                        ((namespace, name, frozenset(keys)), match["stat"], service[1] if service else "")
                    )
                continue
            options = entry[-1] if isinstance(entry[-1], dict) else {}
            plain = entry[:-1] if options else entry
            namespace, name, pairs = plain[0], plain[1], dict(zip(plain[2::2], plain[3::2], strict=True))
            stat = options.get("stat", properties.get("stat", ""))
            found.append(((namespace, name, frozenset(pairs)), stat, pairs.get("service", "")))
    return found


def test_the_dashboard_body_is_json_once_substituted(template: dict[str, Any]) -> None:
    dashboard = body(template)
    widgets = dashboard["widgets"]
    assert widgets and all({"type", "x", "y", "width", "height", "properties"} <= set(w) for w in widgets)
    assert {w["properties"]["region"] for w in widgets if w["type"] == "metric"} == {REGION}
    assert all(w["x"] + w["width"] <= 24 for w in widgets)  # CloudWatch's grid is 24 wide
    (alarms,) = [w["properties"]["alarms"] for w in widgets if w["type"] == "alarm"]
    assert [arn.rsplit(":", 1)[1] for arn in alarms] == ["ToolErrorRateAlarm", "PendingApprovalOverdueAlarm"]


def test_the_dashboard_reads_the_namespace_and_service_the_functions_write(template: dict[str, Any]) -> None:
    namespace = globals_env(template, "POWERTOOLS_METRICS_NAMESPACE")
    service = globals_env(template, "POWERTOOLS_SERVICE_NAME")
    shown = graphed(body(template))
    assert shown and {(s[0], svc) for s, _, svc in shown} == {(namespace, service)}


def test_every_metric_the_dashboard_graphs_is_one_toolfront_writes(
    template: dict[str, Any], emitted: set[Series]
) -> None:
    shown = {s for s, _, _ in graphed(body(template))}
    assert shown - emitted == set()


def test_the_dashboard_shows_what_the_contract_names(template: dict[str, Any]) -> None:
    shown = graphed(body(template))
    per_tool = {(s[1], stat) for s, stat, _ in shown if "tool" in s[2]}
    assert {
        ("Calls", "Sum"),
        ("Errors", "Sum"),
        ("Refusals", "Sum"),
        ("Latency", "p50"),
        ("Latency", "p99"),
        ("Held", "Sum"),
        ("ApprovalsDecided", "Sum"),
        ("ApprovalsExpired", "Sum"),
        ("ApprovalsEscalated", "Sum"),
        ("OldestPendingApprovalAge", "Maximum"),
    } <= per_tool
    assert ("toolfront", "Refusals", frozenset({"service", "tool", "ErrorCode"})) in {s for s, _, _ in shown}


def alarm(template: dict[str, Any], name: str) -> dict[str, Any]:
    resource = template["Resources"][name]
    assert resource["Type"] == "AWS::CloudWatch::Alarm"
    properties: dict[str, Any] = resource["Properties"]
    return properties


def alarm_series(template: dict[str, Any], metric: dict[str, Any]) -> Series:
    namespace = metric["Namespace"]
    if isinstance(namespace, dict):
        namespace = template["Parameters"][namespace["Ref"]]["Default"]
    dimensions = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
    assert dimensions.get("service") == globals_env(template, "POWERTOOLS_SERVICE_NAME")
    return namespace, metric["MetricName"], frozenset(dimensions)


def test_the_error_rate_alarm_divides_the_services_errors_by_its_calls(
    template: dict[str, Any], emitted: set[Series]
) -> None:
    properties = alarm(template, "ToolErrorRateAlarm")
    stats = {m["Id"]: m["MetricStat"] for m in properties["Metrics"] if "MetricStat" in m}
    read = {m_id: alarm_series(template, stat["Metric"]) for m_id, stat in stats.items()}
    assert {s[1] for s in read.values()} == {"Errors", "Calls"} and set(read.values()) <= emitted
    assert {stat["Period"] for stat in stats.values()} == {300}
    (rate,) = [m for m in properties["Metrics"] if m.get("ReturnData", True)]
    assert set(re.findall(r"\b(errors|calls)\b", rate["Expression"])) == set(stats)
    assert properties["Threshold"] == {"Ref": "ToolErrorRatePercent"}
    assert properties["TreatMissingData"] == "notBreaching"  # no calls: a quiet API, not a failing one


def test_the_overdue_alarm_reads_the_backlogs_total_and_tells_a_stopped_sampler(
    template: dict[str, Any],
) -> None:
    properties = alarm(template, "PendingApprovalOverdueAlarm")
    assert alarm_series(template, properties)[1:] == ("ApprovalsOverdue", frozenset({"service"}))
    assert (properties["Statistic"], properties["Threshold"]) == ("Maximum", 0)
    assert properties["TreatMissingData"] == "missing"
    assert properties["InsufficientDataActions"] == properties["AlarmActions"] == [{"Ref": "AlarmTopic"}]


def test_the_schedule_makes_the_approvals_function_write_the_overdue_alarms_series(
    template: dict[str, Any], approvals: Handler
) -> None:
    events = template["Resources"]["ApprovalsFunction"]["Properties"]["Events"]
    (schedule,) = [e["Properties"] for e in events.values() if e["Type"] == "Schedule"]
    minutes = int(re.fullmatch(r"rate\((\d+) minutes?\)", schedule["Schedule"])[1])  # type: ignore[index]
    overdue = alarm(template, "PendingApprovalOverdueAlarm")
    # at least one sample lands in the alarm's evaluation range, whatever the jitter
    assert minutes * 60 <= overdue["Period"] * (overdue["EvaluationPeriods"] - 1)

    (line,) = captured(lambda: approvals(json.loads(schedule["Input"]), None))  # as ApprovalsFunction's IAM

    namespace = globals_env(template, "POWERTOOLS_METRICS_NAMESPACE")
    assert (namespace, "ApprovalsOverdue", frozenset({"service"})) in series([line])
    assert declared(line, "ApprovalsOverdue") == [["service"]] and line["ApprovalsOverdue"] == 0


def test_the_stack_outputs_the_dashboards_url(template: dict[str, Any]) -> None:
    url = template["Outputs"]["DashboardUrl"]["Value"]["Fn::Sub"]
    assert "#dashboards/dashboard/${Dashboard}" in url and "region=${AWS::Region}" in url
    name = template["Resources"]["Dashboard"]["Properties"]["DashboardName"]["Fn::Sub"]
    assert name == "${AWS::StackName}-${AWS::Region}"  # dashboards are global: one per stack and region
