"""The process definition: inputs with the shared sections (S3, resources, display), and
the outputs it returns."""

from __future__ import annotations

from catalogs_ext import CATALOG_PATH
from process_api import DISPLAY, RESOURCES, S3, Process
from stac_ext.platform.access import VISIBILITIES

_ITEM_REF = {"type": "object", "required": ["id", "collection", "url"],
             "properties": {"id": {"type": "string"}, "collection": {"type": "string"},
                            "url": {"type": "string"}, "file": {"type": "string"}}}

PUBLISH_DATASET = Process(
    id="publish-dataset", version="1.0.0", title="Publish a dataset",
    description="Describes the NetCDF, Zarr, Parquet and CSV files under an S3 prefix (or "
                "an HTTPS URL) and publishes each variable with a CF standard_name as a STAC "
                "item of the collection climate_forecast-<standard_name>, owned by the caller; a "
                "known name whose collection does not exist yet waits in its proposal.",
    inputs={
        "type": "object", "additionalProperties": False, "required": ["source"],
        "properties": {
            # no user name or password: the job's record and the items keep the source
            "source": {"type": "string", "pattern": "^(s3://[^/@]+(/.*)?|https?://[^/?#@]+"
                                                    "([/?#].*)?)$",
                       "description": "s3://bucket/prefix, or an https URL of one file; "
                                      "without a user name or password"},
            "catalog": {"type": "string", "pattern": CATALOG_PATH,
                        "description": "path of a catalog of yours to link the items into"},
            "visibility": {"type": "string", "enum": list(VISIBILITIES),
                           "default": "public",
                           "description": "who reads the items: anyone, you (and "
                                          "administrators), or the members of the job's "
                                          "project"},
            "s3": S3, "resources": RESOURCES, "display": DISPLAY,
        },
    },
    outputs={
        "type": "object", "required": ["created", "updated", "skipped", "warnings"],
        "properties": {
            "created": {"type": "array", "items": _ITEM_REF},
            "updated": {"type": "array", "items": _ITEM_REF},
            "held": {"type": "array", "items": {
                "type": "object", "required": ["id", "collection", "proposal"],
                "properties": {"id": {"type": "string"}, "collection": {"type": "string"},
                               "file": {"type": "string"}, "proposal": {"type": "string"}},
                "description": "items of a known standard name whose collection does not "
                               "exist yet: kept, read by you only, in the collection's "
                               "proposal until an administrator decides it"}},
            "skipped": {"type": "array", "items": {"type": "object", "properties": {
                "file": {"type": "string"}, "variable": {"type": "string"},
                "reason": {"type": "string"}}}},
            "warnings": {"type": "array", "items": {"type": "object", "properties": {
                "file": {"type": "string"}, "message": {"type": "string"}}}},
            "collectionsCreated": {"type": "array", "items": {"type": "string"}},
            "catalog": {"type": ["string", "null"]},
        },
    },
    entry="stac_ext.publish.run:publish", database=True, network=True,
    publishes={"visibility": "visibility", "catalog": "catalog"},
)

#: What publishes a deployed process's job's files, when its request asks (`publish`): run
#: by the worker after the job, in a sandbox of its own, as the job's caller. Not offered
#: as a process: the job engine runs it.
PUBLISH_RESULTS = Process(
    id="publish-results", version="1.0.0", title="Publish a job's results",
    description="Describes a job's NetCDF and Parquet files and publishes each variable "
                "with a CF standard_name as an item, with the job's lineage.",
    inputs={"type": "object", "required": ["files", "lineage"]},
    outputs={"type": "object", "required": ["created", "updated", "skipped", "warnings"]},
    entry="stac_ext.publish.results:publish_results", database=True, network=True,
)
