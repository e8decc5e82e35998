"""The large-registry bench's tools: 2,000 generated manifest entries across 50 families, its callers.

Deterministic (seeded ``random.Random``): the same tools every run and on every machine. Made of the
words of ``large_vocabulary``: each family names 4 resources of its domain; each resource gets 5
core verbs (get, list, create, update, delete) and 5 of the 22 other verbs (chosen per family), so
every family has 40 tools named ``<family>.<verb>_<noun>``, titled, described in 1-3 sentences,
with an input schema of 1-6 described properties. The read tools of 8 customer-facing families are
public (88 tools); the rest are admin tools scoped ``<family>.<resource>:<read|write>`` and needing
the family's permission. About a fifth carry a ``search_hint``; some reads declare an output
schema; admin deletes and merges are dangerous.

The entries are ``Tool.new(...).describe()``, with ``module``, as ``toolfront manifest`` writes them,
sorted by name as ``all_tools()`` serves them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from large_vocabulary import FAMILIES, INPUTS, VERBS, Family, Verb

N_FAMILIES = 50
RESOURCES_PER_FAMILY = 4
EXTRA_VERBS = 5  # per family, beside the 5 core verbs
N_TOOLS = N_FAMILIES * RESOURCES_PER_FAMILY * (5 + EXTRA_VERBS)  # 2,000

CORE_VERBS = ("get", "list", "create", "update", "delete")
OTHER_VERBS = tuple(v for v in VERBS if v not in CORE_VERBS)
PUBLIC_VERBS = frozenset({"get", "list", "search", "count", "preview"})  # reads of a public family


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def _words(resource: str, domain: str) -> dict[str, str]:
    """What a verb's texts say: the resource as words, as it is named in tool names, the domain."""
    return {
        "noun": resource.replace("_", " "),
        "a_noun": ("an " if resource[0] in "aeiou" else "a ") + resource.replace("_", " "),
        "nouns": plural(resource).replace("_", " "),
        "noun_name": resource,
        "nouns_name": plural(resource),
        "domain": domain,
    }


def _schema(verb: Verb, resource: str, rng: random.Random) -> dict[str, Any]:
    """1-6 described properties: the verb's first input always, then some of the rest in order."""
    first, *rest = verb.inputs
    chosen = [first, *(kind for kind in rest if rng.random() < 0.7)][:6]
    properties: dict[str, Any] = {}
    for kind in chosen:
        name, spec = INPUTS[kind]
        spec = json.loads(json.dumps(spec))  # a dict of its own, as declared in code
        spec["description"] = spec["description"].format(**_words(resource, ""))
        properties[name.format(resource=resource)] = spec
    required = [
        n for n, kind in zip(properties, chosen, strict=True) if kind in ("id", "query", "url", "name")
    ]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _output_schema(resource: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {resource: {"type": "object"}, "next_cursor": {"type": ["string", "null"]}},
        "required": [resource],
    }


def tool_fields() -> list[dict[str, Any]]:
    """The ``Tool.new`` fields of every generated tool (handler included), family by family."""
    found = []
    for f, family in enumerate(FAMILIES):
        rng = random.Random(f"family-{f}")
        verbs = (*CORE_VERBS, *rng.sample(OTHER_VERBS, EXTRA_VERBS))
        for resource in family.resources:
            for verb in verbs:
                found.append(_fields(family, resource, VERBS[verb], rng))
    return found


def _fields(family: Family, resource: str, verb: Verb, rng: random.Random) -> dict[str, Any]:
    words = _words(resource, family.domain)
    named = plural(resource) if verb.plural else resource
    said = [verb.sentences[0], *rng.sample(verb.sentences[1:], rng.randint(0, len(verb.sentences) - 1))]
    public = family.public_reads and verb.name in PUBLIC_VERBS
    fields: dict[str, Any] = {
        "name": f"{family.name}.{verb.name}_{named}",
        "module": family.name,
        "audience": "public" if public else "admin",
        "title": verb.title.format(**words).capitalize(),
        "description": " ".join(s.format(**words) for s in said),
        "input_schema": _schema(verb, resource, rng),
        "annotations": {
            "read_only": verb.read_only,
            "idempotent": verb.idempotent,
            "destructive": verb.destructive,
            "open_world": verb.open_world,
        },
        "handler": _handler,
    }
    if not public:
        fields["scope"] = f"{family.name}.{resource}:{'read' if verb.read_only else 'write'}"
        fields["permission"] = family.name
        if verb.name in ("delete", "merge"):
            fields["danger"] = "always"
        elif not verb.read_only and rng.random() < 0.2:
            fields["cost"] = rng.randint(2, 5)
    if rng.random() < 0.2:
        hints = ", ".join(rng.sample(family.hints, min(2, len(family.hints))))
        fields["search_hint"] = f"{verb.name} {words['noun']}: {hints}"
    if verb.read_only and rng.random() < 0.3:
        fields["output_schema"] = _output_schema(resource)
    if verb.name == "search" and rng.random() < 0.2:
        fields["always_load"] = True
    return fields


def _handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {"ok": True}


def manifest_entries(families: int = N_FAMILIES) -> list[dict[str, Any]]:
    """The first ``families`` families' tools as manifest entries (``describe()``), sorted by name."""
    from toolfront import Tool

    per_family = RESOURCES_PER_FAMILY * (5 + EXTRA_VERBS)
    tools = [Tool.new(**fields).describe() for fields in tool_fields()[: families * per_family]]
    return sorted(tools, key=lambda tool: str(tool["name"]))


def write_manifest(path: Path, families: int = N_FAMILIES) -> int:
    """Write the entries as a manifest document (what ``load_manifest`` reads); answer its size."""
    text = json.dumps({"tools": manifest_entries(families)})
    path.write_text(text, encoding="utf-8")
    return len(text)


# --- callers -------------------------------------------------------------------------------------


def admin_actor(families: Sequence[str] | None = None) -> Any:
    """A key holding ``<family>.*`` and the permission of every family (or of ``families``)."""
    from toolfront.auth.actors import Actor, ActorKind

    chosen = [f.name for f in FAMILIES] if families is None else list(families)
    return Actor(
        ActorKind.KEY,
        "bench-admin" if families is None else "bench-partial",
        principal="bench",
        scopes=frozenset(f"{family}.*" for family in chosen),
        permissions=frozenset(chosen),
    )


def anonymous_actor() -> Any:
    from toolfront.auth.actors import Actor, ActorKind

    return Actor(ActorKind.ANONYMOUS, "198.51.100.7")
