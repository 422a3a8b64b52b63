"""Every HTML answer of the service protected as a page: no framing by another site
(`frame-ancestors 'none'`, `X-Frame-Options: DENY`), no content sniffing, and a
Content-Security-Policy: the response's own where it sets one (our pages, STAC Browser,
the API documentation, the sign-in form), else a strict one (no script at all). The web
face's negotiation, which sees every answer go out, applies it."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders

#: For HTML that sets no policy of its own (an error page, a redirect's body).
STRICT = ("default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; "
          "base-uri 'none'; form-action 'self'")


def protect(headers: MutableHeaders) -> None:
    """An HTML answer's headers, protected as a page."""
    headers.setdefault("Content-Security-Policy", STRICT)
    headers["X-Frame-Options"] = "DENY"
    headers["X-Content-Type-Options"] = "nosniff"
