"""moto's Cognito, made quick to set up: one signing key for every user pool.

moto imports the same signing key (a fixed JWK file it ships) anew for every ``CreateUserPool``,
and the RSA checks of that import cost 0.1-0.5 s per pool on this machine: a tenth of the suite's
time went there. The key is imported once and shared; moto uses it only to sign tokens, never
changes it, and every pool had the same key already.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def share_the_signing_key() -> None:
    from moto.cognitoidp import models

    if isinstance(models.jwk, SimpleNamespace):  # done already
        return
    key = models.jwk.RSAKey.import_key(models.load_resource("cognitoidp/resources/jwks-private.json"))

    class RSAKey:
        @staticmethod
        def import_key(*_: Any, **__: Any) -> Any:
            return key

    models.jwk = SimpleNamespace(RSAKey=RSAKey)  # the only use of jwk in moto's models
