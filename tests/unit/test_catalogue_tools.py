"""The catalogue family's declarations (docs/contract.md, "The shipped tools")."""

from __future__ import annotations

from types import ModuleType

from toolfront import CallContext, Registry


def test_catalogue_declares_its_eight_tools_all_valid(catalogue: ModuleType, caplog: object) -> None:
    registry = Registry.from_modules([catalogue])
    assert registry.names() == [
        "catalogue.create_product",
        "catalogue.delete_product",
        "catalogue.discount_products",
        "catalogue.export_products",
        "catalogue.get_product",
        "catalogue.get_product_label",
        "catalogue.list_products",
        "catalogue.set_prices",
    ]
    assert {tool.module for tool in registry} == {"catalogue"}


def test_catalogue_tools_have_titles_and_descriptions_for_agents(catalogue: ModuleType) -> None:
    for tool in Registry.from_modules([catalogue]):
        assert tool.title and tool.title != tool.name
        assert len(tool.description) > 40


def test_catalogue_scopes_split_reads_from_writes(catalogue: ModuleType) -> None:
    for tool in Registry.from_modules([catalogue]):
        expected = "catalogue.products:read" if tool.is_read_only else "catalogue.products:write"
        assert (tool.scope, tool.permission, str(tool.audience)) == (expected, "catalogue", "admin")


def test_catalogue_dangers_match_the_design(catalogue: ModuleType) -> None:
    registry = Registry.from_modules([catalogue])
    assert registry["catalogue.delete_product"].danger == "always"
    assert registry["catalogue.delete_product"].annotations.destructive is True
    assert registry["catalogue.set_prices"].max_items == 500
    assert callable(registry["catalogue.discount_products"].danger)
    for name in ("catalogue.list_products", "catalogue.get_product", "catalogue.create_product"):
        assert registry[name].danger is None


def test_discount_check_holds_only_discounts_over_fifty_percent(catalogue: ModuleType) -> None:
    check = catalogue.discount_needs_confirmation
    ctx = CallContext(request_id="r", tool="catalogue.discount_products", dry_run=True)
    assert check({"discounts": [{"sku": "A", "percent": 50}]}, ctx) is False
    assert check({"discounts": [{"sku": "A", "percent": 10}, {"sku": "B", "percent": 51}]}, ctx) is True
