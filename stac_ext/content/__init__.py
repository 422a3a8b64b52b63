"""Generated item content (`stac_extensions`, Python example, explorer and notebook links),
computed on the way out.

Nothing here is stored: every item the API returns passes through `ItemDecorator`, so a
change of configuration shows on the next request, however the item entered the catalog.
`ExampleExtension` serves the generated Python examples that items link to.

Of ours, imports `stac_ext.data_api` (item URLs, named SQL) and the platform; the data API
receives the decorator from the composition root and never imports this package.

Third-party imports: `attr`, `fastapi`, `pydantic_settings`, `pystac`, `stac_fastapi`.
"""
