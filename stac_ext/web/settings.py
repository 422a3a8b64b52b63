"""The web face's settings: its OIDC client and where the built front-end files are."""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

_CHECKOUT = Path(__file__).resolve().parents[2]


class WebSettings(BaseSettings):
    """Web face"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    web_client_id: str = "geocatalog-web"
    """The web face's OIDC client: the service signs browsers in with it (code flow + PKCE,
    the code traded server-side; redirect `{BASE_URL}/ui/session/callback`), for our pages
    and STAC Browser; its tokens must name the data and process clients in `aud` (the local
    issuer's do)."""
    stac_browser_dir: Path = _CHECKOUT / ".web" / "stac-browser"
    """The STAC Browser build `make web` makes (`dist/`); missing: `/browser/` answers 503
    saying how to build it."""
    swagger_ui_dir: Path = _CHECKOUT / ".web" / "swagger-ui"
    """Swagger UI's files (`make web`), for both APIs' documentation pages."""
    charts_dir: Path = _CHECKOUT / ".web" / "echarts"
    """Apache ECharts' files (`make web`), the data explorer's charts."""
