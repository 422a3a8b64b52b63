"""The web face: STAC Browser at `/browser/`, our Jinja2 pages at `/ui/`, the HTML landing
page, and the content negotiation that sends browsers to them.

Pages read through the public APIs (in-process HTTP) and act in the browser with the
signed-in user's bearer token, so every rule and every error is the APIs' own. Of ours,
imports the platform only; it speaks to the APIs over HTTP.

Third-party imports: `attr`, `fastapi`, `httpx`, `markupsafe`, `pydantic_settings`,
`stac_fastapi`, `starlette`.
"""
