"""The run function of `publish-dataset`, executed in a job's child process as the caller,
and the frame every publishing job runs in (`published`: `results` publishes a job's files
in it too)."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from process_api import (
    JOB_DATABASE_URL,
    Context,
    OutboundPolicy,
    TargetRefused,
    allowed_http_client,
    s3_filesystem,
    storage_failure,
)
from stac_ext.content.formats import Format, asset_format
from stac_ext.content.quicklook import with_thumbnail
from stac_ext.data_api.item_rules import ItemRules
from stac_ext.data_api.urls import api_root, item_path
from stac_ext.publish.inspect import (
    Description,
    describe_csv,
    describe_parquet,
    describe_xarray,
)
from stac_ext.publish.items import build_items, file_name
from stac_ext.publish.outside_refs import OutsideReference, check_self_contained
from stac_ext.publish.settings import PublishSettings
from stac_ext.publish.writer import Outcome, PublishError, Writer


def _listing_error(error: Exception, source: str, endpoint: str | None
                   ) -> PublishError | None:
    """The listing failure in a user's words, or None when it is not about the storage."""
    failure = storage_failure(error)
    if failure == "refused":
        return PublishError("The object storage refused access: check s3.accessKeyId and "
                            "s3.secretAccessKey (and sessionToken).")
    if failure == "missing":
        return PublishError(f"{source} does not exist in the object storage.")
    if failure == "unreachable":
        where = endpoint or "its default endpoint"
        return PublishError(f"Cannot reach the object storage at {where} to list {source}.")
    return None


def list_files(source: str, s3: dict[str, Any]) -> tuple[Any, list[str]]:
    """(filesystem, paths of the files and Zarr stores under the source)."""
    try:
        if not source.startswith("s3://"):
            import fsspec

            OutboundPolicy.from_env().check(source)
            # redirects are not followed, and every connection goes to an allowed address
            return fsspec.filesystem("https", allow_redirects=False,
                                     get_client=allowed_http_client), [source]
        if s3.get("enabled") is False:
            raise PublishError("S3 access is disabled in the inputs (s3.enabled = false).")
        fs = s3_filesystem(s3)
    except TargetRefused as e:
        raise PublishError(str(e)) from None
    prefix = source.removeprefix("s3://").rstrip("/")
    try:
        keys = fs.find(prefix)
    except Exception as e:  # s3fs/botocore raise many kinds; say which in words
        if (explained := _listing_error(e, source, s3.get("endpoint"))) is None:
            raise
        raise explained from None
    paths: list[str] = []
    for key in sorted(keys):
        if ".zarr/" in key:
            key = key[: key.index(".zarr/") + len(".zarr")]
        if key not in paths:
            paths.append(key)
    if not paths:
        raise PublishError(f"No object under {source}.")
    return fs, paths


def describe(fs: Any, path: str, href: str) -> Description | None:
    fmt = asset_format({"href": href})
    if fmt is Format.zarr:
        import xarray as xr

        return describe_xarray(xr.open_zarr(fs.get_mapper(path)), href, fmt)
    if fmt is Format.netcdf:
        import xarray as xr

        with fs.open(path, "rb") as f:
            # the fetched bytes only: nothing that makes HDF5 open other files
            engine = {"hdf5": "h5netcdf", "classic": "scipy"}[check_self_contained(f)]
            return describe_xarray(xr.open_dataset(f, engine=engine), href, fmt)
    if fmt is Format.parquet:
        import pyarrow.parquet as pq

        with fs.open(path, "rb") as f:
            return describe_parquet(pq.ParquetFile(f), href)
    if fmt is Format.csv:
        with fs.open(path, "rb") as f:
            return describe_csv(f, href)
    return None


def may_create_collections(settings: PublishSettings, context: Context) -> bool:
    """Whether the job's project may create the collections its items need."""
    projects = settings.publish_collection_projects
    return "*" in projects or (context.project is not None and context.project in projects)


#: What a publishing job publishes, given its writer, the results to fill and the data
#: API's root URL.
Publishing = Callable[[Writer, dict[str, Any], str], Awaitable[None]]


def published(inputs: dict[str, Any], context: Context, visibility: str,
              publishing: Publishing) -> dict[str, Any]:
    """A publishing job's run: its settings (the job's environment: no secret of the
    service), a writer as the job's owner and project on the job role's connection (items
    of `visibility` unless the inputs say), the catalog checked before any write, and the
    results every publishing job answers, which `publishing` fills."""
    settings = PublishSettings()
    return asyncio.run(_published(inputs, context, settings, visibility, publishing))


async def _published(inputs: dict[str, Any], context: Context, settings: PublishSettings,
                     visibility: str, publishing: Publishing) -> dict[str, Any]:
    api = api_root(context.service_url or settings.base_url or "/", settings.prefix_path)
    catalog = inputs.get("catalog")
    result: dict[str, Any] = {"created": [], "updated": [], "held": [], "skipped": [],
                              "warnings": [], "collectionsCreated": [], "catalog": catalog}
    # its own role's URL, which the worker hands the job (`Process.database`)
    conn = await asyncpg.connect(os.environ[JOB_DATABASE_URL])
    try:
        writer = Writer(conn, context.owner, may_create_collections(settings, context),
                        ItemRules.from_settings(settings), context.project,
                        inputs.get("visibility", visibility))
        if catalog:
            await writer.catalog_pk(catalog)  # fail early: before any write
        await publishing(writer, result, api)
    finally:
        await conn.close()
    return result


def publish(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    source = inputs["source"]
    fs, paths = list_files(source, inputs.get("s3") or {})
    return published(inputs, context, "public", functools.partial(
        _publish_files, inputs, context, fs, paths))


async def _publish_files(inputs: dict[str, Any], context: Context, fs: Any, paths: list[str],
                         writer: Writer, result: dict[str, Any], api: str) -> None:
    source = inputs["source"]
    title = (inputs.get("display") or {}).get("friendlyName")
    for n, path in enumerate(paths, 1):
        href = f"s3://{path}" if source.startswith("s3://") else path
        name = file_name(href)
        try:
            description = describe(fs, path, href)
        except Exception as e:  # a bad file is reported; the others go on
            why = (str(e) if isinstance(e, OutsideReference) else
                   "the address did not answer with a readable file"  # nothing more
                   if href.startswith("http") else f"{type(e).__name__}: {str(e)[:200]}")
            result["warnings"].append({"file": href,
                                       "message": f"could not read {name}: {why}"})
            continue
        finally:
            context.progress(int(100 * (n - 0.5) / len(paths)), f"read {name}")
        if description is None:
            result["warnings"].append({"file": href, "message": "not a NetCDF, Zarr, "
                                       "Parquet or CSV file: ignored"})
            continue
        items, skips = build_items(description, title)
        # each item's quicklook, which the API draws and keeps in the results store
        items = [(c, with_thumbnail(i, c, api)) for c, i in items]
        for skip in skips:
            result["skipped"].append({"file": href, "variable": skip.variable,
                                      "reason": skip.reason})
        if description.format is Format.csv and not items:
            result["warnings"].append({"file": href, "message": "CSV carries no CF "
                                       "metadata (standard_name, extent): not published"})
        outcome = await writer.write(items, result["catalog"]) if items else Outcome()
        report(result, outcome, api, href)
        context.progress(int(100 * n / len(paths)), f"published {name}")


def report(result: dict[str, Any], outcome: Outcome, api: str, href: str) -> None:
    """Add one file's outcome to the results; `api` is the data API's root URL."""
    for key, pairs in (("created", outcome.created), ("updated", outcome.updated)):
        result[key] += [{"id": item, "collection": collection, "file": href,
                         "url": api + item_path(collection, item)}
                        for collection, item in pairs]
    result["held"] += [{"id": item, "collection": collection, "file": href,
                        "proposal": f"{api}proposals/{proposal}"}
                       for collection, item, proposal in outcome.held]
    result["skipped"] += [{"file": href, "variable": item, "reason": reason}
                          for item, reason in outcome.skipped]
    result["collectionsCreated"] += outcome.collections_created
