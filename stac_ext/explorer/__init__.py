"""The data explorer and quicklooks: Zarr and NetCDF read with xarray (zarr, h5netcdf),
Parquet and CSV with DuckDB, all through fsspec, chunk-wise and within bounds of bytes and
time; pictures drawn with matplotlib. Its routes sit under an item in the data API (read as
the caller, as the item is), and a job's own files are read as the process API lets the
caller read them. The explorer's page is the web face's (`/ui/explore`).

Of ours, imports `stac_ext.data_api` (the item's read, its URLs), `stac_ext.content`
(formats, which asset a quicklook draws), `stac_ext.publish` (which coordinate is which,
the self-contained NetCDF check), `process_api`'s public exports (the outbound policy, S3
access) and the platform; the composition root hands it its settings.

Third-party imports: `PIL`, `attr`, `duckdb`, `fastapi`, `fsspec`, `matplotlib`, `numpy`,
`pydantic`, `pydantic_settings`, `stac_fastapi`, `starlette`, `xarray`, `zarr`.
"""
