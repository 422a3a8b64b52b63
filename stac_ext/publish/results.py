"""The publishing of a job's files (`PUBLISH_RESULTS`): each NetCDF or Parquet file the
job wrote, described by publish-dataset's inspector and written by its item rules (one code
path), its items carrying the job's lineage: STAC's `processing` fields, `derived_from`
links to the items the job read, links to the job and its provenance."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import asyncpg

from process_api import HAS_PROVENANCE, JOB_DATABASE_URL, Context
from stac_ext.content.quicklook import with_thumbnail
from stac_ext.data_api.item_rules import ItemRules
from stac_ext.data_api.urls import api_root
from stac_ext.publish.items import build_items, file_name
from stac_ext.publish.run import describe, may_create_collections, report
from stac_ext.publish.settings import PublishSettings
from stac_ext.publish.writer import Outcome, Writer

PROCESSING = "https://stac-extensions.github.io/processing/v1.2.0/schema.json"


def with_lineage(item: dict[str, Any], lineage: dict[str, Any]) -> dict[str, Any]:
    """The item with the job's lineage."""
    software = f"{lineage['process']}"
    version = str(lineage.get("version") or "")
    if lineage.get("revision") is not None:
        version = f"{version} (revision {lineage['revision']})".strip()
    sources = lineage.get("derived_from") or []
    text = f"Made by the process {software} {version} (job {lineage['job']})"
    if sources:
        text += f" from {len(sources)} item{'s' if len(sources) != 1 else ''}"
    properties = {**item["properties"], "processing:lineage": text + ".",
                  "processing:software": {software: version},
                  "processing:datetime": lineage["datetime"]}
    links = [*item.get("links", []),
             *({"rel": "derived_from", "href": url, "type": "application/geo+json",
                "title": f"Derived from {url.rstrip('/').rsplit('/', 1)[-1]}"}
               for url in sources),
             {"rel": "related", "href": lineage["job"], "type": "application/json",
              "title": "The job that made this item"},
             {"rel": HAS_PROVENANCE, "href": lineage["provenance"],
              "type": "application/json", "title": "The job's provenance (W3C PROV)"}]
    return {**item, "stac_extensions": [*item.get("stac_extensions", []), PROCESSING],
            "properties": properties, "links": links}


def publish_results(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    settings = PublishSettings()  # the job's environment: no secret of the service
    return asyncio.run(_publish(inputs, context, settings,
                                may_create_collections(settings, context)))


async def _publish(inputs: dict[str, Any], context: Context, settings: PublishSettings,
                   may_create: bool) -> dict[str, Any]:
    import fsspec

    local = fsspec.filesystem("file")
    api = api_root(context.service_url or settings.base_url or "/", settings.prefix_path)
    catalog = inputs.get("catalog")
    result: dict[str, Any] = {"created": [], "updated": [], "held": [], "skipped": [],
                              "warnings": [], "collectionsCreated": [], "catalog": catalog}
    conn = await asyncpg.connect(os.environ[JOB_DATABASE_URL])
    try:
        writer = Writer(conn, context.owner, may_create, ItemRules.from_settings(settings),
                        context.project, inputs.get("visibility", "private"))
        if catalog:
            await writer.catalog_pk(catalog)  # fail early: before any write
        for file in inputs["files"]:
            href = file["href"]
            try:
                description = describe(local, file["path"], href)
            except Exception as e:  # a file the job wrote that cannot be read: said
                result["warnings"].append({"file": href, "message": f"could not read "
                                           f"{file_name(href)}: {type(e).__name__}"})
                continue
            if description is None:
                continue
            items, skips = build_items(description, None)
            result["skipped"] += [{"file": href, "variable": s.variable, "reason": s.reason}
                                  for s in skips]
            lineaged = [(c, with_thumbnail(with_lineage(i, inputs["lineage"]), c, api))
                        for c, i in items]
            outcome = await writer.write(lineaged, catalog) if items else Outcome()
            report(result, outcome, api, href)
    finally:
        await conn.close()
    return result
