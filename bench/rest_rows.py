"""Rows the rest bench adds to the harness: derived by subtraction, absolute budgets, in situ."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from harness import ROUNDS, Row, percentile


@dataclass
class DerivedRow(Row):
    """A row computed round by round from other rows' round medians (no samples: no min or p99)."""

    def as_dict(self) -> dict[str, Any]:
        minimum, p99 = self.min, self.p99
        self.min = self.p99 = 0.0  # Row.as_dict rounds them; a derived row has none
        try:
            found = super().as_dict()
        finally:
            self.min, self.p99 = minimum, p99
        found["min"] = found["p99"] = None
        found["derived"] = True
        return found


@dataclass
class BudgetRow(Row):
    """A row with an absolute budget: ``target`` is in the row's unit, not a ratio."""

    @property
    def status(self) -> str:
        if self.target is None:
            return ""
        return "PASS" if self.median <= self.target else "MISS"

    def as_dict(self) -> dict[str, Any]:
        found = super().as_dict()
        found["target_kind"] = f"absolute ({self.unit})"
        return found


def derived(
    key: str,
    label: str,
    total: Row,
    minus: dict[str, int],
    rows: dict[str, Row],
    *,
    baseline: str | None = None,
    target: float | None = None,
    note: str = "",
) -> DerivedRow:
    """``total`` minus ``count`` times each row of ``minus``, round by round; the median of the rounds."""
    per_round = [
        t - sum(count * rows[name].round_medians[i] for name, count in minus.items())
        for i, t in enumerate(total.round_medians)
    ]
    return DerivedRow(
        key=key,
        label=label,
        unit=total.unit,
        n=total.n,
        rounds=total.rounds,
        median=statistics.median(per_round),
        min=None,  # type: ignore[arg-type]
        p99=None,  # type: ignore[arg-type]
        round_medians=per_round,
        baseline=baseline,
        target=target,
        note=note,
    )


def in_situ_rows(
    specs: list[tuple[str, str, Any, str | None, str]], arg: Any, spent: list[int], n: int
) -> list[Row]:
    """Per call: its time minus the time spent inside the client's methods; rounds interleaved."""
    clock = time.perf_counter_ns
    stats: dict[str, list[tuple[float, float, float]]] = {key: [] for key, *_ in specs}
    for _ in range(ROUNDS):
        for key, _label, fn, _baseline, _note in specs:
            for count, keep in ((max(50, n // 10), False), (n, True)):
                samples = [0] * count
                for i in range(count):
                    spent[0] = 0
                    start = clock()
                    fn(arg)
                    samples[i] = clock() - start - spent[0]
                if keep:
                    samples.sort()
                    stats[key].append(
                        (samples[0] / 1000, statistics.median(samples) / 1000, percentile(samples, 99) / 1000)
                    )
    return [
        Row(
            key=key,
            label=label,
            unit="µs",
            n=n,
            rounds=ROUNDS,
            median=statistics.median(m for _, m, _ in stats[key]),
            min=min(lo for lo, _, _ in stats[key]),
            p99=statistics.median(p for _, _, p in stats[key]),
            round_medians=[m for _, m, _ in stats[key]],
            baseline=baseline,
            note=note,
        )
        for key, label, _fn, baseline, note in specs
    ]


def count_row(key: str, label: str, count: float, *, kind: type[Row] = BudgetRow, **fields: Any) -> Row:
    """A row holding one count (requests per call: counted once, not timed), so its median, min,
    p99 and only round are the count; ``fields``: ``target``, ``baseline``, ``note``."""
    return kind(
        key=key,
        label=label,
        unit="req",
        n=1,
        rounds=1,
        median=count,
        min=count,
        p99=count,
        round_medians=[count],
        **fields,
    )
