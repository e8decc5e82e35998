"""The approver's pages: complete, self-contained, escaped documents with the right form and wording."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import approval_pages
from toolfront.adapters.http import PAGE_HEADERS

ROOT = Path(__file__).resolve().parents[2]
EVIL = '<script>alert("x")</script>'
VOID = {"meta", "input", "br", "hr", "img", "link", "wbr", "source", "area", "base", "col", "embed"}
STATUSES = ["pending", "approved", "rejected", "expired", "succeeded", "failed", "cancelled"]


pages = approval_pages()


class Element:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs, self.children, self.parts = tag, attrs, list[Element](), list[str]()

    @property
    def text(self) -> str:
        return "".join(self.parts)


class Document(HTMLParser):
    """A tiny DOM: every element with its attributes and all the text inside it."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.open: list[Element] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1].tag == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        for element in self.open:
            element.parts.append(data)

    def all(self, tag: str, **attrs: str) -> list[Element]:
        return [
            e for e in self.elements if e.tag == tag and all(e.attrs.get(k) == v for k, v in attrs.items())
        ]

    def one(self, tag: str, **attrs: str) -> Element:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"{len(found)} <{tag} {attrs}>"
        return found[0]

    def by_id(self, id_: str) -> Element:
        found = [e for e in self.elements if e.attrs.get("id") == id_]
        assert len(found) == 1, f"{len(found)} elements with id={id_!r}"
        return found[0]


def make_view(**changes: Any) -> Any:
    view = pages.ApprovalView(
        approval_id="apr_1",
        tool="catalogue.delete_product",
        title="Delete a product",
        description="Deletes one product for good.\nIts SKU becomes free.",
        requester="key k3f9... of alice",
        reason="danger",
        input_json='{\n  "sku": "ABC-1"\n}',
        created_at="2025-06-01T14:30:00Z",
        expires_at="2025-06-02T14:30:00Z",
        status="pending",
    )
    return dataclasses.replace(view, **changes)


def every_page() -> list[str]:
    view = make_view()
    return [
        pages.approval_page(view, "c0de"),
        pages.decided_page(view, "approve"),
        pages.decided_page(view, "reject"),
        pages.problem_page(403, "This link is not valid", "Check the code."),
        pages.status_page(make_view(status="succeeded")),
    ]


@pytest.mark.parametrize("html", every_page())
def test_page_any_kind_is_complete_html5_document(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>\n<html lang=")
    assert html.rstrip().endswith("</html>")
    doc = Document(html)
    assert not doc.open
    assert doc.one("meta", charset="utf-8")
    assert doc.one("title").text.strip()
    assert doc.one("body").attrs.get("data-status")


@pytest.mark.parametrize("html", every_page())
def test_page_any_kind_has_viewport_and_no_referrer_meta(html: str) -> None:
    doc = Document(html)
    assert doc.one("meta", name="viewport").attrs["content"] == "width=device-width, initial-scale=1"
    assert doc.one("meta", name="referrer").attrs["content"] == "no-referrer"


@pytest.mark.parametrize("html", every_page())
def test_page_any_kind_loads_nothing_from_elsewhere(html: str) -> None:
    doc = Document(html)
    assert not [e.tag for e in doc.elements if e.tag in {"script", "img", "link", "iframe", "object"}]
    assert not [e.attrs for e in doc.elements if "src" in e.attrs or "href" in e.attrs]
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"url\(|@import|=\s*[\"']//", html)


@pytest.mark.parametrize("html", every_page())
def test_page_any_kind_is_phone_and_dark_mode_friendly(html: str) -> None:
    css = Document(html).one("style").text
    assert "prefers-color-scheme:dark" in css and "system-ui" in css
    assert "min-height:48px" in css


def test_approval_page_pending_view_shows_title_tool_requester_and_input() -> None:
    doc = Document(pages.approval_page(make_view(), "c0de"))
    assert "Delete a product" in doc.one("title").text
    assert doc.by_id("title").text == "Delete a product"
    assert doc.by_id("tool").text == "catalogue.delete_product"
    assert doc.by_id("description").text == "Deletes one product for good.\nIts SKU becomes free."
    assert doc.by_id("requester").text == "key k3f9... of alice"
    assert doc.one("pre").attrs["id"] == "input"
    assert doc.by_id("input").text == '{\n  "sku": "ABC-1"\n}'
    body = doc.one("body").attrs
    assert (body["data-status"], body["data-approval-id"], body["data-reason"]) == (
        "pending",
        "apr_1",
        "danger",
    )


def test_approval_page_expiry_shown_in_utc_with_machine_readable_time() -> None:
    doc = Document(pages.approval_page(make_view(expires_at="2025-06-02T16:30:00+02:00"), "c0de"))
    expires = doc.by_id("expires")
    assert expires.text == "2 Jun 2025, 14:30 UTC"
    assert doc.all("time", datetime="2025-06-02T16:30:00+02:00")
    assert "2 Jun 2025, 14:30 UTC" in doc.by_id("final").text


def test_approval_page_unparsable_time_shown_as_given() -> None:
    doc = Document(pages.approval_page(make_view(expires_at="tomorrow <noon>"), "c0de"))
    assert doc.by_id("expires").text == "tomorrow <noon>"


def test_approval_page_form_posts_code_and_decision_to_the_approval() -> None:
    doc = Document(pages.approval_page(make_view(), "c0de"))
    form = doc.one("form")
    assert form.attrs["method"] == "post" and form.attrs["action"] == "/approvals/apr_1"
    hidden = doc.one("input")
    assert hidden.attrs == {"type": "hidden", "name": "code", "value": "c0de"}
    buttons = doc.all("button")
    assert [(b.attrs["id"], b.attrs["type"], b.attrs["name"], b.attrs["value"], b.text) for b in buttons] == [
        ("approve", "submit", "decision", "approve", "Approve"),
        ("reject", "submit", "decision", "reject", "Reject"),
    ]


def test_approval_page_approve_is_the_primary_button() -> None:
    css = Document(pages.approval_page(make_view(), "c0de")).one("style").text
    approve = re.search(r"#approve\{([^}]*)\}", css)
    reject = re.search(r"#reject\{([^}]*)\}", css)
    assert approve and "background:var(--accent)" in approve.group(1)
    assert reject and "background:transparent" in reject.group(1)


def test_approval_page_says_decision_is_final() -> None:
    doc = Document(pages.approval_page(make_view(), "c0de"))
    assert "The decision is final and can be made once." in doc.by_id("final").text


def test_approval_page_odd_id_is_url_escaped_in_action() -> None:
    doc = Document(pages.approval_page(make_view(approval_id='a/b?c=d&e"<f>'), "c0de"))
    assert doc.one("form").attrs["action"] == "/approvals/a%2Fb%3Fc%3Dd%26e%22%3Cf%3E"


@pytest.mark.parametrize(
    ("reason", "wording"),
    [
        ("danger", "This tool always needs a person's confirmation"),
        ("danger_check", "This call was flagged by the tool's own safety check"),
        ("batch_size", "This call changes more items than the batch limit allows without confirmation"),
        ("requires_approval", "The key used for this call requires approval for every change"),
    ],
)
def test_approval_page_each_reason_explained_in_words(reason: str, wording: str) -> None:
    doc = Document(pages.approval_page(make_view(reason=reason), "c0de"))
    assert wording in doc.by_id("reason").text
    assert reason not in doc.by_id("reason").text  # words, not the code


def test_approval_page_unknown_reason_gets_generic_wording() -> None:
    doc = Document(pages.approval_page(make_view(reason="new_rule"), "c0de"))
    assert "needs a person's confirmation" in doc.by_id("reason").text


@pytest.mark.parametrize("field", ["title", "description", "input_json", "requester", "tool", "approval_id"])
def test_approval_page_markup_in_any_field_comes_out_escaped(field: str) -> None:
    html = pages.approval_page(make_view(**{field: EVIL}), 'c"><script>x</script>')
    doc = Document(html)
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert EVIL in "".join(e.text for e in doc.elements if e.tag in {"title", "main"})
    assert doc.one("input").attrs["value"] == 'c"><script>x</script>'


@pytest.mark.parametrize("html", every_page()[1:])
def test_page_other_than_decision_has_no_form(html: str) -> None:
    doc = Document(html)
    assert not doc.all("form") and not doc.all("button") and not doc.all("input")


@pytest.mark.parametrize(("decision", "status"), [("approve", "approved"), ("reject", "rejected")])
def test_decided_page_decision_says_what_happens_next(decision: str, status: str) -> None:
    doc = Document(pages.decided_page(make_view(), decision))
    assert doc.one("body").attrs["data-status"] == status
    assert doc.one("h1").text == f"You {status} this call"
    outcome = doc.by_id("outcome").text
    assert "catalogue.delete_product" in outcome and "key k3f9... of alice" in outcome
    assert ("re-checks" in outcome) is (decision == "approve")
    assert ("will not run" in outcome) is (decision == "reject")


def test_decided_page_unknown_decision_raises() -> None:
    with pytest.raises(ValueError, match="maybe"):
        pages.decided_page(make_view(), "maybe")


def test_decided_page_markup_in_title_comes_out_escaped() -> None:
    html = pages.decided_page(make_view(title=EVIL, requester=EVIL), "approve")
    assert "<script" not in html and "&lt;script&gt;" in html


@pytest.mark.parametrize("status", STATUSES)
def test_status_page_each_status_shown_without_buttons(status: str) -> None:
    doc = Document(pages.status_page(make_view(status=status)))
    assert doc.one("body").attrs["data-status"] == status
    heading, meaning = pages.STATUSES[status]
    assert doc.by_id("state").text.startswith(f"Status: {heading}")
    assert doc.by_id("state-text").text == meaning
    assert doc.by_id("input").text == '{\n  "sku": "ABC-1"\n}'
    assert not doc.all("form") and not doc.all("button")


def test_status_page_unknown_status_still_named() -> None:
    doc = Document(pages.status_page(make_view(status="archived")))
    assert doc.by_id("state-text").text == "This approval is archived."


@pytest.mark.parametrize("status", [400, 403, 404, 409, 410])
def test_problem_page_carries_status_title_and_message(status: int) -> None:
    doc = Document(pages.problem_page(status, "Not possible", "This approval was already decided."))
    assert doc.one("body").attrs["data-status"] == str(status)
    assert f"Error {status}" in doc.by_id("problem").text
    assert doc.one("h1").text == "Not possible"
    assert "Not possible" in doc.one("title").text
    assert doc.by_id("message").text == "This approval was already decided."


def test_problem_page_markup_comes_out_escaped() -> None:
    html = pages.problem_page(400, EVIL, EVIL)
    assert "<script" not in html
    assert Document(html).by_id("message").text == EVIL


def test_page_headers_forbid_framing_caching_and_scripts() -> None:
    headers = PAGE_HEADERS
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["cache-control"] == "no-store"
    assert headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "default-src 'none'" in headers["content-security-policy"]
