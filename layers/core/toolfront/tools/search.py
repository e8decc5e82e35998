"""Finding tools by what they do: BM25 over each tool's words, among the tools the caller may call.

Written here rather than taken from a library: the index is a few dictionaries built once per
process over a few thousand short documents, and the measured candidates (rank-bm25 needs NumPy;
the one embedding model on PyPI costs far more than a cold start allows, anchors-round3.md section
1) would cost more to load than this costs to run (bench/: index and query figures).

A tool's words are its name, title, description, ``search_hint`` and its input's property names and
descriptions, weighted so a name or a hint counts more than a word of the description. Words are
split at ``snake_case``, ``camelCase``, dots and dashes, folded to lower case and to a simple
singular, and a small table of synonyms lets a paraphrase find the tool ("remove" finds delete).
What a caller may see is decided by ``auth.access.may_call``, the rule listing uses.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfront.auth.access import may_call
from toolfront.tools.rules import mcp_name

if TYPE_CHECKING:
    from toolfront.auth.actors import Actor

K1, B = 1.2, 0.75  # BM25's usual constants
#: How much each part of a tool counts: a word of the name as three of the description.
WEIGHTS = {"name": 3, "title": 2, "hint": 2, "description": 1, "inputs": 1}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\b|[0-9_])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
    }
)
#: Words an agent may say for the words tools are named with (each group stands for its first word).
_SYNONYMS = (
    ("delete", "remove", "erase", "drop", "destroy"),
    ("create", "add", "new", "make", "insert", "register"),
    ("list", "all", "browse", "enumerate", "show"),
    ("get", "fetch", "read", "retrieve", "look", "lookup", "find", "view"),
    ("set", "change", "update", "edit", "modify"),
    ("price", "cost", "amount", "pricing"),
    ("discount", "reduce", "lower", "markdown", "sale", "cheaper"),
    ("export", "download", "dump", "backup"),
    ("label", "tag", "sticker"),
    ("product", "item", "article", "sku", "good"),
    ("cancel", "withdraw", "abort", "revoke"),
    ("approval", "confirmation", "approve", "confirm", "held"),
    ("subscription", "subscribe", "newsletter", "signup"),
    ("actor", "identity", "whoami", "caller", "am"),
    ("tool", "operation", "capability", "function"),
)
_CANONICAL = {word: group[0] for group in _SYNONYMS for word in group}


def words(text: str) -> list[str]:
    """The index terms of ``text``: split, lower-cased, singular, synonyms folded, stop words out."""
    terms = []
    for raw in _WORD.findall(text):
        term = _TERMS.get(raw, _UNSEEN)
        if term is _UNSEEN:
            term = _TERMS[raw] = _term(raw)
        if term is not None:
            terms.append(term)
    return terms


# Most words recur (a registry of 2,000 tools has some 94,000 words and 600 distinct terms): each
# raw word's term is worked out once per process. Bounded: a query's words are kept only while few.
_TERMS: dict[str, str | None] = {}
_UNSEEN = ""
_TERMS_KEPT = 50_000


def _term(raw: str) -> str | None:
    if len(_TERMS) > _TERMS_KEPT:
        _TERMS.clear()
    word = _singular(raw.lower())
    if not word or word in _STOP:
        return None
    return _CANONICAL.get(word, word)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tool_words(tool: Mapping[str, Any]) -> dict[str, int]:
    """A tool's terms with their weights (a manifest entry)."""
    found: dict[str, int] = {}
    schema = tool.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    inputs = " ".join(
        f"{name} {spec.get('description', '') if isinstance(spec, Mapping) else ''}"
        for name, spec in (properties.items() if isinstance(properties, Mapping) else ())
    )
    parts = (
        (WEIGHTS["name"], str(tool.get("name", ""))),
        (WEIGHTS["title"], str(tool.get("title") or "")),
        (WEIGHTS["hint"], str(tool.get("search_hint") or "")),
        (WEIGHTS["description"], str(tool.get("description") or "")),
        (WEIGHTS["inputs"], inputs),
    )
    for weight, text in parts:
        for term in words(text):
            found[term] = found.get(term, 0) + weight
    return found


@dataclass(frozen=True, slots=True)
class Hit:
    tool: Mapping[str, Any]
    score: float


class ToolIndex:
    """BM25 over a fixed list of tools (manifest entries), built once."""

    def __init__(self, tools: Iterable[Mapping[str, Any]]) -> None:
        self._tools = list(tools)
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths: list[int] = []
        for position, tool in enumerate(self._tools):
            terms = tool_words(tool)
            lengths.append(sum(terms.values()))
            for term, count in terms.items():
                postings[term].append((position, count))
        total = len(self._tools)
        average = (sum(lengths) / total) if total else 1.0
        # BM25's length normalisation of each tool, worked out once
        self._norms = [K1 * (1 - B + B * length / average) for length in lengths]
        self._postings = dict(postings)
        self._idf = {
            term: math.log(1 + (total - len(found) + 0.5) / (len(found) + 0.5))
            for term, found in self._postings.items()
        }

    def search(self, query: str, visible: Callable[[Mapping[str, Any]], bool], limit: int = 10) -> list[Hit]:
        """The ``limit`` best matches of ``query`` among the tools ``visible`` admits, best first
        (ties by name); a tool the caller may not call is never shown."""
        scores: dict[int, float] = defaultdict(float)
        norms = self._norms
        for term in set(words(query)):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for position, count in self._postings[term]:
                scores[position] += idf * count * (K1 + 1) / (count + norms[position])
        tools = self._tools
        hits: list[Hit] = []
        remaining = sorted(scores.items(), key=lambda hit: -hit[1]) if len(scores) <= 4 * limit else None
        if remaining is None:  # many matches: only the best few are ordered, a visible few at a time
            remaining = heapq.nsmallest(4 * limit, scores.items(), key=lambda hit: -hit[1])
            if sum(1 for position, _ in remaining if visible(tools[position])) < limit:
                remaining = sorted(scores.items(), key=lambda hit: -hit[1])
        ranked = sorted(remaining, key=lambda hit: (-hit[1], str(tools[hit[0]]["name"])))
        for position, score in ranked:
            if visible(tools[position]):
                hits.append(Hit(tools[position], round(score, 4)))
                if len(hits) == limit:
                    break
        return hits


def found_tools(
    tools: list[dict[str, Any]], query: str, actor: Actor, limit: int = 10
) -> list[dict[str, Any]]:
    """The tools of ``tools`` matching ``query`` best among those ``actor`` may call now (listing's
    rule), as ``system.search_tools`` answers them."""

    def visible(tool: Mapping[str, Any]) -> bool:
        return may_call(
            audience=tool["audience"], scope=tool["scope"], permission=tool["permission"], actor=actor
        )

    return [
        {
            "name": hit.tool["name"],
            "mcp_name": mcp_name(str(hit.tool["name"])),
            "title": hit.tool["title"],
            "description": hit.tool["description"],
            "score": hit.score,
        }
        for hit in index_of(tools).search(query, visible, limit)
    ]


_built: list[tuple[list[dict[str, Any]], ToolIndex]] = []  # the one registry a process searches


def index_of(tools: list[dict[str, Any]]) -> ToolIndex:
    """The index of ``tools`` (a process's registry, which never changes in one): built on the
    first search, kept for the process."""
    if not _built or _built[0][0] is not tools:
        _built[:] = [(tools, ToolIndex(tools))]
    return _built[0][1]
