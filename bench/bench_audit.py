"""What the audit trail adds to a write: ``catalogue.create_product`` on the REST route, auditing on
(``TOOLFRONT_AUDIT_TABLE`` set) against off (unset).

- Requests (counts, not times), on moto: the DynamoDB requests of one call, counted with
  ``provide-client-params.dynamodb`` on toolfront's shared client, for a write with an idempotency key (its
  record rides in the answer's transaction: target 0 extra), a write without one (its record is one
  ``TransactWriteItems`` of its own: target at most 1 extra) and a replay of the keyed write (report).
- CPU (µs), in-process: the same call through the catalogue family's handler with every DynamoDB
  request answered by the rest bench's canned ``before-send`` hook (no moto, no network), auditing
  on and off side by side with interleaved rounds; the difference and the ratio. The no-key
  difference is split by a third pipeline whose audit log's client answers at once: on minus it is
  the record's ``TransactWriteItems`` inside the call, it minus off is toolfront's own work.
  References: that request timed in a loop on the same client, and ``CallAuditor`` timed directly.

The writes the rest bench's canned DynamoDB does not emulate (PutItem, TransactWriteItems, the
idempotency answer's UpdateItem) are answered here, by a subclass of it (``CannedWrites``): each
parses its body, as the canned UpdateItem does, and succeeds with an empty answer (no condition is
evaluated, nothing is kept).
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from harness import Row, Section, Spec, canary, link_ratios, run_group
from moto_tables import moto_tables
from rest_canned import CannedBody, CannedDynamoDB, _encoded
from rest_fixture import (
    PRODUCT,
    ROOT,
    FakeContext,
    bench_environment,
    bench_tables,
    counting,
    counts_text,
    event_headers,
    load_event,
    log_stream,
    recording,
)
from rest_fixture import load_family as load_bench_family
from rest_rows import count_row, derived

sys.path.insert(0, str(ROOT))

from tests.aws import seed
from tests.conftest import load_family, reset_process_state
from toolfront import wiring
from toolfront.aws import clients as aws
from toolfront.wiring import FamilyHandler

AUDIT_ENV = "TOOLFRONT_AUDIT_TABLE"
AUDIT_TABLE = "AuditTable"  # the canned run's table name (moto's comes from the template)
PATH = "/v1/tools/catalogue/create_product"
FULL_N = 800  # calls per round and timed row (7 rows, 3 rounds)
QUICK_N = 100
#: Targets of the request rows: extra requests per call with auditing on.
KEYED_EXTRA_MAX = 0
PLAIN_EXTRA_MAX = 1


def _product(sku: str, idempotency_key: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"sku": sku, "name": "Mug", "price_cents": 1, "currency": "EUR"}
    if idempotency_key is not None:
        body["idempotency_key"] = idempotency_key
    return body


@contextlib.contextmanager
def _audit(table: str | None) -> Iterator[None]:
    """Auditing to ``table``, or off (``None``: the variable unset), while the block runs; toolfront's
    process-wide objects are rebuilt on entry and on exit."""
    saved = os.environ.get(AUDIT_ENV)
    if table is None:
        os.environ.pop(AUDIT_ENV, None)
    else:
        os.environ[AUDIT_ENV] = table
    wiring.reset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(AUDIT_ENV, None)
        else:
            os.environ[AUDIT_ENV] = saved
        wiring.reset()


# --- requests per call, on moto ---------------------------------------------------------------


def _moto_event(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {
        "rawPath": PATH,
        "headers": {"content-type": "application/json", "authorization": f"Bearer {key}"},
        "body": json.dumps(body),
        "requestContext": {"requestId": os.urandom(8).hex(), "http": {"sourceIp": "198.51.100.1"}},
    }


def _count(handler: Callable[..., dict[str, Any]], event: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The operations one call sends, and its response."""
    with counting(aws.client("dynamodb")) as seen, contextlib.redirect_stdout(io.StringIO()):
        response = handler(event, None)
    if response["statusCode"] != 200:
        raise RuntimeError(f"the measured call failed: {response['body']}")
    return list(seen.elements()), response


def request_counts() -> tuple[dict[str, dict[str, list[str]]], dict[str, int]]:
    """Per mode (off, on) and kind (keyed, replay, plain): the operations of one warm call; and the
    audit records moto holds afterwards (expected: one per call made with auditing on)."""
    import boto3

    saved = dict(os.environ)  # moto_tables sets the table variables and leaves them set
    try:
        with moto_tables():
            key = seed("bench", ["catalogue.*"], permissions=["catalogue"])
            handler = load_family("catalogue").lambda_handler
            audit_table = os.environ[AUDIT_ENV]
            counts: dict[str, dict[str, list[str]]] = {}
            audited = 0
            for mode in ("off", "on"):
                with _audit(audit_table if mode == "on" else None):
                    _count(handler, _moto_event(_product(f"W-{mode}"), key))  # warm: owner known
                    keyed = _product(f"K-{mode}", idempotency_key=f"bench-{mode}")
                    keyed_ops, first = _count(handler, _moto_event(keyed, key))
                    replay_ops, again = _count(handler, _moto_event(keyed, key))
                    if again["body"] != first["body"]:
                        raise RuntimeError("the second call with the key was not answered as a replay")
                    plain_ops, _ = _count(handler, _moto_event(_product(f"P-{mode}"), key))
                    counts[mode] = {"keyed": keyed_ops, "plain": plain_ops, "replay": replay_ops}
                    audited += 4 if mode == "on" else 0
            items = boto3.client("dynamodb").scan(TableName=audit_table)["Items"]
            records = sum(1 for item in items if item["sk"]["N"] != "0")  # sk 0: a chain's head
    finally:
        os.environ.clear()
        os.environ.update(saved)
        reset_process_state()
    if records != audited:
        raise RuntimeError(f"moto holds {records} audit records; {audited} calls were audited")
    return counts, {"audited_calls": audited, "records": records}


def request_rows(counts: dict[str, dict[str, list[str]]]) -> list[Row]:
    specs = [
        ("keyed", "write with an idempotency key", KEYED_EXTRA_MAX, "the record rides in the answer's write"),
        ("plain", "write without a key", PLAIN_EXTRA_MAX, "the record is one TransactWriteItems of its own"),
        ("replay", "replay (same key again)", None, "a replay is a call too: its record is written alone"),
    ]
    rows: list[Row] = []
    for kind, what, target, note in specs:
        on, off = len(counts["on"][kind]), len(counts["off"][kind])
        extra = float(on - off)
        rows.append(
            count_row(
                f"audit.requests.{kind}",
                f"extra requests with audit: {what} (on {on}, off {off})",
                extra,
                target=target,
                note=f"{note}; moto, provide-client-params.dynamodb",
            )
        )
    return rows


# --- CPU per call, canned transport -----------------------------------------------------------


class CannedWrites(CannedDynamoDB):
    """The rest bench's canned DynamoDB, answering the writes of a create_product call as well:
    PutItem, TransactWriteItems and UpdateItem on the idempotency table succeed with an empty answer
    (no condition evaluated, nothing kept); everything else is answered by ``CannedDynamoDB``."""

    ANSWERED = frozenset({"PutItem", "TransactWriteItems", "UpdateItem"})

    def __init__(self, tables: dict[str, list[dict[str, Any]]], idempotency_table: str) -> None:
        super().__init__(tables)
        self._idempotency_table = idempotency_table
        self._payload, self._headers = _encoded({})  # one answer for every write, encoded once

    def __call__(self, request: Any, **kwargs: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        target = request.headers["X-Amz-Target"]
        operation = (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]
        if operation in self.ANSWERED:
            body = request.body if isinstance(request.body, bytes) else str(request.body).encode()
            parsed = json.loads(body)  # as the canned UpdateItem does: each write pays for its body
            if operation != "UpdateItem" or parsed["TableName"] == self._idempotency_table:
                return AWSResponse(request.url, 200, dict(self._headers), CannedBody(self._payload))
        return super().__call__(request, **kwargs)  # reads, and the rate limit's UpdateItem


class PinnedHandler(FamilyHandler):
    """The family's ``lambda_handler`` keeping the pipeline it first built, whatever the settings say
    later: one built with auditing on and one with it off then serve side by side."""

    _pinned: Any = None

    def pipeline(self) -> Any:
        if self._pinned is None:
            self._pinned = super().pipeline()
        return self._pinned


def _canned_event(base: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    event = copy.deepcopy(base)
    text = json.dumps(body)
    event["rawPath"] = event["requestContext"]["http"]["path"] = PATH
    event["pathParameters"] = {"verb_noun": "create_product"}
    event["requestContext"]["requestId"] = "audit-0000-0000-0000-000000000000"
    event["headers"]["content-length"] = str(len(text.encode()))
    event["body"] = text
    return event


def _checked(handler: PinnedHandler, event: dict[str, Any], ctx: FakeContext, client: Any) -> Counter[str]:
    """The operations of one call, which must answer the product it created."""
    with counting(client) as seen:
        response = handler(event, ctx)
    product = {k: v for k, v in json.loads(event["body"]).items() if k != "idempotency_key"}
    data = json.loads(response["body"]).get("data") if response["statusCode"] == 200 else None
    if data != {"product": product}:
        raise RuntimeError(f"the canned create_product failed: {response['body'][:500]}")
    return Counter(seen)


def cpu_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """Plain and keyed writes, auditing on and off, and the audit append's botocore cost; interleaved."""
    n = QUICK_N if quick else FULL_N
    ctx = FakeContext()
    with bench_environment(), open(os.devnull, "w", encoding="utf-8") as null, log_stream(null):
        base = load_event()
        client = aws.client("dynamodb")
        canned = CannedWrites(bench_tables(base), os.environ["TOOLFRONT_IDEMPOTENCY_TABLE"])
        canned.install(client)
        try:
            return _measure(n, ctx, client, base)
        finally:
            canned.uninstall(client)


class _AnsweringAtOnce:
    """A DynamoDB client whose ``transact_write_items`` succeeds at once: no botocore at all."""

    def transact_write_items(self, **_: Any) -> dict[str, Any]:
        return {}


@contextlib.contextmanager
def _log_answering_at_once() -> Iterator[None]:
    """Pipelines built in the block get an audit log whose client answers at once (no botocore)."""
    from toolfront.audit.log import AuditLog

    built = wiring.audit_log
    wiring.audit_log = lambda: AuditLog(AUDIT_TABLE, client=_AnsweringAtOnce())  # type: ignore[assignment]
    try:
        yield
    finally:
        wiring.audit_log = built


def _record_work(handler: PinnedHandler, event: dict[str, Any]) -> Callable[[], Any]:
    """What auditing adds to a call without a key, apart from its request: the input's digest
    (``begin``), then the entry, its chain link, hash and transaction items (``finish``), with the
    log's client answering at once."""
    from toolfront.adapters.http import Request
    from toolfront.adapters.rest import call_of
    from toolfront.audit.log import AuditLog
    from toolfront.calls.auditing import CallAuditor
    from toolfront.calls.call import CallResult

    tool = handler.registry.get("catalogue.create_product")
    if tool is None:
        raise RuntimeError("the catalogue family has no create_product")
    auditor = CallAuditor(AuditLog(AUDIT_TABLE, client=_AnsweringAtOnce()))
    call = call_of(Request.of(event), tool.name)
    actor = wiring.authenticator().authenticate(
        event_headers(event), event["requestContext"]["http"]["sourceIp"]
    )
    result = CallResult(200, data={"product": PRODUCT}, actor=actor)
    arguments = json.loads(event["body"])

    def work() -> Any:
        audit = auditor.begin(tool, arguments)
        assert audit is not None
        return auditor.finish(call, result, actor, audit)

    if work() is not result:
        raise RuntimeError("the directly measured audit record was not written")
    return work


def _measure(n: int, ctx: FakeContext, client: Any, base: dict[str, Any]) -> tuple[list[Row], dict[str, Any]]:
    app = load_bench_family("catalogue")
    plain_event = _canned_event(base, dict(PRODUCT))
    serial = itertools.count()

    def keyed_event() -> dict[str, Any]:
        event = dict(plain_event)
        event["body"] = json.dumps({**PRODUCT, "idempotency_key": f"bench-audit-{next(serial)}"})
        event["headers"] = {**plain_event["headers"], "content-length": str(len(event["body"]))}
        return event

    handlers: dict[str, PinnedHandler] = {}
    ops: dict[str, Counter[str]] = {}
    append: dict[str, Any] | None = None
    for mode in ("off", "on"):
        with _audit(AUDIT_TABLE if mode == "on" else None):
            handler = handlers[mode] = PinnedHandler(app.FAMILY, app.api_tools)
            if (wiring.audit_log() is not None) != (mode == "on"):
                raise RuntimeError(f"auditing is not {mode}")
            _checked(handler, plain_event, ctx, client)  # builds and pins the pipeline; owner known
            with recording(client) as asked:
                ops[f"plain_{mode}"] = _checked(handler, plain_event, ctx, client)
            ops[f"keyed_{mode}"] = _checked(handler, keyed_event(), ctx, client)
            for operation, params in asked:
                tables = {next(iter(i.values()))["TableName"] for i in params.get("TransactItems", [])}
                if operation == "TransactWriteItems" and tables == {AUDIT_TABLE}:
                    append = params
    with _audit(AUDIT_TABLE), _log_answering_at_once():
        handlers["fast"] = PinnedHandler(app.FAMILY, app.api_tools)
        _checked(handlers["fast"], plain_event, ctx, client)  # builds and pins; owner known
        ops["plain_fast"] = _checked(handlers["fast"], plain_event, ctx, client)
    # Auditing is unset again here; the pinned pipelines keep what they were built with.
    expected = {"plain": Counter({"TransactWriteItems": 1}), "keyed": Counter({"TransactWriteItems": 1})}
    expected["keyed"]["UpdateItem"] = -1  # the answer's UpdateItem becomes the shared transaction
    for kind, extra in expected.items():
        found = Counter(ops[f"{kind}_on"])
        found.subtract(ops[f"{kind}_off"])
        if {op: c for op, c in found.items() if c} != dict(extra):
            raise RuntimeError(
                f"{kind}: auditing on changed the requests by {dict(found)}, not {dict(extra)}"
            )
    if ops["plain_fast"] != ops["plain_off"]:
        raise RuntimeError(f"the log answering at once still sent {dict(ops['plain_fast'])}")
    if append is None:
        raise RuntimeError("the plain write with auditing on made no TransactWriteItems on the audit table")

    on, off, fast = handlers["on"], handlers["off"], handlers["fast"]
    note = "the catalogue handler, canned DynamoDB; one log line to a null stream"
    group = [
        Spec(
            "audit.cpu.plain_off",
            "create_product, no key, audit off",
            lambda e: off(e, ctx),
            n,
            arg=plain_event,
            note=f"{counts_text(ops['plain_off'])}; {note}",
        ),
        Spec(
            "audit.cpu.plain_on",
            "create_product, no key, audit on",
            lambda e: on(e, ctx),
            n,
            arg=plain_event,
            baseline="audit.cpu.plain_off",
            note=f"{counts_text(ops['plain_on'])}; {note}",
        ),
        Spec(
            "audit.cpu.plain_fast",
            "ref: no key, audit on, the log's client answering at once",
            lambda e: fast(e, ctx),
            n,
            arg=plain_event,
            baseline="audit.cpu.plain_off",
            note="the record's TransactWriteItems replaced by a function returning {}",
        ),
        Spec(
            "audit.cpu.keyed_off",
            "create_product, idempotency key, audit off",
            lambda e: off(e, ctx),
            n,
            setup=keyed_event,
            note=f"{counts_text(ops['keyed_off'])}; a new key per call (made untimed)",
        ),
        Spec(
            "audit.cpu.keyed_on",
            "create_product, idempotency key, audit on",
            lambda e: on(e, ctx),
            n,
            setup=keyed_event,
            baseline="audit.cpu.keyed_off",
            note=f"{counts_text(ops['keyed_on'])}; a new key per call (made untimed)",
        ),
        Spec(
            "audit.cpu.bc_append",
            "botocore transact_write_items (audit append), per request",
            lambda params: client.transact_write_items(**params),
            n,
            arg=append,
            note="the record and its chain's head, 2 Puts on the audit table; canned send",
        ),
        Spec(
            "audit.cpu.record_direct",
            "ref: audit work of a no-key call, measured directly",
            _record_work(on, plain_event),
            n,
            note="CallAuditor begin + finish, the log's client answering at once (no botocore)",
        ),
    ]
    measured = {r.key: r for r in run_group(group)}
    plain_extra = derived(
        "audit.cpu.plain_extra",
        "added by audit, no key = on - off",
        measured["audit.cpu.plain_on"],
        {"audit.cpu.plain_off": 1},
        measured,
        note="the record's own TransactWriteItems included",
    )
    request = derived(
        "audit.cpu.plain_request",
        "of which its TransactWriteItems, in situ = on - ref at once",
        measured["audit.cpu.plain_on"],
        {"audit.cpu.plain_fast": 1},
        measured,
        note="botocore inside the call; compare bc_append, the same request timed in a loop",
    )
    work = derived(
        "audit.cpu.plain_work",
        "of which toolfront's record work, in situ = ref at once - off",
        measured["audit.cpu.plain_fast"],
        {"audit.cpu.plain_off": 1},
        measured,
        note="digest, entry, chain link, hash, transaction items, lock",
    )
    keyed_extra = derived(
        "audit.cpu.keyed_extra",
        "added by audit, idempotency key = on - off",
        measured["audit.cpu.keyed_on"],
        {"audit.cpu.keyed_off": 1},
        measured,
        note="the answer's UpdateItem becomes a TransactWriteItems with the record",
    )
    rows = [
        measured["audit.cpu.plain_off"],
        measured["audit.cpu.plain_on"],
        plain_extra,
        measured["audit.cpu.plain_fast"],
        request,
        work,
        measured["audit.cpu.bc_append"],
        measured["audit.cpu.record_direct"],
        measured["audit.cpu.keyed_off"],
        measured["audit.cpu.keyed_on"],
        keyed_extra,
    ]
    link_ratios(rows)
    found = {"n": n, "requests": {key: dict(counter) for key, counter in ops.items()}}
    return rows, found


def run(quick: bool = False) -> Section:
    section = Section("audit (create_product, auditing on vs off)", canary_before=canary())
    counts, records = request_counts()
    cpu, found = cpu_rows(quick)
    section.rows = request_rows(counts) + cpu
    section.canary_after = canary()
    section.extra.update(
        {
            "requests": {
                mode: {kind: dict(Counter(seen)) for kind, seen in kinds.items()}
                for mode, kinds in counts.items()
            },
            "audit_records": records,
            "canned": found,
        }
    )
    section.extra["summary"] = summary(counts, section)
    return section


def summary(counts: dict[str, dict[str, list[str]]], section: Section) -> list[str]:
    requests = "; ".join(
        f"{kind} {len(counts['off'][kind])} -> {len(counts['on'][kind])}"
        f" ({len(counts['on'][kind]) - len(counts['off'][kind]):+d})"
        for kind in ("keyed", "plain", "replay")
    )
    lines = [f"audit: DynamoDB requests per create_product call, auditing off -> on (moto): {requests}"]
    for kind, what in (("plain", "no key"), ("keyed", "idempotency key")):
        off, on = section.row(f"audit.cpu.{kind}_off"), section.row(f"audit.cpu.{kind}_on")
        extra = section.row(f"audit.cpu.{kind}_extra")
        lines.append(
            f"audit: CPU per call, {what} (canned DynamoDB, median µs): off {off.median:.0f},"
            f" on {on.median:.0f}, added {extra.median:+.1f} µs ({on.ratio:.3f}x)"
        )
    row = section.row
    lines.append(
        f"audit: of the no-key difference, the record's TransactWriteItems takes"
        f" {row('audit.cpu.plain_request').median:.0f} µs in situ"
        f" ({row('audit.cpu.bc_append').median:.0f} µs timed in a loop) and toolfront's record work"
        f" {row('audit.cpu.plain_work').median:.1f} µs in situ"
        f" ({row('audit.cpu.record_direct').median:.1f} µs measured directly)"
    )
    return lines


if __name__ == "__main__":
    from harness import format_table

    result = run(quick="--quick" in sys.argv)
    print(format_table([result]))
    print("\n".join(result.extra["summary"]))
