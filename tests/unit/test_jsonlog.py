"""toolfront's warnings and tracebacks keep the Powertools Logger's JSON shape without Powertools: the
same record through both formatters gives the same line (Powertools is a dev dependency here)."""

from __future__ import annotations

import io
import json
import logging
import sys
from typing import Any

import pytest
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from toolfront.calls import logs
from toolfront.calls.jsonlog import JsonFormatter, json_logger, level_from


def _record(msg: Any, *args: Any, exc: bool = False, **extra: Any) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise RuntimeError("boom ü")
        except RuntimeError as error:
            error.add_note("a note")
            exc_info = sys.exc_info()
    record = logging.LogRecord("toolfront.tools.registry", logging.WARNING, __file__, 42, msg, args, exc_info)
    record.funcName = "register"
    record.__dict__.update(extra)
    return record


RECORDS = {
    "args": lambda: _record("module %s: ignored %d invalid tool(s): %s", "m", 2, "a, b"),
    "plain": lambda: _record("a store of the sign-in facade is unavailable"),
    "json text": lambda: _record('{"a": 1}'),
    "dict": lambda: _record({"k": "v"}),
    "extra": lambda: _record("extra fields", tool="catalogue.get_product", n=3),
    "traceback": lambda: _record("tool %s failed (request %s)", "catalogue.x", "r1", exc=True),
}


@pytest.mark.parametrize(
    "trace", [None, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f;Sampled=1"]
)
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_a_record_is_written_as_the_powertools_formatter_writes_it(
    kind: str, trace: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if trace is None:
        monkeypatch.delenv("_X_AMZN_TRACE_ID", raising=False)
    else:
        monkeypatch.setenv("_X_AMZN_TRACE_ID", trace)
    record = RECORDS[kind]()
    ours = JsonFormatter("toolfront").format(record)
    theirs = LambdaPowertoolsFormatter(service="toolfront", sampling_rate=None).format(record)
    assert ours == theirs
    assert list(json.loads(ours))[:4] == ["level", "location", "message", "timestamp"]


def test_a_traceback_carries_the_exception_its_name_and_its_frames() -> None:
    line = json.loads(JsonFormatter("toolfront").format(RECORDS["traceback"]()))
    assert line["exception_name"] == "RuntimeError"
    assert line["exception"].startswith("Traceback (most recent call last):")
    assert line["exception_notes"] == ["a note"]
    assert line["stack_trace"]["type"] == "RuntimeError" and line["stack_trace"]["value"] == "boom ü"
    assert line["stack_trace"]["frames"][-1]["function"] == "_record"


@pytest.mark.parametrize(
    ("env", "level"),
    [
        ({}, logging.INFO),
        ({"POWERTOOLS_LOG_LEVEL": "warning"}, "WARNING"),
        ({"LOG_LEVEL": "ERROR"}, "ERROR"),
        ({"POWERTOOLS_LOG_LEVEL": "DEBUG", "AWS_LAMBDA_LOG_LEVEL": "WARN"}, "WARNING"),
        ({"AWS_LAMBDA_LOG_LEVEL": "FATAL"}, "CRITICAL"),
    ],
)
def test_the_level_follows_powertools_precedence(env: dict[str, str], level: str | int) -> None:
    assert level_from(env) == level


def test_toolfront_loggers_reach_one_json_handler_once() -> None:
    """``toolfront.*`` loggers propagate to the JSON logger; configuring it again adds nothing."""
    assert json_logger("toolfront") is logs.logger
    (handler,) = [h for h in logs.logger.handlers if isinstance(h.formatter, JsonFormatter)]
    stream = io.StringIO()
    assert isinstance(handler, logging.StreamHandler)
    old = handler.setStream(stream)
    try:
        logging.getLogger("toolfront.calls.pipeline").warning("tool %s failed", "catalogue.x")
    finally:
        handler.setStream(old)
    line = json.loads(stream.getvalue())
    assert (line["level"], line["message"], line["service"]) == (
        "WARNING",
        "tool catalogue.x failed",
        "toolfront",
    )


def test_the_service_logger_is_suppressed_in_other_root_handlers() -> None:
    """Lambda's own root handler must not write toolfront's records a second time (as Powertools)."""
    root_handler = logging.StreamHandler(io.StringIO())
    logging.root.addHandler(root_handler)
    try:
        json_logger("catalogue", {}, name="tf_suppressed_service")
        record = logging.LogRecord("tf_suppressed_service.x", logging.WARNING, __file__, 1, "m", None, None)
        other = logging.LogRecord("elsewhere", logging.WARNING, __file__, 1, "m", None, None)
        assert not root_handler.filter(record)
        assert root_handler.filter(other)
    finally:
        logging.root.removeHandler(root_handler)


def test_jsonlog_service_name_other_than_toolfront_keeps_json_lines() -> None:
    """Section 17: toolfront's own warnings are JSON lines whatever POWERTOOLS_SERVICE_NAME says."""
    import os
    import subprocess

    script = (
        "import logging\n"
        "import toolfront.calls.logs\n"
        "logging.getLogger('toolfront.tools.registry').warning('module %s: ignored', 'm')\n"
    )
    env = {**os.environ, "POWERTOOLS_SERVICE_NAME": "catalogue"}
    env.pop("POWERTOOLS_LOG_LEVEL", None)
    env.pop("LOG_LEVEL", None)
    env.pop("AWS_LAMBDA_LOG_LEVEL", None)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert result.stderr == ""
    (line,) = [json.loads(text) for text in result.stdout.splitlines()]
    assert (line["level"], line["message"], line["service"]) == ("WARNING", "module m: ignored", "catalogue")
