"""PKCE (RFC 7636): what a verifier and a challenge look like, and the S256 challenge of a verifier.

The facade checks the challenge (``/oauth/authorize``) and the verifier (``/oauth/token``) before
Cognito sees them, and the local stack's managed login checks the pair as Cognito does.
"""

from __future__ import annotations

import base64
import hashlib
import re

#: A verifier, and an S256 challenge alike: 43-128 unreserved characters (RFC 7636 sections 4.1, 4.2).
PKCE_VALUE = re.compile(r"[A-Za-z0-9._~-]{43,128}")


def is_pkce_value(text: str) -> bool:
    return PKCE_VALUE.fullmatch(text) is not None


def s256_challenge(verifier: str) -> str:
    """``BASE64URL(SHA256(verifier))`` without padding (RFC 7636 section 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
