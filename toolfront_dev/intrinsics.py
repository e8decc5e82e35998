"""CloudFormation intrinsic functions and Conditions, evaluated against the values of the local stack.

Covers what a SAM template puts in environments and resource properties: Ref, Fn::GetAtt, Fn::Sub,
Fn::Join, Fn::If with Fn::Equals/Not/And/Or/Condition, and AWS::NoValue. Anything else fails loudly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from toolfront_dev.errors import TemplateError

_SUB_VARIABLE = re.compile(r"\$\{(!?)([^}]*)\}")


class _NoValue:
    """``Ref: AWS::NoValue``: the property or list entry it fills is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE: Final = _NoValue()


class Intrinsics:
    """Evaluates template values for one stack.

    Args:
        refs: what each parameter, pseudo parameter and emulated resource resolves to.
        conditions: the template's ``Conditions`` section, unevaluated.
        attributes: what ``Fn::GetAtt`` gives, by ``LogicalId.Attribute`` (``MyFunction.Arn``).
    """

    def __init__(
        self,
        refs: Mapping[str, str],
        conditions: Mapping[str, Any] | None = None,
        attributes: Mapping[str, str] | None = None,
    ) -> None:
        self._refs = dict(refs)
        self._conditions = dict(conditions or {})
        self._attributes = dict(attributes or {})
        self._decided: dict[str, bool] = {}

    def with_refs(self, refs: Mapping[str, str], attributes: Mapping[str, str] | None = None) -> Intrinsics:
        """A copy that also knows ``refs`` and ``attributes`` (resources named or created since)."""
        return Intrinsics(
            {**self._refs, **refs}, self._conditions, {**self._attributes, **(attributes or {})}
        )

    def value(self, raw: Any, *, where: str) -> Any:
        """Resolve every intrinsic inside ``raw``; literals keep their type, AWS::NoValue entries go.

        Raises:
            TemplateError: an unknown name, or an intrinsic the local stack does not evaluate.
        """
        if isinstance(raw, list):
            items = (self.value(item, where=where) for item in raw)
            return [item for item in items if item is not NO_VALUE]
        if not isinstance(raw, Mapping):
            return raw
        if len(raw) == 1:
            [(name, argument)] = raw.items()
            if name == "Ref" or name.startswith("Fn::") or name == "Condition":
                return self._function(name, argument, where)
        resolved = {key: self.value(item, where=f"{where}.{key}") for key, item in raw.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}

    def text(self, raw: Any, *, where: str) -> str | None:
        """Resolve ``raw`` to the string CloudFormation would hand over, or None for AWS::NoValue."""
        value = self.value(raw, where=where)
        if value is NO_VALUE:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str | int | float):
            return str(value)
        raise TemplateError(f"{where}: expected a scalar, got {value!r}")

    def condition(self, name: str, *, where: str) -> bool:
        """Evaluate a named condition of the template (memoised)."""
        if name not in self._decided:
            if name not in self._conditions:
                raise TemplateError(f"{where}: no condition named {name!r}")
            self._decided[name] = self._truth(self._conditions[name], f"Condition {name}")
        return self._decided[name]

    def _function(self, name: str, argument: Any, where: str) -> Any:
        if name == "Ref":
            return self._ref(argument, where)
        if name == "Fn::GetAtt":
            return self._get_att(argument, where)
        if name == "Fn::Sub":
            return self._sub(argument, where)
        if name == "Fn::Join" and isinstance(argument, list) and len(argument) == 2:
            parts = self.value(argument[1], where=where)
            return str(argument[0]).join(self.text(part, where=where) or "" for part in parts)
        if name == "Fn::If" and isinstance(argument, list) and len(argument) == 3:
            chosen = argument[1] if self.condition(str(argument[0]), where=where) else argument[2]
            return self.value(chosen, where=where)
        if name in ("Condition", "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or"):
            return self._truth({name: argument}, where)
        raise TemplateError(f"{where}: the local stack cannot evaluate {name} {argument!r}")

    def _truth(self, raw: Any, where: str) -> bool:
        if not isinstance(raw, Mapping) or len(raw) != 1:
            raise TemplateError(f"{where}: malformed condition {raw!r}")
        [(name, argument)] = raw.items()
        if name == "Condition":
            return self.condition(str(argument), where=where)
        if name == "Fn::Equals" and isinstance(argument, list) and len(argument) == 2:
            # CloudFormation compares the string forms: a Number parameter equals "100".
            left, right = (self.text(side, where=where) for side in argument)
            return left == right
        if name == "Fn::Not" and isinstance(argument, list) and len(argument) == 1:
            return not self._truth(argument[0], where)
        if name == "Fn::And" and isinstance(argument, list):
            return all(self._truth(item, where) for item in argument)
        if name == "Fn::Or" and isinstance(argument, list):
            return any(self._truth(item, where) for item in argument)
        raise TemplateError(f"{where}: malformed condition {raw!r}")

    def _ref(self, name: Any, where: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if not isinstance(name, str) or name not in self._refs:
            raise TemplateError(f"{where}: Ref {name!r} names nothing the local stack provides")
        return self._refs[name]

    def _get_att(self, argument: Any, where: str) -> str:
        # Both spellings: [LogicalId, Attribute] (YAML's !GetAtt X.Y becomes this) and "X.Y".
        if isinstance(argument, list) and len(argument) == 2:
            name = f"{argument[0]}.{self.text(argument[1], where=where)}"
        elif isinstance(argument, str):
            name = argument
        else:
            raise TemplateError(f"{where}: malformed Fn::GetAtt {argument!r}")
        if name not in self._attributes:
            raise TemplateError(f"{where}: Fn::GetAtt {name} names nothing the local stack provides")
        return self._attributes[name]

    def _sub(self, argument: Any, where: str) -> str:
        if isinstance(argument, str):
            text, variables = argument, {}
        elif isinstance(argument, list) and len(argument) == 2 and isinstance(argument[0], str):
            text = argument[0]
            variables = {key: self.text(raw, where=where) or "" for key, raw in (argument[1] or {}).items()}
        else:
            raise TemplateError(f"{where}: malformed Fn::Sub {argument!r}")

        def replace(match: re.Match[str]) -> str:
            if match.group(1):  # ${!Literal} is how Fn::Sub writes a literal ${Literal}
                return "${" + match.group(2) + "}"
            name = match.group(2)
            if name in variables:
                return variables[name]
            if "." in name and name not in self._refs:  # ${X.Attr} is Fn::Sub's GetAtt
                return self._get_att(name, where)
            return str(self._ref(name, where))

        return _SUB_VARIABLE.sub(replace, text)
