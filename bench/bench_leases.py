"""Leased keys (issue #28): toolfront's requests and CPU per keyed read on a warm function, and the
ceiling of one key's item, with and without ``--lease N``.

- **Requests per call** are counted on moto (in process, the template's tables, as the tests'
  ``aws`` fixture), where conditions are evaluated, so a write that fails and is retried counts as
  on DynamoDB: ``catalogue``'s ``lambda_handler`` on ``POST /v1/tools/catalogue/get_product`` with an
  admin key leased N (none, 10, 50), 500 warm calls each; the products table's GetItem is the
  tool's, every other request toolfront's (``provide-client-params.dynamodb``, which ``aws.wire``
  emits too). Also the requests of a call refused by a key at its limit.
- **CPU per call** on the canned transport (``CannedDynamoDB``: only the network gone, no moto, whose
  own CPU would hide toolfront's), set up as ``bench_peer``'s toolfront read row: process CPU over a
  round of calls, so the 1 call in N that writes is amortised; rounds interleaved, the first dropped.
- **The ceiling**, a model: the key item's size as DynamoDB counts it, its WCU per write, one
  partition's 1,000 WCU/s, and the bounds a lease adds (printed, and in ``bench/README.md``).
"""

from __future__ import annotations

import contextlib
import copy
import gc
import io
import math
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from harness import Row, Section, canary, link_ratios
from rest_canned import CannedDynamoDB
from rest_fixture import FakeContext, bench_environment, bench_tables, environment, load_event, load_family
from rest_rows import count_row

LEASES = (None, 10, 50)
FULL_N, QUICK_N = 500, 100  # calls counted per lease
CPU_N, FULL_ROUNDS, QUICK_ROUNDS = 200, 15, 3  # calls per CPU round; rounds kept (one more run first)
PARTITION_WCU = 1000  # one partition's writes per second (DynamoDB's published per-partition limit)
HANDLER_TABLE = "ProductsTable"  # the tool's own requests: not toolfront's
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def key_of(lease: int | None, kind: str = "ls") -> str:
    """A key of the bench's own for each lease (the key format: 12-character id, 32-character secret)."""
    return f"tfk_bench{kind}{lease or 0:05d}_BenchLeaseSecret0123456789abcdef"


def mode(lease: int | None) -> str:
    return f"lease{lease}" if lease else "none"


# --- requests per call, on moto -----------------------------------------------------------------


def count_requests(n: int) -> dict[str, dict[str, Any]]:
    """Per lease: toolfront's and the handler's requests over ``n`` warm calls, and their operations."""
    from moto_tables import moto_tables

    found: dict[str, dict[str, Any]] = {}
    with moto_tables(), contextlib.redirect_stdout(io.StringIO()):  # the calls' log lines
        import boto3

        from tests.aws import seed
        from toolfront.aws import clients as aws

        product = bench_tables(load_event())[HANDLER_TABLE][0]
        boto3.client("dynamodb").put_item(TableName=HANDLER_TABLE, Item=product)
        handler = load_family("catalogue").lambda_handler
        client = aws.client("dynamodb")
        for lease in LEASES:
            seed(
                f"bench-{mode(lease)}",
                ["catalogue.*"],
                permissions=["catalogue"],
                key=key_of(lease),
                lease=lease,
            )
            event = _leased_event(load_event(), key_of(lease))
            _call(handler, event)  # the process's first call of the key: exact, it learns the lease
            with _recording(client) as seen:
                for _ in range(n):
                    _call(handler, event)
            ours = [op for op, core in seen if core]
            found[mode(lease)] = {
                "toolfront": len(ours) / n,
                "handler": (len(seen) - len(ours)) / n,
                "toolfront_operations": dict(Counter(ours)),
                "refused": _refused(handler, client, lease),
            }
    return found


def _refused(handler: Handler, client: Any, lease: int | None) -> list[str]:
    """The requests of a call refused by a key at its limit (60 a minute, drained first)."""
    from tests.aws import seed

    key = seed(
        f"at-limit-{mode(lease)}",
        ["catalogue.*"],
        permissions=["catalogue"],
        key=key_of(lease, "lt"),
        rate_limit=60,
        lease=lease,
    )
    event = _leased_event(load_event(), key)
    for _ in range(61):  # the bucket holds 60
        if handler(event, None)["statusCode"] == 429:
            break
    with _recording(client) as seen:
        status = handler(event, None)["statusCode"]
    if status != 429:
        raise RuntimeError(f"a key at its limit answered {status}, not 429")
    return [op for op, _ in seen]


@contextlib.contextmanager
def _recording(client: Any) -> Iterator[list[tuple[str, bool]]]:
    """The operations sent while the block runs, each with whether it was toolfront's (every
    request but the tool's own, on the products table)."""
    seen: list[tuple[str, bool]] = []

    def record(model: Any, params: dict[str, Any], **_: Any) -> None:
        seen.append((model.name, params.get("TableName") != HANDLER_TABLE))

    client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        yield seen
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb", record)


def _call(handler: Handler, event: dict[str, Any]) -> None:
    response = handler(event, None)
    if response["statusCode"] != 200:
        raise RuntimeError(f"the measured call failed: {response['statusCode']} {response['body'][:300]}")


# --- CPU per call, on the canned transport ------------------------------------------------------


class TimedCanned(CannedDynamoDB):
    """The canned transport, timing its own answers (process CPU, ns, by operation) while ``timing``
    is set: what of a call's CPU is the stand-in for the network rather than toolfront's."""

    timing: dict[str, list[int]] | None = None

    def __call__(self, request: Any, **kwargs: Any) -> Any:
        if self.timing is None:
            return super().__call__(request, **kwargs)
        started = time.process_time_ns()
        try:
            return super().__call__(request, **kwargs)
        finally:
            target = request.headers["X-Amz-Target"]
            name = (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]
            self.timing.setdefault(name, []).append(time.process_time_ns() - started)


def measure_cpu(n: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, dict[str, Any]]]:
    """Per lease: CPU µs per call of each kept round; the operations of ``n`` untimed calls, and the
    canned transport's own CPU per answer (µs, median)."""
    from rest_fixture import counting, log_stream

    cpu: dict[str, list[float]] = {mode(lease): [] for lease in LEASES}
    operations: dict[str, dict[str, Any]] = {}
    audit = {"TOOLFRONT_AUDIT_TABLE": "AuditTable"}  # as bench_peer's toolfront rows
    devnull = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  (the with statement closes it)
    with bench_environment(), environment(audit), devnull as null, log_stream(null):
        from toolfront.aws import clients as aws

        base = load_event()
        canned = TimedCanned(_leased_tables(base))
        client = aws.client("dynamodb")
        canned.install(client)
        try:
            handler, ctx = load_family("catalogue").lambda_handler, FakeContext()
            events = {mode(lease): _leased_event(base, key_of(lease)) for lease in LEASES}
            for name, event in events.items():
                _call(handler, event)  # warm: the key's first call, exact
                canned.timing = {}
                with counting(client) as seen:
                    for _ in range(n):
                        _call(handler, event)
                transport = {op: statistics.median(ns) / 1000 for op, ns in canned.timing.items()}
                operations[name] = {"requests": dict(seen), "canned_us": transport}
                canned.timing = None
            for round_ in range(rounds + 1):
                for name, event in events.items():
                    per_call = _cpu_round(handler, event, ctx, n)
                    if round_:
                        cpu[name].append(per_call)
        finally:
            canned.uninstall(client)
    return cpu, operations


def _cpu_round(handler: Handler, event: dict[str, Any], ctx: Any, n: int) -> float:
    gc.collect()
    started = time.process_time_ns()
    for _ in range(n):
        handler(event, ctx)
    return (time.process_time_ns() - started) / n / 1000


def _leased_tables(event: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The rest bench's tables, with a key item of the bench's own per lease."""
    from toolfront.auth.keys import hash_secret, parse_key

    tables = bench_tables(event)
    for lease in LEASES:
        parsed = parse_key(key_of(lease))
        assert parsed is not None
        item = copy.deepcopy(tables["KeysTable"][0]) | {"key_id": {"S": parsed.key_id}}
        item["secret_hash"] = {"S": hash_secret(parsed.secret)}
        tables["KeysTable"].append(item | ({"lease": {"N": str(lease)}} if lease else {}))
    return tables


def _leased_event(base: dict[str, Any], key: str) -> dict[str, Any]:
    event = copy.deepcopy(base)
    event["headers"]["authorization"] = f"Bearer {key}"
    return event


# --- the ceiling of one key's item ---------------------------------------------------------------


def item_size(item: dict[str, Any]) -> int:
    """An item's size as DynamoDB counts it: each attribute's name (UTF-8 bytes) and value."""
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def value_size(value: dict[str, Any]) -> int:
    """DynamoDB's rules ("DynamoDB item sizes and formats"): a string or binary its bytes, a number 1
    byte per 2 significant digits + 1, a boolean or null 1; a list or map 3 + 1 per element."""
    ((kind, data),) = value.items()
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "N":
        return number_size(data)
    if kind in ("L", "M"):  # a map's elements count their names too
        elements = data.items() if kind == "M" else (("", element) for element in data)
        return 3 + sum(1 + len(name.encode()) + value_size(element) for name, element in elements)
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: element}) for element in data)
    return len(data.encode() if kind == "S" else data)


def number_size(text: str) -> int:
    """1 byte per two significant digits (leading and trailing zeros trimmed), plus 1."""
    significant = "".join(map(str, Decimal(text).as_tuple().digits)).strip("0") or "0"
    return math.ceil(len(significant) / 2) + 1


MODEL_LIMIT = 600_000  # the modelled key's own limit a minute (10,000 a second: a hot key's)
CEILING_CASES = {  # scopes, owner permissions, description's length
    "a key (4 scopes, 3 permissions, 55-character description)": (4, 3, 55),
    "a large key (24 scopes, 8 permissions, 200-character description)": (24, 8, 200),
}


def ceiling(lease: int | None, scopes: int, permissions: int, length: int) -> dict[str, Any]:
    """One key's item as ``keys create`` stores it, with a ``tat``, and what one partition lets it do."""
    from toolfront.auth.keyitems import key_to_item
    from toolfront.auth.keys import KeyRecord, generate_key, hash_secret

    _, parsed = generate_key()
    modules = ["catalogue", "orders", "billing", "inventory", "shipping", "support", "reports", "admin"]
    record = KeyRecord(
        key_id=parsed.key_id,
        owner="team-payments-ci",
        secret_hash=hash_secret(parsed.secret),
        scopes=frozenset(f"{modules[i % 8]}.resource{i}:{('read', 'write')[i % 2]}" for i in range(scopes)),
        created_at=datetime(2026, 12, 6, 9, 30, tzinfo=UTC),
        requires_approval=True,
        expires_at=datetime(2027, 12, 6, 9, 30, tzinfo=UTC),
        description=("CI deploy bot of the payments team, rotated each quarter" * 4)[:length],
        rate_limit=MODEL_LIMIT,
        lease=lease,
        owner_permissions=frozenset(modules[:permissions]),
    )
    size = item_size(key_to_item(record) | {"tat": {"N": str(1_800_000_000_123_456)}})
    wcu = math.ceil(size / 1024)  # 1 KB a write unit; an UpdateItem: the larger item, before or after
    writes = PARTITION_WCU / wcu
    return {"bytes": size, "wcu": wcu, "writes_per_s": writes, "calls_per_s": writes * (lease or 1)}


def ceiling_table() -> tuple[list[str], dict[str, Any]]:
    lines = [
        "| key item | bytes | WCU a write | lease | writes/s | calls/s: the item | calls/s: and its limit |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    found: dict[str, Any] = {}
    for label, case in CEILING_CASES.items():
        for lease in LEASES:
            row = found[f"{label}, lease {lease or 'none'}"] = ceiling(lease, *case)
            row["within_limit"] = min(row["calls_per_s"], MODEL_LIMIT / 60)
            lines.append(
                f"| {label} | {row['bytes']} | {row['wcu']} | {lease or 'none'} | {row['writes_per_s']:,.0f} "
                f"| {row['calls_per_s']:,.0f} | {row['within_limit']:,.0f} |"
            )
    lines += [
        f"(the modelled key's limit: {MODEL_LIMIT:,} a minute; one partition: {PARTITION_WCU:,} WCU/s)",
        "sustained calls/s <= min(N x 1,000 / WCU, limit / 60), after a burst of the limit; the units"
        " stranded (admitted less, never more) <= warm processes x N per lease age",
    ]
    return lines, found


# --- the section --------------------------------------------------------------------------------


def run(quick: bool = False) -> Section:
    section = Section("leases (leased keys, issue #28)", canary_before=canary())
    n = QUICK_N if quick else FULL_N
    requests = count_requests(n)
    cpu_n = min(n, CPU_N)
    cpu, operations = measure_cpu(cpu_n, QUICK_ROUNDS if quick else FULL_ROUNDS)
    section.canary_after = canary()
    for lease in LEASES:
        name, counted, label = mode(lease), requests[mode(lease)], f"lease {lease or 'none'}"
        section.rows += [
            count_row(
                f"leases.requests.{name}",
                f"toolfront's requests per keyed read, {label}",
                counted["toolfront"],
                target=1 / (lease or 1),
                note=f"{counted['toolfront_operations']} over {n} warm calls; moto",
            ),
            count_row(
                f"leases.requests.refused.{name}",
                f"toolfront's requests per refused call (key at its limit), {label}",
                len(counted["refused"]),
                kind=Row,
                note=f"{counted['refused']}; moto",
            ),
        ]
    section.rows.append(
        count_row(
            "leases.requests.handler",
            "the handler's own requests per read (the tool's GetItem)",
            requests["none"]["handler"],
            kind=Row,
            note="the products table; the same with every lease",
        )
    )
    cpu_rows = [_cpu_row(lease, cpu[mode(lease)], operations[mode(lease)], cpu_n) for lease in LEASES]
    link_ratios(cpu_rows)
    section.rows += cpu_rows
    lines, model = ceiling_table()
    section.extra.update({"n": n, "requests": requests, "cpu_operations": operations, "ceiling": model})
    section.extra["summary"] = _summary(section, requests, operations) + lines
    return section


def _cpu_row(lease: int | None, rounds: list[float], operations: dict[str, Any], n: int) -> Row:
    ordered = sorted(rounds)
    return Row(
        key=f"leases.cpu.{mode(lease)}",
        label=f"CPU per keyed read (amortised), lease {lease or 'none'}",
        unit="µs",
        n=n,
        rounds=len(rounds),
        median=statistics.median(rounds),
        min=ordered[0],
        p99=ordered[-1],
        round_medians=rounds,
        baseline="leases.cpu.none" if lease else None,
        target=1.0 if lease else None,
        note=f"{operations['requests']} over {n} calls; canned DynamoDB, process CPU per round / n",
    )


def _summary(section: Section, requests: dict[str, Any], operations: dict[str, Any]) -> list[str]:
    lines = []
    for lease in LEASES:
        name = mode(lease)
        row, counted = section.row(f"leases.cpu.{name}"), requests[name]
        ratio = f" ({row.ratio:.3f}x no lease)" if row.ratio is not None else ""
        canned = ", ".join(f"{op} {us:.0f} µs" for op, us in sorted(operations[name]["canned_us"].items()))
        lines.append(
            f"leases: lease {lease or 'none'}: toolfront {counted['toolfront']:.3f} requests per read "
            f"({counted['toolfront_operations']}), the handler {counted['handler']:.3f}; "
            f"CPU {row.median:.0f} µs per read{ratio}, of which the canned transport's answers "
            f"({canned} each); a refused call at the limit: {counted['refused']}"
        )
    return lines


if __name__ == "__main__":
    from harness import format_table

    result = run(quick="--quick" in sys.argv)
    print(format_table([result]))
    print("\n".join(result.extra["summary"]))
