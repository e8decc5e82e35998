"""The gateway function: the API's health check (MCP, tool listing and docs join it later)."""

from __future__ import annotations

import json
from typing import Any


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """API Gateway HTTP API (payload v2) entry point."""
    request_id = event.get("requestContext", {}).get("requestId", "")
    route = event.get("routeKey", "")
    if route == "GET /health":
        status, body = 200, {"data": {"status": "ok"}, "request_id": request_id}
    else:
        status = 404
        body = {
            "error": {"code": "not_found", "message": f"no route {route}", "details": None},
            "request_id": request_id,
        }
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json", "x-request-id": request_id},
        "body": json.dumps(body),
    }
