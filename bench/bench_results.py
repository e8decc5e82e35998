"""What results of every shape cost (issue #13): output validation per call, and a 1 MB binary result
through MCP and REST.

- Output validation: ``answer_parts`` (what the pipeline runs on every success) for a tool whose
  ``output_schema`` is section 1's 10-field schema, on its valid instance, against the same call
  for a tool with no output schema. Target: at most 2 µs on valid data; the "ratio" of that row is
  its median over the 2 µs budget (target 1.0).
- A 1 MB random image: encoding it into the answer (``answer_parts`` + the envelope's JSON text),
  MCP's result from that answer, REST's raw-bytes answer for an exact ``Accept``, and packing the
  answer for its idempotency record (``aws.bodies.pack``: compressed into parts). The peak memory of
  one whole REST answer (tracemalloc) is in the note.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from typing import Any

from bench_validation import SCHEMA, VALID
from harness import Section, Spec, canary, run_group

import toolfront
from toolfront import ToolResult, results
from toolfront.adapters.mcp.results import result_of_answer
from toolfront.adapters.rest import result_response
from toolfront.aws import bodies
from toolfront.calls.call import CallResult
from toolfront.calls.envelopes import success_body
from toolfront.tools.answers import answer_parts

BUDGET_US = 2.0
FULL_N = {"fast": 100_000, "big": 40}
QUICK_N = {"fast": 5_000, "big": 5}
IMAGE = os.urandom(1024 * 1024)


def _tool(name: str, **fields: Any) -> toolfront.Tool:
    return toolfront.Tool.new(name=name, audience="public", handler=lambda d, c: d, **fields)


def run(quick: bool = False) -> Section:
    n = QUICK_N if quick else FULL_N
    section = Section("results (output validation, a 1 MB binary result)", canary_before=canary())
    checked, unchecked = _tool("bench.check_order", output_schema=SCHEMA), _tool("bench.pass_order")
    answer_parts(checked, VALID)  # compile outside the timed rows
    validation = run_group(
        [
            Spec(
                "out_none",
                "answer_parts(dict), no output_schema",
                lambda d: answer_parts(unchecked, d),
                n["fast"],
                arg=VALID,
            ),
            Spec(
                "out_checked",
                "answer_parts(dict), 10-field output_schema, valid",
                lambda d: answer_parts(checked, d),
                n["fast"],
                arg=VALID,
                baseline="out_none",
            ),
        ]
    )
    added = validation[1].median - validation[0].median
    validation[1].note = f"validation adds {added:.2f} µs; budget {BUDGET_US} µs"
    validation[1].ratio, validation[1].target = validation[1].median / BUDGET_US, 1.0
    section.rows.extend(validation)

    image_tool = _tool("bench.render_image", mime_type="image/png")
    returned = ToolResult(content=[results.image(IMAGE)], data={"bytes": len(IMAGE)})
    data, content = answer_parts(image_tool, returned)
    body = success_body(data, "r1", content)
    answer = json.loads(body)
    result = CallResult(200, data=data, body=body)

    def encode(_: Any) -> str:
        parts = answer_parts(image_tool, returned)
        return success_body(parts[0], "r1", parts[1])

    section.rows.extend(
        run_group(
            [
                Spec("big_encode", "1 MB image: answer_parts + envelope JSON", encode, n["big"], arg=None),
                Spec(
                    "big_mcp",
                    "1 MB image: MCP result of the answer",
                    lambda a: result_of_answer(200, a),
                    n["big"],
                    arg=answer,
                ),
                Spec(
                    "big_rest_raw",
                    "1 MB image: REST raw bytes (exact Accept)",
                    lambda r: result_response(r, "r1", "image/png"),
                    n["big"],
                    arg=result,
                ),
                Spec(
                    "big_pack", "1 MB image: pack the answer for its record", bodies.pack, n["big"], arg=body
                ),
            ]
        )
    )
    tracemalloc.start()
    parts = answer_parts(image_tool, returned)
    response = result_response(
        CallResult(200, data=parts[0], body=success_body(parts[0], "r1", parts[1])), "r1", "image/png"
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    packed = bodies.pack(body)
    section.rows[-4].note = f"peak {peak / 1e6:.1f} MB for one REST answer; body {len(body) / 1e6:.2f} MB"
    section.rows[-1].note = f"{len(packed.parts)} parts of at most {bodies.PART_BYTES // 1024} KiB"
    assert response["isBase64Encoded"]
    section.canary_after = canary()
    return section
