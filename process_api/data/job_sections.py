"""The sections every deployed process's inputs take besides its own: the job's resources,
the caller's object storage, where its files go, and whether they are published."""

from __future__ import annotations

from typing import Any

from process_api.processes.sections import RESOURCES, S3
from stac_ext.platform.access import VISIBILITIES

RESULTS: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["prefix"],
    "description": "Where the job's files go: a prefix in the caller's object storage "
                   "(written with `s3`'s credentials); omitted: the service's results store.",
    "properties": {"prefix": {"type": "string", "maxLength": 1024,
                              "pattern": r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/\S*)?$"}},
}
PUBLISH: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "description": "Publish the job's NetCDF, Zarr and Parquet files that carry CF metadata "
                   "as items of the catalog (as publish-dataset does), with their lineage.",
    "properties": {
        "catalog": {"type": "string", "maxLength": 1024,
                    "pattern": r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$",
                    "description": "path of a catalog of yours to link the items into"},
        "visibility": {"enum": list(VISIBILITIES),
                       "description": "who reads the items; default: you (`private`), or "
                                      "the job's project when it runs for one"}},
}
#: name -> schema: no input of a deployed process may take these names.
JOB_SECTIONS: dict[str, Any] = {"resources": RESOURCES, "s3": S3, "results": RESULTS,
                                "publish": PUBLISH}
