"""Every error the local development stack raises, under one base class.

DevError
├── TemplateError          template.yaml is unreadable or declares what the local stack cannot serve
│   └── RouteConflictError two HttpApi events share a method and a path
└── StackError             the local stack cannot start (a port in use, moto refusing a call)

These never reach an API caller: they stop ``toolfront dev`` before it serves anything.
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
