"""Collections checked against the conventions' vocabularies, with the CF Standard Name
Table that compliance-checker ships (version 93), loaded by `migrate`; a newer table loaded
by `geocatalog vocabulary update`; another convention's loaded from a file."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import psycopg
import pytest

from stac_ext.governance.tables import TableError, read_table, shipped_cf_table
from tests.support.cli import run_cli
from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, TestIssuer
from tests.support.roles import role_env
from tests.support.stac import make_collection, make_item

CF_DESCRIPTION_SEA_ICE_THICKNESS = (
    '"Thickness" means the vertical extent of a layer. "Sea ice" means all ice floating in '
    "the sea which has formed from freezing sea water, rather than by other processes such "
    "as calving of land ice to form icebergs.")


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "vocabulary_")


@pytest.fixture(scope="module")
async def strict_app(service_app, database: str) -> AsyncIterator:
    """The service as deployed: every convention must have a vocabulary."""
    async with service_app(database=database, require_vocabulary=True) as service:
        yield service.app


@pytest.fixture
async def admin(strict_app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(strict_app, issuer.token("root", rights=[ADMIN_RIGHT])) as c:
        yield c


@pytest.mark.unit
def test_the_shipped_table_is_cf_version_93() -> None:
    table = read_table(shipped_cf_table())
    assert (table.convention, table.title, table.version) == (
        "climate_forecast", "CF Standard Name Table", "93")
    # 595 aliases, 3 of them names too (the name wins)
    assert (len(table.entries), len(table.aliases)) == (5023, 592)
    sst = next(e for e in table.entries if e.name == "sea_surface_temperature")
    assert sst.units == "K"
    assert table.aliases["chlorophyll_concentration_in_sea_water"] == \
        "mass_concentration_of_chlorophyll_in_sea_water"


@pytest.mark.unit
def test_a_table_that_is_not_one_is_refused_in_one_line(tmp_path: Path) -> None:
    cases = {
        "broken.xml": ("<standard_name_table><entry", "not XML"),
        "other.xml": ("<catalog/>", "not a standard name table (<catalog>)"),
        "empty.json": ('{"convention": "ocean_colour", "title": "t", "version": "1", '
                       '"names": []}', "no names"),
        "orphan.json": ('{"convention": "ocean_colour", "title": "t", "version": "1", '
                        '"names": [{"name": "rrs"}], "aliases": {"old": "gone"}}',
                        "alias 'old' names 'gone', which the table does not hold"),
        "shape.json": ('{"convention": "Ocean-Colour", "title": "t", "version": "1", '
                       '"names": [{"name": "rrs"}]}',
                       "convention 'Ocean-Colour': lower-case letters, digits and '_' only"),
    }
    for name, (text, said) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(TableError) as refused:
            read_table(path)
        assert said in str(refused.value), (name, str(refused.value))


async def test_a_typo_is_refused_naming_the_nearest_names(admin: httpx.AsyncClient) -> None:
    r = await admin.post("/data/collections", json=make_collection(
        "climate_forecast-sea_surface_temprature"))
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest",
        "description": "Collection climate_forecast-sea_surface_temprature: "
                       "`sea_surface_temprature` is not a standard name of the CF Standard "
                       "Name Table (version 93). Did you mean `sea_surface_temperature`, "
                       "`sea_ice_surface_temperature` or `sea_surface_skin_temperature`?"})
    r = await admin.get("/data/collections/climate_forecast-sea_surface_temprature")
    assert r.status_code == 404


async def test_an_alias_is_refused_naming_its_current_name(admin: httpx.AsyncClient) -> None:
    r = await admin.post("/data/collections", json=make_collection(
        "climate_forecast-chlorophyll_concentration_in_sea_water"))
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest",
        "description": "Collection climate_forecast-chlorophyll_concentration_in_sea_water: "
                       "`chlorophyll_concentration_in_sea_water` is an alias of "
                       "`mass_concentration_of_chlorophyll_in_sea_water` in the CF Standard "
                       "Name Table (version 93): use the collection "
                       "climate_forecast-mass_concentration_of_chlorophyll_in_sea_water."})


async def test_a_convention_without_a_vocabulary_is_refused(admin: httpx.AsyncClient) -> None:
    r = await admin.post("/data/collections", json=make_collection("lab-sst"))
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest",
        "description": "Collection lab-sst: the convention `lab` has no vocabulary here "
                       "(conventions known: `climate_forecast`)."})


async def test_a_known_names_collection_carries_the_tables_fields(
        admin: httpx.AsyncClient) -> None:
    """Title in words, the table's description (the creator's own follows it) and its
    canonical units as the CF extension's `cf:parameter`; what the creator sends for these
    gives way, and an update keeps them."""
    collection_id = "climate_forecast-sea_ice_thickness"
    body = make_collection(collection_id) | {
        "title": "My thickness", "description": "Weekly, from altimetry.",
        "keywords": ["arctic"], "cf:parameter": [{"name": "sea_ice_thickness", "unit": "cm"}]}
    r = await admin.post("/data/collections", json=body)
    assert r.status_code == 201, r.text
    stored = (await admin.get(f"/data/collections/{collection_id}")).json()
    assert {k: stored[k] for k in ("title", "description", "cf:parameter", "keywords",
                                   "stac_extensions")} == {
        "title": "Sea ice thickness",
        "description": CF_DESCRIPTION_SEA_ICE_THICKNESS + "\n\nWeekly, from altimetry.",
        "cf:parameter": [{"name": "sea_ice_thickness", "unit": "m"}],
        "keywords": ["arctic"],
        "stac_extensions": ["https://stac-extensions.github.io/cf/v0.2.0/schema.json"]}
    # PUT back what was read: unchanged; another title: the vocabulary's again
    r = await admin.put(f"/data/collections/{collection_id}",
                        json=stored | {"title": "x", "links": []})
    assert r.status_code == 200, r.text
    again = (await admin.get(f"/data/collections/{collection_id}")).json()
    assert (again["title"], again["description"]) == (
        "Sea ice thickness", CF_DESCRIPTION_SEA_ICE_THICKNESS + "\n\nWeekly, from altimetry.")


def _later_table(tmp_path: Path, retired: str, successor: str, dropped: str) -> Path:
    """CF's table as version 94: `retired` renamed `successor` (an alias names it), and
    `dropped` gone without a successor."""
    text = shipped_cf_table().read_text()
    text = text.replace("<version_number>93</version_number>",
                        "<version_number>94</version_number>")
    text = text.replace(f'<entry id="{retired}">', f'<entry id="{successor}">')
    text = re.sub(rf'<entry id="{dropped}">.*?</entry>', "", text, flags=re.S)
    text = text.replace("</standard_name_table>", f'<alias id="{retired}"><entry_id>'
                        f"{successor}</entry_id></alias></standard_name_table>")
    path = tmp_path / "cf-standard-name-table-94.xml"
    path.write_text(text)
    return path


async def test_a_later_table_keeps_every_collection_and_item(
        service_app, database_url: str, issuer: TestIssuer, tmp_path: Path) -> None:
    url = migrated_database(database_url, "vocabulary_update_")
    env = {"DATABASE_URL": url, **role_env(url)}
    kept, dropped = "climate_forecast-sea_ice_speed", "climate_forecast-sea_ice_freeboard"
    async with service_app(database=url) as service:
        admin = service.client(issuer.token("root", rights=[ADMIN_RIGHT]))
        for collection in (kept, dropped):
            assert (await admin.post("/data/collections",
                                     json=make_collection(collection))).status_code == 201
            r = await admin.post(f"/data/collections/{collection}/items",
                                 json=make_item("ice-1"))
            assert r.status_code == 201, r.text

    out = run_cli("vocabulary", "update", str(_later_table(
        tmp_path, "sea_ice_speed", "sea_ice_drift_speed", "sea_ice_freeboard")), env=env)
    assert (out.returncode, out.stdout) == (0, "vocabulary climate_forecast 93 -> 94: 5022 "
                                               "names, 593 aliases, 1 new, 2 retired\n")
    out = run_cli("vocabulary", "update", str(tmp_path / "cf-standard-name-table-94.xml"),
                  env=env)
    assert (out.returncode, out.stdout) == (0, "vocabulary climate_forecast 94 (up to date)\n")
    out = run_cli("vocabulary", "update", env=env)  # the shipped one, older
    assert (out.returncode, out.stderr.strip()) == (
        1, "version 93 of climate_forecast is older than the loaded one (94)")
    out = run_cli("vocabulary", "list", env=env)
    assert re.fullmatch(r"climate_forecast  CF Standard Name Table, version 94: 5022 names, "
                        r"593 aliases \(loaded \d{4}-\d\d-\d\d \d\d:\d\d\)\n", out.stdout)

    async with service_app(database=url) as service:
        admin = service.client(issuer.token("root", rights=[ADMIN_RIGHT]))
        for collection in (kept, dropped):  # every collection and item kept
            r = await admin.get(f"/data/collections/{collection}/items/ice-1")
            assert r.status_code == 200, (collection, r.text)
        # the retired name resolves as an alias of its successor; the dropped one is known
        r = await admin.post("/data/collections", json=make_collection(
            "climate_forecast-sea_ice_speed"))
        assert (r.status_code, r.json()["description"]) == (
            400, "Collection climate_forecast-sea_ice_speed: `sea_ice_speed` is an alias of "
                 "`sea_ice_drift_speed` in the CF Standard Name Table (version 94): use the "
                 "collection climate_forecast-sea_ice_drift_speed.")
        # the kept collection of the retired name is still changed as any other
        stored = (await admin.get(f"/data/collections/{kept}")).json()
        r = await admin.put(f"/data/collections/{kept}",
                            json=stored | {"license": "CC0-1.0", "links": []})
        assert r.status_code == 200, r.text
        r = await admin.post("/data/collections",
                             json=make_collection("climate_forecast-sea_ice_drift_speed"))
        assert r.status_code == 201, r.text
    with psycopg.connect(url) as conn:
        assert conn.execute(
            "SELECT convention, version, previous_version, added, retired, loaded_by "
            "FROM governance.vocabulary_loads ORDER BY pk").fetchall()[-1][:5] == (
            "climate_forecast", "94", "93", 1, ["sea_ice_freeboard", "sea_ice_speed"])
        assert conn.execute("SELECT retired_in FROM governance.names WHERE key = "
                            "'sea_ice_freeboard'").fetchone() == ("94",)


async def test_another_conventions_vocabulary_is_loaded_from_a_file(
        service_app, database_url: str, issuer: TestIssuer, tmp_path: Path) -> None:
    url = migrated_database(database_url, "vocabulary_load_")
    env = {"DATABASE_URL": url, **role_env(url)}
    table = tmp_path / "ocean-colour.json"
    table.write_text(json.dumps({
        "convention": "ocean_colour", "title": "Ocean colour names", "version": "1",
        "names": [{"name": "remote_sensing_reflectance", "units": "sr-1",
                   "description": "Water-leaving radiance over downwelling irradiance."}],
        "aliases": {"rrs": "remote_sensing_reflectance"}}))
    out = run_cli("vocabulary", "load", str(table), env=env)
    assert (out.returncode, out.stdout) == (
        0, "vocabulary ocean_colour none -> 1: 1 name, 1 alias\n")
    out = run_cli("vocabulary", "load", str(table), env=env)
    assert (out.returncode, out.stderr.strip()) == (
        1, "the vocabulary of ocean_colour is loaded already (version 1): `geocatalog "
           "vocabulary update` loads a newer one")
    async with service_app(database=url, require_vocabulary=True) as service:
        admin = service.client(issuer.token("root", rights=[ADMIN_RIGHT]))
        r = await admin.post("/data/collections",
                             json=make_collection("ocean_colour-remote_sensing_reflectance"))
        assert r.status_code == 201, r.text
        assert (r.json()["title"], r.json()["cf:parameter"]) == (
            "Remote sensing reflectance", [{"name": "remote_sensing_reflectance",
                                            "unit": "sr-1"}])
        r = await admin.post("/data/collections", json=make_collection("ocean_colour-rrs"))
        assert r.json()["description"] == (
            "Collection ocean_colour-rrs: `rrs` is an alias of `remote_sensing_reflectance` in "
            "the Ocean colour names (version 1): use the collection "
            "ocean_colour-remote_sensing_reflectance.")
