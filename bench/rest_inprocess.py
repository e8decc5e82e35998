"""The rest bench's in-process rows: both apps, botocore per request, and the core-time cross-checks."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import Row, Spec, link_ratios, run_group
from rest_canned import CannedDynamoDB
from rest_fixture import (
    PRODUCT,
    FakeContext,
    bench_tables,
    counts_text,
    event_headers,
    load_event,
    load_family,
    log_stream,
    recording,
    terms_text,
)
from rest_powertools import load_powertools_app
from rest_rows import derived, in_situ_rows
from rest_sanity import sanity_check, status_and_body

TOOL = "catalogue.get_product"
FULL_N = 2_500  # per round, as the baselines' DynamoDB variants (docs/performance.md, "Timing method")
QUICK_N = 150


@contextmanager
def answering_at_once(clients: list[Any], answers: dict[str, dict[str, Any]]) -> Iterator[None]:
    """Shadow the clients' methods named in ``answers`` by functions returning those answers."""
    with _shadowing(clients, {name: lambda _a=answer, **_: _a for name, answer in answers.items()}):
        yield


@contextmanager
def _shadowing(clients: list[Any], methods: dict[str, Any]) -> Iterator[None]:
    """Each client's ``methods`` replaced while the block runs, then put back as they were (a
    botocore client's are its class's; ``aws.wire``'s are its own attributes)."""
    kept = [(c, name, c.__dict__.get(name)) for c in clients for name in methods]
    for target, name, _ in kept:
        setattr(target, name, methods[name])
    try:
        yield
    finally:
        for target, name, before in kept:
            if before is None:
                delattr(target, name)
            else:
                setattr(target, name, before)


def core_profile(call: Any, calls: int) -> list[dict[str, Any]]:
    """Where a call's own time goes: cProfile's cumulative share of the call, by function.

    Taken with the client's methods answering at once, so the shares are of the core time. Only the
    public functions of toolfront and of the function's module are listed, not the pipeline's own
    steps that call them; shares nest (``log_call`` includes its ``redact``). cProfile weighs small
    functions heavily: read the shares as a ranking, not as µs.
    """
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        call()
    profile.disable()
    entries = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    top = max(ct for _cc, _nc, _tt, ct, _callers in entries.values())
    steps = {"pipeline.py", "wiring.py"}
    shares = []
    for (path, line, name), (_cc, _nc, _tt, ct, _callers) in entries.items():
        parts = Path(path).parts
        ours = "toolfront" in parts[-4:-1] or "functions" in parts[-3:]  # the core is in subpackages
        if (
            not ours
            or name.startswith(("_", "<"))
            or parts[-1] in steps
            or name == "handle"
            or ct < top * 0.02
        ):
            continue
        where = "/".join(parts[-2:])
        shares.append({"function": f"{where}:{line}({name})", "share": round(ct / top, 3)})
    return sorted(shares, key=lambda e: -e["share"])[:12]


@contextmanager
def timing_requests(clients: list[Any], names: list[str]) -> Iterator[list[int]]:
    """Wrap the clients' methods ``names`` so that ``spent[0]`` adds up the ns spent inside them."""
    clock = time.perf_counter_ns
    spent = [0]

    def timed(method: Any) -> Any:
        def call(**params: Any) -> Any:
            start = clock()
            try:
                return method(**params)
            finally:
                spent[0] += clock() - start

        return call

    kept = [(c, name, c.__dict__.get(name)) for c in clients for name in names]
    for target, name, _ in kept:
        setattr(target, name, timed(getattr(target, name)))
    try:
        yield spent
    finally:
        for target, name, before in kept:
            if before is None:
                delattr(target, name)
            else:
                setattr(target, name, before)


def in_process_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """Measure both apps and botocore's per-request cost side by side; derive the own times."""
    from toolfront.aws import clients as aws

    event = load_event()
    ctx = FakeContext()
    client = aws.client("dynamodb")
    canned = CannedDynamoDB(bench_tables(event))
    canned.install(client)
    with open(os.devnull, "w", encoding="utf-8") as null, log_stream(null):
        try:
            return _measure(quick, client, event, ctx)
        finally:
            canned.uninstall(client)


def _measure(
    quick: bool, client: Any, event: dict[str, Any], ctx: FakeContext
) -> tuple[list[Row], dict[str, Any]]:
    from botocore import xform_name

    from toolfront import wiring
    from toolfront.adapters.http import Request
    from toolfront.adapters.rest import call_of
    from toolfront.aws import clients as aws
    from toolfront.calls.call import CallResult
    from toolfront.calls.logs import log_call

    n = QUICK_N if quick else FULL_N
    tf_app = load_family("catalogue")
    pt_app = load_powertools_app(client)
    found = sanity_check(tf_app, pt_app, client, event, ctx)

    tf_handler, pt_handler = tf_app.lambda_handler, pt_app.lambda_handler
    authenticate = wiring.authenticator().authenticate
    headers = event_headers(event)
    source_ip = event["requestContext"]["http"]["sourceIp"]
    call = call_of(Request.of(event), TOOL)
    result = CallResult(200, data={"product": PRODUCT}, actor=authenticate(headers, source_ip))

    # The very requests a warm call makes, with their parameters: each gets a per-request row.
    with recording(client) as asked:
        tf_handler(event, ctx)
        pt_handler(event, ctx)
    requests: dict[str, dict[str, Any]] = {}
    for operation, params in asked:
        requests.setdefault(operation, params)
    missing = {*found["toolfront_warm_requests"], *found["powertools_requests"]} - set(requests)
    if missing:
        raise RuntimeError(f"counted requests that were not recorded: {sorted(missing)}")

    wire = aws.dynamodb()

    warm = found["toolfront_warm_requests"]
    group = [
        Spec(
            "pt_total",
            "Powertools resolver+validation, 1 GetItem: total",
            lambda ev: pt_handler(ev, ctx),
            n,
            arg=event,
            note="APIGatewayHttpResolver(enable_validation=True), pydantic body model; no authentication",
        ),
        Spec(
            "tf_total",
            "toolfront lambda_handler get_product: total",
            lambda ev: tf_handler(ev, ctx),
            n,
            arg=event,
            baseline="pt_total",
            note=f"warm call: {counts_text(warm)}; one log line",
        ),
        *_request_specs(client, wire, requests, warm, n),
        Spec(
            "tf_actor_total",
            "toolfront actor (authenticate, warm): total",
            lambda h: authenticate(h, source_ip),
            n,
            arg=headers,
            note=f"{counts_text(found['toolfront_actor_requests'])}: the key, with its owner's permissions",
        ),
        Spec(
            "ref_log_line",
            "ref: toolfront log_call (1 Logger line, null stream)",
            lambda c: log_call(c, result, duration_ms=0.5, tool_known=True),  # as the pipeline: per tool
            n,
            arg=call,
        ),
    ]
    measured = run_group(group)

    # Cross-checks of the subtraction. In situ: each call's time minus the time it spent inside the
    # client's methods (botocore as it runs among the handler's own code).
    with timing_requests([client, wire], [xform_name(op) for op in requests]) as spent:
        in_situ = in_situ_rows(
            [
                (
                    "pt_in_situ",
                    "ref: Powertools own time, in situ",
                    lambda ev: pt_handler(ev, ctx),
                    None,
                    "each call's time minus its time inside client.get_item",
                ),
                (
                    "tf_in_situ",
                    "ref: toolfront core, in situ",
                    lambda ev: tf_handler(ev, ctx),
                    "pt_in_situ",
                    "each call's time minus its time inside the client's methods",
                ),
            ],
            event,
            spent,
            n,
        )
    # Directly: the client's methods replaced by functions answering the parsed answers at once.
    answers = {xform_name(op): getattr(client, xform_name(op))(**params) for op, params in requests.items()}
    with answering_at_once([client, wire], answers):
        if status_and_body(tf_handler(event, ctx))[1].get("data") != {"product": PRODUCT}:
            raise RuntimeError("toolfront does not answer the product with the client methods replaced")
        found["core_profile"] = core_profile(lambda: tf_handler(event, ctx), 500 if quick else 5000)
        direct = run_group(
            [
                Spec(
                    "pt_direct",
                    "ref: Powertools own time, measured directly",
                    lambda ev: pt_handler(ev, ctx),
                    n,
                    arg=event,
                    note="client.get_item replaced by a function returning the parsed answer",
                ),
                Spec(
                    "tf_direct",
                    "ref: toolfront core, measured directly",
                    lambda ev: tf_handler(ev, ctx),
                    n,
                    arg=event,
                    baseline="pt_direct",
                    note="the client's methods replaced by functions returning the parsed answers",
                ),
            ]
        )
    by_key = {r.key: r for r in measured}

    def minus(counts: dict[str, int], prefix: str = "bc_") -> dict[str, int]:
        return {f"{prefix}{xform_name(op)}": count for op, count in counts.items()}

    pt_minus = minus(found["powertools_requests"])
    tf_minus = minus(warm, "wire_")  # toolfront's requests (the handler's too) go through aws.wire
    pt_own = derived(
        "pt_own",
        f"Powertools own time = total - {terms_text(found['powertools_requests'])}",
        by_key["pt_total"],
        pt_minus,
        by_key,
        note="baseline of the core-time target; Powertools authenticates no one",
    )
    tf_core = derived(
        "tf_core",
        f"toolfront core = total - {terms_text(warm)}",
        by_key["tf_total"],
        tf_minus,
        by_key,
        baseline="pt_own",
        target=0.4,
        note="auth, routing, body, validation, envelope and the log line, without botocore",
    )
    actor_core = derived(
        "tf_actor_core",
        f"toolfront actor core = total - {terms_text(found['toolfront_actor_requests'])}",
        by_key["tf_actor_total"],
        minus(found["toolfront_actor_requests"], "wire_"),
        by_key,
        baseline="pt_own",
    )
    rows: list[Row] = [
        by_key["pt_total"],
        by_key["tf_total"],
        *(by_key[f"bc_{xform_name(op)}"] for op in requests),
        *(by_key[f"wire_{xform_name(op)}"] for op in warm),
        pt_own,
        tf_core,
        by_key["tf_actor_total"],
        actor_core,
        *in_situ,
        *direct,
        by_key["ref_log_line"],
    ]
    link_ratios(rows)
    found["subtracted"] = {"toolfront": tf_minus, "powertools": pt_minus}
    found["requests"] = requests
    return rows, found


def _request_specs(
    client: Any, wire: Any, requests: dict[str, dict[str, Any]], warm: dict[str, int], n: int
) -> list[Spec]:
    """botocore's client-side cost of each request a warm call makes, and the wire's of toolfront's."""
    from botocore import xform_name

    def per_request(operation: str, on: Any, prefix: str, label: str, **extra: Any) -> Spec:
        method = getattr(on, xform_name(operation))
        return Spec(
            f"{prefix}{xform_name(operation)}",
            f"{label} {xform_name(operation)} (canned send), per request",
            lambda params: method(**params),
            n,
            arg=requests[operation],
            **extra,
        )

    return [
        *(
            per_request(op, client, "bc_", "botocore", note=_describe_request(op, requests[op]))
            for op in requests
        ),
        *(
            per_request(
                op,
                wire,
                "wire_",
                "toolfront's wire",
                baseline=f"bc_{xform_name(op)}",
                note="aws.wire: the same request signed and sent without botocore's per-request machinery",
            )
            for op in warm
        ),
    ]


def _describe_request(operation: str, params: dict[str, Any]) -> str:
    if operation == "BatchGetItem":
        tables = params["RequestItems"]
        return "one request, " + " + ".join(f"{len(spec['Keys'])} key of {t}" for t, spec in tables.items())
    return f"on {params.get('TableName', '?')}"
