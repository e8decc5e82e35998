"""The suite's least-privilege account: at the end of a whole run, every (action, resource) each
function used, and a failure for any write the template grants that no function request used.

Only a run of the whole suite can say a grant is unused, so a partial run (``-k``, a file, ``--lf``)
prints nothing and checks nothing. The table is written to ``.toolfront/least-privilege.md``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolfront_dev.iam.account import unused_writes, usage_table
from toolfront_dev.iam.enforcement import LEDGERS

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / ".toolfront" / "least-privilege.md"


def _whole_suite(config: pytest.Config) -> bool:
    option = config.option
    narrowed = ("keyword", "markexpr", "deselect", "lf", "maxfail")
    selected = not any(getattr(option, name, None) for name in narrowed)
    return selected and [Path(a).resolve() for a in config.args] in ([], [ROOT / "tests"], [ROOT])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    ledger = LEDGERS.get(str(ROOT / "template.yaml"))  # the project's own template, not a scaffolded one
    if exitstatus != 0 or not _whole_suite(session.config) or ledger is None or not ledger.uses:
        return
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(usage_table(ledger), encoding="utf-8")
    unused = unused_writes(ledger)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "least privilege: what each function used (template grants vs requests)")
        reporter.write_line(usage_table(ledger))
        for grant in unused:
            reporter.write_line(f"UNUSED GRANT: {grant.function} {grant.action} {grant.resource}", red=True)
    if unused:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
