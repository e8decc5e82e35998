"""``toolfront new family NAME [--table]``: a new family, ready to serve, in one command.

It writes ``functions/NAME/app.py`` (one example tool, declared from pydantic models), its test
(``tests/families/test_NAME.py``, through ``toolfront.testing``), every ``template.yaml`` entry the
family needs, and the refreshed manifest. The template is edited as text, next to the entries of the
same kind, so that its comments, order and formatting stay as they were (a YAML round trip would
lose the ``!Sub`` short forms and every comment); the result is then read back and held to
``toolfront check``. Nothing is changed when the name is refused, and every file is put back when the
check fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolfront_dev.errors import CommandError

NAME = re.compile(r"[a-z][a-z0-9_]*")
#: Names a family cannot take: core's namespace and the functions that are not families.
RESERVED = frozenset({"core", "system", "gateway", "approvals", "oauth", "families", "tests"})
MAX_NAME = 40  # a Lambda function name is <stack>-<family>, at most 64 characters in all
TEST_DIR = Path("tests/families")


@dataclass(frozen=True, slots=True)
class NewFamily:
    """What ``new family`` writes for ``name``: the family's files and its template entries."""

    name: str
    table: bool

    @property
    def pascal(self) -> str:
        """``shop_orders`` -> ``ShopOrders``: the family's SAM logical ids start with it."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def function_id(self) -> str:
        return f"{self.pascal}Function"

    @property
    def table_id(self) -> str:
        return f"{self.pascal}Table"

    @property
    def table_variable(self) -> str:
        return f"TOOLFRONT_{self.name.upper()}_TABLE"

    @property
    def scope(self) -> str:
        """The example tool's scope: it writes to the family's table, else it only reads."""
        return f"{self.name}.items:{'write' if self.table else 'read'}"

    def files(self) -> dict[Path, str]:
        """Every new file by its path in the project."""
        return {
            Path("functions") / self.name / "app.py": _app_text(self),
            TEST_DIR / f"test_{self.name}.py": _test_text(self),
        }


def refusal(project: Path, name: str) -> str | None:
    """Why ``name`` cannot be a new family of ``project`` (``None`` when it can)."""
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        return (
            f"a family name is a lowercase word of at most {MAX_NAME} characters "
            f"(notes, shop_orders), got {name!r}"
        )
    if name in RESERVED:
        return f"{name!r} is reserved; choose another family name"
    family = NewFamily(name, table=False)
    if (project / "functions" / name).exists():
        return f"functions/{name} exists already: the family {name!r} is there"
    template = (project / "template.yaml").read_text(encoding="utf-8")
    for logical_id in (family.function_id, family.table_id):
        if re.search(rf"^  {logical_id}:", template, re.MULTILINE):
            return f"template.yaml already declares {logical_id}"
    if (project / TEST_DIR / f"test_{name}.py").exists():
        return f"{TEST_DIR}/test_{name}.py exists already"
    return None


def edit_template(text: str, family: NewFamily, families: list[str]) -> str:
    """``text`` with the family's entries added beside their kin.

    Args:
        text: template.yaml as it is.
        family: the new family.
        families: the logical ids of the functions of existing families (the function goes after them).

    Raises:
        CommandError: an anchor is missing (the template is not shaped like toolfront's).
    """
    lines = text.splitlines(keepends=True)
    invoke = f'LambdaInvokePolicy: {{FunctionName: !Sub "${{AWS::StackName}}-{family.name}"}}'
    verb = "Change" if family.table else "Read"
    edits: list[Callable[[list[str]], list[str]]] = [
        lambda ls: _after_last_in(ls, "GatewayFunction", "- LambdaInvokePolicy: {FunctionName: !Sub", invoke),
        lambda ls: _after_last_in(
            ls, "ApprovalStateMachine", "- LambdaInvokePolicy: {FunctionName: !Sub", invoke
        ),
        lambda ls: _after_last_in(
            ls,
            "UserPoolResourceServer",
            "- {ScopeName:",
            f'{{ScopeName: "{family.scope}", ScopeDescription: {verb} {family.name} items}}',
        ),
        lambda ls: _after_last_in(ls, "UserPoolClient", '- "toolfront/', f'"toolfront/{family.scope}"'),
        lambda ls: _after_block(ls, families[-1] if families else "GatewayFunction", _function_text(family)),
    ]
    if family.table:
        edits.append(lambda ls: _after_block(ls, _last_table(ls), _table_text(family)))
        edits.append(lambda ls: _output(ls, f"{family.table_id}Name", f"!Ref {family.table_id}"))
    for edit in edits:
        lines = edit(lines)
    return "".join(lines)


def _block(lines: list[str], logical_id: str) -> tuple[int, int]:
    """The first and one-past-last line of the resource ``logical_id`` (two-space indented)."""
    header = f"  {logical_id}:"
    start = next((i for i, line in enumerate(lines) if line.rstrip() == header), None)
    if start is None:
        raise CommandError(f"template.yaml has no {logical_id}: add the family's entries by hand")
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith("   ")):
        end += 1
    while not lines[end - 1].strip():  # blank lines belong between blocks
        end -= 1
    return start, end


def _after_last_in(lines: list[str], logical_id: str, marker: str, *items: str) -> list[str]:
    """``items`` as list entries after the last line of ``logical_id`` that starts with ``marker``."""
    start, end = _block(lines, logical_id)
    found = [i for i in range(start, end) if lines[i].lstrip().startswith(marker)]
    if not found:
        raise CommandError(f"template.yaml: {logical_id} has no entry starting {marker!r} to add beside")
    last = found[-1]
    indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
    return lines[: last + 1] + [f"{indent}- {item}\n" for item in items] + lines[last + 1 :]


def _after_block(lines: list[str], logical_id: str, block: str) -> list[str]:
    _, end = _block(lines, logical_id)
    return [*lines[:end], "\n", *block.splitlines(keepends=True), *lines[end:]]


def _output(lines: list[str], name: str, value: str) -> list[str]:
    """An output at the end of ``Outputs``, which must be the template's last section."""
    top = [i for i, line in enumerate(lines) if line[:1].isalpha()]
    if not top or lines[top[-1]].rstrip() != "Outputs:":
        raise CommandError("template.yaml does not end with its Outputs: add the family's output by hand")
    end = len(lines)
    while not lines[end - 1].strip():
        end -= 1
    last = lines[end - 1] if lines[end - 1].endswith("\n") else lines[end - 1] + "\n"
    return [*lines[: end - 1], last, f"  {name}:\n", f"    Value: {value}\n", *lines[end:]]


def _last_table(lines: list[str]) -> str:
    tables = [
        lines[i - 1].strip().rstrip(":")
        for i, line in enumerate(lines)
        if line.strip() == "Type: AWS::DynamoDB::Table" and i > 0
    ]
    if not tables:
        raise CommandError("template.yaml declares no AWS::DynamoDB::Table to add the family's beside")
    return tables[-1]


# What every family's function reaches besides its own table: the call pipeline's tables (the key
# gate writes the key's item), starting held calls' workflows, and the approvals function, which
# resumes them (it alone holds task tokens). template.yaml's CatalogueFunction carries the same.
FAMILY_POLICIES = """\
        # The key gate writes the key's item on every keyed call (its rate bucket, one conditional
        # UpdateItem, or an Update in the idempotency claim's transaction); a replay reads it.
        - Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:BatchGetItem, dynamodb:UpdateItem]
              Resource: !GetAtt KeysTable.Arn
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:BatchGetItem]
              Resource: !GetAtt PrincipalsTable.Arn
            - Effect: Allow
              Action:
                [dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:DeleteItem,
                 dynamodb:BatchGetItem]
              Resource: !GetAtt IdempotencyTable.Arn
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:UpdateItem]
              Resource: !GetAtt RateLimitsTable.Arn
            # Held calls: created, read and decided (their workflows' task tokens are elsewhere).
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem]
              Resource: !GetAtt ApprovalsTable.Arn
            - Effect: Allow  # audit records: appended, never changed (put only)
              Action: [dynamodb:PutItem]
              Resource: !GetAtt AuditTable.Arn
        # the audience check of Cognito tokens: app clients the sign-in facade registered
        - !If
          - CognitoEnabled
          - Statement:
              - Effect: Allow
                Action: [dynamodb:GetItem]
                Resource: !GetAtt OAuthClientsTable.Arn
          - !Ref AWS::NoValue
        # A decided or cancelled held call's workflow is resumed by the approvals function, which
        # alone holds task tokens (states:SendTask* is granted to it only).
        - Statement:
            - Effect: Allow
              Action: [lambda:InvokeFunction]
              Resource: !GetAtt ApprovalsFunction.Arn
        - StepFunctionsExecutionPolicy: {StateMachineName: !Sub "${AWS::StackName}-approval"}
"""


def _function_text(family: NewFamily) -> str:
    name = family.name
    environment = (
        f"      Environment:\n        Variables:\n          {family.table_variable}: !Ref {family.table_id}\n"
        if family.table
        else ""
    )
    own = f"        - DynamoDBCrudPolicy: {{TableName: !Ref {family.table_id}}}\n" if family.table else ""
    return f"""  {family.function_id}:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Sub ${{AWS::StackName}}-{name}
      Description: The {name} tool family.
      CodeUri: functions/{name}/
      Handler: app.lambda_handler
{environment}      Policies:
{own}{FAMILY_POLICIES}      Events:
        CallTool:
          Type: HttpApi
          Properties:
            ApiId: !Ref HttpApi
            Path: /v1/tools/{name}/{{verb_noun}}
            Method: POST
        McpServer:  # the family's own MCP endpoint: its tools and core's, no second function
          Type: HttpApi
          Properties:
            ApiId: !Ref HttpApi
            Path: /mcp/{name}
            Method: POST
"""


def _table_text(family: NewFamily) -> str:
    return f"""  {family.table_id}:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: Retain
    UpdateReplacePolicy: Retain
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions:
        - {{AttributeName: pk, AttributeType: S}}
      KeySchema:
        - {{AttributeName: pk, KeyType: HASH}}
      PointInTimeRecoverySpecification: {{PointInTimeRecoveryEnabled: true}}
"""


def _app_text(family: NewFamily) -> str:
    name = family.name
    if not family.table:
        return f'''"""The {name} tool family: each tool is a typed function (README, "Declaring tools")."""

from __future__ import annotations

from pydantic import BaseModel, Field

from toolfront import CallContext, Family

{name} = Family("{name}", permission="{name}")


class EchoText(BaseModel):
    text: str = Field(min_length=1, max_length=1000, description="The text to answer back.")


class Echoed(BaseModel):
    text: str
    length: int


@{name}.tool(scope="{family.scope}", annotations={{"read_only": True}})
def echo_text(data: EchoText, ctx: CallContext) -> Echoed:
    """Echo a text.

    Answers the text it was given with its length. Reads and changes nothing."""
    return Echoed(text=data.text, length=len(data.text))


lambda_handler = {name}.lambda_handler
'''
    return f'''"""The {name} tool family: each tool is a typed function (README, "Declaring tools")."""

from __future__ import annotations

import os
import uuid

from pydantic import BaseModel, Field

from toolfront import CallContext, Family, dynamodb

{name} = Family("{name}", permission="{name}")


class AddItem(BaseModel):
    text: str = Field(min_length=1, max_length=1000, description="What to keep.")


class Item(BaseModel):
    item_id: str
    text: str


@{name}.tool(scope="{family.scope}")
def add_item(data: AddItem, ctx: CallContext) -> Item:
    """Add an item.

    Keeps the text as a new item in the {name} table and answers it with its id. Each call adds
    an item: send an idempotency_key to retry safely."""
    item = Item(item_id=uuid.uuid4().hex, text=data.text)
    dynamodb.call(
        "put_item",
        TableName=os.environ["{family.table_variable}"],
        Item={{"pk": {{"S": item.item_id}}, "text": {{"S": item.text}}}},
    )
    return item


lambda_handler = {name}.lambda_handler
'''


def _test_text(family: NewFamily) -> str:
    name = family.name
    if family.table:
        tool, given, check = (
            "add_item",
            '{"text": "Buy milk"}',
            '    assert answer.data["text"] == "Buy milk" and len(answer.data["item_id"]) == 32\n',
        )
    else:
        tool, given, check = (
            "echo_text",
            '{"text": "Buy milk"}',
            '    assert answer.data == {"text": "Buy milk", "length": 8}\n',
        )
    return f'''"""The {name} family's tools, called through the real pipeline on moto (toolfront.testing)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolfront.testing import FamilyClient, local_family


@pytest.fixture(scope="module")
def {name}() -> Iterator[FamilyClient]:
    with local_family("{name}") as client:
        yield client


def test_{tool}_answers({name}: FamilyClient) -> None:
    answer = {name}.call("{tool}", {given})
    assert answer.status == 200, answer.error
{check}

def test_{tool}_refuses_an_empty_text({name}: FamilyClient) -> None:
    answer = {name}.call("{tool}", {{"text": ""}})
    assert (answer.status, answer.error_code) == (422, "invalid_input")


def test_{tool}_needs_the_scope({name}: FamilyClient) -> None:
    answer = {name}.caller(permissions=["{name}"]).call("{tool}", {given})
    assert (answer.status, answer.error_code) == (403, "missing_scope")
'''
