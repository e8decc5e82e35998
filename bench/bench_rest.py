"""One REST call end to end: the catalogue function against a Powertools route.

Baselines: docs/performance.md, "Baseline figures", sections 2 to 4.

In-process rows, interleaved, every DynamoDB request answered by a canned ``before-send.dynamodb``
hook (botocore still validates, serialises, SigV4-signs, checks the CRC32 and parses; only the
network is gone):

- toolfront: ``lambda_handler(event, ctx)`` of ``functions/catalogue/app.py`` for
  ``catalogue.get_product`` with a valid admin key, warm (1 conditional UpdateItem on the key's
  item: authentication, liveness, access and the rate limit together; 1 GetItem for the product),
  its one log line written to a null stream at INFO;
- baseline: Powertools ``APIGatewayHttpResolver(enable_validation=True)`` serving the same route with
  a pydantic model of the tool's input schema and the same GetItem (no authentication at all);
- botocore's client-side cost per request, for each request the warm call makes (recorded with its
  parameters), on the same client with the same hook; subtracted from both totals it leaves
  toolfront's *core time* and Powertools' *own time*. A cross-check measures both directly, with
  the client's methods replaced by functions returning the parsed answers.

Fresh subprocesses (interleaved, median of 10): the cold import of each function's module beyond
``import boto3; boto3.client("dynamodb")``, ``-X importtime`` offenders, the garbage collection
inside the import, and the first calls after a cold import.

The parts: ``rest_fixture`` (environment, event, tables), ``rest_canned`` (the DynamoDB hook),
``rest_powertools`` (the baseline app), ``rest_sanity``, ``rest_rows`` (derived and budget rows),
``rest_inprocess``, ``rest_cold`` and ``rest_importtime``; this module runs them as one section.
"""

from __future__ import annotations

import statistics
import sys
from typing import Any

from harness import Section, canary
from rest_cold import subprocess_rows
from rest_fixture import bench_environment, counts_text
from rest_inprocess import FULL_N, QUICK_N, in_process_rows
from rest_sanity import EXPECTED_FIRST, EXPECTED_WARM


def run(quick: bool = False) -> Section:
    """The in-process rows, in the section named ``rest``."""
    section = Section("rest", canary_before=canary())
    with bench_environment():
        rows, found = in_process_rows(quick)
    section.rows = rows
    section.canary_after = canary()
    section.extra.update({"n": QUICK_N if quick else FULL_N, "sanity": found})
    section.extra["summary"] = summary(found)
    return section


def run_cold(quick: bool = False) -> Section:
    """The subprocess rows (every function's cold import, the first calls), in the section ``cold``."""
    section = Section("cold (fresh subprocesses)", canary_before=canary())
    with bench_environment():
        section.rows, cold = subprocess_rows(quick)
    section.canary_after = canary()
    section.extra.update({"cold": cold, "summary": cold_summary(cold)})
    return section


def summary(found: dict[str, Any]) -> list[str]:
    """Lines printed under the table: request counts and where toolfront's own time goes."""

    lines = [
        "rest: DynamoDB requests per call (provide-client-params.dynamodb):"
        f" toolfront warm {counts_text(found['toolfront_warm_requests'])}"
        f" (actor alone: {counts_text(found['toolfront_actor_requests'])}, the key and its owner's"
        " permissions);"
        f" toolfront first call {counts_text(found['toolfront_first_call_requests'])};"
        f" Powertools {counts_text(found['powertools_requests'])} (it authenticates no one)."
    ]
    if not found["requests_as_expected"]:
        lines.append(
            f"rest: NOT THE EXPECTED REQUESTS: a warm call was expected to make {counts_text(EXPECTED_WARM)}"
            f" and a first call {counts_text(EXPECTED_FIRST)}"
        )
    profile = ", ".join(
        f"{e['function'].rsplit('(', 1)[1].rstrip(')')} {e['share']:.0%}" for e in found["core_profile"][:8]
    )
    lines.append(
        f"rest: toolfront core by function (cProfile cumulative share, client answering at once): {profile}"
    )
    return lines


def cold_summary(cold: dict[str, Any]) -> list[str]:
    """Lines printed under the table: what the catalogue and gateway imports spend most on."""
    lines = []
    gc_ms = statistics.median(cold["import_gc_ms"])
    lines.append(
        "cold: import of catalogue app.py beyond the floor, -X importtime top cumulative"
        f" (median ms, module <- importer); garbage collection takes {gc_ms:.1f} ms of it (mostly one"
        " generation-2 pass) and counts as self time of whichever module is importing then:"
    )
    for m in cold["importtime_catalogue"]["top_cumulative"]:
        lines.append(
            f"    {m['cumulative_ms']:7.1f}  {m['module']}  (self {m['self_ms']:.1f})"
            f"  <- {m['imported_by'] or '-'}"
        )
    for name in ("catalogue", "gateway"):
        by_package = cold[f"importtime_{name}"]["self_ms_by_package"]
        lines.append(
            f"cold: {name} import, self ms by package: "
            + ", ".join(f"{p} {ms:.1f}" for p, ms in list(by_package.items())[:8])
        )
    return lines


if __name__ == "__main__":
    from harness import format_table

    results = [run(quick="--quick" in sys.argv), run_cold(quick="--quick" in sys.argv)]
    print(format_table(results))
    print("\n".join(line for result in results for line in result.extra["summary"]))
