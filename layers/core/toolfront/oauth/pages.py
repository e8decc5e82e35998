"""The facade's two HTML pages: the consent page (Allow / Deny) and the page of a request that cannot
go back to its client. Everything shown is escaped; a registered client's name is the client's own
claim, so the page says so and shows the host the code would be sent to."""

from __future__ import annotations

from html import escape

from toolfront.oauth.authorize import ConsentPage

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}"
    "code{background:#f2f2f2;padding:0 .2rem}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem}"
    ".note{color:#555;font-size:.9rem}"
)


def consent_page(page: ConsentPage, action: str) -> str:
    """Allow or deny the client access to the API as the person about to sign in."""
    who = (
        f"published at <code>{escape(page.verified_host)}</code>"
        if page.verified_host
        else "a name the application chose itself, not checked"
    )
    scopes = "".join(f"<li><code>{escape(s)}</code></li>" for s in page.scopes) or "<li>every tool scope</li>"
    return _document(
        "Allow access to toolfront?",
        f"<h1>Allow access to toolfront?</h1>"
        f"<p><strong>{escape(page.client_name)}</strong> ({who}) asks to use these tools on your behalf:</p>"
        f"<ul>{scopes}</ul>"
        f"<p>After you sign in, the application at <code>{escape(page.redirect_host)}</code> "
        "receives the access. "
        "Allow only if you started this from that application.</p>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="consent_id" value="{escape(page.consent_id)}">'
        '<button type="submit" name="decision" value="allow">Allow and sign in</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></form>'
        '<p class="note">You can revoke access later by signing out of the application.</p>',
    )


def error_page(title: str, description: str) -> str:
    return _document(title, f"<h1>{escape(title)}</h1><p>{escape(description)}</p>")


def _document(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{_STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )
