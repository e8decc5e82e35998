"""The values management commands and seed files take: durations (``30d``), key scopes, permissions.

Each has a checker answering what is wrong (shared by the CLI and seed files) and an argparse type.
"""

from __future__ import annotations

import argparse
import re
from datetime import timedelta

from toolfront.auth.actors import HELD_SCOPE, PERMISSION

_DURATION = re.compile(r"([0-9]+)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Far beyond any sensible key lifetime, and well inside what datetime arithmetic can represent.
MAX_DURATION = timedelta(days=36500)
SCOPE_FORMS = "<module>.<resource>:<action>, <module>.<resource>:* or <module>.*"


def parse_duration(text: str) -> timedelta:
    """``<n>s``, ``<n>m``, ``<n>h`` or ``<n>d`` (n a positive integer) as a timedelta.

    Raises:
        ValueError: the text is in no such form, n is 0, or the duration exceeds 100 years.
    """
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"expected <n>s, <n>m, <n>h or <n>d (e.g. 30d), got {text!r}")
    count, unit = int(match.group(1)), match.group(2)
    if count == 0:
        raise ValueError(f"a duration must be positive, got {text!r}")
    seconds = count * _UNIT_SECONDS[unit]
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(f"a duration may be at most {MAX_DURATION.days}d, got {text!r}")
    return timedelta(seconds=seconds)


def scope_problem(scope: object) -> str | None:
    """What is wrong with a key scope, or ``None`` when it is valid."""
    if not isinstance(scope, str) or not HELD_SCOPE.fullmatch(scope):
        return f"invalid scope {scope!r}: expected {SCOPE_FORMS}, e.g. catalogue.products:read"
    return None


def permission_problem(permission: object) -> str | None:
    """What is wrong with a permission name, or ``None`` when it is valid."""
    if not isinstance(permission, str) or not PERMISSION.fullmatch(permission):
        return (
            f"invalid permission {permission!r}: expected lowercase letters, digits and _ . : -, "
            "starting with a letter, e.g. catalogue"
        )
    return None


def duration_type(text: str) -> timedelta:
    """argparse type of ``--expires-in``."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def scope_type(text: str) -> str:
    """argparse type of ``--scope``."""
    problem = scope_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def permission_type(text: str) -> str:
    """argparse type of ``--permission``."""
    problem = permission_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def principal_type(text: str) -> str:
    """argparse type of a principal id (a key's owner): any text but blank."""
    if not text.strip() or text != text.strip():
        raise argparse.ArgumentTypeError(f"a principal id may not be blank or padded, got {text!r}")
    return text
