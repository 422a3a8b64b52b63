"""`publish-dataset`'s settings, read in the job's own process (whose environment holds no
secret of the service): the item rules and links of the data API, and who may create a
collection."""

from __future__ import annotations

from pydantic import Field

from stac_ext.data_api.settings import CommaSeparated, DataApiSettings
from stac_ext.platform.service.settings import ServiceSettings


class PublishSettings(DataApiSettings, ServiceSettings):
    """Publishing"""

    publish_collection_projects: CommaSeparated = Field(default_factory=list)
    """Projects whose publishing jobs make the missing collection of a known CF standard
    name at once (`*`: any job, personal ones too); empty (the default): none, the items
    wait in the collection's proposal for an administrator's decision."""
