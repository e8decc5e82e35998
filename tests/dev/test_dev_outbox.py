"""The approvers' outbox: links read for ``approvals list``, printed by ``toolfront dev`` as they appear."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolfront_dev.outbox import OutboxWatcher, outbox_links, read_outbox


def entry(approval_id: str, tool: str = "catalogue.delete_product") -> dict[str, Any]:
    return {
        "approval_id": approval_id,
        "tool": tool,
        "link": f"http://127.0.0.1:3000/approvals/{approval_id}?code=c-{approval_id}",
        "created_at": "2026-01-01T00:00:00Z",
        "expires_at": "2026-01-02T00:00:00Z",
    }


def line(approval_id: str, tool: str = "catalogue.delete_product") -> str:
    return json.dumps(entry(approval_id, tool)) + "\n"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as outbox:
        outbox.write(text)


def test_read_outbox_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_outbox(tmp_path / "outbox.jsonl") == []
    assert outbox_links(None) == {}


def test_outbox_links_by_approval_id_skip_malformed_and_partial_lines(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    append(path, line("a1") + "not json\n" + line("a2") + line("a3")[:20])

    assert outbox_links(path) == {"a1": entry("a1")["link"], "a2": entry("a2")["link"]}


def test_watcher_poll_emits_each_complete_line_once(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    printed: list[str] = []
    watcher = OutboxWatcher(path, printed.append)
    append(path, line("a1"))
    partial = line("a2")
    append(path, partial[:15])

    assert watcher.poll() == 1
    append(path, partial[15:])
    assert watcher.poll() == 1
    assert watcher.poll() == 0
    assert printed == [
        f"approval needed: catalogue.delete_product -> {entry('a1')['link']}",
        f"approval needed: catalogue.delete_product -> {entry('a2')['link']}",
    ]


def test_watcher_poll_after_truncation_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    printed: list[str] = []
    watcher = OutboxWatcher(path, printed.append)
    append(path, line("a1") + line("a2"))
    watcher.poll()

    path.write_text(line("b1"), encoding="utf-8")

    assert watcher.poll() == 1
    assert printed[-1].endswith(entry("b1")["link"])


def test_watcher_malformed_line_skipped_without_logging_its_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "outbox.jsonl"
    printed: list[str] = []
    append(path, "{secret-code-123\n" + line("a1"))

    with caplog.at_level(logging.WARNING, logger="toolfront_dev.outbox"):
        OutboxWatcher(path, printed.append).poll()

    assert len(printed) == 1
    assert "malformed" in caplog.text and "secret-code-123" not in caplog.text


def test_watcher_thread_prints_lines_as_they_appear_and_stops(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    printed: list[str] = []
    watcher = OutboxWatcher(path, printed.append, interval_seconds=0.01).start()
    try:
        append(path, line("a1", tool="guest.redeem"))
        deadline = time.monotonic() + 5
        while not printed:
            assert time.monotonic() < deadline, "the watcher printed nothing"
            time.sleep(0.01)
    finally:
        watcher.stop()

    assert printed == [f"approval needed: guest.redeem -> {entry('a1')['link']}"]
    assert "toolfront-outbox" not in {thread.name for thread in threading.enumerate()}


def test_watcher_stop_prints_line_written_just_before(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    printed: list[str] = []
    watcher = OutboxWatcher(path, printed.append, interval_seconds=60).start()

    append(path, line("late"))
    watcher.stop()
    watcher.stop()  # a second stop does nothing

    assert printed == [f"approval needed: catalogue.delete_product -> {entry('late')['link']}"]
