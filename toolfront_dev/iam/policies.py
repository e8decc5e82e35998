"""Each function's (and state machine's) IAM policy, as AWS builds it from template.yaml.

The SAM translator (aws-sam-translator, the library ``sam deploy`` runs in CloudFormation) expands
the template: policy templates such as ``DynamoDBReadPolicy`` become the role's statements exactly as
deployed. The statements' intrinsics (``Ref``, ``Fn::Sub``, ``Fn::GetAtt``, ``Fn::If`` on the stack's
conditions) are then resolved with the local stack's own values. The roles' managed policies
(``AWSLambdaBasicExecutionRole``, X-Ray) only cover logs and traces, which function code never calls
through an SDK, so they are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolfront_dev.errors import TemplateError
from toolfront_dev.iam.enforcement import Enforcement
from toolfront_dev.iam.evaluation import Policy
from toolfront_dev.intrinsics import Intrinsics

ROLE_TYPE = "AWS::IAM::Role"
_OWNERS = ("AWS::Lambda::Function", "AWS::StepFunctions::StateMachine")
# The translator only needs a code location of the right shape; the local stack never uploads one.
_CODE_PROPERTIES = ("CodeUri", "ContentUri", "DefinitionUri")


def role_policies(template_path: Path | str, intrinsics: Intrinsics, region: str) -> dict[str, Policy]:
    """The policy of every active function and state machine, by its logical id in template.yaml.

    Raises:
        TemplateError: the translator refused the template, or a statement cannot be resolved.
    """
    translated = _translated(str(Path(template_path).resolve()), region)
    resources: dict[str, Any] = translated["Resources"]
    policies = {}
    for owner_id, owner in resources.items():
        if owner.get("Type") not in _OWNERS:
            continue
        if owner.get("Condition") and not intrinsics.condition(owner["Condition"], where=owner_id):
            continue
        properties = owner["Properties"]
        role_ref = (properties.get("Role") or properties.get("RoleArn") or {}).get("Fn::GetAtt", [None])[0]
        role = resources.get(role_ref or "", {})
        if role.get("Type") != ROLE_TYPE:
            continue  # a role given by ARN: nothing of the template's to check against
        # Fn::If entries (a policy only under a condition) resolve to a policy or to nothing.
        attached = intrinsics.value(role["Properties"].get("Policies", []), where=f"{owner_id}'s role")
        policies[owner_id] = Policy.parse([p["PolicyDocument"] for p in attached], where=f"{owner_id}'s role")
    return policies


@lru_cache(maxsize=8)
def _translated(path: str, region: str) -> dict[str, Any]:
    """The template after the SAM transform (cached: the translator takes ~0.3 s)."""
    import boto3
    from cfnlint.decode import decode  # type: ignore[import-untyped]
    from samtranslator.parser.parser import Parser  # type: ignore[import-untyped]
    from samtranslator.translator.translator import Translator  # type: ignore[import-untyped]

    template, problems = decode(path)
    if problems:
        raise TemplateError(f"{path}: {problems[0]}")
    plain: dict[str, Any] = json.loads(json.dumps(template))  # the decoder's node types, as plain JSON
    for resource in plain.get("Resources", {}).values():
        properties = resource.get("Properties", {})
        for name in _CODE_PROPERTIES:
            if isinstance(properties.get(name), str):
                properties[name] = {"Bucket": "local", "Key": properties[name]}
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=region))
    try:
        translated: dict[str, Any] = translator.translate(plain, {}, get_managed_policy_map=lambda: {})
    except Exception as exc:  # the translator's own errors carry the reason in their text
        raise TemplateError(f"the SAM translator refused {path}: {exc}") from exc
    return translated


def stack_enforcement(
    template_path: Path,
    intrinsics: Intrinsics,
    tables: Mapping[str, str],
    user_pools: Mapping[str, str],
    *,
    region: str,
    account: str,
) -> Enforcement:
    """IAM as the template grants it to a stack whose tables and user pools have these names."""
    attributes = _resource_attributes(tables, user_pools, region=region, account=account)
    policies = role_policies(template_path, intrinsics.with_refs({}, attributes), region)
    return Enforcement(policies, source=str(Path(template_path).resolve()), region=region, account=account)


def _resource_attributes(
    tables: Mapping[str, str], user_pools: Mapping[str, str], *, region: str, account: str
) -> dict[str, str]:
    """``Fn::GetAtt`` values of tables and user pools the policies name (``AuditTable.Arn``)."""
    found = {
        f"{lid}.Arn": f"arn:aws:dynamodb:{region}:{account}:table/{name}" for lid, name in tables.items()
    }
    found |= {
        f"{lid}.Arn": f"arn:aws:cognito-idp:{region}:{account}:userpool/{pool}"
        for lid, pool in user_pools.items()
    }
    return found
