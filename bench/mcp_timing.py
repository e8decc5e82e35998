"""The mcp bench's timing: the harness's method for sync and async rows, p99 kept, derived rows."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from harness import ROUNDS, Row, Spec, _round, percentile

SPREAD_TARGET = 3.0  # p99 ÷ median


@dataclass
class AsyncSpec(Spec):
    """A row whose call is a coroutine: each ``await fn()`` is timed inside ``loop``."""

    loop: asyncio.AbstractEventLoop | None = None
    coroutine: Callable[[], Coroutine[Any, Any, Any]] | None = None

    def round(self) -> list[int]:
        assert self.loop is not None and self.coroutine is not None
        make = self.coroutine

        async def sample(n: int) -> list[int]:
            clock = time.perf_counter_ns
            samples = [0] * n
            for i in range(n):
                t0 = clock()
                await make()
                samples[i] = clock() - t0
            samples.sort()
            return samples

        self.loop.run_until_complete(sample(max(50, self.n // 10)))  # warm-up, thrown away
        return self.loop.run_until_complete(sample(self.n))


@dataclass
class Measured:
    rows: list[Row]
    round_p99s: dict[str, list[float]] = field(default_factory=dict)


def run_interleaved(specs: list[Spec], rounds: int = ROUNDS) -> Measured:
    """``harness.run_group`` for sync and async specs alike, keeping each round's p99."""
    stats: dict[str, list[tuple[float, float, float]]] = {s.key: [] for s in specs}
    for _ in range(rounds):
        for spec in specs:
            samples = spec.round() if isinstance(spec, AsyncSpec) else _round(spec)
            stats[spec.key].append(
                (samples[0] / 1000, statistics.median(samples) / 1000, percentile(samples, 99) / 1000)
            )
    rows = [
        Row(
            key=spec.key,
            label=spec.label,
            unit="µs",
            n=spec.n,
            rounds=rounds,
            median=statistics.median(m for _, m, _ in stats[spec.key]),
            min=min(lo for lo, _, _ in stats[spec.key]),
            p99=statistics.median(p for _, _, p in stats[spec.key]),
            round_medians=[m for _, m, _ in stats[spec.key]],
            baseline=spec.baseline,
            target=spec.target,
            note=spec.note,
        )
        for spec in specs
    ]
    return Measured(rows, {key: [p for _, _, p in found] for key, found in stats.items()})


def compared(source: Row, key: str, label: str, baseline: str, note: str = "") -> Row:
    """``source`` again, its ratio taken against another baseline (no target)."""
    return Row(
        key=key,
        label=label,
        unit=source.unit,
        n=source.n,
        rounds=source.rounds,
        median=source.median,
        min=source.min,
        p99=source.p99,
        round_medians=list(source.round_medians),
        baseline=baseline,
        note=note,
    )


def spread_row(source: Row, round_p99s: list[float], key: str, label: str) -> Row:
    """p99 ÷ median of ``source``: the median column is the row's, min/p99 the lowest/highest round."""
    per_round = [p / m for p, m in zip(round_p99s, source.round_medians, strict=True)]
    value = source.p99 / source.median
    return Row(
        key=key,
        label=label,
        unit="×",  # noqa: RUF001 (the table prints a multiplication sign)
        n=source.n,
        rounds=source.rounds,
        median=value,
        min=min(per_round),
        p99=max(per_round),
        round_medians=per_round,
        target=SPREAD_TARGET,
        ratio=value,
        round_ratios=per_round,
        note="p99 ÷ median (median of round p99s ÷ median of round medians); min/p99 columns: "
        "lowest and highest round",
    )
