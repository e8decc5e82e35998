"""The ``toolfront`` command line: argument parsing, and ``toolfront dev`` run as a real process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.dev.conftest import Fetch, copy_project
from tests.helpers import free_port
from toolfront_dev.cli import build_parser

TOOLFRONT = Path(sys.executable).parent / "toolfront"
START_TIMEOUT_SECONDS = 20
LINK = "http://127.0.0.1:3000/approvals/a1?code=c0de"


def wait_for_health(fetch: Fetch, url: str, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, "toolfront dev exited before serving"
        try:
            return fetch(f"{url}/health", timeout=1.0).status
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"no answer from {url}/health within {START_TIMEOUT_SECONDS} s")


def test_parser_dev_port_defaults_to_port_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "4567")

    args = build_parser().parse_args(["dev"])

    assert (args.port, args.host, args.moto_port) == (4567, "127.0.0.1", 0)


def test_parser_dev_port_defaults_to_3000_without_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORT", raising=False)

    assert build_parser().parse_args(["dev"]).port == 3000


def test_parser_dev_invalid_port_exits_with_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["dev", "--port", "70000"])

    assert exited.value.code == 2


def test_parser_dev_parameters_collected_as_pairs() -> None:
    args = build_parser().parse_args(["dev", "--parameter", "EnableCognito=false", "--parameter", "X=a=b"])

    assert dict(args.parameter) == {"EnableCognito": "false", "X": "a=b"}


def test_approver_sign_in_is_the_parameter_by_another_name() -> None:
    from toolfront_dev.cli import stack_parameters

    signed = build_parser().parse_args(["dev", "--approver-sign-in", "--parameter", "Stage=x"])
    assert stack_parameters(signed) == {"Stage": "x", "ApproverSignIn": "true"}
    assert stack_parameters(build_parser().parse_args(["dev"])) == {}


def test_parser_dev_parameter_without_equals_exits_with_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["dev", "--parameter", "EnableCognito"])

    assert exited.value.code == 2


def test_parser_without_command_exits_with_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([])

    assert exited.value.code == 2


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_cli_dev_serves_health_then_stops_cleanly_on_signal(
    tmp_path: Path, fetch: Fetch, stop_signal: signal.Signals
) -> None:
    project = copy_project(tmp_path)
    port, moto_port = free_port(), free_port()
    out, err = (tmp_path / "out.txt").open("wb"), (tmp_path / "err.txt").open("wb")
    command = [
        str(TOOLFRONT),
        "dev",
        "--port",
        str(port),
        "--moto-port",
        str(moto_port),
        "--project",
        str(project),
    ]
    process = subprocess.Popen(command, stdout=out, stderr=err)
    try:
        assert wait_for_health(fetch, f"http://127.0.0.1:{port}", process) == 200
        # What the approvals function appends for an approver: the console shows its link.
        with (project / ".toolfront" / "outbox.jsonl").open("a", encoding="utf-8") as outbox:
            outbox.write(
                json.dumps({"approval_id": "a1", "tool": "catalogue.delete_product", "link": LINK}) + "\n"
            )
        process.send_signal(stop_signal)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        out.close()
        err.close()
    output = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert f"http://127.0.0.1:{port}" in output
    assert f"http://127.0.0.1:{moto_port}" in output
    assert "toolfront dev: stopped" in output
    assert f"approval needed: catalogue.delete_product -> {LINK}" in output
    # The access line survives Powertools' filter on names containing "toolfront".
    assert "GET /health -> 200" in (tmp_path / "err.txt").read_text(encoding="utf-8")
    written = json.loads((project / ".toolfront" / "dev.json").read_text(encoding="utf-8"))
    assert written["moto_endpoint"] == f"http://127.0.0.1:{moto_port}"


def test_cli_dev_without_template_exits_1_naming_the_problem(tmp_path: Path) -> None:
    finished = subprocess.run(
        [str(TOOLFRONT), "dev", "--port", "0", "--project", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert finished.returncode == 1
    assert "no SAM template" in finished.stderr
