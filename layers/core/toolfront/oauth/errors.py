"""OAuth's own error answers (RFC 6749 section 5.2, RFC 7591 section 3.2.2): ``error`` and
``error_description`` as JSON, or, where the redirect URI is trusted, as query parameters on it."""

from __future__ import annotations


class OAuthError(Exception):
    """An OAuth refusal. ``status`` is the HTTP status when it is answered as JSON."""

    def __init__(
        self, error: str, description: str, status: int = 400, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status
        self.headers = headers or {}

    def to_dict(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


class RedirectableError(OAuthError):
    """A refusal of an authorization request whose client and redirect URI are known and registered:
    the person's browser goes back to the client with ``error=`` (RFC 6749 section 4.1.2.1)."""

    def __init__(self, error: str, description: str, *, redirect_uri: str, state: str | None) -> None:
        super().__init__(error, description)
        self.redirect_uri, self.state = redirect_uri, state
