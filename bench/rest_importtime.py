"""``-X importtime`` reports: parsed into modules, and the offenders an app imports beyond a floor."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

TOP_OFFENDERS = 8


@dataclass(frozen=True)
class Imported:
    """One line of a ``-X importtime`` report."""

    name: str
    depth: int
    self_ms: float
    cumulative_ms: float
    parent: str | None


def parse_importtime_all(stderr: str) -> list[Imported]:
    """Every module of a ``-X importtime`` report, with its depth and the module that imported it."""
    raw: list[tuple[str, int, float, float]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        raw.append((name.strip(), depth, int(parts[0]) / 1000, int(parts[1]) / 1000))
    # The report is post-order (children first): walking it backwards, the last module seen one
    # level up is the importer.
    found: list[Imported] = []
    stack: list[str] = []
    for name, depth, self_ms, cumulative_ms in reversed(raw):
        del stack[depth:]
        found.append(Imported(name, depth, self_ms, cumulative_ms, stack[depth - 1] if depth else None))
        stack.append(name)
    found.reverse()
    return found


def offenders(floor_runs: list[str], app_runs: list[str]) -> dict[str, Any]:
    """The modules the app imports beyond the floor: top by cumulative and by self time, by package."""
    cumulative: dict[str, list[float]] = {}
    own: dict[str, list[float]] = {}
    where: dict[str, Imported] = {}
    by_package: list[Counter[str]] = []
    top_level: list[float] = []
    for floor_stderr, app_stderr in zip(floor_runs, app_runs, strict=True):
        already = {m.name for m in parse_importtime_all(floor_stderr)}
        packages: Counter[str] = Counter()
        total = 0.0
        for m in parse_importtime_all(app_stderr):
            if m.name in already:
                continue
            cumulative.setdefault(m.name, []).append(m.cumulative_ms)
            own.setdefault(m.name, []).append(m.self_ms)
            where.setdefault(m.name, m)
            packages[m.name.split(".")[0]] += m.self_ms
            if m.depth == 0:
                total += m.cumulative_ms
        by_package.append(packages)
        top_level.append(total)

    def describe(name: str) -> dict[str, Any]:
        return {
            "module": name,
            "cumulative_ms": round(statistics.median(cumulative[name]), 3),
            "self_ms": round(statistics.median(own[name]), 3),
            "depth": where[name].depth,
            "imported_by": where[name].parent,
        }

    def median_of(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    names = list(cumulative)
    packages = {p for c in by_package for p in c}
    package_ms = {p: round(median_of([c.get(p, 0.0) for c in by_package]), 3) for p in packages}
    return {
        "top_cumulative": [
            describe(n) for n in sorted(names, key=lambda n: -median_of(cumulative[n]))[:TOP_OFFENDERS]
        ],
        "top_self": [describe(n) for n in sorted(names, key=lambda n: -median_of(own[n]))[:TOP_OFFENDERS]],
        "self_ms_by_package": dict(sorted(package_ms.items(), key=lambda kv: -kv[1])),
        "new_modules": len(names),
        "top_level_cumulative_ms": [round(v, 3) for v in top_level],
    }
