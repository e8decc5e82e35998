"""The timing harness shared by the benches (method: docs/performance.md, "Timing method").

Every call is timed on its own with ``time.perf_counter_ns`` after a warm-up of 10% of n (at least
50 calls), with GC left on. A row runs 3 rounds; rows compared with each other run their rounds
interleaved (round 1 of every row, then round 2, ...) so a noisy stretch of the shared VM hits the
baseline and the candidate alike. A row's median is the median of its round medians; its p99 the
median of its round p99s; its min the lowest sample seen.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

ROUNDS = 3
#: Iterations of the canary loop. The baselines' own loop read about 75-80 µs uncontended on their VM
#: (docs/performance.md, "Timing method").
CANARY_ITERATIONS = 2000

_NO_ARG = object()


def canary() -> float:
    """Time a fixed pure-Python loop (µs, median of 5): a gauge of CPU contention right now."""
    samples = []
    for _ in range(5):
        start = time.perf_counter_ns()
        total = 0
        for i in range(CANARY_ITERATIONS):
            total += (i * i) % 7
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def timer_overhead_ns(n: int = 100_000) -> float:
    """Median cost of one ``perf_counter_ns`` pair with nothing between (ns); not subtracted."""
    clock = time.perf_counter_ns
    samples = [0] * n
    for i in range(n):
        t0 = clock()
        samples[i] = clock() - t0
    return float(statistics.median(samples))


@dataclass
class Row:
    """One measured line of the report."""

    key: str
    label: str
    unit: str  # "µs" or "ms"
    n: int  # samples per round (or subprocess repeats)
    rounds: int
    median: float
    min: float
    p99: float
    round_medians: list[float] = field(default_factory=list)
    baseline: str | None = None  # key of the row this one is compared with
    target: float | None = None  # ratio to the baseline that passes
    ratio: float | None = None
    round_ratios: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def status(self) -> str:
        if self.target is None or self.ratio is None:
            return ""
        return "PASS" if self.ratio <= self.target else "MISS"

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "n": self.n,
            "rounds": self.rounds,
            "median": round(self.median, 4),
            "min": round(self.min, 4),
            "p99": round(self.p99, 4),
            "round_medians": [round(m, 4) for m in self.round_medians],
            "baseline": self.baseline,
            "ratio": None if self.ratio is None else round(self.ratio, 5),
            "round_ratios": [round(r, 5) for r in self.round_ratios],
            "target": self.target,
            "status": self.status or None,
            "note": self.note,
        }


@dataclass
class Spec:
    """A row to measure: ``fn(arg)`` per sample, or ``fn(setup())`` with the setup left untimed."""

    key: str
    label: str
    fn: Callable[..., Any]
    n: int
    arg: Any = _NO_ARG
    setup: Callable[[], Any] | None = None
    baseline: str | None = None
    target: float | None = None
    note: str = ""


@dataclass
class Section:
    """The rows of one bench, with the canary read before and after it."""

    name: str
    rows: list[Row] = field(default_factory=list)
    canary_before: float = 0.0
    canary_after: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self, key: str) -> Row:
        return next(r for r in self.rows if r.key == key)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "canary_before_us": round(self.canary_before, 2),
            "canary_after_us": round(self.canary_after, 2),
            "rows": [r.as_dict() for r in self.rows],
            **self.extra,
        }


def _sample(spec: Spec, n: int) -> list[int]:
    """``n`` per-call timings of ``spec`` in ns (sorted)."""
    clock = time.perf_counter_ns
    fn = spec.fn
    samples = [0] * n
    if spec.setup is not None:
        setup = spec.setup
        for i in range(n):
            arg = setup()
            t0 = clock()
            fn(arg)
            samples[i] = clock() - t0
    elif spec.arg is _NO_ARG:
        for i in range(n):
            t0 = clock()
            fn()
            samples[i] = clock() - t0
    else:
        arg = spec.arg
        for i in range(n):
            t0 = clock()
            fn(arg)
            samples[i] = clock() - t0
    samples.sort()
    return samples


def _round(spec: Spec) -> list[int]:
    _sample(spec, max(50, spec.n // 10))  # warm-up, thrown away
    return _sample(spec, spec.n)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (q in 0..100)."""
    if not sorted_values:
        raise ValueError("no values")
    rank = max(1, min(len(sorted_values), round(q / 100 * len(sorted_values) + 0.5)))
    return float(sorted_values[rank - 1])


def run_group(specs: Sequence[Spec], rounds: int = ROUNDS) -> list[Row]:
    """Measure ``specs`` side by side, rounds interleaved; ratios against their baseline row."""
    per_round: dict[str, list[tuple[float, float, float]]] = {s.key: [] for s in specs}
    for _ in range(rounds):
        for spec in specs:
            samples = _round(spec)
            per_round[spec.key].append(
                (samples[0] / 1000, statistics.median(samples) / 1000, percentile(samples, 99) / 1000)
            )
    rows = []
    for spec in specs:
        stats = per_round[spec.key]
        rows.append(
            Row(
                key=spec.key,
                label=spec.label,
                unit="µs",
                n=spec.n,
                rounds=rounds,
                median=statistics.median(m for _, m, _ in stats),
                min=min(lo for lo, _, _ in stats),
                p99=statistics.median(p for _, _, p in stats),
                round_medians=[m for _, m, _ in stats],
                baseline=spec.baseline,
                target=spec.target,
                note=spec.note,
            )
        )
    link_ratios(rows)
    return rows


def link_ratios(rows: Sequence[Row]) -> None:
    """Fill ``ratio`` (of medians) and ``round_ratios`` (round by round) of rows with a baseline."""
    by_key = {r.key: r for r in rows}
    for row in rows:
        if row.baseline is None:
            continue
        base = by_key[row.baseline]
        row.ratio = row.median / base.median
        if not row.round_ratios:
            row.round_ratios = [a / b for a, b in zip(row.round_medians, base.round_medians, strict=True)]


def measure_section(name: str, groups: Sequence[Sequence[Spec]], rounds: int = ROUNDS) -> Section:
    """Run every group of specs, reading the canary before and after the section."""
    section = Section(name, canary_before=canary())
    for group in groups:
        section.rows.extend(run_group(group, rounds))
    section.canary_after = canary()
    return section


def machine_info() -> dict[str, Any]:
    """What ran the benches: Python, platform, CPUs, date."""
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or _cpu_model(),
        "cpu_count": os.cpu_count(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    if value >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def format_table(sections: Sequence[Section]) -> str:
    """A plain-text table of every row: label, median, min, p99, ratio, target, status."""
    header = ("measurement", "unit", "median", "min", "p99", "ratio", "target", "")
    lines: list[tuple[str, ...]] = []
    for section in sections:
        lines.append(
            (f"[{section.name}]  canary {section.canary_before:.0f} -> {section.canary_after:.0f} µs",)
        )
        for r in section.rows:
            ratio = "—" if r.ratio is None else f"{r.ratio:.4f}" if r.ratio < 0.1 else f"{r.ratio:.3f}"
            target = "" if r.target is None else f"≤ {r.target:g}"
            lines.append((r.label, r.unit, _fmt(r.median), _fmt(r.min), _fmt(r.p99), ratio, target, r.status))
    width = [max([len(h), *(len(line[i]) for line in lines if len(line) > 1)]) for i, h in enumerate(header)]
    out = []

    def fmt_line(cells: tuple[str, ...]) -> str:
        first = cells[0].ljust(width[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], width[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    out.append(fmt_line(header))
    out.append("-" * (sum(width) + 2 * (len(width) - 1)))
    for line in lines:
        out.append(line[0] if len(line) == 1 else fmt_line(line))
    return "\n".join(out)


# --- fresh-interpreter measurements, shared by the registry, REST and MCP benches ---------------


def run_child(cmd: list[str], env: dict[str, str]) -> tuple[float, str, str]:
    """Wall time (ms), stdout and stderr of one subprocess."""
    t0 = time.perf_counter_ns()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = (time.perf_counter_ns() - t0) / 1e6
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[-1]!r} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return wall, proc.stdout, proc.stderr


def subprocess_row(
    key: str,
    label: str,
    values: list[float],
    *,
    unit: str = "ms",
    baseline: str | None = None,
    target: float | None = None,
    note: str = "",
) -> Row:
    ordered = sorted(values)
    return Row(
        key=key,
        label=label,
        unit=unit,
        n=len(values),
        rounds=1,
        median=statistics.median(values),
        min=ordered[0],
        p99=percentile(ordered, 99),
        baseline=baseline,
        target=target,
        note=note,
    )


def child_result(stdout: str, prefix: str, what: str) -> dict[str, Any]:
    """The JSON a child interpreter printed after ``prefix`` (its last such line)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(prefix):
            found: dict[str, Any] = json.loads(line[len(prefix) :])
            return found
    raise RuntimeError(f"the {what} child printed no result: {stdout[-2000:]}")
