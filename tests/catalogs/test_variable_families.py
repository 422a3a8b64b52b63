"""The generated `variables` tree under /catalogs: the collections that hold items by
family of their standard names, walked by pystac-client as any STAC catalog, kept current,
read-only, by rules an administrator may change."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from pystac_client import Client

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.settings import Settings
from tests.support.cluster import migrated_database
from tests.support.http import signing_in_locally
from tests.support.issuer import ADMIN_RIGHT
from tests.support.stac import make_collection, make_item

#: name -> the (family, sub-family) the shipped rules put it in
PLACES = {
    "sea_surface_temperature": [("ocean-physics", "temperature-and-heat")],
    "sea_water_salinity": [("ocean-physics", "salinity-and-density")],
    "sea_ice_thickness": [("sea-ice", "")],
    "air_temperature": [("atmosphere", "temperature")],
    "precipitation_flux": [("atmosphere", "precipitation")],
    "mass_concentration_of_chlorophyll_a_in_sea_water": [
        ("biogeochemistry", "plankton-and-productivity")],
    "mole_fraction_of_ozone_in_air": [("atmospheric-chemistry", "gases")],
    "sea_ice_surface_temperature": [("sea-ice", "")],
    "soil_temperature": [("land-surface", "")],
    "toa_outgoing_longwave_flux": [("radiation", "")],
    "ocean_mixed_layer_thickness": [("ocean-physics", "")],
    "altitude": [("other", "")],
}
GENERATED = ("The catalog variables and the catalogs under it are generated from the "
             "collections and the families' rules: they cannot be written. Administrators "
             "change the rules at /catalogs/variables/_rules.")


@pytest.fixture(scope="module")
def families_service(settings: Settings, database_url: str,
                     tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[tuple[str, LocalIssuer]]:
    """The service on a database of its own: each name of PLACES a collection with an
    item, but `altitude`'s without one."""
    url = migrated_database(database_url, "families_")
    with signing_in_locally(settings, tmp_path_factory.mktemp("families"),
                            DATABASE_URL=url) as (base, issuer):
        admin = {"Authorization": "Bearer " + issuer.mint(
            "root", settings.data_client_id, rights=[ADMIN_RIGHT])}
        for n, name in enumerate(PLACES):
            collection = f"climate_forecast-{name}"
            r = httpx.post(f"{base}/data/collections", json=make_collection(collection),
                           headers=admin)
            assert r.status_code == 201, r.text
            if name != "altitude":
                r = httpx.post(f"{base}/data/collections/{collection}/items",
                               json=make_item(f"i{n}", x=n), headers=admin)
                assert r.status_code == 201, r.text
        yield base, issuer


def _walked(base: str) -> Counter[str]:
    """How many times pystac-client meets each collection through /catalogs/variables (a
    static tree to it: it says that it walks the child links)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        client = Client.open(f"{base}/data/catalogs/variables")
        return Counter(c.id for c in client.get_all_collections())


def test_pystac_client_reaches_every_collection_with_items_once_per_family(
        families_service) -> None:
    base, _ = families_service
    walked = _walked(base)
    assert walked == Counter({f"climate_forecast-{name}": len(places)
                              for name, places in PLACES.items() if name != "altitude"})
    root = httpx.get(f"{base}/data/catalogs/variables").json()
    assert [(link["href"].rsplit("/", 1)[1], link.get("title")) for link in root["links"]
            if link["rel"] == "child"] == [
        ("ocean-physics", "Ocean physics"), ("sea-ice", "Sea ice"),
        ("atmosphere", "Atmosphere"), ("radiation", "Radiation"),
        ("atmospheric-chemistry", "Atmospheric chemistry and aerosols"),
        ("biogeochemistry", "Biogeochemistry"),
        ("land-surface", "Land surface and vegetation")]  # `other`: altitude, empty
    ocean = httpx.get(f"{base}/data/catalogs/variables/ocean-physics").json()
    assert [(link["rel"], link["href"].rsplit("/data/", 1)[1], link.get("title"))
            for link in ocean["links"]] == [
        ("self", "catalogs/variables/ocean-physics", None),
        ("root", "catalogs", "Catalogs"),
        ("parent", "catalogs/variables", None),
        ("child", "catalogs/variables/ocean-physics/temperature-and-heat",
         "Temperature and heat"),
        ("child", "catalogs/variables/ocean-physics/salinity-and-density",
         "Salinity and density"),
        ("child", "collections/climate_forecast-ocean_mixed_layer_thickness",
         "Ocean mixed layer thickness")]
    catalogs = httpx.get(f"{base}/data/catalogs").json()
    assert next(link["href"] for link in catalogs["links"] if link["rel"] == "child") == \
        f"{base}/data/catalogs/variables"


def test_a_new_collection_appears_in_its_family(families_service, settings: Settings
                                                ) -> None:
    base, issuer = families_service
    admin = {"Authorization": "Bearer " + issuer.mint(
        "root", settings.data_client_id, rights=[ADMIN_RIGHT])}
    wave = "climate_forecast-sea_surface_wave_significant_height"
    assert httpx.post(f"{base}/data/collections", json=make_collection(wave),
                      headers=admin).status_code == 201
    waves = f"{base}/data/catalogs/variables/ocean-physics/waves"
    assert httpx.get(waves).json()["links"][3:] == []  # no item yet: not shown
    assert httpx.post(f"{base}/data/collections/{wave}/items", json=make_item("w1"),
                      headers=admin).status_code == 201
    assert httpx.get(waves).json()["links"][3:] == [{
        "rel": "child", "type": "application/json",
        "href": f"{base}/data/collections/{wave}",
        "title": "Sea surface wave significant height"}]
    assert _walked(base)[wave] == 1
    # emptied, it leaves the tree again
    assert httpx.delete(f"{base}/data/collections/{wave}/items/w1",
                        headers=admin).status_code == 204
    assert httpx.get(waves).json()["links"][3:] == []


def test_a_write_to_the_tree_is_refused_saying_it_is_generated(
        families_service, settings: Settings) -> None:
    base, issuer = families_service
    for user, rights in (("alice", []), ("root", [ADMIN_RIGHT])):
        headers = {"Authorization": "Bearer " + issuer.mint(
            user, settings.data_client_id, rights=rights)}
        body = {"id": "ocean-physics", "type": "Catalog", "description": "mine"}
        for method, path in (("PUT", "variables/ocean-physics"), ("DELETE", "variables"),
                             ("POST", "variables"), ("DELETE", "variables/sea-ice"),
                             ("PUT", "variables/ocean-physics?_force=true")):
            r = httpx.request(method, f"{base}/data/catalogs/{path}", headers=headers,
                              json=None if method == "DELETE" else body)
            assert (r.status_code, r.json()) == (403, {"code": "Forbidden",
                                                       "description": GENERATED}), \
                (user, method, path)
        r = httpx.post(f"{base}/data/catalogs", headers=headers,
                       json={"id": "variables", "type": "Catalog", "description": "mine"})
        assert (r.status_code, r.json()) == (403, {"code": "Forbidden",
                                                   "description": GENERATED})


def test_the_tree_says_it_has_no_search(families_service) -> None:
    """Its `_search` and `_subtree` answered "Catalog variables/ocean-physics does not
    exist" of a catalog a GET reads: now a 404 saying why, and where to search."""
    base, _ = families_service
    said = {"code": "NotFoundError", "description": (
        "The catalog variables and the catalogs under it are generated from the "
        "collections: they have no _search or _subtree. Search a family's collections (its "
        "child links) with /search?collections=...")}
    for method, path in (("GET", "variables/ocean-physics/_search"),
                         ("POST", "variables/ocean-physics/temperature-and-heat/_search"),
                         ("GET", "variables/_search"), ("GET", "variables/_subtree"),
                         ("GET", "variables/sea-ice/_subtree")):
        r = httpx.request(method, f"{base}/data/catalogs/{path}",
                          json={} if method == "POST" else None)
        assert (r.status_code, r.json()) == (404, said), (method, path)


def test_an_administrator_changes_the_rules(families_service, settings: Settings) -> None:
    base, issuer = families_service
    rules_url = f"{base}/data/catalogs/variables/_rules"
    shipped = httpx.get(rules_url).json()
    assert (shipped["shipped"], shipped["updated_by"]) == (True, None)
    rules = {**shipped["rules"], "families": [
        {"id": "polar", "title": "Polar", "words": ["sea_ice", "snow"]}]}
    alice = {"Authorization": "Bearer " + issuer.mint("alice", settings.data_client_id)}
    r = httpx.put(rules_url, json=rules, headers=alice)
    assert (r.status_code, r.json()) == (403, {
        "code": "Forbidden",
        "description": "The families' rules are changed by administrators only."})
    admin = {"Authorization": "Bearer " + issuer.mint(
        "root", settings.data_client_id, rights=[ADMIN_RIGHT])}
    r = httpx.put(rules_url, json={**rules, "families": [{"id": "x"}]}, headers=admin)
    assert r.status_code == 400
    r = httpx.put(rules_url, json=rules, headers=admin)
    assert r.status_code == 200, r.text
    assert (r.json()["shipped"], r.json()["updated_by"]) == (False, "root")
    root = httpx.get(f"{base}/data/catalogs/variables").json()
    assert [link["href"].rsplit("/", 1)[1] for link in root["links"]
            if link["rel"] == "child"] == ["polar", "other"]
    assert _walked(base)["climate_forecast-sea_ice_thickness"] == 1
    r = httpx.delete(rules_url, headers=admin)
    assert (r.status_code, r.json()["shipped"]) == (200, True)
    assert _walked(base) == Counter({f"climate_forecast-{name}": len(places)
                                     for name, places in PLACES.items()
                                     if name != "altitude"})


def test_the_families_are_kept_whatever_writes_the_collections(database_url: str) -> None:
    """A collection made by SQL (pypgstac's way) joins its family too; a deleted one
    leaves it."""
    database = migrated_database(database_url, "families_sql_")
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SELECT pgstac.create_collection(%s::jsonb)", (json.dumps(
            make_collection("climate_forecast-sea_ice_extent")),))
        assert conn.execute("SELECT family, subfamily FROM catalogs.collection_families "
                            "WHERE collection_id = 'climate_forecast-sea_ice_extent'"
                            ).fetchall() == [("sea-ice", "")]
        conn.execute("SELECT pgstac.delete_collection('climate_forecast-sea_ice_extent')")
        assert conn.execute("SELECT count(*) FROM catalogs.collection_families"
                            ).fetchone() == (0,)
