"""`geocatalog thumbnails`: quicklooks for items published before publishing made them.
Each item whose data can be drawn (a Zarr, NetCDF, Parquet or CSV asset) and that has no
`thumbnail` asset gets one: its picture drawn with the service's own access to the data
and kept in the results store, then the asset added (one transaction per item). A job's
file is drawn when its item is first viewed, for whoever may read it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from stac_ext.settings import Settings


def _items(conn: Any, collection: str, after: str, batch: int) -> list[dict[str, Any]]:
    """A batch of the collection's items without a thumbnail (its partition alone)."""
    from psycopg import sql

    query = sql.SQL(
        "SELECT content_hydrate(i) FROM pgstac.items i WHERE i.collection = {} "
        "AND i.id > %s AND NOT coalesce(i.content->'assets' ? 'thumbnail', false) "
        "ORDER BY i.id LIMIT %s").format(sql.Literal(collection))
    return [row[0] for row in conn.execute(query, (after, batch), prepare=False)]


def thumbnails(
    collection: Annotated[list[str] | None, typer.Option(
        metavar="ID", help="only the items of this collection; repeatable")] = None,
    limit: Annotated[int | None, typer.Option(
        min=1, metavar="N", help="at most N items this run")] = None,
) -> None:
    """Add quicklooks to the items that have none.

    Each item whose data can be drawn gets a `thumbnail` asset, its picture drawn and kept
    in the results store."""
    import psycopg

    from stac_ext.app import explorer_of
    from stac_ext.cli.common import _settings, database_errors, ensure_database
    from stac_ext.content.quicklook import drawn_asset, thumbnail_asset
    from stac_ext.data_api.urls import api_root
    from stac_ext.explorer.own_files import job_file
    from stac_ext.explorer.problems import ExploreError
    from stac_ext.explorer.quicklooks import Quicklooks

    settings: Settings = _settings()
    ensure_database(settings)
    quicklooks = Quicklooks(explorer_of(settings))
    root = api_root(settings.service_url, settings.prefix_path)
    service = urlsplit(settings.service_url)
    own = {f"{service.scheme}://{service.netloc}".lower()}
    made = skipped = later = 0
    with database_errors(settings.dsn), psycopg.connect(settings.dsn, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")  # pgstac's functions, unqualified
        collections = collection or [row[0] for row in conn.execute(
            "SELECT id FROM pgstac.collections ORDER BY id")]
        for each in collections:
            after = ""
            while limit is None or made + later < limit:
                batch = _items(conn, each, after, 100)
                if not batch:
                    break
                after = str(batch[-1]["id"])
                for item in batch:
                    if limit is not None and made + later >= limit:
                        break
                    found = drawn_asset(item)
                    if found is None:
                        continue
                    item = {**item, "assets": {**item["assets"], "thumbnail": thumbnail_asset(
                        root, each, str(item["id"]))},
                        "properties": {**item["properties"],
                                       "updated": datetime.now(UTC).isoformat()}}
                    if job_file(str(found[1]["href"]), settings.processes_prefix, own):
                        later += 1  # a job's file: drawn for its first reader
                    else:
                        try:
                            quicklooks.make(each, item)
                        except ExploreError as e:
                            typer.echo(f"{each}/{item['id']}: not drawn: {e.message}", err=True)
                            skipped += 1
                            continue
                        made += 1
                    with conn.transaction():
                        conn.execute("SELECT geocatalog.update_item(%s::text::jsonb)",
                                     (json.dumps(item),), prepare=False)
    typer.echo(f"quicklooks: {made} drawn, {later} to draw when first viewed, {skipped} "
               "not drawn (their data could not be read)")
