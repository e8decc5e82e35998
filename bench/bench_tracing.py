"""What OpenTelemetry tracing costs a call (issue #27; targets: off ≤ 1 µs per call, on ≤ 5 % CPU).

- **Off, the hooks.** With tracing not configured, exactly the calls into ``toolfront.tracing`` one
  keyed REST read (``get_product``, admin key) makes, counted with ``sys.setprofile`` in a real call,
  replayed with the arguments they got in a timeit loop; median of rounds, target ≤ 1 µs (absolute).
- **CPU per call.** The catalogue ``lambda_handler`` on that read as ``bench_peer``'s toolfront read
  row runs it (auditing on, ``PeerCanned``): process CPU (the batch thread's included) over a round's
  calls, the modes interleaved round by round and each rebuilt from scratch (``tracing.reset``,
  OpenTelemetry's global provider, toolfront's clients and wiring). On: the endpoint variable set and,
  before the first call, the SDK's ``TracerProvider`` with a ``BatchSpanProcessor`` around an exporter
  encoding each batch as ``OTLPSpanExporter.export`` does (bytes dropped), flushed inside the timed
  region, every span checked to be exported; target on / off ≤ 1.05. References split the difference.
- **Cold.** Fresh interpreters, after the boto3 floor and ``import app``: the imports tracing needs
  when on, and the first ``tracing.enabled()`` installing the SDK; off, no ``opentelemetry`` module
  may be loaded after one served call (target 0).
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
import timeit
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import rest_fixture as fx
from bench_peer import PEER_ENV, PeerCanned
from bench_peer import _environment as peer_environment
from harness import Row, Section, canary, child_result, link_ratios, run_child, subprocess_row
from rest_rows import BudgetRow, count_row, derived

from toolfront import tracing, wiring
from toolfront.aws import clients as aws

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
ENDPOINT = "http://127.0.0.1:4318"  # never reached: the exporter below stands in for the network
#: Variables that would turn tracing on or off or change its sampler: unset while the bench runs.
OTEL_UNSET: tuple[str, ...] = (
    ENDPOINT_VARIABLE,
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "AWS_LAMBDA_EXEC_WRAPPER",
)
OTEL_UNSET += ("OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG")
HOOKS_BUDGET_US = 1.0
CPU_TARGET = 1.05
SAMPLED = 0.05  # X-Ray's default sampling rule beyond its first request each second
FULL = {"n": 400, "rounds": 9, "hook_loops": 200_000, "hook_rounds": 7, "repeats": 10}
QUICK = {"n": 100, "rounds": 3, "hook_loops": 20_000, "hook_rounds": 3, "repeats": 2}
#: mode -> label; every mode but off has the endpoint set and a provider installed before the call.
MODES = {
    "off": "off: get_product, keyed read, CPU per call",
    "on": "on: batched, each batch OTLP-encoded",
    "sampled": "on: 1 in 20 recorded (X-Ray's default rate)",
    "each": "ref: on, flushed after every call (Lambda)",
    "queued": "ref: on, batched, exporter not encoding",
    "bare": "ref: on, spans made, no span processor",
    "unsampled": "ref: on, sampler recording nothing",
}
RESULT_PREFIX = "BENCH_TRACING_RESULT "


class EncodingExporter:
    """A span exporter doing ``OTLPSpanExporter.export``'s CPU work (the batch encoded to OTLP
    protobuf) with the bytes dropped, or (``encode=False``) nothing at all; counts what it got."""

    def __init__(self, *, encode: bool) -> None:
        self.encode, self.spans, self.bytes = encode, 0, 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        if self.encode:
            self.bytes += len(encode_spans(spans).SerializePartialToString())
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


@dataclass
class RoundRow(Row):
    """A row of per-round figures (CPU over a round's calls, a timeit loop): its median and min are
    the rounds'; it has no per-call p99."""

    def as_dict(self) -> dict[str, Any]:
        p99, self.p99 = self.p99, 0.0
        try:
            return {**super().as_dict(), "p99": None}
        finally:
            self.p99 = p99


@dataclass
class RoundBudgetRow(RoundRow, BudgetRow):
    """Per-round figures against an absolute budget (``target`` in the row's unit)."""


def _per_round(kind: type[Row], key: str, label: str, n: int, values: list[float], **fields: Any) -> Row:
    median, low = statistics.median(values), min(values)
    return kind(key, label, "µs", n, len(values), median, low, None, values, **fields)  # type: ignore[arg-type]


def _forget_provider() -> None:
    """OpenTelemetry's global provider unset (as its tests and ours do), the old one shut down."""
    if "opentelemetry.trace" not in sys.modules:
        return  # never loaded: nothing to forget
    from opentelemetry import trace
    from opentelemetry.util._once import Once

    provider = trace._TRACER_PROVIDER
    if provider is not None and hasattr(provider, "shutdown"):
        provider.shutdown()
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


def _switch(mode: str, canned: PeerCanned) -> tuple[Any, EncodingExporter | None]:
    """toolfront rebuilt with tracing in ``mode``: its provider and exporter (None when off), and a
    new client with the canned transport."""
    _forget_provider()
    tracing.reset()
    aws.reset_clients()
    wiring.reset()
    provider, exporter = None, None
    if mode == "off":
        os.environ.pop(ENDPOINT_VARIABLE, None)
    else:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider, sampling
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        os.environ[ENDPOINT_VARIABLE] = ENDPOINT
        ratio = {"unsampled": 0.0, "sampled": SAMPLED}.get(mode)
        sampler = sampling.ParentBased(sampling.TraceIdRatioBased(ratio)) if ratio is not None else None
        provider = TracerProvider(
            resource=Resource.create({"service.name": "toolfront-bench"}), sampler=sampler
        )
        if mode != "bare":
            exporter = EncodingExporter(encode=mode != "queued")
            provider.add_span_processor(BatchSpanProcessor(exporter))  # type: ignore[arg-type]  # duck-typed
        trace.set_tracer_provider(provider)
    if tracing.enabled() != (mode != "off"):
        raise RuntimeError(f"tracing is not {'off' if mode == 'off' else 'on'} in mode {mode}")
    canned.install(aws.client("dynamodb"))
    return provider, exporter


def _round(mode: str, n: int, call: Callable[[], Any], canned: PeerCanned) -> tuple[float, float, Any]:
    """CPU µs per call over ``n`` calls in ``mode`` (after a warm-up), every span exported inside
    the timed region; the spans exported per call, and the exporter."""
    provider, exporter = _switch(mode, canned)
    for _ in range(max(50, n // 10)):
        call()
    flush = provider.force_flush if provider is not None else lambda: None
    flush()
    exported = exporter.spans if exporter is not None else 0
    each = mode == "each"
    gc.collect()  # the switch's garbage (a client, a provider) collected now, not in the timed calls
    t0 = time.process_time()
    for _ in range(n):
        call()
        if each:
            flush()
    flush()
    spent = time.process_time() - t0
    spans = (exporter.spans - exported) / n if exporter is not None else 0.0
    return spent / n * 1e6, spans, exporter


def _hook_calls(call: Callable[[], Any]) -> list[tuple[str, dict[str, Any], int]]:
    """The calls one call makes into ``toolfront.tracing``: (function, arguments, positional count)."""
    functions = [
        f for f in vars(tracing).values() if callable(f) and getattr(f, "__module__", "") == tracing.__name__
    ]
    functions += [f for f in vars(tracing.CallSpan).values() if callable(f)]
    codes = {f.__code__: f.__name__ for f in functions if hasattr(f, "__code__")}
    seen: list[tuple[str, dict[str, Any], int]] = []

    def watch(frame: Any, event: str, _: Any) -> None:
        if event == "call" and frame.f_code in codes:
            code = frame.f_code
            names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
            seen.append((codes[code], {name: frame.f_locals[name] for name in names}, code.co_argcount))

    sys.setprofile(watch)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def _hooks_row(hooks: list[tuple[str, dict[str, Any], int]], loops: int, rounds: int) -> Row:
    """The hooks replayed as written in the code (positional, then keyword arguments), timeit-style."""
    namespace: dict[str, Any] = {}
    lines = []
    for i, (name, arguments, positional) in enumerate(hooks):
        namespace[name] = getattr(tracing, name)
        passed = []
        for j, (parameter, value) in enumerate(arguments.items()):
            namespace[f"a{i}_{parameter}"] = value
            passed.append(f"a{i}_{parameter}" if j < positional else f"{parameter}=a{i}_{parameter}")
        lines.append(f"{name}({', '.join(passed)})")
    timer = timeit.Timer("\n".join(lines), globals=namespace)
    timer.timeit(loops // 10)  # warm-up
    per_call = [t / loops * 1e6 for t in timer.repeat(rounds, loops)]
    note = f"{fx.counts_text(Counter(n for n, _, _ in hooks))}, as one keyed read calls them"
    label = "off: the hooks of one call, µs per call"
    return _per_round(
        RoundBudgetRow, "tracing.off.hooks", label, loops, per_call, target=HOOKS_BUDGET_US, note=note
    )


@contextmanager
def _catalogue() -> Iterator[tuple[Callable[[], Any], PeerCanned]]:
    """One keyed read of the catalogue handler, in bench_peer's environment; and its transport."""
    tables = {"IdempotencyTable": "pk", PEER_ENV["PEER_IDEMPOTENCY_TABLE"]: "id"}
    with peer_environment(), fx.environment({}, unset=OTEL_UNSET), open(os.devnull, "w") as null:
        base, app, ctx = fx.load_event(), fx.load_family("catalogue"), fx.FakeContext()
        try:
            with fx.log_stream(null):
                yield (lambda: app.lambda_handler(base, ctx)), PeerCanned(fx.bench_tables(base), tables)
        finally:
            _forget_provider()
            tracing.reset()


def cpu_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """The hooks row, then CPU per call in every mode, rounds interleaved; and what was counted."""
    sizes = QUICK if quick else FULL
    per_round: dict[str, list[float]] = {mode: [] for mode in MODES}
    with _catalogue() as (call, canned):
        _switch("off", canned)
        answer = call()
        if answer["statusCode"] != 200 or json.loads(answer["body"])["data"] != {"product": fx.PRODUCT}:
            raise RuntimeError(f"the read answered {answer['statusCode']}: {answer['body'][:400]}")
        with fx.counting(aws.client("dynamodb")) as requests:
            hooks = _hook_calls(call)
        found: dict[str, Any] = {"requests": dict(requests), "hooks_off": [name for name, _, _ in hooks]}
        if Counter(found["hooks_off"])["start_dynamodb"] != requests.total():
            raise RuntimeError(f"{requests.total()} DynamoDB requests, hooks {found['hooks_off']}")
        rows = [_hooks_row(hooks, sizes["hook_loops"], sizes["hook_rounds"])]
        found["spans_per_call"] = spans = 2 + requests.total()  # the call's, the handler's, one per request
        for mode in MODES:  # a first round of every mode, discarded: one-time costs paid
            _, _, exporter = _round(mode, sizes["n"] // 4, call, canned)
            if mode == "on":
                found["otlp_bytes_per_span"] = round(exporter.bytes / exporter.spans, 1)
        for _ in range(sizes["rounds"]):
            for mode in MODES:
                cpu, exported, exporter = _round(mode, sizes["n"], call, canned)
                if (
                    exporter is not None
                    and mode != "sampled"
                    and exported != (0 if mode == "unsampled" else spans)
                ):
                    raise RuntimeError(f"{mode}: {exported} spans exported per call, not {spans}")
                per_round[mode].append(cpu)
    note = f"{fx.counts_text(requests)}; auditing on, canned DynamoDB; {spans} spans per call when on"
    measured = {}
    for mode, label in MODES.items():
        row = measured[mode] = _per_round(RoundRow, f"tracing.cpu.{mode}", label, sizes["n"], per_round[mode])
        row.note = note if mode in ("off", "on") else ""
        if mode != "off":
            row.baseline, row.target = "tracing.cpu.off", CPU_TARGET if mode in ("on", "sampled") else None
    parts = [
        ("added", "on - off: what tracing adds", "on", "off"),
        ("making", "of which making the spans = bare - off", "bare", "off"),
        ("queueing", "of which the batch processor = queued - bare", "queued", "bare"),
        ("encoding", "of which OTLP encoding = on - queued", "on", "queued"),
        ("flushing", "ref: a flush per call adds = each - on", "each", "on"),
    ]
    rows += list(measured.values())
    for key, label, total, minus in parts:
        rows.append(derived(f"tracing.cpu.{key}", label, measured[total], {minus: 1}, measured))
    link_ratios(rows)
    return rows, found


# --- cold: fresh interpreters -----------------------------------------------------------------

FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"
_APP = f"""{FLOOR}
import json, sys, time
sys.path[:0] = {[str(fx.FUNCTIONS_DIR / "catalogue"), str(fx.LAYER_DIR)]!r}
import app
from toolfront import tracing
"""
CHILDREN = {
    "imports": _APP
    + """t0 = time.perf_counter()
import opentelemetry.context, opentelemetry.trace
t1 = time.perf_counter()
import opentelemetry.sdk.resources, opentelemetry.sdk.trace, opentelemetry.sdk.trace.export
t2 = time.perf_counter()
import opentelemetry.exporter.otlp.proto.http.trace_exporter
t3 = time.perf_counter()
found = {"api": t1 - t0, "sdk": t2 - t1, "exporter": t3 - t2, "imports": t3 - t0}
found = {k: v * 1e3 for k, v in found.items()}
""",
    "enable": _APP
    + """t0 = time.perf_counter()
on = tracing.enabled()
found = {"enable": (time.perf_counter() - t0) * 1e3}
from opentelemetry import trace
provider = trace.get_tracer_provider()
assert on and type(provider).__name__ == "TracerProvider", provider
provider.shutdown()
""",
    "off": _APP
    + f"""t0 = time.perf_counter()
on = tracing.enabled()
found = {{"enable_off_us": (time.perf_counter() - t0) * 1e6}}
sys.path.insert(0, {str(fx.BENCH_DIR)!r})
import bench_tracing
found.update(bench_tracing.child_call(app))
""",
}
COLD_ROWS = {  # field -> (child, label)
    "api": ("imports", "cold on: import the API (trace, context)"),
    "sdk": ("imports", "cold on: + the SDK (provider, batch, resources)"),
    "exporter": ("imports", "cold on: + the OTLP/HTTP exporter"),
    "imports": ("imports", "cold on: API + SDK + exporter imports"),
    "enable": ("enable", "cold on: first enabled(), installing the SDK"),
}
_REPORT = f"print({RESULT_PREFIX!r} + json.dumps(found))\n"  # every child's ``found``: ms, or what it saw


def child_call(app: Any) -> dict[str, Any]:
    """In the off child: one keyed read served (canned DynamoDB); the ``opentelemetry`` modules loaded."""
    base = fx.load_event()
    canned = PeerCanned(fx.bench_tables(base), {"IdempotencyTable": "pk"})
    canned.install(aws.client("dynamodb"))
    status = app.lambda_handler(base, fx.FakeContext())["statusCode"]
    loaded = sorted(m for m in sys.modules if m == "opentelemetry" or m.startswith("opentelemetry."))
    return {"status": status, "loaded": loaded, "on": tracing.enabled()}


def cold_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    repeats = (QUICK if quick else FULL)["repeats"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "OTEL_")) and k not in fx.UNSET}
    env.update({**fx.ENV, **PEER_ENV, "TOOLFRONT_AUDIT_TABLE": "AuditTable"})
    env.pop("AWS_LAMBDA_EXEC_WRAPPER", None)
    envs = {"imports": env, "enable": {**env, ENDPOINT_VARIABLE: "http://127.0.0.1:9"}, "off": env}
    commands = {kind: [sys.executable, "-c", code + _REPORT] for kind, code in CHILDREN.items()}
    for kind in ("imports", "enable"):  # warm the .pyc caches; unmeasured
        run_child(commands[kind], envs[kind])
    off = child_result(run_child(commands["off"], env)[1], RESULT_PREFIX, "off")
    if off["status"] != 200 or off["on"]:
        raise RuntimeError(f"the off child's call: {off}")
    samples: dict[str, list[dict[str, float]]] = {"imports": [], "enable": []}
    for _ in range(repeats):
        for kind, found in samples.items():
            found.append(child_result(run_child(commands[kind], envs[kind])[1], RESULT_PREFIX, kind))
    label, loaded = "off: opentelemetry modules after import + a call", float(len(off["loaded"]))
    rows = [count_row("tracing.cold.off_modules", label, loaded, target=0.0, note=f"loaded: {off['loaded']}")]
    rows[0].unit = "mod"
    for field, (kind, label) in COLD_ROWS.items():
        rows.append(subprocess_row(f"tracing.cold.{field}", label, [s[field] for s in samples[kind]]))
    return rows, {"off_child": off, "repeats": repeats}


def run(quick: bool = False) -> Section:
    section = Section("tracing (issue #27: off ≤ 1 µs per call, on ≤ 1.05x CPU)", canary_before=canary())
    cpu, found = cpu_rows(quick)
    cold, cold_found = cold_rows(quick)
    section.rows = cpu + cold
    section.canary_after = canary()
    section.extra.update({**found, "cold": cold_found})
    section.extra["summary"] = summary(section, found)
    return section


def summary(section: Section, found: dict[str, Any]) -> list[str]:
    row, spans = section.row, found["spans_per_call"]
    on, hooks = row("tracing.cpu.on"), row("tracing.off.hooks")
    medians = {what: row(f"tracing.cpu.{what}").median for what in ("making", "queueing", "encoding")}
    parts = ", ".join(f"{what} {us:.0f} µs ({us / spans:.1f} per span)" for what, us in medians.items())
    return [
        f"tracing: off, the hooks of a call ({', '.join(found['hooks_off'])}) cost {hooks.median:.2f} µs"
        f" (target ≤ {HOOKS_BUDGET_US:g}: {hooks.status})",
        f"tracing: on, CPU per call {row('tracing.cpu.off').median:.0f} -> {on.median:.0f} µs"
        f" ({on.ratio:.3f}x, target ≤ {CPU_TARGET:g}: {on.status}; rounds"
        f" {', '.join(f'{r:.2f}' for r in on.round_ratios)}); {spans} spans per call, {parts};"
        f" {found['otlp_bytes_per_span']:.0f} OTLP bytes per span",
        f"tracing: cold, on: imports {row('tracing.cold.imports').median:.0f} ms, first enabled()"
        f" {row('tracing.cold.enable').median:.0f} ms; off: {row('tracing.cold.off_modules').median:.0f}"
        " opentelemetry modules after a served call",
    ]
