"""What IAM checks for one AWS request: the (action, resource) pairs it needs, as AWS derives them.

Most operations need their own action on one resource. The exceptions are the ones the functions
use and AWS documents per item: ``TransactWriteItems`` needs ``PutItem``/``UpdateItem``/
``DeleteItem``/``ConditionCheckItem`` on each item's table, ``TransactGetItems`` ``GetItem``, the
batch operations their own action on every table they name. Step Functions' task callbacks take no
resource (``*``: the token is the authority). An operation this module does not know needs its own
action on ``*``, which a policy naming resources does not grant: unknown is refused, never waved
through. See https://docs.aws.amazon.com/service-authorization/latest/reference/
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolfront_dev.iam.evaluation import Access

#: The verb IAM checks for each kind of transaction item.
_TRANSACT_WRITE = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


def accesses(
    prefix: str, operation: str, params: Mapping[str, Any], *, region: str, account: str
) -> list[Access]:
    """The accesses IAM checks for ``operation`` of the service whose IAM prefix is ``prefix``."""
    arn = _Arns(region, account)
    derive = _DERIVERS.get(prefix)
    if derive is not None:
        found = derive(arn, operation, params)
        if found is not None:
            return found
    return [Access(f"{prefix}:{operation}", "*")]


class _Arns:
    def __init__(self, region: str, account: str) -> None:
        self.region, self.account = region, account

    def table(self, name: str) -> str:
        if name.startswith("arn:"):
            return name
        return f"arn:aws:dynamodb:{self.region}:{self.account}:table/{name}"

    def function(self, name: str) -> str:
        if name.startswith("arn:"):
            return name
        # "name", "name:qualifier" or the partial "123456789012:function:name"
        if ":function:" in name:
            return f"arn:aws:lambda:{self.region}:{name}"
        return f"arn:aws:lambda:{self.region}:{self.account}:function:{name}"

    def user_pool(self, pool_id: str) -> str:
        return f"arn:aws:cognito-idp:{self.region}:{self.account}:userpool/{pool_id}"


def _dynamodb(arn: _Arns, operation: str, params: Mapping[str, Any]) -> list[Access] | None:
    if operation == "TransactWriteItems":
        found = []
        for item in params.get("TransactItems", []):
            [(kind, request)] = item.items()
            found.append(Access(f"dynamodb:{_TRANSACT_WRITE[kind]}", arn.table(request["TableName"])))
        return found
    if operation == "TransactGetItems":
        return [Access("dynamodb:GetItem", arn.table(i["Get"]["TableName"])) for i in params["TransactItems"]]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [Access(f"dynamodb:{operation}", arn.table(name)) for name in params.get("RequestItems", {})]
    table = params.get("TableName")
    if not isinstance(table, str):
        return None
    resource = arn.table(table)
    if params.get("IndexName"):
        resource = f"{resource}/index/{params['IndexName']}"
    return [Access(f"dynamodb:{operation}", resource)]


def _states(arn: _Arns, operation: str, params: Mapping[str, Any]) -> list[Access] | None:
    for field in ("executionArn", "stateMachineArn"):
        if isinstance(params.get(field), str):
            return [Access(f"states:{operation}", params[field])]
    return None  # SendTaskSuccess/Failure/Heartbeat: "*", the token is the authority


def _lambda(arn: _Arns, operation: str, params: Mapping[str, Any]) -> list[Access] | None:
    name = params.get("FunctionName")
    if not isinstance(name, str):
        return None
    qualifier = params.get("Qualifier")
    resource = arn.function(name) + (f":{qualifier}" if qualifier else "")
    # The one operation whose IAM action has another name: Invoke is authorized as InvokeFunction.
    action = "InvokeFunction" if operation in ("Invoke", "InvokeWithResponseStream") else operation
    return [Access(f"lambda:{action}", resource)]


def _sns(arn: _Arns, operation: str, params: Mapping[str, Any]) -> list[Access] | None:
    topic = params.get("TopicArn") or params.get("TargetArn")
    return [Access(f"sns:{operation}", topic)] if isinstance(topic, str) else None


def _cognito(arn: _Arns, operation: str, params: Mapping[str, Any]) -> list[Access] | None:
    pool = params.get("UserPoolId")
    return [Access(f"cognito-idp:{operation}", arn.user_pool(pool))] if isinstance(pool, str) else None


def _secrets(arn: _Arns, operation: str, params: Mapping[str, Any]) -> list[Access] | None:
    secret = params.get("SecretId")
    return [Access(f"secretsmanager:{operation}", secret)] if isinstance(secret, str) else None


_DERIVERS: dict[str, Callable[[_Arns, str, Mapping[str, Any]], list[Access] | None]] = {
    "dynamodb": _dynamodb,
    "states": _states,
    "lambda": _lambda,
    "sns": _sns,
    "cognito-idp": _cognito,
    "secretsmanager": _secrets,
}
