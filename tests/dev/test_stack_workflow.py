"""Step Functions and Lambda in moto: a toy project's state machine runs its functions in this process.

The toy project runs the project's own ASL against functions that record the events they get. It
is created in the moto of the package's running stack (one moto per process), beside the real
template's resources, which the last tests check.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from toolfront_dev.aws import moto_client
from toolfront_dev.environment import active_template, local_stack_name, stack_intrinsics
from toolfront_dev.lambdas import LocalFunction, is_patched, register_functions, unregister_functions
from toolfront_dev.server import HandlerLoader, LocalApi, handler_module_name
from toolfront_dev.stack import LocalStack
from toolfront_dev.template import load_template
from toolfront_dev.workflow import LocalWorkflow, ResourceNames, name_resources

PROJECT_DIR = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 10.0

TOY_TEMPLATE = """\
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 5
Resources:
  ToyApprovalsFunction:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Sub ${AWS::StackName}-approvals
      CodeUri: approvals/
      Handler: app.lambda_handler
      Environment:
        Variables:
          TOY_TOPIC_ARN: !Ref ToyTopic
  ToyFamilyFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: family/
      Handler: app.lambda_handler
      Events:
        Whoami: {Type: HttpApi, Properties: {Path: /toy/whoami, Method: GET}}
  ToyStateMachine:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: !Sub ${AWS::StackName}-approval
      DefinitionUri: statemachines/approval.asl.json
      DefinitionSubstitutions:
        ApprovalsFunctionArn: !GetAtt ToyApprovalsFunction.Arn
  ToyTopic:
    Type: AWS::SNS::Topic
    Properties:
      DisplayName: toy approvals
"""

# Both toy functions append {"function", "arn", "event"} to <project>/calls.jsonl.
RECORDER = """\
import json
from pathlib import Path

CALLS = Path(__file__).resolve().parents[1] / "calls.jsonl"


def record(event, context):
    line = {"function": context.function_name, "arn": context.invoked_function_arn, "event": event}
    with CALLS.open("a", encoding="utf-8") as calls:
        calls.write(json.dumps(line) + "\\n")
"""

APPROVALS_APP = f"""\
{RECORDER}

def lambda_handler(event, context):
    record(event, context)
    return {{"ok": True}}
"""

FAMILY_APP = f"""\
{RECORDER}

def lambda_handler(event, context):
    if "routeKey" in event:  # GET /toy/whoami: the names the context reports
        return {{"function_name": context.function_name, "arn": context.invoked_function_arn}}
    record(event, context)
    if event["approval_id"].startswith("crash"):
        raise ValueError("refused: " + event["approval_id"])
    return {{"status": "succeeded"}}
"""


@dataclass(frozen=True, slots=True)
class Toy:
    """The toy project's resources in moto, and where its functions record their events."""

    project: Path
    names: ResourceNames
    api: LocalApi
    endpoint: str

    @property
    def machine_arn(self) -> str:
        return self.names.state_machines[0].arn

    def function(self, logical_id: str) -> str:
        return self.names.function_names[logical_id]

    def calls(self, approval_id: str) -> list[dict[str, Any]]:
        path = self.project / "calls.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        return [call for call in map(json.loads, lines) if call["event"].get("approval_id") == approval_id]


def write_toy_project(root: Path) -> Path:
    for folder, app in (("approvals", APPROVALS_APP), ("family", FAMILY_APP)):
        (root / folder).mkdir()
        (root / folder / "app.py").write_text(app, encoding="utf-8")
    (root / "statemachines").mkdir()
    asl = (PROJECT_DIR / "statemachines" / "approval.asl.json").read_text(encoding="utf-8")
    (root / "statemachines" / "approval.asl.json").write_text(asl, encoding="utf-8")
    (root / "template.yaml").write_text(TOY_TEMPLATE, encoding="utf-8")
    return root / "template.yaml"


@pytest.fixture(scope="module")
def toy(stack: LocalStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toy]:
    project = tmp_path_factory.mktemp("toy")
    stage = f"toy{uuid.uuid4().hex[:6]}"
    template = load_template(write_toy_project(project))
    intrinsics = stack_intrinsics(template, stage)
    template = active_template(template, intrinsics)
    names = name_resources(template, intrinsics, prefix=local_stack_name(stage))
    loader = HandlerLoader(template.functions)
    api = LocalApi(template, function_names=names.function_names, loader=loader)
    workflow = LocalWorkflow(template, names, loader, role_name=f"{stage}-functions")
    workflow.start(stack.moto_endpoint, intrinsics.with_refs(names.refs(), names.attributes()))
    try:
        yield Toy(project, names, api, stack.moto_endpoint)
    finally:
        workflow.stop()
        for function in template.functions:
            sys.modules.pop(handler_module_name(function), None)


def whoami(toy: Toy) -> dict[str, str]:
    response = Client(toy.api).get("/toy/whoami")
    assert response.status_code == 200, response.data
    answer: dict[str, str] = response.get_json()
    return answer


def start(toy: Toy, approval_id: str, timeout_seconds: int = 60, **escalation: int) -> str:
    execution_input = {
        "approval_id": approval_id,
        "function": whoami(toy)["arn"],  # as a family handler hands over its own ARN
        "timeout_seconds": timeout_seconds,
        **escalation,  # escalate_after_seconds and remaining_seconds, as Workflow.start adds them
    }
    started = moto_client(toy.endpoint, "stepfunctions").start_execution(
        stateMachineArn=toy.machine_arn, name=approval_id, input=json.dumps(execution_input)
    )
    return str(started["executionArn"])


def wait_for_calls(toy: Toy, approval_id: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + WAIT_SECONDS
    while len(calls := toy.calls(approval_id)) < count:
        assert time.monotonic() < deadline, f"{approval_id}: {count} calls expected, got {calls}"
        time.sleep(0.02)
    return calls


def wait_for_end(toy: Toy, execution_arn: str) -> dict[str, Any]:
    states = moto_client(toy.endpoint, "stepfunctions")
    deadline = time.monotonic() + WAIT_SECONDS
    while (described := states.describe_execution(executionArn=execution_arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline, f"{execution_arn} still running"
        time.sleep(0.02)
    return dict(described)


def decide(toy: Toy, approval_id: str, decision: str) -> dict[str, Any]:
    execution_arn = start(toy, approval_id)
    [park] = wait_for_calls(toy, approval_id, 1)
    moto_client(toy.endpoint, "stepfunctions").send_task_success(
        taskToken=park["event"]["task_token"], output=json.dumps({"decision": decision})
    )
    return wait_for_end(toy, execution_arn)


def new_id(prefix: str = "appr") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# --- the toy project ----------------------------------------------------------------------------


def test_workflow_functions_exist_in_moto_under_template_names(toy: Toy) -> None:
    lambdas = moto_client(toy.endpoint, "lambda")
    stack_name = toy.function("ToyApprovalsFunction").removesuffix("-approvals")

    assert stack_name.startswith("toolfront-toy")
    assert toy.function("ToyFamilyFunction") == f"{stack_name}-ToyFamilyFunction"
    for named in toy.names.functions:
        configuration = lambdas.get_function(FunctionName=named.name)["Configuration"]
        assert configuration["FunctionArn"] == named.arn
        assert named.arn == f"arn:aws:lambda:us-east-1:123456789012:function:{named.name}"


def test_workflow_context_names_match_moto_function(toy: Toy) -> None:
    family = moto_client(toy.endpoint, "lambda").get_function(FunctionName=toy.function("ToyFamilyFunction"))

    assert whoami(toy) == {
        "function_name": family["Configuration"]["FunctionName"],
        "arn": family["Configuration"]["FunctionArn"],
    }


def test_workflow_state_machine_and_topic_created_with_resolved_names(toy: Toy) -> None:
    machine = moto_client(toy.endpoint, "stepfunctions").describe_state_machine(
        stateMachineArn=toy.machine_arn
    )
    [topic] = toy.names.topics

    assert machine["name"] == toy.function("ToyApprovalsFunction").replace("-approvals", "-approval")
    assert f'"FunctionName": "{toy.names.functions[0].arn}"' in machine["definition"]
    assert "${" not in machine["definition"]
    attributes = moto_client(toy.endpoint, "sns").get_topic_attributes(TopicArn=topic.arn)["Attributes"]
    assert attributes["DisplayName"] == "toy approvals"


def test_execution_park_task_gets_event_the_asl_builds(toy: Toy) -> None:
    approval_id = new_id()

    execution_arn = start(toy, approval_id)

    [park] = wait_for_calls(toy, approval_id, 1)
    assert park["function"] == toy.function("ToyApprovalsFunction")
    assert park["arn"] == toy.names.functions[0].arn
    assert set(park["event"]) == {"toolfront_task", "approval_id", "task_token"}
    assert park["event"]["toolfront_task"] == "park"
    assert park["event"]["task_token"]
    states = moto_client(toy.endpoint, "stepfunctions")
    assert states.describe_execution(executionArn=execution_arn)["status"] == "RUNNING"


def test_send_task_success_approve_runs_family_execute(toy: Toy) -> None:
    approval_id = new_id()

    ended = decide(toy, approval_id, "approve")

    assert ended["status"] == "SUCCEEDED"
    park, execute = toy.calls(approval_id)
    assert park["event"]["toolfront_task"] == "park"
    assert execute["function"] == toy.function("ToyFamilyFunction")
    assert execute["event"] == {"toolfront_task": "execute", "approval_id": approval_id}
    assert json.loads(ended["output"])["execution"] == {"status": "succeeded"}


def test_send_task_success_reject_ends_without_family_call(toy: Toy) -> None:
    approval_id = new_id()

    ended = decide(toy, approval_id, "reject")

    assert ended["status"] == "SUCCEEDED"
    assert [call["event"]["toolfront_task"] for call in toy.calls(approval_id)] == ["park"]


def test_family_exception_fails_task_and_catch_marks_failed(
    toy: Toy, caplog: pytest.LogCaptureFixture
) -> None:
    approval_id = new_id("crash")

    with caplog.at_level(logging.ERROR, logger="toolfront_dev.lambdas"):
        ended = decide(toy, approval_id, "approve")

    assert ended["status"] == "SUCCEEDED"  # the Catch path ends in Done
    tasks = [(call["function"], call["event"]["toolfront_task"]) for call in toy.calls(approval_id)]
    approvals, family = toy.function("ToyApprovalsFunction"), toy.function("ToyFamilyFunction")
    assert tasks == [(approvals, "park"), (family, "execute"), (approvals, "fail")]
    failure = json.loads(ended["output"])["failure"]
    cause = json.loads(failure["Cause"])
    assert cause == {"errorType": "ValueError", "errorMessage": f"refused: {approval_id}"}
    assert "Traceback" in caplog.text and f"refused: {approval_id}" in caplog.text


def test_await_timeout_runs_expire_task(toy: Toy) -> None:
    approval_id = new_id()

    ended = wait_for_end(toy, start(toy, approval_id, timeout_seconds=1))

    assert ended["status"] == "SUCCEEDED"
    assert [call["event"]["toolfront_task"] for call in toy.calls(approval_id)] == ["park", "expire"]
    assert states_entered(toy, ended["executionArn"]) == ["Escalates", "AwaitDecision", "Expire", "Done"]


def states_entered(toy: Toy, execution_arn: str) -> list[str]:
    history = moto_client(toy.endpoint, "stepfunctions").get_execution_history(executionArn=execution_arn)
    return [
        event["stateEnteredEventDetails"]["name"]
        for event in history["events"]
        if "stateEnteredEventDetails" in event
    ]


def test_escalating_wait_times_out_into_escalate_then_expire(toy: Toy) -> None:
    approval_id = new_id()

    execution_arn = start(toy, approval_id, 60, escalate_after_seconds=1, remaining_seconds=1)
    ended = wait_for_end(toy, execution_arn)

    assert ended["status"] == "SUCCEEDED"
    park, escalate, expire = toy.calls(approval_id)
    assert escalate["function"] == toy.function("ToyApprovalsFunction")
    assert set(escalate["event"]) == {"toolfront_task", "approval_id", "task_token"}
    assert escalate["event"]["toolfront_task"] == "escalate"
    assert escalate["event"]["task_token"] != park["event"]["task_token"]  # the first one timed out
    assert expire["event"] == {"toolfront_task": "expire", "approval_id": approval_id}
    assert states_entered(toy, execution_arn) == [
        "Escalates",
        "AwaitDecisionUntilEscalation",
        "Escalate",
        "Expire",
        "Done",
    ]


def test_decision_sent_with_the_escalate_token_runs_family_execute(toy: Toy) -> None:
    approval_id = new_id()
    execution_arn = start(toy, approval_id, 60, escalate_after_seconds=1, remaining_seconds=59)
    park, escalate = wait_for_calls(toy, approval_id, 2)
    states = moto_client(toy.endpoint, "stepfunctions")

    # The first wait's token timed out: AWS answers TaskTimedOut, moto takes it; it resumes nothing.
    states.send_task_success(taskToken=park["event"]["task_token"], output='{"decision": "approve"}')
    time.sleep(0.2)
    assert states.describe_execution(executionArn=execution_arn)["status"] == "RUNNING"
    assert len(toy.calls(approval_id)) == 2
    states.send_task_success(taskToken=escalate["event"]["task_token"], output='{"decision": "approve"}')
    ended = wait_for_end(toy, execution_arn)

    assert ended["status"] == "SUCCEEDED"
    assert [call["event"]["toolfront_task"] for call in toy.calls(approval_id)] == [
        "park",
        "escalate",
        "execute",
    ]
    assert json.loads(ended["output"])["execution"] == {"status": "succeeded"}


def test_lambda_invoke_by_arn_runs_handler_and_exception_is_unhandled_error(toy: Toy) -> None:
    lambdas = moto_client(toy.endpoint, "lambda")
    arn = toy.names.functions[1].arn
    payload = {"toolfront_task": "execute", "approval_id": new_id("crash")}

    answered = lambdas.invoke(FunctionName=arn, Payload=json.dumps(payload).encode())

    assert answered["FunctionError"] == "Unhandled"
    body = json.loads(answered["Payload"].read())
    assert body == {"errorType": "ValueError", "errorMessage": f"refused: {payload['approval_id']}"}


def test_lambda_unregistered_function_keeps_moto_echo(toy: Toy) -> None:
    lambdas = moto_client(toy.endpoint, "lambda")
    role = moto_client(toy.endpoint, "iam").list_roles()["Roles"][0]["Arn"]
    name = f"unregistered-{uuid.uuid4().hex[:8]}"
    lambdas.create_function(
        FunctionName=name, Runtime="python3.13", Role=role, Handler="a.b", Code={"ZipFile": b"zip"}
    )

    answered = lambdas.invoke(FunctionName=name, Payload=b'{"echo": 1}')

    assert json.loads(answered["Payload"].read()) == {"echo": 1}


def test_register_again_keeps_one_patch_and_running_functions(toy: Toy) -> None:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    before = LambdaSimpleBackend.invoke
    template = load_template(toy.project / "template.yaml")
    extra = LocalFunction("extra-function", template.functions[0], HandlerLoader(template.functions))

    register_functions([extra])
    register_functions([extra])
    patched = LambdaSimpleBackend.invoke
    unregister_functions([extra.name])

    assert before is patched and LambdaSimpleBackend.invoke is patched
    assert is_patched()  # the running stacks' functions are still registered
    assert whoami(toy)["function_name"] == toy.function("ToyFamilyFunction")


# --- the real template ----------------------------------------------------------------------------


def test_stack_real_template_creates_approval_state_machine(stack: LocalStack) -> None:
    machine_arn = os.environ["TOOLFRONT_APPROVAL_STATE_MACHINE_ARN"]
    approvals_arn = "arn:aws:lambda:us-east-1:123456789012:function:toolfront-local-approvals"

    machine = moto_client(stack.moto_endpoint, "stepfunctions").describe_state_machine(
        stateMachineArn=machine_arn
    )

    assert machine_arn == "arn:aws:states:us-east-1:123456789012:stateMachine:toolfront-local-approval"
    assert machine["stateMachineArn"] == machine_arn == stack.info.state_machines["ApprovalStateMachine"]
    assert f'"FunctionName": "{approvals_arn}"' in machine["definition"]


def test_stack_real_template_creates_approver_topic_without_subscription(stack: LocalStack) -> None:
    topic_arn = os.environ["TOOLFRONT_APPROVER_TOPIC_ARN"]
    sns = moto_client(stack.moto_endpoint, "sns")

    attributes = sns.get_topic_attributes(TopicArn=topic_arn)["Attributes"]

    assert topic_arn == "arn:aws:sns:us-east-1:123456789012:toolfront-local-ApproverTopic"
    assert attributes["DisplayName"] == "toolfront approvals"
    assert sns.list_subscriptions_by_topic(TopicArn=topic_arn)["Subscriptions"] == []


def test_stack_real_template_functions_named_by_function_name(stack: LocalStack) -> None:
    lambdas = moto_client(stack.moto_endpoint, "lambda")
    names = stack.resource_names.function_names

    assert names["CatalogueFunction"] == "toolfront-local-catalogue"
    assert set(names) == {function.logical_id for function in stack.template.functions}
    for name in names.values():
        assert lambdas.get_function(FunctionName=name)["Configuration"]["FunctionName"] == name


def test_stack_outbox_path_set_next_to_dev_json(stack: LocalStack) -> None:
    written = json.loads(stack.dev_json_path.read_text(encoding="utf-8"))

    assert os.environ["TOOLFRONT_OUTBOX_PATH"] == str(stack.outbox_path) == written["outbox"]
    assert stack.outbox_path.parent == stack.dev_json_path.parent
    assert stack.outbox_path.exists()
