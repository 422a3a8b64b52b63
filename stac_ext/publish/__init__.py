"""`publish-dataset`: a process that describes a user's NetCDF / Zarr / Parquet / CSV data
in S3 (or over HTTPS) and writes it into the catalog as STAC items, as that user.

Lives in stac_ext because it writes through the data API's item rules and links into the
catalogs tree; it is handed to the process registry by the composition root.

Third-party imports: `asyncpg`, `fsspec`, `h5py`, `numpy`, `pandas`, `pyarrow`, `pydantic`,
`xarray`.
"""
