"""The cold-import cost of a ``toolfront.Family`` that uses pydantic models, against the same family
without models (issue #14: at most 30 ms beyond a family without models).

Four ``app.py`` under ``bench/family_apps/``, the same three tools (``notes.add_note``,
``notes.get_note``, ``notes.list_notes``) in each:

- ``plain``: ``dict`` annotations and explicit ``input_schema=``/``output_schema=``; the child fails
  if pydantic got loaded;
- ``typed``: ``typing_extensions.TypedDict`` in and out, of plain fields (toolfront writes their
  schemas itself: the child fails if pydantic got loaded);
- ``models``: pydantic ``BaseModel`` in and out (4 models);
- ``pydantic_only``: the same 4 models and no toolfront: pydantic's own import plus building them.

Each sample is a fresh interpreter: ``import boto3; boto3.client("dynamodb")`` first (the floor),
then ``import app`` timed with ``perf_counter`` (the family folder and the layer first on the path,
cwd ``/``, dummy AWS credentials). The ``.pyc`` files are warmed by one untimed run of each; the
variants are interleaved in every repeat. ``models - plain`` and ``(models - plain) - pydantic_only``
are taken per repeat, then the median. Every import pays one generation-2 collection soon after the
floor (its cost scales with the floor's objects): the child times its collections too, and a
reference row repeats toolfront's share with each import less its collections. One ``-X importtime``
run of ``models`` names the modules that dominate (only those imported after the floor).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness import Row, Section, canary, child_result, link_ratios, subprocess_row
from rest_importtime import offenders
from rest_rows import BudgetRow

BENCH_DIR = Path(__file__).resolve().parent
APPS_DIR = BENCH_DIR / "family_apps"
LAYER_DIR = BENCH_DIR.parent / "layers" / "core"
VARIANTS = ("plain", "typed", "models", "pydantic_only")
#: The budget of a pydantic family beyond the same family without models (issue #14).
MODELS_BUDGET_MS = 30.0
FULL_REPEATS, QUICK_REPEATS = 10, 2
RESULT_PREFIX = "BENCH_FAMILIES_RESULT "
FLOOR_MARK = "BENCH_FAMILIES_FLOOR_DONE"
FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"
ENV = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}
UNSET = ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB")


def _program(variant: str) -> str:
    """The floor, then the timed ``import app`` of ``family_apps/<variant>``, then its checks."""
    paths = [str(APPS_DIR / variant), str(LAYER_DIR)]
    return f"""import gc, json, sys, time
{FLOOR}
print({FLOOR_MARK!r}, file=sys.stderr, flush=True)
collections = []
started = [0.0]


def gc_watch(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        collections.append((info["generation"], (time.perf_counter() - started[0]) * 1000))


gc.callbacks.append(gc_watch)
sys.path[:0] = {paths!r}
t0 = time.perf_counter()
import app
ms = (time.perf_counter() - t0) * 1000
gc.callbacks.remove(gc_watch)
loaded = "pydantic" in sys.modules
if {variant in ("plain", "typed")!r} and loaded:
    raise SystemExit("the {variant} family loaded pydantic: it must import without it")
if hasattr(app, "notes") and len(app.notes.api_tools()) != 3:
    raise SystemExit(f"expected 3 tools, got {{[t.name for t in app.notes.api_tools()]}}")
found = {{"ms": ms, "gc_ms": sum(spent for _, spent in collections), "pydantic": loaded}}
found["gc"] = [generation for generation, _ in collections]
print({RESULT_PREFIX!r} + json.dumps(found))
"""


def _run(cmd: list[str], env: dict[str, str]) -> tuple[str, str]:
    """Stdout and stderr of one fresh interpreter run from ``/`` (as harness.run_child, with a cwd)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/", check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[-1][-200:]!r} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return proc.stdout, proc.stderr


def measure(repeats: int) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Per variant, what ``repeats`` fresh interpreters found (interleaved): the import's ms, the ms of
    the collections during it, whether pydantic got loaded; and the ``-X importtime`` offenders of
    ``models`` after the floor (one run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k not in UNSET}
    env.update(ENV)
    commands = {v: [sys.executable, "-c", _program(v)] for v in VARIANTS}
    for cmd in commands.values():  # warm the .pyc caches; unmeasured
        _run(cmd, env)
    found: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for _ in range(repeats):
        for variant, cmd in commands.items():
            found[variant].append(child_result(_run(cmd, env)[0], RESULT_PREFIX, f"families {variant}"))
    stderr = _run([sys.executable, "-X", "importtime", "-c", _program("models")], env)[1]
    return found, offenders([""], [stderr.split(FLOOR_MARK, 1)[1]])


def _paired(a: list[float], b: list[float], op: str = "-") -> list[float]:
    return [x - y if op == "-" else x / y for x, y in zip(a, b, strict=True)]


def run(quick: bool = False) -> Section:
    section = Section("families", canary_before=canary())
    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    started = time.perf_counter()
    found, importtime = measure(repeats)
    ms = {v: [c["ms"] for c in found[v]] for v in VARIANTS}
    gc_ms = {v: [c["gc_ms"] for c in found[v]] for v in VARIANTS}
    no_gc = {v: _paired(ms[v], gc_ms[v]) for v in VARIANTS}
    plain, typed, models, own = (ms[v] for v in VARIANTS)
    extra = _paired(models, plain)
    share = _paired(extra, own)
    share_no_gc = _paired(_paired(no_gc["models"], no_gc["plain"]), no_gc["pydantic_only"])

    beyond = "cold: import {} app.py beyond the floor"
    rows: list[Row] = [
        subprocess_row("families.plain", beyond.format("plain (dict + explicit schemas)"), plain),
        subprocess_row(
            "families.typed",
            beyond.format("typed (TypedDict)"),
            typed,
            baseline="families.plain",
            note="loads pydantic: TypeAdapter derives the TypedDicts' schemas",
        ),
        subprocess_row(
            "families.models", beyond.format("models (pydantic BaseModel)"), models, baseline="families.plain"
        ),
    ]
    rows[1].round_ratios = _paired(typed, plain, "/")
    rows[2].round_ratios = _paired(models, plain, "/")
    budget = subprocess_row(
        "families.models_extra",
        "models - plain, paired per repeat",
        extra,
        note=f"pydantic family beyond one without models (#14 target <= {MODELS_BUDGET_MS:g} ms)",
    )
    rows.append(BudgetRow(**{**budget.__dict__, "target": MODELS_BUDGET_MS}))
    rows += [
        subprocess_row(
            "families.pydantic_own",
            beyond.format("pydantic_only (4 models, no toolfront)"),
            own,
            note="pydantic's own import plus building the models; with the gen-2 collection all pay",
        ),
        subprocess_row(
            "families.toolfront_share",
            "(models - plain) - pydantic_only, paired per repeat",
            share,
            note="what toolfront adds for models; counts the collection every variant pays twice",
        ),
        subprocess_row(
            "families.toolfront_share_no_gc",
            "ref: the same, each import less its collections",
            share_no_gc,
            note="schema derivation (TypeAdapter, portable), wrapping, without garbage collection",
        ),
    ]
    link_ratios(rows)
    section.rows = rows
    section.canary_after = canary()
    section.extra.update(
        {
            "repeats": repeats,
            "elapsed_s": round(time.perf_counter() - started, 1),
            "pydantic_loaded": {v: found[v][0]["pydantic"] for v in VARIANTS},
            "gc_generations": {v: found[v][0]["gc"] for v in VARIANTS},
            "samples_ms": {
                **{v: [round(x, 3) for x in ms[v]] for v in VARIANTS},
                "models_extra": [round(x, 3) for x in extra],
                "toolfront_share": [round(x, 3) for x in share],
                "toolfront_share_no_gc": [round(x, 3) for x in share_no_gc],
                "gc": {v: [round(x, 3) for x in gc_ms[v]] for v in VARIANTS},
            },
            "models_importtime": {
                **{k: v for k, v in importtime.items() if k != "top_level_cumulative_ms"},
                "after_floor_cumulative_ms": importtime["top_level_cumulative_ms"][0],
            },
        }
    )
    section.extra["summary"] = summary(section, gc_ms, importtime)
    return section


def summary(section: Section, gc_ms: dict[str, list[float]], importtime: dict[str, Any]) -> list[str]:
    """Lines printed under the table: the figures in words, and what dominates the models import."""
    row = {r.key.split(".", 1)[1]: r for r in section.rows}
    loaded = section.extra["pydantic_loaded"]
    gc = ", ".join(f"{v} {statistics.median(gc_ms[v]):.1f}" for v in VARIANTS)

    def listed(key: str, figure: str) -> str:
        return ", ".join(
            f"{m['module']} {m[figure]:.1f} ({m['imported_by'] or 'top'})" for m in importtime[key]
        )

    return [
        f"families: cold import beyond the boto3 floor, median of {section.extra['repeats']} (ms):"
        f" plain {row['plain'].median:.1f} (pydantic {'LOADED' if loaded['plain'] else 'not loaded'}),"
        f" typed {row['typed'].median:.1f} (pydantic {'loaded' if loaded['typed'] else 'not loaded'}),"
        f" models {row['models'].median:.1f}, pydantic_only {row['pydantic_own'].median:.1f}.",
        f"families: a pydantic family costs {row['models_extra'].median:.1f} ms beyond one without models"
        f" (target <= {MODELS_BUDGET_MS:g} ms: {row['models_extra'].status}); pydantic's own import and"
        f" model building {row['pydantic_own'].median:.1f} ms; toolfront's share"
        f" {row['toolfront_share'].median:.1f} ms, {row['toolfront_share_no_gc'].median:.1f} ms without"
        " garbage collection.",
        f"families: garbage collection inside each import (median ms): {gc}; each variant pays one"
        " generation-2 pass soon after the floor, whose cost scales with the floor's objects.",
        "families: models -X importtime after the floor, top cumulative (ms, importer):"
        f" {listed('top_cumulative', 'cumulative_ms')}; {importtime['new_modules']} modules in all.",
        f"families: the same, top self time: {listed('top_self', 'self_ms')}.",
    ]


if __name__ == "__main__":
    from harness import format_table

    done = run("--quick" in sys.argv)
    print(format_table([done]))
    print("\n".join(done.extra["summary"]))
