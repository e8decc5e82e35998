"""The large-registry bench's 200 search queries, deterministic, of six kinds an agent sends.

- ``task`` (80): a paraphrase of one generated tool's job, in other words than its name where a
  synonym exists ("remove an invoice reminder"); each remembers the tool it was made from;
- ``keyword`` (40): one or two words of a domain ("refund", "tax rate");
- ``sentence`` (30): a long request in plain language (60-90 characters);
- ``broad`` (20): words nearly every tool shares ("list", "create new item"): the longest postings;
- ``input`` (15): what a tool takes ("by email", "dry run import from url");
- ``miss`` (15): words no tool has.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from large_vocabulary import FAMILIES

N_QUERIES = 200

#: Other words for the verbs tools are named with (the first is the verb's plain sense).
SAID: dict[str, tuple[str, ...]] = {
    "get": ("look up", "fetch", "show me", "read", "find the"),
    "list": ("list all", "show all", "browse", "every"),
    "create": ("add a new", "make a", "register a", "new"),
    "update": ("change", "edit", "modify", "update the"),
    "delete": ("remove", "erase", "destroy", "drop"),
    "search": ("search for", "find", "look for"),
    "count": ("how many", "count the", "number of"),
    "export": ("download", "export", "dump all", "backup of"),
    "archive": ("archive", "hide but keep", "put away"),
    "restore": ("restore", "bring back", "unarchive"),
    "approve": ("approve", "sign off", "confirm"),
    "cancel": ("cancel", "abort", "withdraw"),
    "assign": ("assign", "give to", "hand over"),
    "duplicate": ("duplicate", "copy", "clone"),
    "merge": ("merge", "combine", "join two"),
    "sync": ("sync", "refresh from", "pull latest"),
    "validate": ("validate", "check", "verify"),
    "schedule": ("schedule", "plan for later", "set a time for"),
    "publish": ("publish", "make visible", "go live with"),
    "import": ("import", "upload", "load from file"),
    "preview": ("preview", "see before publishing", "render"),
    "summarize": ("summarize", "report on", "overview of"),
    "notify": ("notify about", "tell people about", "send message about"),
    "close": ("close", "resolve", "finish"),
    "reopen": ("reopen", "open again", "undo close of"),
    "tag": ("tag", "label", "add tags to"),
    "rename": ("rename", "change the name of", "retitle"),
}
KEYWORDS = (
    "refund",
    "invoice",
    "tax rate",
    "shipment",
    "tracking",
    "stock",
    "warehouse",
    "coupon",
    "discount",
    "subscription",
    "renewal",
    "ticket",
    "password",
    "api key",
    "certificate",
    "domain",
    "backup",
    "snapshot",
    "payslip",
    "bonus",
    "expense",
    "mileage",
    "timesheet",
    "leave",
    "meeting",
    "room",
    "contract",
    "clause",
    "lead",
    "deal",
    "forecast",
    "incident",
    "alert",
    "deployment",
    "rollback",
    "flag",
    "webhook",
    "email template",
    "opening hours",
    "job",
)
SENTENCES = (
    "I need to give a customer their money back for an order that arrived broken last week",
    "which of our warehouses still has stock of the blue mug, and how many are left in each bin",
    "send all customers on the newsletter a message that the shop closes early on Friday",
    "find every invoice that is more than thirty days overdue and send a reminder to the client",
    "our production site is down, open an incident and page whoever is on call tonight",
    "rotate the api key that the payment integration uses, it may have leaked in a log",
    "book a meeting room for six people next Tuesday afternoon with a projector",
    "a supplier changed their price list, update the prices on our purchase orders accordingly",
    "how much did we spend on staff travel expenses this quarter compared to the last one",
    "roll back the last deployment of the checkout service to the previous release",
    "turn the new search feature flag on for ten percent of users as an experiment",
    "what time does the London store open on Sundays and does it offer repairs",
    "export all audit records of the last month as a csv for the compliance team",
    "a parcel is lost in transit, check where the shipment is and who the carrier was",
    "approve the expense claims of my team that are waiting for a manager's decision",
    "create a new discount code worth twenty percent for the spring promotion",
    "merge two duplicate customer accounts that belong to the same company",
    "renew the tls certificate of our main domain before it expires next week",
    "list open support tickets assigned to me sorted by the oldest first",
    "restore yesterday's database backup into the staging environment",
    "show the uptime of the public api over the last ninety days on the status page",
    "pay the monthly bonus to the sales team together with the next pay run",
    "schedule the release of the mobile app for Monday morning in the Paris time zone",
    "tag all products of the summer range so we can find them later",
    "who has borrowed the spare laptops from the equipment store and when are they due back",
    "close the postmortem of last week's outage with the resolution the team agreed",
    "count how many trial subscriptions converted to paid plans this month",
    "publish the new help centre article about resetting a password",
    "import the new hires from a csv file and send them invitations to their staff accounts",
    "check the job openings in the Berlin office and the benefits that come with them",
)
BROAD = (
    "list",
    "get",
    "create",
    "delete",
    "update",
    "create new item",
    "list all items",
    "get by id",
    "delete for good",
    "search",
    "export file",
    "status",
    "history",
    "archive",
    "customer",
    "staff",
    "email",
    "date",
    "name",
    "page cursor",
)
INPUTS = (
    "by email",
    "with a cursor",
    "dry run import from url",
    "newer than a date",
    "by status",
    "with tags",
    "in csv format",
    "with a reason for the audit trail",
    "in the customer's language",
    "run at a time in a time zone",
    "from shopify",
    "grouped by month",
    "assign to staff member",
    "with an amount and due date",
    "notify the customer by sms",
)
MISSES = (
    "quantum flux capacitor",
    "zebra",
    "xylophone tuning",
    "photosynthesis rate",
    "lorem ipsum dolor",
    "teleport",
    "volcano",
    "glacier melt",
    "sonnet",
    "origami crane",
    "kazoo",
    "nebula",
    "dinosaur",
    "umbrella",
    "saxophone",
)


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    tool: str | None = None  # the tool a "task" query was made from


def queries(tools: list[dict[str, Any]]) -> list[Query]:
    """The 200 queries (task queries drawn from ``tools``, the generated manifest entries)."""
    rng = random.Random("queries")
    domains = {family.name: family.domain for family in FAMILIES}
    found = []
    for tool in rng.sample(tools, 80):
        family, _, rest = str(tool["name"]).partition(".")
        verb, _, named = rest.partition("_")
        thing = named.replace("_", " ")
        said = rng.choice(SAID[verb])
        where = f" in {domains[family]}" if rng.random() < 0.5 else ""
        found.append(Query("task", f"{said} {thing}{where}", str(tool["name"])))
    found += [Query("keyword", k) for k in KEYWORDS]
    found += [Query("sentence", s) for s in SENTENCES]
    found += [Query("broad", b) for b in BROAD]
    found += [Query("input", i) for i in INPUTS]
    found += [Query("miss", m) for m in MISSES]
    assert len(found) == N_QUERIES, len(found)
    rng.shuffle(found)
    return found
