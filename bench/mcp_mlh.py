"""The mcp bench's second baseline, mcp-lambda-handler, and the floors (JSON in, JSON out).

The floors are those of docs/performance.md, "5. MCP servers".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp_requests import N_TOOLS, product_function


def lambda_handler_server() -> Any:
    try:
        from awslabs.mcp_lambda_handler import MCPLambdaHandler
    except ImportError:  # a dev extra
        raise SystemExit(
            "bench_mcp needs awslabs.mcp-lambda-handler: "
            ".venv/bin/pip install 'awslabs.mcp-lambda-handler==0.1.15'"
        ) from None
    handler = MCPLambdaHandler("bench")
    for i in range(N_TOOLS):
        handler.tool()(product_function(i))
    return handler


def list_floor(tools: list[dict[str, Any]]) -> Callable[[dict[str, Any]], str]:
    def answer(event: dict[str, Any]) -> str:
        message = json.loads(event["body"])
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})

    return answer


def call_floor(functions: dict[str, Callable[..., str]]) -> Callable[[dict[str, Any]], str]:
    def answer(event: dict[str, Any]) -> str:
        message = json.loads(event["body"])
        params = message["params"]
        text = functions[params["name"]](**params["arguments"])
        result = {"content": [{"type": "text", "text": text}]}
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})

    return answer
