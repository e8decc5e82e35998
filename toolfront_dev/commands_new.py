"""``toolfront new family NAME [--table]``: write a new family and every entry it needs, then check it.

The files and entries are in :mod:`toolfront_dev.scaffold`; this command refuses a name that cannot
be a new family (changing nothing), writes everything, refreshes the manifest and runs
``toolfront check``'s rules on the result, putting every file back as it was when they fail.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from toolfront_dev.command import Command, command_group
from toolfront_dev.commands_check import problems_of
from toolfront_dev.commands_tools import add_project_argument
from toolfront_dev.errors import CommandError
from toolfront_dev.families import MANIFEST_PATH, family_apps, write_manifest
from toolfront_dev.scaffold import TEST_DIR, NewFamily, edit_template, refusal


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", metavar="NAME", help="the family's name: a lowercase word (notes, shop_orders)"
    )
    parser.add_argument(
        "--table", action="store_true", help="give the family a DynamoDB table of its own (and use it)"
    )
    add_project_argument(parser)


def create_family(project: Path, name: str, *, table: bool) -> list[Path]:
    """Write the family ``name`` into ``project``; answer the paths written or changed.

    Raises:
        CommandError: the name is refused (nothing changed), or the result fails the check (every
            file put back).
    """
    if not (project / "template.yaml").is_file():
        raise CommandError(f"{project.resolve()} holds no template.yaml: run this in the project's folder")
    refused = refusal(project, name)
    if refused:
        raise CommandError(refused)
    family = NewFamily(name, table=table)
    template_path, manifest_path = project / "template.yaml", project / MANIFEST_PATH
    existing = [_function_id(project, app.parent.name) for app in family_apps(project)]
    template_before = template_path.read_text(encoding="utf-8")
    template_after = edit_template(template_before, family, [f for f in existing if f])
    manifest_before = manifest_path.read_text(encoding="utf-8") if manifest_path.exists() else None
    created = family.files()
    made_dirs = [d for d in (project / "functions" / name, project / TEST_DIR) if not d.exists()]
    try:
        for path, text in created.items():
            (project / path).parent.mkdir(parents=True, exist_ok=True)
            (project / path).write_text(text, encoding="utf-8")
        init = project / TEST_DIR / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
            created[TEST_DIR / "__init__.py"] = ""
        template_path.write_text(template_after, encoding="utf-8")
        write_manifest(project)
        problems = problems_of(project)
        if problems:
            raise CommandError(
                f"the new family {name!r} fails the check, so nothing was kept:\n"
                + "\n".join(f"  - {p}" for p in problems)
            )
    except BaseException:
        template_path.write_text(template_before, encoding="utf-8")
        if manifest_before is not None:
            manifest_path.write_text(manifest_before, encoding="utf-8")
        for path in created:
            (project / path).unlink(missing_ok=True)
        for folder in reversed(made_dirs):
            for leftover in folder.glob("__pycache__"):
                for cached in leftover.iterdir():
                    cached.unlink()
                leftover.rmdir()
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    return [*created, Path("template.yaml"), MANIFEST_PATH]


def _function_id(project: Path, family: str) -> str | None:
    """The logical id of the function whose CodeUri is ``functions/<family>/`` (by the template's text)."""
    text = (project / "template.yaml").read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(text):
        if line.strip().rstrip("/") == f"CodeUri: functions/{family}":
            for back in range(index, -1, -1):
                if text[back].startswith("  ") and not text[back].startswith("   "):
                    return text[back].strip().rstrip(":")
    return None


def _run(args: argparse.Namespace) -> int:
    name, project = args.name, args.project
    written = create_family(project, name, table=args.table)
    print(f"new family {name!r}:")
    for path in written:
        print(f"  {path}")
    print(
        f"\nnext: edit functions/{name}/app.py, then `make test`. With `make dev` running:\n"
        f"  toolfront principals grant admin --permission {name} --local\n"
        f"  toolfront keys create --owner admin --scope '{name}.*' --local"
    )
    return 0


FAMILY = Command("family", "a new tool family: its module, its test, its template entries", _configure, _run)
NEW = command_group("new", "create something new in the project (a tool family)", [FAMILY])
