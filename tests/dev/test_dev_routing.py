"""Route matching: specificity order, greedy paths, ANY, $default and conflicts."""

from __future__ import annotations

import pytest

from toolfront_dev.errors import RouteConflictError
from toolfront_dev.routing import RouteTable
from toolfront_dev.template import Route


def table(*routes: tuple[str, str, str]) -> RouteTable:
    return RouteTable(Route(function_id, method, path) for function_id, method, path in routes)


def target(routes: RouteTable, method: str, path: str) -> str:
    found = routes.match(method, path)
    assert found is not None, f"{method} {path} matched nothing"
    return found.route.function_id


def test_match_param_route_returns_path_parameters() -> None:
    routes = table(("Catalogue", "POST", "/v1/tools/catalogue/{verb_noun}"))

    found = routes.match("POST", "/v1/tools/catalogue/get_product")

    assert found is not None
    assert found.route.function_id == "Catalogue"
    assert found.path_parameters == {"verb_noun": "get_product"}


def test_match_literal_beats_param_beats_greedy() -> None:
    routes = table(
        ("Greedy", "GET", "/pets/{proxy+}"),
        ("Param", "GET", "/pets/dog/{id}"),
        ("Literal", "GET", "/pets/dog/1"),
    )

    assert target(routes, "GET", "/pets/dog/1") == "Literal"
    assert target(routes, "GET", "/pets/dog/2") == "Param"
    assert target(routes, "GET", "/pets/cat/2") == "Greedy"


def test_match_greedy_captures_rest_of_path() -> None:
    found = table(("Files", "ANY", "/files/{proxy+}")).match("DELETE", "/files/a/b/c.txt")

    assert found is not None
    assert found.path_parameters == {"proxy": "a/b/c.txt"}


def test_match_greedy_needs_at_least_one_segment() -> None:
    assert table(("Files", "GET", "/files/{proxy+}")).match("GET", "/files/") is None


def test_match_named_method_beats_any() -> None:
    routes = table(("Any", "ANY", "/items"), ("Get", "GET", "/items"))

    assert target(routes, "GET", "/items") == "Get"
    assert target(routes, "PUT", "/items") == "Any"


def test_match_default_route_catches_unmatched_only() -> None:
    routes = table(("Default", "ANY", "$default"), ("Health", "GET", "/health"))

    assert target(routes, "GET", "/health") == "Health"
    assert target(routes, "POST", "/anything/else") == "Default"


def test_match_empty_param_or_trailing_slash_is_no_match() -> None:
    routes = table(("Catalogue", "POST", "/v1/tools/catalogue/{verb_noun}"), ("Health", "GET", "/health"))

    assert routes.match("POST", "/v1/tools/catalogue/") is None
    assert routes.match("GET", "/health/") is None


def test_route_table_same_method_and_path_in_two_functions_raises() -> None:
    with pytest.raises(RouteConflictError, match=r"GET /health.*Second.*First"):
        table(("First", "GET", "/health"), ("Second", "GET", "/health"))


def test_route_table_params_differing_only_in_name_raise() -> None:
    with pytest.raises(RouteConflictError):
        table(("First", "GET", "/items/{id}"), ("Second", "GET", "/items/{sku}"))


def test_route_table_same_path_other_method_is_allowed() -> None:
    routes = table(("Reader", "GET", "/items"), ("Writer", "POST", "/items"))

    assert target(routes, "POST", "/items") == "Writer"
