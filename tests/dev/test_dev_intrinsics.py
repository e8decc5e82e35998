"""Intrinsic functions and conditions, and what they make of the functions' environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolfront_dev.environment import active_template, function_environment, stack_intrinsics
from toolfront_dev.errors import TemplateError
from toolfront_dev.intrinsics import NO_VALUE, Intrinsics
from toolfront_dev.template import FunctionSpec, ResourceSpec, Template

CONDITIONS = {
    "IsProd": {"Fn::Equals": [{"Ref": "Stage"}, "prod"]},
    "NotProd": {"Fn::Not": [{"Condition": "IsProd"}]},
    "Both": {"Fn::And": [{"Condition": "NotProd"}, {"Fn::Equals": [{"Ref": "Items"}, "100"]}]},
    "Either": {"Fn::Or": [{"Condition": "IsProd"}, {"Condition": "Both"}]},
}
REFS = {
    "Stage": "local",
    "Items": "100",
    "AWS::Region": "us-east-1",
    "KeysTable": "toolfront-local-KeysTable",
}


def intrinsics() -> Intrinsics:
    return Intrinsics(REFS, CONDITIONS)


def function(logical_id: str, environment: dict[str, object], condition: str | None = None) -> FunctionSpec:
    return FunctionSpec(logical_id, Path("."), "app.lambda_handler", environment, 128, 3, (), condition)


def template(*functions: FunctionSpec, resources: tuple[ResourceSpec, ...] = ()) -> Template:
    return Template(Path("template.yaml"), {"Stage": "dev"}, CONDITIONS, functions, (), resources)


def test_text_ref_returns_mapped_name() -> None:
    assert intrinsics().text({"Ref": "KeysTable"}, where="x") == "toolfront-local-KeysTable"


def test_text_sub_substitutes_refs_and_keeps_escapes() -> None:
    raw = {"Fn::Sub": "tf-${Stage}-${AWS::Region}-${!Literal}"}

    assert intrinsics().text(raw, where="x") == "tf-local-us-east-1-${Literal}"


def test_text_sub_with_variables_uses_them_first() -> None:
    raw = {"Fn::Sub": ["${A}-${Stage}", {"A": {"Ref": "Items"}}]}

    assert intrinsics().text(raw, where="x") == "100-local"


def test_text_join_concatenates_resolved_parts() -> None:
    assert intrinsics().text({"Fn::Join": [",", ["a", {"Ref": "Stage"}]]}, where="x") == "a,local"


def test_text_literals_become_cloudformation_strings() -> None:
    assert intrinsics().text(True, where="x") == "true"
    assert intrinsics().text(30, where="x") == "30"


def test_condition_equals_not_and_or_evaluate() -> None:
    evaluate = intrinsics()

    assert evaluate.condition("IsProd", where="x") is False
    assert evaluate.condition("NotProd", where="x") is True
    assert evaluate.condition("Both", where="x") is True
    assert evaluate.condition("Either", where="x") is True


def test_value_if_picks_branch_by_condition() -> None:
    raw = {"Fn::If": ["IsProd", "real", {"Fn::Sub": "fake-${Stage}"}]}

    assert intrinsics().value(raw, where="x") == "fake-local"


def test_value_no_value_drops_property_and_list_entry() -> None:
    raw = {
        "Keep": 1,
        "Drop": {"Ref": "AWS::NoValue"},
        "List": ["a", {"Fn::If": ["IsProd", "b", {"Ref": "AWS::NoValue"}]}],
    }

    assert intrinsics().value(raw, where="x") == {"Keep": 1, "List": ["a"]}
    assert intrinsics().value({"Ref": "AWS::NoValue"}, where="x") is NO_VALUE


def test_value_keeps_literal_types_inside_structures() -> None:
    assert intrinsics().value({"GenerateSecret": False, "Scopes": [{"Ref": "Stage"}]}, where="x") == {
        "GenerateSecret": False,
        "Scopes": ["local"],
    }


def test_text_unknown_ref_raises_naming_the_place() -> None:
    with pytest.raises(TemplateError, match=r"Fn TOOLFRONT_X.*'Missing'"):
        intrinsics().text({"Ref": "Missing"}, where="Fn TOOLFRONT_X")


def test_text_getatt_unknown_attribute_raises_naming_it() -> None:
    with pytest.raises(TemplateError, match=r"x: Fn::GetAtt Queue.Arn names nothing"):
        intrinsics().text({"Fn::GetAtt": ["Queue", "Arn"]}, where="x")


def test_text_getatt_both_spellings_and_sub_form_resolve() -> None:
    evaluate = intrinsics().with_refs({}, {"Fn.Arn": "arn:aws:lambda:us-east-1:123456789012:function:fn"})

    assert evaluate.text({"Fn::GetAtt": ["Fn", "Arn"]}, where="x") == evaluate.text(
        {"Fn::GetAtt": "Fn.Arn"}, where="x"
    )
    assert evaluate.text({"Fn::Sub": "${Fn.Arn}:live"}, where="x").endswith(":function:fn:live")


def test_text_sub_unknown_getatt_raises() -> None:
    with pytest.raises(TemplateError, match=r"Fn::GetAtt Queue.Arn names nothing"):
        intrinsics().text({"Fn::Sub": "${Queue.Arn}"}, where="x")


def test_condition_unknown_name_raises() -> None:
    with pytest.raises(TemplateError, match="no condition named 'Nope'"):
        intrinsics().condition("Nope", where="x")


def test_with_refs_adds_names_without_changing_original() -> None:
    base = intrinsics()
    extended = base.with_refs({"UserPool": "us-east-1_abc"})

    assert extended.text({"Ref": "UserPool"}, where="x") == "us-east-1_abc"
    with pytest.raises(TemplateError):
        base.text({"Ref": "UserPool"}, where="x")


def test_function_environment_union_of_functions() -> None:
    merged = function_environment(
        template(
            function("A", {"SHARED": "1", "A_TABLE": {"Ref": "KeysTable"}}), function("B", {"SHARED": "1"})
        ),
        intrinsics(),
    )

    assert merged == {"SHARED": "1", "A_TABLE": "toolfront-local-KeysTable"}


def test_function_environment_no_value_variable_left_out() -> None:
    merged = function_environment(template(function("A", {"GONE": {"Ref": "AWS::NoValue"}})), intrinsics())

    assert merged == {}


def test_function_environment_conflicting_values_raise() -> None:
    with pytest.raises(TemplateError, match="SHARED is '1' for A but '2' for B"):
        function_environment(
            template(function("A", {"SHARED": "1"}), function("B", {"SHARED": "2"})), intrinsics()
        )


def test_active_template_drops_resources_whose_condition_is_false() -> None:
    pool = ResourceSpec("Pool", "AWS::Cognito::UserPool", {}, "IsProd")
    kept = active_template(
        template(function("A", {}), function("B", {}, "IsProd"), resources=(pool,)), intrinsics()
    )

    assert [f.logical_id for f in kept.functions] == ["A"]
    assert kept.resources == ()


def test_stack_intrinsics_stage_and_overrides_win_over_defaults() -> None:
    evaluate = stack_intrinsics(template(), "local", {"Stage": "prod"})

    assert evaluate.text({"Ref": "AWS::StackName"}, where="x") == "toolfront-local"
    assert evaluate.condition("IsProd", where="x") is True


def test_stack_intrinsics_unknown_override_raises() -> None:
    with pytest.raises(TemplateError, match="no such template parameter: Nope"):
        stack_intrinsics(template(), "local", {"Nope": "1"})
