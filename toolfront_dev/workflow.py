"""The template's functions, state machines and SNS topics in moto; the functions run in this process.

Their names and ARNs follow from the template and the stack name alone (moto's ARNs are
deterministic), so ``Ref``/``Fn::GetAtt`` to them resolve before anything starts: :func:`name_resources`.
:class:`LocalWorkflow` then creates them and hands the functions' invocations to their handlers.
"""

from __future__ import annotations

import io
import json
import logging
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from toolfront_dev.aws import REGION, moto_client
from toolfront_dev.errors import StackError, TemplateError
from toolfront_dev.intrinsics import Intrinsics
from toolfront_dev.lambdas import LocalFunction, function_arn, register_functions, unregister_functions
from toolfront_dev.payload import LOCAL_ACCOUNT_ID
from toolfront_dev.server import HandlerLoader
from toolfront_dev.template import ResourceSpec, Template

logger = logging.getLogger(__name__)

STATE_MACHINE = "AWS::Serverless::StateMachine"
TOPIC = "AWS::SNS::Topic"
SUBSCRIPTION = "AWS::SNS::Subscription"
# moto records a runtime but never runs one: the handlers run in this process, on its Python.
LOCAL_RUNTIME = "python3.13"
_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
_TRUST_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com"]},
            "Action": "sts:AssumeRole",
        }
    ],
}


@dataclass(frozen=True, slots=True)
class NamedResource:
    """A resource's logical id, its physical name and its ARN on the local stack."""

    logical_id: str
    name: str
    arn: str


@dataclass(frozen=True, slots=True)
class ResourceNames:
    """The physical names and ARNs of the template's functions, state machines and topics."""

    functions: tuple[NamedResource, ...] = ()
    state_machines: tuple[NamedResource, ...] = ()
    topics: tuple[NamedResource, ...] = ()

    @property
    def function_names(self) -> dict[str, str]:
        """Each function's name, by logical id."""
        return {f.logical_id: f.name for f in self.functions}

    def refs(self) -> dict[str, str]:
        """What ``Ref`` gives: a function's name, a state machine's or a topic's ARN."""
        return self.function_names | {r.logical_id: r.arn for r in (*self.state_machines, *self.topics)}

    def attributes(self) -> dict[str, str]:
        """What ``Fn::GetAtt`` gives, by ``LogicalId.Attribute``."""
        found = {f"{f.logical_id}.Arn": f.arn for f in self.functions}
        for machine in self.state_machines:
            found |= {f"{machine.logical_id}.Arn": machine.arn, f"{machine.logical_id}.Name": machine.name}
        for topic in self.topics:
            found |= {f"{topic.logical_id}.TopicArn": topic.arn, f"{topic.logical_id}.TopicName": topic.name}
        return found


def name_resources(
    template: Template, intrinsics: Intrinsics, *, prefix: str, account_id: str = LOCAL_ACCOUNT_ID
) -> ResourceNames:
    """Name every function, state machine and topic of the (active) template.

    A ``FunctionName``, state machine ``Name`` or ``TopicName`` is resolved with ``intrinsics``
    (``!Sub ${AWS::StackName}-catalogue``); without one the name is ``<prefix>-<LogicalId>``.

    Raises:
        TemplateError: a name property cannot be resolved.
    """
    functions = []
    for function in template.functions:
        name = _name(function.function_name, intrinsics, f"{function.logical_id} FunctionName")
        name = name or f"{prefix}-{function.logical_id}"
        functions.append(NamedResource(function.logical_id, name, function_arn(name, account_id=account_id)))
    machines, topics = [], []
    for resource in template.resources:
        if resource.type == STATE_MACHINE:
            name = _name(resource.properties.get("Name"), intrinsics, f"{resource.logical_id} Name")
            name = name or f"{prefix}-{resource.logical_id}"
            arn = f"arn:aws:states:{REGION}:{account_id}:stateMachine:{name}"
            machines.append(NamedResource(resource.logical_id, name, arn))
        elif resource.type == TOPIC:
            name = _name(resource.properties.get("TopicName"), intrinsics, f"{resource.logical_id} TopicName")
            name = name or f"{prefix}-{resource.logical_id}"
            topics.append(
                NamedResource(resource.logical_id, name, f"arn:aws:sns:{REGION}:{account_id}:{name}")
            )
    return ResourceNames(tuple(functions), tuple(machines), tuple(topics))


def _name(raw: Any, intrinsics: Intrinsics, where: str) -> str | None:
    return None if raw is None else intrinsics.text(raw, where=where)


class LocalWorkflow:
    """Creates a template's functions, state machines and topics in moto and runs the functions here.

    Args:
        template: the active template.
        names: what :func:`name_resources` gave for it.
        loader: the handler loader the local API server uses, so both run the same module objects.
        role_name: the IAM role created for the functions and state machines.
    """

    def __init__(
        self, template: Template, names: ResourceNames, loader: HandlerLoader, *, role_name: str
    ) -> None:
        self._template = template
        self._names = names
        self._loader = loader
        self._role_name = role_name
        self._registered: list[str] = []

    def start(self, endpoint: str, intrinsics: Intrinsics) -> None:
        """Create everything in moto at ``endpoint`` and run the functions' invocations in this process.

        Args:
            endpoint: the moto endpoint.
            intrinsics: resolves definition substitutions (every name and id of the stack known).

        Raises:
            TemplateError: a state machine's definition is missing or not JSON.
            StackError: moto gave a resource another ARN than the one the environment already holds.
            botocore.exceptions.ClientError: moto refused a call.
        """
        resources = {r.logical_id: r for r in self._template.resources}
        for topic in self._names.topics:
            _create_topic(endpoint, topic, resources[topic.logical_id])
        for skipped in (r for r in self._template.resources if r.type == SUBSCRIPTION):
            logger.info("%s: SNS subscriptions are not emulated locally", skipped.logical_id)
        role_arn = _create_role(endpoint, self._role_name)
        self._create_functions(endpoint, role_arn)
        definitions = {
            machine.logical_id: state_machine_definition(
                resources[machine.logical_id], intrinsics, self._template.path.parent
            )
            for machine in self._names.state_machines
        }
        states = moto_client(endpoint, "stepfunctions")
        for machine in self._names.state_machines:
            request: dict[str, Any] = {
                "name": machine.name,
                "definition": definitions[machine.logical_id],
                "roleArn": role_arn,
            }
            kind = resources[machine.logical_id].properties.get("Type")
            if isinstance(kind, str):
                request["type"] = kind
            created = states.create_state_machine(**request)["stateMachineArn"]
            _check_arn(machine, created)
            logger.debug("created state machine %s", created)

    def _create_functions(self, endpoint: str, role_arn: str) -> None:
        lambdas = moto_client(endpoint, "lambda")
        specs = {f.logical_id: f for f in self._template.functions}
        local = []
        for named in self._names.functions:
            spec = specs[named.logical_id]
            created = lambdas.create_function(
                FunctionName=named.name,
                Runtime=LOCAL_RUNTIME,
                Role=role_arn,
                Handler=spec.handler,
                Code={"ZipFile": _placeholder_zip()},
                Timeout=spec.timeout_seconds,
                MemorySize=spec.memory_size_mb,
                Description=f"{named.logical_id}: runs in the toolfront dev process",
            )["FunctionArn"]
            _check_arn(named, created)
            local.append(LocalFunction(named.name, spec, self._loader))
        register_functions(local)
        self._registered = [f.name for f in local]

    def stop(self) -> None:
        """Stop running the functions here (moto's resources go with moto); safe to call twice."""
        unregister_functions(self._registered)
        self._registered = []


def state_machine_definition(resource: ResourceSpec, intrinsics: Intrinsics, base: Path) -> str:
    """The ASL of a state machine: ``DefinitionUri`` read from ``base`` (or ``Definition``), substituted.

    Each ``${Name}`` of ``DefinitionSubstitutions`` is replaced by its resolved value, as
    CloudFormation does; other ``${...}`` are left alone.

    Raises:
        TemplateError: no local definition, an unresolvable substitution, or not JSON afterwards.
    """
    props, where = resource.properties, resource.logical_id
    uri = props.get("DefinitionUri")
    if isinstance(uri, str):
        try:
            text = (base / uri).read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(f"{where}: cannot read DefinitionUri {uri}: {exc}") from exc
    elif isinstance(props.get("Definition"), Mapping):
        text = json.dumps(intrinsics.value(props["Definition"], where=f"{where} Definition"))
    else:
        raise TemplateError(f"{where}: needs a local DefinitionUri file or an inline Definition")
    substitutions = {
        name: intrinsics.text(raw, where=f"{where} DefinitionSubstitutions.{name}") or ""
        for name, raw in (props.get("DefinitionSubstitutions") or {}).items()
    }
    text = _PLACEHOLDER.sub(lambda match: substitutions.get(match.group(1), match.group(0)), text)
    try:
        json.loads(text)
    except ValueError as exc:
        raise TemplateError(f"{where}: the definition is not JSON after substitutions ({exc})") from exc
    return text


def _create_topic(endpoint: str, topic: NamedResource, resource: ResourceSpec) -> None:
    attributes = {
        name: str(resource.properties[name]) for name in ("DisplayName",) if name in resource.properties
    }
    created = moto_client(endpoint, "sns").create_topic(Name=topic.name, Attributes=attributes)["TopicArn"]
    _check_arn(topic, created)
    logger.debug("created topic %s", created)


def _create_role(endpoint: str, name: str) -> str:
    iam = moto_client(endpoint, "iam")
    try:
        return str(iam.get_role(RoleName=name)["Role"]["Arn"])
    except iam.exceptions.NoSuchEntityException:
        created = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(_TRUST_POLICY))
        return str(created["Role"]["Arn"])


def _check_arn(expected: NamedResource, created: str) -> None:
    # The environment was resolved with the predicted ARN before moto existed; a different account
    # or region in moto would leave handlers pointing at nothing.
    if created != expected.arn:
        raise StackError(f"{expected.logical_id}: moto created {created}, expected {expected.arn}")


@cache
def _placeholder_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("README.txt", "toolfront dev runs this function's code from its CodeUri.\n")
    return buffer.getvalue()
