"""Run every bench, print one table and write ``bench/results/latest.json``.

Usage: ``.venv/bin/python bench/run.py [--quick] [--only NAME] [--out PATH] [--strict] [--compare FILE]``,
NAME one of validation, registry, rest, cold, requests, approvals, mcp, mcp_hop, results, families, audit,
slack, peer, tracing, leases, large (``make bench`` runs all).
``--quick`` is a smoke run with small n (about 30 s);
the full run takes about six minutes on this VM. ``--strict`` exits 1 when a row misses its target.
``--compare FILE`` prints every row beside an earlier run's (a ``latest.json`` kept aside). The calls' log
lines are written to a sink, not to the output.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import bench_approvals
import bench_audit
import bench_families
import bench_large
import bench_leases
import bench_mcp
import bench_mcp_hop
import bench_peer
import bench_registry
import bench_requests
import bench_rest
import bench_results
import bench_slack
import bench_tracing
import bench_validation
from harness import Section, canary, format_table, machine_info, timer_overhead_ns

import toolfront

RESULTS = Path(__file__).resolve().parent / "results"
BENCHES = {
    "validation": bench_validation.run,
    "registry": bench_registry.run,
    "rest": bench_rest.run,
    "cold": bench_rest.run_cold,
    "requests": bench_requests.run,
    "approvals": bench_approvals.run,
    "mcp": bench_mcp.run,
    "mcp_hop": bench_mcp_hop.run,
    "results": bench_results.run,
    "families": bench_families.run,
    "audit": bench_audit.run,
    "slack": bench_slack.run,
    "peer": bench_peer.run,
    "tracing": bench_tracing.run,
    "leases": bench_leases.run,
    "large": bench_large.run,  # last: its 2,000 tools and the SDK's objects stay in the process
}
#: Canary spread (max / min over the run) above which part of the run was likely contended.
CONTENDED_SPREAD = 1.3


def _versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    packages = ("toolfront", "jsonschema", "jsonschema-rs", "fastjsonschema")
    packages += ("aws-lambda-powertools", "pydantic", "pydantic-core", "boto3", "botocore")
    packages += ("mcp", "mcp-types", "starlette", "anyio", "awslabs.mcp-lambda-handler")
    for package in packages:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def _source_digest() -> str:
    """A short digest of toolfront's source files, to tie the figures to the code they measured."""
    digest = hashlib.sha256()
    for path in sorted(Path(toolfront.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _git_state() -> dict[str, Any] | None:
    """The commit of the repository holding the measured toolfront, and how many files differ from it."""
    import subprocess

    where = Path(toolfront.__file__).parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=where, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        return {
            "commit": git("rev-parse", "HEAD"),
            "changed_files": len(git("status", "--porcelain").splitlines()),
        }
    except (OSError, subprocess.SubprocessError):
        return None  # not a git checkout (an exported snapshot, a Lambda layer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small n: a smoke run of about 30 s")
    parser.add_argument("--only", choices=sorted(BENCHES), action="append", help="run only this bench")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="where to write the JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a row misses its target")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="FILE",
        help="print each row against an earlier run's JSON (a latest.json)",
    )
    args = parser.parse_args(argv)
    earlier = _earlier(args.compare) if args.compare else None

    started = time.perf_counter()
    report: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "machine": machine_info(),
        "versions": _versions(),
        "toolfront_path": str(Path(toolfront.__file__).parent),
        "toolfront_source_sha256": _source_digest(),
        "toolfront_git": _git_state(),
        "timer_overhead_ns": timer_overhead_ns(),
        "canary_before_us": round(canary(), 2),
    }
    sections: list[Section] = []
    sink = _Sink()
    for name in args.only or list(BENCHES):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        # The calls' log lines are written (their cost is the call's) but not shown: the report is
        # the table. Benches buffer their own; whatever else reaches stdout is counted, not shown.
        with contextlib.redirect_stdout(sink):
            sections.append(BENCHES[name](quick=args.quick))
    report["log_lines_written"] = sink.lines
    report["canary_after_us"] = round(canary(), 2)
    report["elapsed_s"] = round(time.perf_counter() - started, 1)

    canaries = [report["canary_before_us"], report["canary_after_us"]]
    canaries += [c for s in sections for c in (s.canary_before, s.canary_after)]
    spread = max(canaries) / min(canaries)
    report["canary_spread"] = round(spread, 3)
    report["ratios"] = {
        r.key: {"ratio": round(r.ratio, 5), "target": r.target, "status": r.status or None}
        for s in sections
        for r in s.rows
        if r.ratio is not None
    }
    report["sections"] = [s.as_dict() for s in sections]

    m = report["machine"]
    print(
        f"\ntoolfront benches ({report['mode']}), {m['date']}, Python {m['python']}, "
        f"{m['cpu_count']} CPU {m['processor']}, {report['elapsed_s']} s"
    )
    print(
        f"canary {report['canary_before_us']:.0f} -> {report['canary_after_us']:.0f} µs; "
        f"timer {report['timer_overhead_ns']:.0f} ns per call, not subtracted\n"
    )
    print(format_table(sections))
    for section in sections:  # what a bench wants said under the table (request counts, offenders)
        for line in section.extra.get("summary", []):
            print(line)
    if spread > CONTENDED_SPREAD:
        print(
            f"\nwarning: the canary varied {spread:.2f}x during the run: the CPU was contended for part of"
            " it. Ratios are measured side by side, but rerun before quoting absolute figures."
        )
    missed = [r.label for s in sections for r in s.rows if r.status == "MISS"]
    if missed:
        print(f"\nmissed targets: {'; '.join(missed)}")

    if earlier is not None:
        print(_comparison(sections, earlier, args.compare))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"\nwrote {args.out}")
    return 1 if args.strict and missed else 0


class _Sink(io.TextIOBase):
    """Standard output while a bench runs: every write accepted and dropped, lines counted."""

    def __init__(self) -> None:
        self.lines = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)


def _earlier(path: Path) -> dict[str, dict[str, Any]]:
    """An earlier run's rows by key (read before this run can overwrite the file)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--compare {path}: not a bench result ({exc})") from None
    return {row["key"]: row for section in document.get("sections", []) for row in section.get("rows", [])}


def _comparison(sections: list[Section], earlier: dict[str, dict[str, Any]], path: Path) -> str:
    """Each row of this run beside the earlier one: the medians, their ratio, and the target ratios."""
    lines = [
        f"\nagainst {path}:",
        f"{'row':44} {'before':>10} {'now':>10} {'now/before':>10}  ratio before -> now",
    ]
    for section in sections:
        for row in section.rows:
            before = earlier.get(row.key)
            if before is None or not before.get("median"):
                lines.append(f"{row.key:44} {'-':>10} {row.median:>10.2f} {'new':>10}")
                continue
            change = row.median / float(before["median"])
            ratios = ""
            if row.ratio is not None and before.get("ratio") is not None:
                ratios = f"  {float(before['ratio']):.3f} -> {row.ratio:.3f}"
            lines.append(
                f"{row.key:44} {float(before['median']):>10.2f} {row.median:>10.2f} {change:>9.2f}x{ratios}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
