"""The local approvers' outbox: one JSON line per approval link, written by the approvals function.

``toolfront dev`` prints each new line as it appears (:class:`OutboxWatcher`), and
``toolfront approvals list --local`` matches links to pending approvals (:func:`outbox_links`).
A line: ``{"approval_id", "tool", "link", "created_at", "expires_at"}``; an escalation's line has
``"event": "escalated"`` and the approval's ``page`` instead of a link (no code is sent again).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

logger = logging.getLogger(__name__)

OUTBOX_NAME = "outbox.jsonl"
DEFAULT_INTERVAL_SECONDS = 0.25


def read_outbox(path: Path | None) -> list[dict[str, Any]]:
    """Every complete, well-formed line of the outbox (none when it does not exist)."""
    if path is None:
        return []
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    # A line still being appended has no newline yet: it is read next time.
    complete = data[: data.rfind(b"\n") + 1]
    return list(_entries(complete))


def outbox_links(path: Path | None) -> dict[str, str]:
    """The link of each approval in the outbox, by approval id (the latest line wins)."""
    return {
        str(entry["approval_id"]): str(entry["link"])
        for entry in read_outbox(path)
        if "approval_id" in entry and "link" in entry
    }


def describe_entry(entry: dict[str, Any]) -> str:
    """The console line for one outbox entry (an approval's link, or its escalation)."""
    if entry.get("event") == "escalated":
        return f"approval escalated, still waiting: {entry.get('tool', '?')} -> {entry.get('page', '?')}"
    return f"approval needed: {entry.get('tool', '?')} -> {entry.get('link', '?')}"


def _entries(data: bytes) -> Iterator[dict[str, Any]]:
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            logger.warning("skipped a malformed outbox line")  # its content may hold a code: not logged
            continue
        if isinstance(entry, dict):
            yield entry


class OutboxWatcher:
    """A daemon thread printing each line appended to the outbox, from its start to :meth:`stop`.

    Args:
        path: the outbox file (it may not exist yet).
        emit: what receives each console line (``print`` with flush by default).
        interval_seconds: how often the file is looked at.
    """

    def __init__(
        self,
        path: Path,
        emit: Callable[[str], None] | None = None,
        interval_seconds: float = DEFAULT_INTERVAL_SECONDS,
    ) -> None:
        self._path = path
        self._emit = emit or _print
        self._interval_seconds = interval_seconds
        self._offset = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self) -> int:
        """Emit the lines completed since the last poll; how many there were."""
        try:
            with self._path.open("rb") as outbox:
                size = outbox.seek(0, 2)
                if size < self._offset:  # truncated (a restarted stack): start over
                    self._offset = 0
                outbox.seek(self._offset)
                data = outbox.read(size - self._offset)
        except FileNotFoundError:
            return 0
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        emitted = 0
        for entry in _entries(complete):
            self._emit(describe_entry(entry))
            emitted += 1
        return emitted

    def start(self) -> OutboxWatcher:
        """Start watching on a daemon thread."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="toolfront-outbox", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread after one last look, so no line written before the stop is lost."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None

    def _run(self) -> None:
        while True:
            stopping = self._stop.wait(self._interval_seconds)
            try:
                self.poll()
            except OSError as exc:
                logger.warning("cannot read the outbox %s: %s", self._path, exc)
            if stopping:
                return

    def __enter__(self) -> OutboxWatcher:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def _print(line: str) -> None:
    print(line, flush=True)
