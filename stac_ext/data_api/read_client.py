"""Reads: stock stac-fastapi-pgstac's answers, plus the `owner` filter, the full Query
extension and generated item content, served faster: hydration in the API, one orjson
encode per response, links built once per request, items kept rendered by their stored
text (docs/performance.md)."""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import unquote_plus

import attr
import orjson
from fastapi import HTTPException, Request
from pydantic import ValidationError
from stac_fastapi.api.models import GeoJSONResponse
from stac_fastapi.extensions.aggregation import AggregationExtension
from stac_fastapi.extensions.sort import SearchSortExtension
from stac_fastapi.pgstac.core import CoreCrudClient
from stac_fastapi.pgstac.models.links import ItemCollectionLinks, PagingLinks, SearchLinks
from stac_fastapi.pgstac.types.search import PgstacSearch
from stac_fastapi.pgstac.utils import filter_fields
from stac_fastapi.types.errors import InvalidQueryParameter, NotFoundError
from stac_fastapi.types.requests import get_base_url
from stac_fastapi.types.stac import Item, ItemCollection
from stac_pydantic.shared import BBox
from starlette.responses import Response

from stac_ext.data_api import queries
from stac_ext.data_api.datetime_param import DATETIME_REFUSALS, refused_datetime
from stac_ext.data_api.encoding import json_bytes
from stac_ext.data_api.item_links import Decorator, ItemLinker
from stac_ext.data_api.item_reads import decoded, hydrated
from stac_ext.data_api.policy import reader_of, reader_text
from stac_ext.data_api.rendered_items import RenderedItems
from stac_ext.data_api.search.antimeridian import crosses, fold_antimeridian, halves
from stac_ext.data_api.search.checked import checked
from stac_ext.data_api.search.filter_bounds import (
    MAX_FILTER_DEPTH,
    bounded,
    cql2_json,
)
from stac_ext.data_api.search.literals import NOTHING
from stac_ext.data_api.search.owner import fold_owner
from stac_ext.data_api.search.query_operators import fold_query
from stac_ext.data_api.search.world_bounds import (
    crs84_only,
    footprint,
    world_box,
)
from stac_ext.data_api.spec_pages import absolute
from stac_ext.data_api.urls import request_root
from stac_ext.platform.service.client_gone import unless_client_leaves
from stac_ext.platform.service.json_body import depth
from stac_ext.platform.service.openapi import OPENAPI_MEDIA_TYPE


class GeoJSON(Response):
    media_type = GeoJSONResponse.media_type

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def _encoded(body: Any) -> Response:
    """The body as a response, encoded once by orjson: a plain dict would instead go through
    FastAPI's `jsonable_encoder`, which walks every value of every item (most of the CPU of
    a 100-item page), then through the standard library's encoder. Stock answers pages
    filtered by `fields` itself, as application/json: they are GeoJSON all the same."""
    if isinstance(body, Response):
        body.headers["content-type"] = GeoJSON.media_type
        return body
    return GeoJSON(body)


def _self_as_asked(request: Request, links: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A GET page's links, its `self` link with the parameters it was asked with."""
    if query := request.url.query:
        for link in links:
            if link.get("rel") == "self":
                link["href"] = f"{link['href']}?{query}"
    return links


@attr.s
class CoreClient(CoreCrudClient):
    """Every item the read endpoints return (item, items, search) passes `_search_base`;
    they answer with encoded responses (same bodies and media types as stock)."""

    decorator: Decorator | None = attr.ib(default=None, kw_only=True)
    #: The statement answering a search with the page: pgstac's; or one taking a scope as
    #: well, read from the route's path parameter `scope_param` (a catalog's `_search`).
    #: Run inside `queries.PAGE`, which hands the items over one text each.
    search_statement: str = attr.ib(default=queries.SEARCH, kw_only=True)
    scope_param: str | None = attr.ib(default=None, kw_only=True)
    #: Items as served, by their stored text (shared by the API's clients); None: none kept.
    rendered: RenderedItems | None = attr.ib(default=None, kw_only=True)
    _page: str = attr.ib(init=False)

    @_page.default
    def _split_page(self) -> str:
        return queries.PAGE.format(search=self.search_statement)

    # `type: ignore[override]` below: these answer an encoded Response where stock's
    # signatures promise a dict (stac-fastapi sends Responses through as they are).

    async def landing_page(self, **kwargs: Any) -> Any:
        """Stock's, with the OpenAPI document's media type as FastAPI writes it (3.1)."""
        page = await super().landing_page(**kwargs)
        for link in page["links"]:
            if link.get("rel") == "service-desc":
                link["type"] = OPENAPI_MEDIA_TYPE
        base_url = get_base_url(kwargs["request"])
        page["conformsTo"] = absolute(page["conformsTo"], base_url)
        if any(isinstance(e, SearchSortExtension) and e.client for e in self.extensions):
            # OGC API Features Part 5's link to the sortables (STAC Browser 4.0.1 reads
            # none: its sort options are its own)
            page["links"].append({
                "rel": "http://www.opengis.net/def/rel/ogc/1.0/sortables",
                "type": "application/schema+json", "href": f"{base_url}sortables",
                "title": "Sortables"})
        if any(isinstance(e, AggregationExtension) for e in self.extensions):
            # the Aggregation extension's required links (stock's landing page has none)
            page["links"] += [
                {"rel": "aggregate", "type": "application/json", "method": "GET",
                 "href": f"{base_url}aggregate", "title": "Aggregate a search"},
                {"rel": "aggregate", "type": "application/json", "method": "POST",
                 "href": f"{base_url}aggregate", "title": "Aggregate a search"},
                {"rel": "aggregations", "type": "application/json",
                 "href": f"{base_url}aggregations", "title": "Aggregations offered"}]
        for extension in self.extensions:  # what an extension links from the landing page
            if (links := getattr(extension, "landing_links", None)) is not None:
                page["links"] += links(base_url)
        return page

    async def conformance(self, **kwargs: Any) -> Any:
        """Stock's, our own classes (`spec/...`) at this API's address."""
        classes = await super().conformance(**kwargs)
        return {**classes, "conformsTo": absolute(
            classes["conformsTo"], get_base_url(kwargs["request"]))}

    def _clean_search_args(
        self, base_args: dict[str, Any], *args: Any, owner: str | None = None,
        filter_query: str | None = None, filter_lang: str | None = None,
        listing: bool = False, reader: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Stock's, with a GET filter bounded and turned into CQL2-JSON here
        (`filter_bounds`), never by cql2's validator; a `query` that is no JSON object is
        a 400 (stock's collection search wrote into it: a 500). The collections listing's
        (`listing`, from `all_collections`) names its caller, the `reader`."""
        if filter_query:
            parsed = cql2_json(filter_query, filter_lang)
            if parsed is not True:  # TRUE: every item, as no filter (the model takes no bool)
                base_args = {**base_args, "filter_lang": "cql2-json",
                             "filter": NOTHING if parsed is False else parsed}
        if (query := base_args.get("query")) is not None:
            if not isinstance(query, dict):
                raise InvalidQueryParameter("query: a JSON object of properties and their "
                                            'conditions, e.g. {"owner": {"eq": "alice"}}.')
            if depth(query) > MAX_FILTER_DEPTH:
                raise InvalidQueryParameter(f"query: nests deeper than {MAX_FILTER_DEPTH} "
                                            "levels.")
        if intersects := kwargs.get("intersects"):
            bounded(intersects, "intersects")
        crs84_only(kwargs.pop("filter_crs", None))
        if kwargs.get("fields"):  # `fields=,` is no field (stock indexed the empty name)
            kwargs["fields"] = [f for f in kwargs["fields"] if f.strip(" +-")] or None
        clean = super()._clean_search_args(base_args, *args, **kwargs)
        if owner:
            clean["owner"] = owner
        if listing and reader is not None:  # an administrator's is None: every one
            clean["reader"] = reader
        return clean

    async def all_collections(self, *args: Any, **kwargs: Any) -> Any:
        """Stock's listing, of the collections holding an item the caller reads (migration
        009): stock hands its keywords on to `_clean_search_args`, which builds the
        listing's SQL body. A box across 180° (south of its north) is searched as the two
        boxes it is (a search's model checks its box, then `search_body` folds it)."""
        request = kwargs.get("request") or args[0]  # stac-fastapi's endpoints name them all
        world_box(bbox := kwargs.get("bbox"))
        if bbox is not None:
            kwargs["bbox"] = bbox = footprint(bbox)
        if bbox is not None and crosses(bbox) \
                and bbox[1] <= bbox[len(bbox) // 2 + 1]:
            kwargs["bbox"], kwargs["intersects"] = None, orjson.dumps(halves(bbox)).decode()
        return await super().all_collections(*args, listing=True, reader=reader_of(request),
                                             **kwargs)

    def search_body(self, search_request: PgstacSearch, request: Request) -> str:
        """The search as pgstac's search functions take it (JSON text), once checked and
        bounded (`search.checked`); `owner` and the Query extension's operators folded into
        the filter; a `bbox` across the antimeridian searched as its two halves."""
        settings = request.app.state.settings
        search_request = checked(search_request, settings.max_page_size)
        search_request = fold_query(fold_owner(fold_antimeridian(search_request)))
        api_hydrate = settings.use_api_hydrate
        search_request.conf = {**(search_request.conf or {}), "nohydrate": api_hydrate,
                               "context_stats_ttl": settings.search_count_ttl,
                               "context_count_max": settings.search_count_max}
        body = search_request.model_dump_json(exclude_none=True, by_alias=True)
        if (reader := reader_of(request)) is None:  # anonymous: what the database assumes
            return body
        # who reads, set here only (the search models have no `reader`: a client's is dropped)
        # (`conf` is always there: the body is never `{}`)
        return f'{body[:-1]},"reader":{reader_text(reader)}}}'

    def get_search_request(self, collections: list[str] | None = None,
                           ids: list[str] | None = None, bbox: BBox | None = None,
                           intersects: str | None = None, datetime: str | None = None,
                           limit: int | None = None, query: str | None = None,
                           filter_expr: str | None = None, filter_lang: str | None = None,
                           token: str | None = None, **kwargs: Any) -> PgstacSearch:
        """The search of GET /search's parameters, as stock's `get_search` builds it."""
        clean = self._clean_search_args(
            base_args={"collections": collections, "ids": ids, "bbox": bbox, "limit": limit,
                       "token": token,
                       "query": orjson.loads(unquote_plus(query)) if query else query},
            intersects=intersects, datetime=datetime, filter_query=filter_expr,
            filter_lang=filter_lang, **kwargs)
        try:
            return self.pgstac_search_model(**clean)
        except ValidationError as e:
            raise HTTPException(status_code=400,
                                detail=f"Invalid parameters provided {e}") from e

    async def _search_base(
        self, search_request: PgstacSearch, request: Request
    ) -> ItemCollection:
        """Stock's search (same SQL, same answer), with the per-request work done once
        (links by `ItemLinker`) and generated content added in the same loop.

        A rewrite of stock's method, not a call to it: the price of the read path's speed
        (docs/performance.md). The benchmark's same-items check and
        `tests/data_api/test_item_links.py` compare its answers with stock's; re-run both when
        stac-fastapi-pgstac changes."""
        settings = request.app.state.settings
        params: list[Any] = [self.search_body(search_request, request)]
        if self.scope_param is not None:  # its filter is CQL2-JSON: POST takes no other
            params.append(request.path_params[self.scope_param])

        async def read() -> Any:
            async with request.app.state.get_connection(request, "r") as conn:
                return await conn.fetchrow(self._page, *params)

        try:
            page, items = await unless_client_leaves(request, read())
        except DATETIME_REFUSALS as e:
            raise refused_datetime(e, search_request.datetime) from e
        if page is None:  # a scope that does not exist
            raise NotFoundError(f"Catalog {params[1]} does not exist.")
        result = orjson.loads(page)

        tokens = {link.get("rel"): link["href"].split(f"token={link.get('rel')}:")[1]
                  for link in result.get("links", []) if link.get("rel") in ("next", "prev")}
        next_token = result.pop("next", tokens.get("next"))
        prev_token = result.pop("prev", tokens.get("prev"))

        fields = getattr(search_request, "fields", None)
        include: set[str] = fields.include if fields and fields.include else set()
        exclude: set[str] = fields.exclude if fields and fields.exclude else set()
        base_url = request_root(request)
        linker = ItemLinker(base_url)
        result["features"] = [self._served(text, settings, linker, base_url, include, exclude)
                              for text in items or ()]
        result["links"] = await PagingLinks(request=request, next=next_token,
                                            prev=prev_token).get_links()
        return result

    def _served(self, text: str, settings: Any, linker: ItemLinker, base_url: str,
                include: set[str], exclude: set[str]) -> Any:
        """An item as the API serves it, from its stored text: rendered (`_rendered`), or as
        rendered before for the same text and API root, already encoded. Items with fields
        chosen are rendered every time, and so are those with do-not-merge markers (their
        answer depends on a setting too)."""
        rendered = None if include or exclude else self.rendered
        if rendered is not None:
            key = rendered.key(base_url, text)
            if (served := rendered.get(key)) is not None:
                return served
        item, markers = decoded(text)
        item = self._rendered(item, settings, linker, base_url, markers, include, exclude)
        if rendered is None or markers:
            return item
        return rendered.put(key, json_bytes(item))

    def _rendered(self, item: dict[str, Any], settings: Any, linker: ItemLinker,
                  base_url: str, markers: bool, include: set[str],
                  exclude: set[str]) -> dict[str, Any]:
        """An item as pgstac stored it, as the API serves it: hydrated (in the API),
        its fields chosen, its links, our generated content. `markers`: pgstac's
        do-not-merge marker is somewhere in the text the item came in."""
        if settings.use_api_hydrate:
            item = hydrated(item, settings.exclude_hydrate_markers, markers)
            collection_id, item_id = item.get("collection"), item.get("id")
            if include or exclude:
                item = dict(filter_fields(cast(Item, item), include, exclude))
        else:
            collection_id, item_id = item.get("collection"), item.get("id")
        if not exclude or ("links" not in exclude and collection_id and item_id):
            item["links"] = linker.links(str(collection_id), str(item_id), item.get("links"))
        if self.decorator is not None:
            self.decorator.decorate(item, base_url)
        return item

    async def item_collection(  # type: ignore[override]
        self, collection_id: str, request: Request, bbox: BBox | None = None,
        datetime: str | None = None, limit: int | None = None, query: str | None = None,
        fields: list[str] | None = None, sortby: str | None = None,
        filter_expr: str | None = None, filter_lang: str | None = None,
        token: str | None = None, **kwargs: Any,
    ) -> Response:
        """Stock's items page (same request, same answer), read our way: stock looks the
        collection up before every page; a page with items proves it exists, so here it
        is looked up only to tell an empty page (200) from a missing collection (404)."""
        clean = self._clean_search_args(
            base_args={"collections": [collection_id], "bbox": bbox, "datetime": datetime,
                       "limit": limit, "token": token,
                       "query": orjson.loads(unquote_plus(query)) if query else query},
            filter_query=filter_expr, filter_lang=filter_lang, fields=fields,
            sortby=sortby, **kwargs)
        try:
            search_request = self.pgstac_search_model(**clean)
        except ValidationError as e:
            raise HTTPException(status_code=400,
                                detail=f"Invalid parameters provided {e}") from e
        page = await self._search_base(search_request, request=request)
        if not page.get("features"):
            await self.get_collection(collection_id, request=request)  # 404 if missing
        page["links"] = _self_as_asked(request, await ItemCollectionLinks(
            collection_id=collection_id, request=request).get_links(extra_links=page["links"]))
        return _encoded(page)

    async def get_search(  # type: ignore[override]
        self, request: Request, **kwargs: Any
    ) -> Response:
        """Stock's GET search (same search, same answer), its `self` link the page asked
        for, its parameters kept (stock's names the first page of an unfiltered search)."""
        page = await self._search_base(self.get_search_request(**kwargs), request=request)
        page["links"] = _self_as_asked(
            request, await SearchLinks(request=request).get_links(extra_links=page["links"]))
        return _encoded(page)

    async def post_search(self, *args: Any, **kwargs: Any) -> Response:  # type: ignore[override]
        return _encoded(await super().post_search(*args, **kwargs))

    async def get_item(  # type: ignore[override]
        self, item_id: str, collection_id: str, request: Request, **kwargs: Any
    ) -> Response:
        """One query when the item exists; the collection is looked up only to tell a
        missing collection from a missing item (stock looks it up first, every time). With
        API hydration the query reads the row itself, as `search()` would render it, without
        `search()`'s planning (the request every item page and `get_item` makes)."""
        settings = request.app.state.settings
        if settings.use_api_hydrate:
            async with request.app.state.get_connection(request, "r") as conn:
                stored = await conn.fetchval(queries.STORED_ITEM, collection_id, item_id,
                                             reader_text(reader_of(request)))
            base_url = request_root(request)
            item = None if stored is None else \
                self._served(stored, settings, ItemLinker(base_url), base_url, set(), set())
        else:
            search = self.pgstac_search_model(ids=[item_id], collections=[collection_id],
                                              limit=1)
            found = (await self._search_base(search, request=request))["features"]
            item = found[0] if found else None
        if item is None:
            await self.get_collection(collection_id, request=request)
            raise NotFoundError(f"Item {item_id} in Collection {collection_id} does not exist.")
        return _encoded(item)
