"""``.toolfront/dev.json``: what a running local stack tells the CLI's ``--local`` about itself."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEV_JSON = Path(".toolfront") / "dev.json"


@dataclass(frozen=True, slots=True)
class DevInfo:
    """What ``.toolfront/dev.json`` records for the CLI's ``--local``."""

    api_url: str
    moto_endpoint: str
    region: str
    stage: str
    tables: Mapping[str, str]
    user_pools: Mapping[str, str] = field(default_factory=dict)
    user_pool_clients: Mapping[str, str] = field(default_factory=dict)
    state_machines: Mapping[str, str] = field(default_factory=dict)
    outbox: str = ""
    # The local managed login (``<api_url>/_cognito``), the facade's TOOLFRONT_COGNITO_DOMAIN_URL;
    # empty without a user pool.
    managed_login_url: str = ""

    def to_json(self) -> dict[str, Any]:
        """The JSON document, keys in the documented order."""
        return {
            "api_url": self.api_url,
            "moto_endpoint": self.moto_endpoint,
            "region": self.region,
            "stage": self.stage,
            "tables": dict(self.tables),
            "user_pools": dict(self.user_pools),
            "user_pool_clients": dict(self.user_pool_clients),
            "managed_login_url": self.managed_login_url,
            "state_machines": dict(self.state_machines),
            "outbox": self.outbox,
        }


def write_dev_json(path: Path, info: DevInfo) -> None:
    """Write dev.json atomically, so a CLI reading it never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, suffix=".tmp", delete=False, encoding="utf-8"
    ) as out:
        json.dump(info.to_json(), out, indent=2)
        out.write("\n")
    os.replace(out.name, path)
