"""All geocatalog settings, read once from the environment by the composition root.

Each concern declares its own class beside the code it configures (`database.settings`,
`auth.settings`, `data_api.settings`, ...); `Settings` is all of them at once, so one
object is read and each part is handed the settings of its concern. Every variable is the
upper-case name of its field, flat (`DB_TIMEOUT`, not `DATABASE__TIMEOUT`). The process
API's are its own (`process_api.settings`).
"""

from __future__ import annotations

from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from process_api import OutboundSettings, ProcessSettings
from stac_ext.content.settings import ContentSettings
from stac_ext.data_api.settings import (
    CATALOG_TREE,
    HTML,
    PYTHON_EXAMPLE,
    DataApiSettings,
)
from stac_ext.explorer.settings import ExplorerSettings
from stac_ext.governance.settings import GovernanceSettings
from stac_ext.platform.auth.settings import AuthSettings
from stac_ext.platform.database.settings import DatabaseSettings
from stac_ext.platform.folder_file import FolderFile
from stac_ext.platform.service.settings import ServiceSettings
from stac_ext.platform.sessions.settings import SessionSettings
from stac_ext.platform.telemetry.settings import TelemetrySettings
from stac_ext.publish.settings import PublishSettings
from stac_ext.subscriptions.settings import SubscriptionSettings
from stac_ext.web.settings import WebSettings

__all__ = ["CATALOG_TREE", "CONCERNS", "HTML", "PYTHON_EXAMPLE", "ProcessSettings",
           "Settings"]

#: The demo's S3 server (`make demo-s3`: `geocatalog demo-s3`, any key), where the demo
#: items' data is.
DEMO_S3 = {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "demo",
           "secretAccessKey": "demo", "defaultRegion": "us-east-1"}

#: The settings of each concern, in the order the settings reference shows them.
CONCERNS: tuple[type[BaseSettings], ...] = (
    ServiceSettings, DatabaseSettings, AuthSettings, DataApiSettings, ContentSettings,
    ExplorerSettings, GovernanceSettings, PublishSettings, ProcessSettings, OutboundSettings,
    SubscriptionSettings, TelemetrySettings, WebSettings, SessionSettings)


class Settings(PublishSettings, ContentSettings, ExplorerSettings, GovernanceSettings,
               DatabaseSettings, AuthSettings, ProcessSettings, SubscriptionSettings,
               TelemetrySettings, WebSettings, SessionSettings):
    """Every setting of the service (`PublishSettings` brings the data API's and the
    service's)."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore", hide_input_in_errors=True,
                                      ignored_types=(FolderFile,))

    # What crosses concerns is derived here, where every concern is known.

    @property
    def local_issuer(self) -> str | None:
        """The development issuer's identifier, when no identity provider is configured."""
        if self.oidc_issuer or self.jwks_url:
            return None
        return f"{self.service_url}/auth"

    @property
    def demo_on_start(self) -> bool:
        """Whether `serve` loads the demo set into an empty catalog (`LOAD_DEMO_DATA`,
        else only into the embedded cluster)."""
        return self.load_demo_data if self.load_demo_data is not None \
            else not self.database_url

    @property
    def results_store_url(self) -> str:
        """The results store: `RESULTS_STORE`, else the data dir's `results` folder."""
        return self.results_store or (self.data_dir / "results").as_uri()

    @property
    def assets_s3_section(self) -> dict[str, Any]:
        """How the service reads `s3://` assets: `ASSETS_S3`, else the demo's S3 server with
        the embedded database (the demo items' data is there), else anonymous access."""
        if self.assets_s3 is not None:
            return self.assets_s3
        return dict(DEMO_S3) if self.embedded else {}

    @property
    def service_url(self) -> str:
        """The service's public root: `BASE_URL`, else where `serve` listens."""
        if self.base_url:
            return self.base_url
        host = "127.0.0.1" if self.geocatalog_host in ("0.0.0.0", "::", "") \
            else self.geocatalog_host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.geocatalog_port}"

    # the service's own files in DATA_DIR
    issuer_key_file = FolderFile("data_dir", "issuer-key.json")
    issuer_url_file = FolderFile("data_dir", "issuer-url",
                                 "Where `serve` notes the development issuer's URL, for "
                                 "`geocatalog token`.")
    session_key_file = FolderFile("data_dir", "session.key",
                                  "The browser sessions' key where SESSION_KEY is unset.")
    job_secrets_key_file = FolderFile("data_dir", "job-secrets.key")
    webhook_signing_key_file = FolderFile("data_dir", "webhook-signing.key")
