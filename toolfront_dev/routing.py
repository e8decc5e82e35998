"""Route matching as API Gateway HTTP APIs do it: the most specific route wins.

A literal segment beats ``{param}``, which beats a greedy ``{param+}``; a named method beats ``ANY``;
``$default`` catches what nothing else matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toolfront_dev.errors import RouteConflictError
from toolfront_dev.template import DEFAULT_ROUTE, Route

_LITERAL, _PARAM, _GREEDY = 0, 1, 2


@dataclass(frozen=True, slots=True)
class RouteMatch:
    """The route a request reached and the path parameters it carries (URL-decoded)."""

    route: Route
    path_parameters: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class _Pattern:
    route: Route
    segments: tuple[str, ...]
    kinds: tuple[int, ...]

    @classmethod
    def of(cls, route: Route) -> _Pattern:
        if route.path == DEFAULT_ROUTE:
            return cls(route, (), ())
        segments = tuple(route.path.split("/")[1:])
        kinds = tuple(
            _GREEDY if s.endswith("+}") else _PARAM if s.startswith("{") else _LITERAL for s in segments
        )
        return cls(route, segments, kinds)

    @property
    def is_default(self) -> bool:
        return self.route.path == DEFAULT_ROUTE

    @property
    def conflict_key(self) -> tuple[str, tuple[str, ...]]:
        # /items/{id} and /items/{sku} are the same route to API Gateway: only the shape counts.
        shape = tuple(
            s if k == _LITERAL else "{}" if k == _PARAM else "{+}"
            for s, k in zip(self.segments, self.kinds, strict=True)
        )
        return (self.route.method, (DEFAULT_ROUTE,) if self.is_default else shape)

    @property
    def specificity(self) -> tuple[bool, bool, tuple[int, ...], bool]:
        """Sorts the most specific route first when several match one request."""
        return (self.is_default, _GREEDY in self.kinds, self.kinds, self.route.method == "ANY")

    def match(self, method: str, segments: list[str]) -> dict[str, str] | None:
        if self.route.method not in ("ANY", method):
            return None
        if self.is_default:
            return {}
        greedy = bool(self.kinds) and self.kinds[-1] == _GREEDY
        fixed = len(self.segments) - 1 if greedy else len(self.segments)
        if (len(segments) <= fixed) if greedy else (len(segments) != fixed):
            return None
        parameters: dict[str, str] = {}
        for pattern, kind, value in zip(self.segments[:fixed], self.kinds, segments, strict=False):
            if kind == _LITERAL and pattern != value:
                return None
            if kind == _PARAM:
                if not value:
                    return None
                parameters[pattern[1:-1]] = value
        if greedy:
            rest = "/".join(segments[fixed:])
            if not rest:
                return None
            parameters[self.segments[-1][1:-2]] = rest
        return parameters


class RouteTable:
    """Every route of the template, checked for conflicts when built."""

    def __init__(self, routes: Iterable[Route]) -> None:
        """Index the routes.

        Raises:
            RouteConflictError: two routes share a method and a path shape, which API Gateway refuses.
        """
        self._patterns: list[_Pattern] = []
        seen: dict[tuple[str, tuple[str, ...]], Route] = {}
        for route in routes:
            pattern = _Pattern.of(route)
            previous = seen.setdefault(pattern.conflict_key, route)
            if previous is not route:
                raise RouteConflictError(
                    f"route {route.route_key!r} of {route.function_id} clashes with "
                    f"{previous.route_key!r} of {previous.function_id}"
                )
            self._patterns.append(pattern)
        self._patterns.sort(key=lambda p: p.specificity)

    @property
    def routes(self) -> tuple[Route, ...]:
        """The routes, most specific first."""
        return tuple(pattern.route for pattern in self._patterns)

    def match(self, method: str, path: str) -> RouteMatch | None:
        """The most specific route for ``method`` and the decoded ``path``, or None (a 404)."""
        segments = path.split("/")[1:] if path.startswith("/") else [path]
        for pattern in self._patterns:
            parameters = pattern.match(method.upper(), segments)
            if parameters is not None:
                return RouteMatch(route=pattern.route, path_parameters=parameters)
        return None
