"""Offline JSON Schemas for the conformance tools (loaded by Python at start-up, as
`sitecustomize`, when this folder is on PYTHONPATH of a tool's process).

The tools fetch STAC and extension schemas from the internet, which is closed here. This
answers those URLs from local copies instead, for `requests` and `urllib` alike, and
refuses every other non-loopback address with an error naming it. It changes where
bytes come from, never what the tools check.

Local copies, first match wins:
- `$OFFLINE_SCHEMAS/<host>/<path>` (the data files kept in the repository);
- STAC 1.1.0 core and GeoJSON schemas from the installed pystac.
"""

from __future__ import annotations

import email.message
import io
import os
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _pystac_copy(host: str, path: str) -> Path | None:
    try:
        import pystac.validation
    except ImportError:
        return None
    root = Path(pystac.validation.__file__).parent / "jsonschemas"
    parts = path.strip("/").split("/")
    if host == "schemas.stacspec.org" and len(parts) >= 3:
        return root / "stac-spec" / parts[0] / parts[-1]
    if host == "geojson.org" and parts[:1] == ["schema"]:
        return root / "geojson" / parts[-1]
    return None


def local_copy(url: str) -> bytes:
    """The local bytes of a schema URL; OSError (named) when there is none."""
    parts = urlsplit(url)
    host, path = parts.hostname or "", parts.path
    candidates = [Path(os.environ.get("OFFLINE_SCHEMAS", "")) / host / path.lstrip("/"),
                  _pystac_copy(host, path)]
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            return candidate.read_bytes()
    raise OSError(f"offline: no local copy of {url} (add it under $OFFLINE_SCHEMAS/{host}"
                  f"{path})")


def _is_loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOOPBACK


class _OfflineHandler(urllib.request.BaseHandler):
    handler_order = 100  # before urllib's own HTTP(S) handlers

    def _open(self, req: urllib.request.Request) -> object:
        url = req.get_full_url()
        if _is_loopback(url):
            return None  # the next handler does real HTTP
        try:
            body = local_copy(url)
        except OSError as e:
            raise urllib.error.URLError(str(e)) from None
        headers = email.message.Message()
        headers["Content-Type"] = "application/json"
        return urllib.response.addinfourl(io.BytesIO(body), headers, url, 200)

    http_open = https_open = _open


urllib.request.install_opener(urllib.request.build_opener(_OfflineHandler()))

try:
    import requests
    from requests.adapters import BaseAdapter, HTTPAdapter
except ImportError:  # a tool without requests
    requests = None  # type: ignore[assignment]

if requests is not None:
    class _OfflineAdapter(BaseAdapter):
        def send(self, request, **kwargs):  # type: ignore[no-untyped-def]
            response = requests.Response()
            response.url = request.url
            response.request = request
            try:
                response._content = local_copy(request.url)
                response.status_code = 200
                response.headers["Content-Type"] = "application/json"
            except OSError as e:
                raise requests.ConnectionError(str(e), request=request) from None
            return response

        def close(self) -> None:
            pass

    _session_init = requests.Session.__init__

    def _offline_session_init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        _session_init(self, *args, **kwargs)
        self.mount("https://", _OfflineAdapter())
        self.mount("http://", _OfflineAdapter())
        for host in LOOPBACK - {"::1"}:
            self.mount(f"http://{host}", HTTPAdapter())

    requests.Session.__init__ = _offline_session_init  # type: ignore[method-assign]
