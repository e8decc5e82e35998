"""Every error the local development stack raises, under one base class.

DevError
├── TemplateError          template.yaml is unreadable or declares what the local stack cannot serve
│   └── RouteConflictError two HttpApi events share a method and a path
├── StackError             the local stack cannot start (a port in use, moto refusing a call)
├── SeedError              a seed file is unreadable or one of its entries is invalid (named)
└── CommandError           a management command cannot do its work (no stack, an unknown key id)

These never reach an API caller: they stop ``toolfront dev`` before it serves anything, or end a
management command with exit status 1 and the message on stderr.
"""

from __future__ import annotations


class DevError(Exception):
    """Base of every toolfront_dev error."""


class TemplateError(DevError):
    """template.yaml is unreadable or uses a feature the local stack does not emulate."""


class RouteConflictError(TemplateError):
    """Two HttpApi events declare the same method and path (API Gateway would refuse the deploy)."""


class StackError(DevError):
    """The local stack could not start or configure one of its servers."""


class SeedError(DevError):
    """A ``--seed`` file is unreadable, or entries of it are invalid (each one named)."""


class CommandError(DevError):
    """A management command cannot do its work: no reachable stack, a missing output, an unknown key."""
