"""The nested `/data/catalogs` tree, as a stac-fastapi ApiExtension with its own SQL schema.

May import stac-fastapi and the standard library; never `stac_ext` or `process_api`: the
composition root hands it settings, the auth dependency and the database pool.
"""
