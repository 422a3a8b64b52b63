// geocatalog's "Explore" button on an asset in STAC Browser (an asset action, built in by
// `make web`): a Zarr, NetCDF, Parquet or CSV asset opens in the data explorer, by the
// item's own explorer link for that asset when the API made one (EXPLORER_URL_TEMPLATE's
// target, or the service's page), else the service's explorer page.
import AssetActionPlugin from "../AssetActionPlugin";

const MEDIA_TYPES = ["application/vnd+zarr", "application/vnd.zarr", "application/netcdf",
  "application/x-netcdf", "application/vnd.apache.parquet", "application/x-parquet", "text/csv"];
const SUFFIXES = /\.(zarr|nc|nc4|netcdf|parquet|geoparquet|csv)\/?$/i;

export default class GeocatalogExplore extends AssetActionPlugin {

  get href() {
    return this.asset && typeof this.asset.href === "string" ? this.asset.href : null;
  }

  get item() {
    const context = this.asset && typeof this.asset.getContext === "function" ? this.asset.getContext() : null;
    return context && context.type === "Feature" ? context : null;
  }

  get show() {
    const href = this.href;
    if (!href || !this.item) return false;
    const type = String(this.asset.type || "").split(";")[0].trim().toLowerCase();
    let path = href;
    try { path = new URL(href).pathname; } catch (e) { /* relative: as written */ }
    return MEDIA_TYPES.includes(type) || SUFFIXES.test(path);
  }

  get uri() {
    const href = this.href;
    const item = this.item;
    for (const link of item.links || []) {
      if (link.rel !== "explorer" || typeof link.href !== "string") continue;
      try {
        if ([...new URL(link.href).searchParams.values()].includes(href)) return link.href;
      } catch (e) { /* not a URL: not this asset's */ }
    }
    // the service's explorer page, beside STAC Browser (its <base> is `{service}/browser/`)
    const page = new URL("../ui/explore", document.baseURI);
    page.searchParams.set("collection", item.collection || "");
    page.searchParams.set("item", item.id || "");
    page.searchParams.set("source", href);
    return page.toString();
  }

  get text() {
    return "Explore";
  }

}
