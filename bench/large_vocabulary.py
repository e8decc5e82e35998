"""The words the large-registry bench's tools are made of: 50 families, 27 verbs, 32 inputs.

Written as text tables, parsed once at import, to keep the data readable; ``large_registry`` turns
them into tools.

- ``FAMILIES``: per family, a line with its name, its domain as a description says it and
  ``public`` when its read tools are public (else ``-``), then, indented, its 4 resources and the
  words its search hints draw from.
- ``VERBS``: per verb, a line with its name and flags (``r`` read-only, ``p`` named on the
  collection as in ``list_orders``, ``i`` idempotent, ``d`` destructive, ``o`` open world), its
  title and the inputs it takes in order of use; then, indented, its sentences: the first is always
  said, then up to two of the others. ``{noun}``, ``{nouns}``, ``{a_noun}``, ``{domain}`` and the
  tool-name forms ``{noun_name}`` and ``{nouns_name}`` are filled in per resource.
- ``INPUTS``: per input kind, the property's name (``{resource}_id``) and its schema, described.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

FAMILIES_TEXT = """
catalogue; the product catalogue; public
    product category brand variant; shop, range, assortment
orders; customer orders; -
    order order_line cart quote; purchase, basket, checkout
customers; the customer base; -
    customer address segment consent; client, buyer, crm, gdpr
invoices; billing documents; -
    invoice credit_note reminder tax_rate; bill, vat, dunning
payments; card and bank payments; -
    payment refund payout dispute; money, chargeback, stripe, reimburse
shipping; parcel delivery; public
    shipment parcel carrier pickup; tracking, courier, delivery, post
inventory; stock in every warehouse; -
    stock_level warehouse transfer batch; stock, quantity, replenish
returns; returned goods; -
    return inspection exchange return_reason; rma, send back, faulty
subscriptions; recurring plans; -
    subscription plan renewal trial; recurring, membership, churn
coupons; discount codes; -
    coupon promotion redemption voucher; discount, promo code, deal
reviews; product reviews; public
    review rating review_reply abuse_report; feedback, stars, testimonial
support; the help desk; -
    ticket macro queue survey; helpdesk, complaint, case, csat
users; staff accounts; -
    user role session invitation; account, login, staff, access
teams; teams and their members; -
    team member shift rota; people, roster, squad
projects; client projects; -
    project milestone budget risk; engagement, deliverable, plan
tasks; to-do items; -
    task checklist task_comment board; todo, kanban, assignment
calendar; meetings and rooms; -
    meeting room booking attendee; schedule, appointment, agenda
documents; shared files; -
    document folder template signature; file, pdf, contract, sign
reports; scheduled business reports; -
    report dashboard widget kpi; analytics, chart, metric
campaigns; marketing campaigns; -
    campaign audience ad_set creative; marketing, ads, targeting
emails; transactional and bulk email; -
    email mailing_list bounce email_template; mail, newsletter, smtp
sms; text messages; -
    message sender_id opt_out short_code; text, phone, mobile
notifications; push and in-app messages; -
    notification channel preference device_token; push, alert, inbox
webhooks; outgoing webhooks; -
    webhook delivery endpoint signing_secret; callback, event, integration
audit; the audit trail; -
    audit_record retention_rule export_job legal_hold; compliance, history, trail
billing; the company's own plan and usage; -
    usage quota seat billing_contact; plan, limit, metered
warehouses; warehouse operations; -
    pick_list bin packing_slip dock; fulfilment, picking, wms
suppliers; vendors and what they supply; -
    supplier price_list lead_time supplier_contact; vendor, sourcing, procurement
purchasing; purchase orders to suppliers; -
    purchase_order receipt requisition approval_rule; po, procure, buy
contracts; signed agreements; -
    contract clause renewal_notice obligation; agreement, legal, terms
sales; the sales pipeline; -
    lead deal pipeline forecast; crm, prospect, opportunity
accounts; company accounts and contacts; -
    account contact territory account_owner; company, b2b, organisation
assets; company equipment; -
    asset loan maintenance_job asset_tag; equipment, laptop, hardware
devices; managed devices; -
    device policy app_install enrolment; mdm, phone, fleet
deployments; software releases; -
    deployment release environment rollback; deploy, ci, ship
incidents; production incidents; -
    incident postmortem on_call status_update; outage, pager, sev
monitoring; alerts and checks; -
    alert check silence threshold; alarm, uptime, probe
logs; application logs; -
    log_stream saved_query log_archive parser; logging, trace, grep
backups; database and file backups; -
    backup snapshot restore_job backup_plan; recovery, copy, disaster
dns; domains and records; -
    domain record zone certificate; hostname, tls, ssl
secrets; credentials and keys; -
    secret api_key rotation vault; password, token, credential
flags; feature flags; -
    flag flag_rule experiment variation; toggle, rollout, ab test
payroll; staff pay; -
    payslip pay_run deduction bonus; salary, wage, compensation
expenses; staff expenses; -
    expense expense_claim mileage card_transaction; receipt, reimbursement, spend
timesheets; hours worked; -
    timesheet time_entry overtime leave_request; hours, holiday, absence
stores; shops and their opening hours; public
    store opening_hour store_service store_event; shop, branch, near me
knowledge; the help centre; public
    article faq guide video; help, how to, docs
status; the public status page; public
    component status_incident maintenance uptime_report; downtime, service health
careers; job openings; public
    job department office benefit; hiring, vacancy, work here
events; public events and tickets; public
    venue show ticket_type performer; concert, gig, tickets
"""

VERBS_TEXT = """
get r; Get {a_noun}; id include locale
    Get one {noun} of {domain} by its id.
    Answers every field of the {noun}, with when it was created and last changed.
    Use list_{nouns_name} first when you only know its name.
list rp; List {nouns}; status since until limit cursor sort
    List the {nouns} of {domain}, newest first.
    Filter by status or by the date they were created; answers a page at a time with a cursor.
    Archived {nouns} are left out unless asked for.
create -; Create {a_noun}; name description owner_id tags amount due_date
    Create {a_noun} in {domain}.
    Answers the new {noun} with its id.
    Send an idempotency key to retry safely; the same key never creates two.
update i; Update {a_noun}; id name status note tags
    Change fields of one {noun}; fields left out keep their value.
    The change is recorded in the {noun}'s history.
delete id; Delete {a_noun}; id reason
    Delete {a_noun} for good.
    Its history stays in the audit trail; this cannot be undone.
    Archive it instead to hide it and keep it.
search rp; Search {nouns}; query status limit
    Search the {nouns} of {domain} by words in their name and notes.
    Answers the best matches first.
count rp; Count {nouns}; status since until
    Count the {nouns} of {domain}, by status.
    Cheaper than listing them when only the number matters.
export rp; Export {nouns}; format since until email
    Export the {nouns} of {domain} as a file.
    The file is emailed when ready, or answered at once when small.
archive i; Archive {a_noun}; id reason
    Archive {a_noun}: it leaves every list but is kept.
    Restore it later with restore_{noun_name}.
restore i; Restore {a_noun}; id
    Bring an archived {noun} back into {domain}.
approve -; Approve {a_noun}; id note
    Approve {a_noun} that waits for a manager's decision.
    The requester is told by email.
cancel d; Cancel {a_noun}; id reason notify_customer
    Cancel {a_noun} that has not completed yet.
    Anything already charged is refunded by the payments family, not here.
assign i; Assign {a_noun}; id assignee_id note
    Give {a_noun} to a member of staff, who is told at once.
duplicate -; Duplicate {a_noun}; id name
    Copy {a_noun} with a new name; its history is not copied.
merge d; Merge two {nouns}; id into_id
    Merge one {noun} into another and delete the first.
    Links to the first are moved to the second.
sync pio; Sync {nouns}; since dry_run source
    Bring the {nouns} of {domain} up to date with the outside system they come from.
    A dry run answers what would change.
validate r; Validate {a_noun}; id
    Check {a_noun} against the rules of {domain} without saving anything.
    Answers every problem found.
schedule -; Schedule {a_noun}; id run_at timezone
    Plan {a_noun} to take effect at a given time.
    Times without a zone are read in the account's time zone.
publish -; Publish {a_noun}; id channel notify_customer
    Make {a_noun} visible to customers.
    Subscribers of the channel are notified.
import po; Import {nouns}; url format dry_run
    Import {nouns} from a CSV or JSON file at a URL.
    A dry run checks the file and answers the rows it would create.
preview r; Preview {a_noun}; id locale
    Render {a_noun} as customers would see it, without publishing it.
summarize rp; Summarize {nouns}; since until group_by
    Summarize the {nouns} of {domain} over a period: totals, trends and the largest changes.
notify o; Notify about {a_noun}; id message channel
    Send a message about {a_noun} to the people who follow it.
close i; Close {a_noun}; id resolution
    Close {a_noun} with a resolution.
    A closed {noun} can be reopened for 30 days.
reopen -; Reopen {a_noun}; id reason
    Reopen a closed {noun}.
tag i; Tag {a_noun}; id tags
    Add tags to {a_noun}; tags it already has are kept.
rename i; Rename {a_noun}; id name
    Give {a_noun} a new name; links to it keep working.
"""

INPUTS_JSON = r"""{
"id": ["{resource}_id", {"type": "string", "pattern": "^[a-z0-9-]{6,40}$",
    "description": "The {noun}'s id, as list_{nouns_name} answers it."}],
"include": ["include", {"type": "array", "items": {"enum": ["history", "owner", "links"]}, "maxItems": 3,
    "description": "Related data to answer with the {noun}."}],
"locale": ["locale", {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$", "default": "en-GB",
    "description": "Language of the texts answered."}],
"status": ["status", {"enum": ["open", "active", "pending", "closed", "archived"],
    "description": "Only {nouns} with this status."}],
"since": ["since", {"type": "string", "format": "date-time",
    "description": "Only {nouns} created at or after this time."}],
"until": ["until", {"type": "string", "format": "date-time",
    "description": "Only {nouns} created before this time."}],
"limit": ["limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
    "description": "At most this many {nouns} per page."}],
"cursor": ["cursor", {"type": "string", "maxLength": 400,
    "description": "Where the next page starts: the previous page's next_cursor."}],
"sort": ["sort", {"enum": ["newest", "oldest", "name"], "default": "newest",
    "description": "The order of the page."}],
"name": ["name", {"type": "string", "minLength": 1, "maxLength": 120,
    "description": "The {noun}'s name, shown to staff and customers."}],
"description": ["description", {"type": "string", "maxLength": 2000,
    "description": "Free text about the {noun}."}],
"owner_id": ["owner_id", {"type": "string",
    "description": "The member of staff responsible for the {noun}."}],
"tags": ["tags",
    {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 20, "uniqueItems": true,
    "description": "Labels to group and find {nouns} by."}],
"amount": ["amount", {"type": "number", "minimum": 0,
    "description": "An amount in the account's currency."}],
"due_date": ["due_date", {"type": "string", "format": "date",
    "description": "When the {noun} is due."}],
"note": ["note", {"type": "string", "maxLength": 500,
    "description": "Why the change was made, kept in the history."}],
"reason": ["reason", {"type": "string", "maxLength": 500,
    "description": "Why, for the audit trail."}],
"query": ["query", {"type": "string", "minLength": 1, "maxLength": 200,
    "description": "Words to look for."}],
"format": ["format", {"enum": ["csv", "json", "xlsx"], "default": "csv",
    "description": "The file's format."}],
"email": ["email", {"type": "string", "format": "email",
    "description": "Who receives the file when it is ready."}],
"notify_customer": ["notify_customer", {"type": "boolean", "default": true,
    "description": "Whether the customer is told by email."}],
"assignee_id": ["assignee_id", {"type": "string",
    "description": "The member of staff who takes the {noun}."}],
"into_id": ["into_id", {"type": "string",
    "description": "The {noun} that remains."}],
"dry_run": ["dry_run", {"type": "boolean", "default": false,
    "description": "Answer what would change without changing it."}],
"source": ["source", {"enum": ["erp", "shopify", "salesforce", "csv"],
    "description": "The outside system to read from."}],
"run_at": ["run_at", {"type": "string", "format": "date-time",
    "description": "When it takes effect."}],
"timezone": ["timezone", {"type": "string", "maxLength": 64,
    "description": "An IANA time zone, such as Europe/London."}],
"channel": ["channel", {"enum": ["email", "sms", "push", "web"],
    "description": "Where the message goes."}],
"url": ["url", {"type": "string", "format": "uri", "maxLength": 2048,
    "description": "Where the file is (https)."}],
"group_by": ["group_by", {"enum": ["day", "week", "month"], "default": "week",
    "description": "The length of each period."}],
"message": ["message", {"type": "string", "minLength": 1, "maxLength": 1000,
    "description": "The text people receive."}],
"resolution": ["resolution", {"type": "string", "maxLength": 500,
    "description": "How it was resolved, shown to the requester."}]
}"""


@dataclass(frozen=True)
class Family:
    name: str
    domain: str
    resources: tuple[str, ...]
    public_reads: bool
    hints: tuple[str, ...]


@dataclass(frozen=True)
class Verb:
    """How a verb reads, writes and describes itself, and the inputs it takes (in order of use)."""

    name: str
    title: str
    sentences: tuple[str, ...]
    inputs: tuple[str, ...]  # kinds of INPUTS; "id" is the resource's id
    read_only: bool
    plural: bool  # named on the collection: list_orders
    idempotent: bool
    destructive: bool
    open_world: bool


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """Each unindented line of ``text`` with the indented lines under it."""
    found: list[tuple[str, list[str]]] = []
    for line in text.strip("\n").splitlines():
        if line.startswith(" "):
            found[-1][1].append(line.strip())
        else:
            found.append((line, []))
    return found


def _families() -> tuple[Family, ...]:
    found = []
    for head, (body,) in _blocks(FAMILIES_TEXT):
        name, domain, audience = head.split("; ")
        resources, hints = body.split("; ")
        found.append(
            Family(name, domain, tuple(resources.split()), audience == "public", tuple(hints.split(", ")))
        )
    return tuple(found)


def _verbs() -> dict[str, Verb]:
    found = {}
    for head, sentences in _blocks(VERBS_TEXT):
        named, title, inputs = head.split("; ")
        name, flags = named.split()
        found[name] = Verb(
            name,
            title,
            tuple(sentences),
            tuple(inputs.split()),
            *(flag in flags for flag in "rpido"),
        )
    return found


FAMILIES = _families()
VERBS = _verbs()
INPUTS: dict[str, tuple[str, dict[str, Any]]] = {
    kind: (name, spec) for kind, (name, spec) in json.loads(INPUTS_JSON).items()
}
