"""The publishing of a job's files (`PUBLISH_RESULTS`): each NetCDF or Parquet file the
job wrote, described by publish-dataset's inspector and written by its item rules (one code
path), its items carrying the job's lineage: STAC's `processing` fields, `derived_from`
links to the items the job read, links to the job and its provenance."""

from __future__ import annotations

import functools
from typing import Any

from process_api import HAS_PROVENANCE, Context
from stac_ext.content.quicklook import with_thumbnail
from stac_ext.publish.items import build_items, file_name
from stac_ext.publish.run import describe, published, report
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
    return published(inputs, context, "private", functools.partial(_publish_files, inputs))


async def _publish_files(inputs: dict[str, Any], writer: Writer, result: dict[str, Any],
                         api: str) -> None:
    import fsspec

    local = fsspec.filesystem("file")
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
        outcome = await writer.write(lineaged, result["catalog"]) if items else Outcome()
        report(result, outcome, api, href)
