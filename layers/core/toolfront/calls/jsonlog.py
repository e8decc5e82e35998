"""toolfront's warnings and tracebacks as JSON lines in the Powertools Logger's shape, written with the
standard library's ``logging`` alone.

Why not Powertools' ``Logger`` itself: importing it cost every function's cold start 6-8 ms (it
brings Powertools' metrics, tracing, jmespath utilities and ``typing_extensions`` along) to format
lines that are rare (a tool that raised, a store that is down), and its formatter took about twice
as long per record as this one (bench/README.md, "Cold imports"). The per-call line never went
through it (``toolfront.calls.logs`` writes that one itself).

The line is the one Powertools' ``LambdaPowertoolsFormatter`` (v3, its defaults, no Lambda context
injected) writes, keys in its order and ``None`` values left out: ``level``, ``location``
(``function:line``), ``message``, ``timestamp`` (``2026-11-30 04:29:00,123+0000``, local time as
Lambda's UTC), ``service``, ``sampling_rate``, any ``extra`` fields, then ``exception``,
``exception_name``, ``exception_notes``, ``stack_trace`` (type, value, module, frames) and
``xray_trace_id``. The level follows Powertools' precedence: ``AWS_LAMBDA_LOG_LEVEL`` (Advanced
Logging Controls), then ``POWERTOOLS_LOG_LEVEL`` or ``LOG_LEVEL``, else INFO;
``POWERTOOLS_LOGGER_SAMPLE_RATE``, ``POWERTOOLS_DEV`` (indented JSON) and
``POWERTOOLS_LOG_DEDUPLICATION_DISABLED`` mean what they mean to Powertools.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Mapping
from typing import Any

#: The ``LogRecord`` attributes that are not ``extra`` fields (Powertools' ``RESERVED_LOG_ATTRS``).
RESERVED = frozenset(
    {
        "name",
        "msg",
        "args",
        "level",
        "levelname",
        "levelno",
        "pathname",
        "filename",
        "module",
        "exc_info",
        "exc_text",
        "stack_info",
        "lineno",
        "funcName",
        "created",
        "msecs",
        "relativeCreated",
        "thread",
        "threadName",
        "processName",
        "process",
        "asctime",
        "location",
        "timestamp",
    }
)
#: Advanced Logging Controls' levels as ``logging``'s names (Powertools' table).
LAMBDA_LEVELS = {
    "TRACE": "NOTSET",
    "DEBUG": "DEBUG",
    "INFO": "INFO",
    "WARN": "WARNING",
    "ERROR": "ERROR",
    "FATAL": "CRITICAL",
}
_TRUE = frozenset({"1", "y", "yes", "t", "true", "on"})


class JsonFormatter(logging.Formatter):
    """One record as one line of JSON, in the Powertools Logger's shape."""

    def __init__(self, service: str, *, sampling_rate: str | None = None, indent: int | None = None) -> None:
        super().__init__()
        self.service = service
        self.sampling_rate = sampling_rate
        # One encoder for every line: json.dumps with these arguments would build a new one each time.
        self._encode = json.JSONEncoder(
            separators=(",", ":"), ensure_ascii=False, default=str, indent=indent
        ).encode

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "level": record.levelname,
            "location": f"{record.funcName}:{record.lineno}",
            "message": None,
            "timestamp": self.formatTime(record),
            "service": self.service,
            "sampling_rate": self.sampling_rate,
        }
        for key, value in record.__dict__.items():
            if key not in RESERVED:
                line[key] = value
        line["message"] = _message(record)
        exc_info = record.exc_info
        if isinstance(exc_info, tuple) and hasattr(exc_info[0], "__name__"):
            error = exc_info[1]
            line.setdefault("exception", self.formatException(exc_info))
            line.setdefault("exception_name", exc_info[0].__name__)  # type: ignore[union-attr]
            line.setdefault("exception_notes", getattr(error, "__notes__", None))
            line["stack_trace"] = {
                "type": exc_info[0].__name__,  # type: ignore[union-attr]
                "value": error,
                "module": error.__class__.__module__,
                "frames": [
                    {
                        "file": frame.filename,
                        "line": frame.lineno,
                        "function": frame.name,
                        "statement": frame.line,
                    }
                    for frame in traceback.extract_tb(exc_info[2])
                ],
            }
        else:
            for key in ("exception", "exception_name", "exception_notes"):
                line.setdefault(key, None)
            line["stack_trace"] = None
        trace = os.environ.get("_X_AMZN_TRACE_ID")
        line["xray_trace_id"] = trace.split(";")[0].replace("Root=", "") if trace else None
        return self._encode({key: value for key, value in line.items() if value is not None})

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """``2026-11-30 04:29:00,123+0000``: Powertools' default, milliseconds before the offset."""
        return time.strftime(f"%Y-%m-%d %H:%M:%S,{int(record.msecs):03d}%z", time.localtime(record.created))


def _message(record: logging.LogRecord) -> Any:
    """A dict as it is, a format with arguments formatted, a string that is JSON decoded (Powertools)."""
    message = record.msg
    if isinstance(message, dict):
        return message
    if record.args:
        return record.getMessage()
    if isinstance(message, str):
        try:
            return json.loads(message)
        except ValueError:
            return message
    return message


def level_from(env: Mapping[str, str]) -> str | int:
    """Powertools' precedence: Advanced Logging Controls, then its own variables, else INFO."""
    lambda_level = LAMBDA_LEVELS.get(env.get("AWS_LAMBDA_LOG_LEVEL", ""))
    if lambda_level:
        return lambda_level
    level = env.get("POWERTOOLS_LOG_LEVEL") or env.get("LOG_LEVEL")
    return level.upper() if level else logging.INFO


#: The logger every ``toolfront.*`` logger propagates to: the JSON handler sits here, never on a logger
#: named after ``POWERTOOLS_SERVICE_NAME``, whose records toolfront's own would not reach.
LOGGER_NAME = "toolfront"


def json_logger(
    service: str, environ: Mapping[str, str] | None = None, *, name: str = LOGGER_NAME
) -> logging.Logger:
    """The logger ``name`` (toolfront's own loggers, ``toolfront.*``, propagate to it), writing JSON
    lines that say ``service`` to standard output; configured once per process, as Powertools does."""
    env = os.environ if environ is None else environ
    found = logging.getLogger(name)
    if any(isinstance(handler.formatter, JsonFormatter) for handler in found.handlers):
        return found
    sampling_rate = env.get("POWERTOOLS_LOGGER_SAMPLE_RATE") or None
    indent = 4 if env.get("POWERTOOLS_DEV", "0").lower() in _TRUE else None
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter(service, sampling_rate=sampling_rate, indent=indent))
    found.setLevel(level_from(env))
    if sampling_rate:
        import random  # deferred: only a sampled deployment needs it

        if random.random() <= float(sampling_rate):
            found.setLevel(logging.DEBUG)
    found.addHandler(handler)
    if env.get("POWERTOOLS_LOG_DEDUPLICATION_DISABLED", "false").lower() not in _TRUE:
        _suppress_in_root_handlers(name)
    return found


def _suppress_in_root_handlers(name: str) -> None:
    """Keep the root logger's handlers (Lambda's own) from writing this logger's records a second
    time; pytest's capture handler keeps them (Powertools' ``SuppressFilter``)."""

    def not_this_service(record: logging.LogRecord) -> bool:
        return name not in record.name

    for handler in logging.root.handlers:
        kind = type(handler)
        if kind.__name__ == "LogCaptureHandler" and kind.__module__ == "_pytest.logging":
            continue
        handler.addFilter(not_this_service)
