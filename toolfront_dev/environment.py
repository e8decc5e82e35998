"""What the template means on the local stack: Ref values, live conditions, the functions' environment.

Also the reversible changes to ``os.environ`` that let handlers in this process reach moto.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from typing import Any

from toolfront_dev.aws import REGION
from toolfront_dev.errors import TemplateError
from toolfront_dev.intrinsics import Intrinsics
from toolfront_dev.payload import LOCAL_ACCOUNT_ID
from toolfront_dev.template import Template

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")


def local_stack_name(stage: str) -> str:
    """The name ``AWS::StackName`` resolves to locally, and the prefix of unnamed resources."""
    return f"toolfront-{stage}"


def parameter_problem(spec: Mapping[str, Any], value: str) -> str | None:
    """What CloudFormation would refuse in ``value`` for a parameter declared as ``spec``, if anything."""
    allowed = spec.get("AllowedValues")
    if allowed is not None and value not in [str(v) for v in allowed]:
        return f"must be one of {', '.join(str(v) for v in allowed)}"
    pattern = spec.get("AllowedPattern")
    if pattern is not None and re.fullmatch(str(pattern), value) is None:
        return f"must match {pattern}"
    if spec.get("Type") == "Number":
        try:
            number = float(value)
        except ValueError:
            return "must be a number"
        if "MinValue" in spec and number < float(spec["MinValue"]):
            return f"must be at least {spec['MinValue']}"
        if "MaxValue" in spec and number > float(spec["MaxValue"]):
            return f"must be at most {spec['MaxValue']}"
    return None


def stack_intrinsics(
    template: Template, stage: str, parameters: Mapping[str, str] | None = None
) -> Intrinsics:
    """Intrinsics knowing the parameters (defaults, then ``Stage``, then overrides) and pseudo parameters.

    Raises:
        TemplateError: an override names no parameter of the template.
    """
    unknown = set(parameters or {}) - set(template.parameter_defaults)
    if unknown:
        raise TemplateError(f"no such template parameter: {', '.join(sorted(unknown))}")
    for name, value in (parameters or {}).items():
        problem = parameter_problem(template.parameter_specs.get(name, {}), value)
        if problem:
            raise TemplateError(f"parameter {name}={value!r}: {problem}")
    refs = {name: default for name, default in template.parameter_defaults.items() if default is not None}
    refs |= {
        "Stage": stage,
        "AWS::Region": REGION,
        "AWS::AccountId": LOCAL_ACCOUNT_ID,
        "AWS::Partition": "aws",
        "AWS::URLSuffix": "amazonaws.com",
        "AWS::StackName": local_stack_name(stage),
    }
    return Intrinsics(refs | dict(parameters or {}), template.conditions)


def active_template(template: Template, intrinsics: Intrinsics) -> Template:
    """The template without the functions, tables and resources whose ``Condition`` is false."""

    def live(condition: str | None, logical_id: str) -> bool:
        return condition is None or intrinsics.condition(condition, where=logical_id)

    return dataclasses.replace(
        template,
        functions=tuple(f for f in template.functions if live(f.condition, f.logical_id)),
        tables=tuple(t for t in template.tables if live(t.condition, t.logical_id)),
        resources=tuple(r for r in template.resources if live(r.condition, r.logical_id)),
    )


def function_environment(template: Template, intrinsics: Intrinsics) -> dict[str, str]:
    """The union of every function's resolved environment (AWS::NoValue variables left out).

    Raises:
        TemplateError: a value cannot be resolved, or two functions give one variable different
            values (in one process only one of them could hold).
    """
    merged: dict[str, str] = {}
    owners: dict[str, str] = {}
    for function in template.functions:
        for name, raw in function.environment.items():
            value = intrinsics.text(raw, where=f"{function.logical_id} {name}")
            if value is None:
                continue
            if merged.setdefault(name, value) != value:
                raise TemplateError(
                    f"{name} is {merged[name]!r} for {owners[name]} but {value!r} for {function.logical_id}"
                )
            owners.setdefault(name, function.logical_id)
    return merged


class EnvironmentPatch:
    """Changes to ``os.environ`` that :meth:`restore` undoes."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, name: str, value: str) -> None:
        """Set a variable, remembering its first previous value."""
        self._saved.setdefault(name, os.environ.get(name))
        os.environ[name] = value

    def unset(self, name: str) -> None:
        """Remove a variable, remembering its previous value."""
        if name in os.environ:
            self._saved.setdefault(name, os.environ.get(name))
            del os.environ[name]

    def restore(self) -> None:
        """Put back every variable as it was before the first change."""
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved.clear()


def point_at_moto(env: EnvironmentPatch, moto_endpoint: str) -> None:
    """Send every boto3 client of this process to moto, in the stack's region, never to real AWS."""
    env.set("AWS_ENDPOINT_URL", moto_endpoint)
    # Per-service endpoints, or the switch that ignores AWS_ENDPOINT_URL, would send a handler's
    # calls past moto, possibly to a real account with the shell's credentials.
    for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL_")]:
        env.unset(name)
    env.unset("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
    # Forced, not defaulted: the tables exist in this region only.
    env.set("AWS_DEFAULT_REGION", REGION)
    env.set("AWS_REGION", REGION)
    env.set("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        if not os.environ.get(name):
            env.set(name, "testing")
    if any(os.environ.get(name) for name in _PROXY_VARIABLES):
        for name in ("NO_PROXY", "no_proxy"):
            current = os.environ.get(name, "")
            env.set(name, ",".join(filter(None, [current, "127.0.0.1", "localhost"])))


def reset_process_clients() -> None:
    """Forget the AWS clients and settings toolfront cached in this process."""
    # toolfront caches one client per service, and the settings and stores of a warm process hold
    # tables and clients of their own: any of them made for an earlier stack of this process would
    # keep talking to that stack's (stopped) moto.
    from toolfront import wiring
    from toolfront.aws.clients import reset_clients

    reset_clients()
    wiring.reset()
