"""`/data/subscriptions`: a signed-in user's subscriptions (create, read, change, delete),
each one's feed, delivery log and standing job's runs; the AsyncAPI document."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse

from catalogs_ext import link_refusal
from process_api import OutboundPolicy, TargetRefused, has_credentials
from stac_ext.data_api.search.filter_bounds import bounded_json, cql2_json
from stac_ext.data_api.search.literals import readable_literals
from stac_ext.data_api.search.world_bounds import footprint
from stac_ext.data_api.urls import api_root
from stac_ext.platform.access import Caller, Resource, require
from stac_ext.platform.auth.principal import Principal
from stac_ext.subscriptions import queries
from stac_ext.subscriptions.asyncapi import ASYNCAPI_MEDIA_TYPE, asyncapi
from stac_ext.subscriptions.cloudevents import item_event
from stac_ext.subscriptions.models import (
    SavedSearch,
    StandingJob,
    SubscriptionChange,
    SubscriptionIn,
)
from stac_ext.subscriptions.service_calls import as_user, said
from stac_ext.subscriptions.settings import SubscriptionSettings
from stac_ext.subscriptions.signing import Signer
from stac_ext.subscriptions.standing_jobs import JobRefused, Processes

#: The feed's page, at most.
MAX_PAGE = 1000
#: How many of a log's newest rows one request may ask for.
LogLength = Annotated[int, Query(ge=1, le=MAX_PAGE)]
#: What a paused-by-its-owner subscription's page says.
PAUSED_BY_OWNER = "Paused by its owner."


@dataclass(frozen=True)
class SubscriptionsConfig:
    """What the routes need from the composition root."""

    user: Callable[..., Awaitable[Principal]]  # a valid token of the data API's client
    caller: Callable[[Principal], Caller]  # the principal as the access table takes them
    signer: Signer
    settings: SubscriptionSettings
    data_prefix: str
    #: the process API, for standing jobs (its app set once the service's app is built)
    processes: Callable[[], Processes | None]


def _missing(subscription: uuid.UUID) -> HTTPException:
    return HTTPException(status_code=404, detail=f"Subscription {subscription} not found.")


def _jsonable(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _document(row: Any, root: str) -> dict[str, Any]:
    """A subscription as its owner reads it (no secret: the webhook's is shown once)."""
    url = f"{root}subscriptions/{row['id']}"
    document: dict[str, Any] = {
        "id": str(row["id"]), "title": row["title"], "owner": row["owner"],
        "search": _jsonable(row["search"]), "kinds": list(row["kinds"]),
        "webhook": row["webhook"], "status": row["status"],
        "pausedReason": row["paused_reason"], "events": row["last_number"],
        "created": row["created"].isoformat(), "updated": row["updated"].isoformat(),
        "links": [
            {"rel": "self", "href": url, "type": "application/json"},
            {"rel": "events", "href": f"{url}/events", "type": "application/json",
             "title": "Its events (the feed), from a cursor"},
            {"rel": "describedby", "href": f"{root}subscriptions/asyncapi",
             "type": ASYNCAPI_MEDIA_TYPE, "title": "The channels (AsyncAPI)"}]}
    if row["webhook"]:
        document["delivery"] = {
            "sent": row["delivered_number"], "waiting": row["last_number"] - row[
                "delivered_number"], "failures": row["failures"],
            "failingSince": row["failing_since"].isoformat() if row["failing_since"] else None,
            "nextAttempt": row["next_attempt"].isoformat() if row["next_attempt"] else None,
            "lastError": row["last_error"], "dropped": row["dropped"]}
        document["links"].append({"rel": "deliveries", "href": f"{url}/deliveries",
                                  "type": "application/json", "title": "Its delivery log"})
    if row["job"] is not None:
        document["job"] = _jsonable(row["job"])
        document["links"].append({"rel": "runs", "href": f"{url}/runs",
                                  "type": "application/json",
                                  "title": "Its standing job's runs"})
    return document


async def _checked_search(request: Request, search: SavedSearch, caller: Caller,
                          data_prefix: str) -> dict[str, Any]:
    """The search as it is saved (a CQL2 text filter as CQL2-JSON), once the data API has
    answered it as the caller reads: a search it refuses is refused with its words."""
    if isinstance(search.filter, str):
        search = search.model_copy(update={
            "filter": cql2_json(search.filter, search.filter_lang or "cql2-text"),
            "filter_lang": "cql2-json"})
    elif search.filter is not None:
        bounded_json(search.filter)
        search = search.model_copy(update={"filter_lang": "cql2-json"})
    # saved as the matcher's SQL reads it, as a search reads it: a bbox with heights by
    # its footprint (its solid stopped every subscription's matching), DATE and BBOX
    # literals written as pgstac reads them (a date never matched)
    search = search.model_copy(update={
        "bbox": footprint(search.bbox), "filter": None if search.filter is None
        else readable_literals(search.filter)})
    body = search.as_search()
    if search.collections:  # a typo would never match: said now (collections are public)
        async with request.app.state.get_connection(request, "r") as conn:
            unknown = await conn.fetchval(queries.UNKNOWN_COLLECTIONS, search.collections)
        if unknown:
            raise HTTPException(status_code=404, detail=f"search: no collection "
                                f"{', '.join(unknown)}.")
    prefix = data_prefix.rstrip("/")
    path = f"{prefix}/catalogs/{search.catalog}/_search" if search.catalog \
        else f"{prefix}/search"
    async with as_user(request.app, str(request.base_url), caller.reader) as client:
        answer = await client.post(path, json={**body, "limit": 1})
    if answer.status_code != 200:
        status = 404 if answer.status_code == 404 else 400
        raise HTTPException(status_code=status, detail=f"search: {said(answer)}")
    return {**body, **({"catalog": search.catalog} if search.catalog else {})}


async def _checked_webhook(url: str | None) -> None:
    """A receiver the outbound policy forbids is refused now (it is checked again at each
    sending: an address can change)."""
    if url is None:
        return
    if has_credentials(url):  # kept in the subscription, and sent with every delivery
        raise HTTPException(status_code=400, detail=(
            "webhook: the URL holds a user name or password, which the service never sends "
            "nor keeps: each delivery is signed (`webhook-signature`, with the subscription's "
            "secret) for its receiver to check"))
    try:
        await asyncio.to_thread(OutboundPolicy.from_env().check, url)
    except TargetRefused as e:
        raise HTTPException(status_code=400, detail=f"webhook: {e}") from None


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _delivery(r: asyncpg.Record) -> dict[str, Any]:
    """A row of a webhook's delivery log, as its owner reads it."""
    return {
        "attempted": r["attempted"].isoformat(), "sequence": r["number"],
        "event": str(r["event_id"]) if r["event_id"] else None, "kind": r["kind"],
        "item": r["item"], "status": r["status"], "error": r["error"],
        "milliseconds": r["milliseconds"]}


def _run(r: asyncpg.Record) -> dict[str, Any]:
    """A window of a standing job, as its owner reads it."""
    return {
        "window": r["number"], "status": r["status"], "opened": _when(r["opened"]),
        "closes": _when(r["closes"]), "closed": _when(r["closed"]), "items": r["items"],
        "attempts": r["attempts"], "nextTry": _when(r["next_try"]), "job": r["job_url"]
        or r["job_id"], "jobs": list(r["jobs"]), "message": r["message"]}


def subscriptions_router(prefix: str, config: SubscriptionsConfig) -> APIRouter:
    router = APIRouter(prefix=prefix, tags=["Subscriptions"])
    user = config.user

    def root(request: Request) -> str:
        return api_root(str(request.base_url), config.data_prefix)

    async def own(request: Request, subscription: uuid.UUID, principal: Principal
                  ) -> asyncpg.Record:
        caller = config.caller(principal)
        async with request.app.state.get_connection(request, "r") as conn:
            row = await conn.fetchrow(queries.GET, subscription, principal.username,
                                      caller.admin)
        if row is None:
            raise _missing(subscription)
        return row

    async def owned_log(request: Request, subscription: uuid.UUID, principal: Principal,
                        query: str, limit: int) -> list[asyncpg.Record]:
        """The newest `limit` rows of one of the caller's subscription's logs."""
        await own(request, subscription, principal)
        async with request.app.state.get_connection(request, "r") as conn:
            return await conn.fetch(query, subscription, limit)

    async def job_record(request: Request, job: StandingJob | None, caller: Caller
                         ) -> tuple[dict[str, Any] | None, str | None]:
        if job is None:
            return None, None
        # its runs are shared with its project as its owner's jobs would be (403 here,
        # not a failure at every window)
        require(caller, "share", Resource("job", project=job.project))
        await _publishable(request, job, caller)
        processes = config.processes()
        if processes is None:
            raise HTTPException(status_code=400, detail="job: this service runs no "
                                "standing jobs.")
        try:
            description = await processes.description(job.process, caller.username or "",
                                                       caller.reader, str(request.base_url))
            return processes.checked(job, description)
        except JobRefused as e:
            raise HTTPException(status_code=400, detail=str(e)) from None

    async def _publishable(request: Request, job: StandingJob, caller: Caller) -> None:
        """Its results' `publish` section as the process API checks a job's when it is
        submitted (400 here, not a failure at every window)."""
        publish = job.publish or {}
        if publish.get("visibility") == "project" and job.project is None:
            raise HTTPException(status_code=400, detail=(
                "job.publish.visibility: project shares the results with the job's project: "
                "name one of yours in job.project."))
        if not isinstance(target := publish.get("catalog"), str):
            return
        async with as_user(request.app, str(request.base_url), caller.reader) as client:
            async def read(path: str) -> Any:
                answer = await client.get(f"{config.data_prefix.rstrip('/')}/{path}")
                return answer.json() if answer.status_code == 200 else None

            refused = await link_refusal(read, target, caller.username or "", job.project)
        if refused is not None:
            raise HTTPException(status_code=400, detail=f"job.publish.catalog: {refused}")

    @router.get("/asyncapi", summary="The subscriptions' channels (AsyncAPI 3.0)",
                description="How events reach a subscriber: her webhook (each event "
                "POSTed, signed) and her feed, each message a CloudEvents 1.0 event "
                "naming an item created, updated or deleted.",
                responses={200: {"content": {ASYNCAPI_MEDIA_TYPE: {}}}})
    async def describe(request: Request) -> Response:
        return Response(json.dumps(asyncapi(root(request))), media_type=ASYNCAPI_MEDIA_TYPE)

    @router.post("", status_code=201, summary="Subscribe to a search",
                 description="Saves a search (`collections`, `bbox` or `intersects`, "
                 "`datetime`, `q`, `filter`, `owner`, or a `catalog`'s subtree): each item "
                 "created, updated or deleted that it matches and you may read is then an "
                 "event of its feed and, with a `webhook`, POSTed there signed. The answer "
                 "shows the webhook's signing `secret`, this once. With a `job`, a process "
                 "runs on each window's new items, as you.",
                 responses={409: {"description": "You have as many subscriptions as one "
                                  "user may"}})
    async def create(body: SubscriptionIn, request: Request,
                     principal: Principal = Depends(user)) -> JSONResponse:
        caller = config.caller(principal)
        search = await _checked_search(request, body.search, caller, config.data_prefix)
        await _checked_webhook(body.webhook)
        job, sealed = await job_record(request, body.job, caller)
        subscription = uuid.uuid4()
        async with request.app.state.get_connection(request, "w") as conn:
            row = await conn.fetchrow(
                queries.CREATE, subscription, principal.username, body.title,
                json.dumps(search), search.get("catalog"), list(body.kinds),
                json.dumps(caller.reader), body.webhook, str(request.base_url),
                json.dumps(job) if job is not None else None, sealed,
                config.settings.subscriptions_per_user)
        if row is None:
            raise HTTPException(status_code=409, detail=(
                f"You have {config.settings.subscriptions_per_user} subscriptions, the most "
                "one user may: delete one first."))
        document = _document(row, root(request))
        if body.webhook:
            document["secret"] = config.signer.shown(subscription, row["secret_version"])
        return JSONResponse(document, status_code=201,
                            headers={"Location": document["links"][0]["href"]})

    @router.get("", summary="Your subscriptions")
    async def list_subscriptions(
        request: Request, principal: Principal = Depends(user),
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    ) -> dict:
        async with request.app.state.get_connection(request, "r") as conn:
            rows = await conn.fetch(queries.LIST, principal.username, limit + 1, offset)
        base = root(request)
        links = [{"rel": "self", "href": str(request.url), "type": "application/json"},
                 {"rel": "service-desc", "href": f"{base}subscriptions/asyncapi",
                  "type": ASYNCAPI_MEDIA_TYPE, "title": "The channels (AsyncAPI)"}]
        if len(rows) > limit:
            links.append({"rel": "next", "type": "application/json", "href": str(
                request.url.include_query_params(offset=offset + limit, limit=limit))})
        return {"subscriptions": [_document(r, base) for r in rows[:limit]], "links": links}

    @router.get("/{subscription}", summary="A subscription")
    async def get_subscription(subscription: uuid.UUID, request: Request,
                               principal: Principal = Depends(user)) -> dict:
        return _document(await own(request, subscription, principal), root(request))

    @router.patch("/{subscription}", summary="Change a subscription; pause or resume it",
                  description="Only the fields given change. `status`: `paused` holds its "
                  "events (up to its backlog) until `active` again; `active` also resumes "
                  "one the service paused for its failing webhook. Saving it again takes "
                  "your groups from this request's token.")
    async def change(subscription: uuid.UUID, body: SubscriptionChange, request: Request,
                     principal: Principal = Depends(user)) -> dict:
        row = await own(request, subscription, principal)
        caller = config.caller(principal)
        given = body.model_fields_set
        search = _jsonable(row["search"])
        if "search" in given and body.search is not None:
            search = await _checked_search(request, body.search, caller, config.data_prefix)
        webhook = body.webhook if "webhook" in given else row["webhook"]
        if webhook != row["webhook"]:
            await _checked_webhook(webhook)
        status = body.status or row["status"]
        resumed = body.status == "active" and row["status"] == "paused"
        reason = None if status == "active" else (
            PAUSED_BY_OWNER if body.status == "paused" and row["status"] == "active"
            else row["paused_reason"])
        kinds = list(body.kinds) if body.kinds is not None else list(row["kinds"])
        title = body.title if "title" in given else row["title"]
        # saved again by its owner: her groups now; by an administrator: hers as they were
        reader = caller.reader if principal.username == row["owner"] else _jsonable(
            row["reader"])
        async with request.app.state.get_connection(request, "w") as conn:
            changed = await conn.fetchrow(
                queries.CHANGE, subscription, title, json.dumps(search), search.get("catalog"),
                kinds, json.dumps(reader), webhook, status, reason, resumed)
        if changed is None:
            raise _missing(subscription)
        return _document(changed, root(request))

    @router.post("/{subscription}/secret", summary="A new webhook secret",
                 description="Its webhook is signed with a new secret from now on, shown "
                 "in this answer, once.")
    async def new_secret(subscription: uuid.UUID, request: Request,
                         principal: Principal = Depends(user)) -> dict:
        row = await own(request, subscription, principal)
        if not row["webhook"]:
            raise HTTPException(status_code=400, detail="This subscription has no webhook.")
        async with request.app.state.get_connection(request, "w") as conn:
            version = await conn.fetchval(queries.NEW_SECRET, subscription)
        return {"secret": config.signer.shown(subscription, version)}

    @router.delete("/{subscription}", status_code=204, summary="Delete a subscription",
                   description="Its events, delivery log and windows go with it; jobs "
                   "already submitted and what they published stay.")
    async def delete(subscription: uuid.UUID, request: Request,
                     principal: Principal = Depends(user)) -> Response:
        await own(request, subscription, principal)
        async with request.app.state.get_connection(request, "w") as conn:
            await conn.execute(queries.DELETE, subscription)
        return Response(status_code=204)

    @router.get("/{subscription}/events", summary="Its events (the feed)",
                description="The events matched since `after` (an event's `sequence`; "
                "0: from the oldest kept), oldest first, as CloudEvents; `next` pages on. "
                "An event whose item you may not read now is left out.")
    async def feed(subscription: uuid.UUID, request: Request,
                   principal: Principal = Depends(user),
                   after: Annotated[int, Query(ge=0, le=2**62)] = 0,
                   limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100) -> dict:
        row = await own(request, subscription, principal)
        caller = config.caller(principal)
        async with request.app.state.get_connection(request, "r") as conn:
            rows = await conn.fetch(queries.FEED, subscription, after,
                                    json.dumps(caller.reader), caller.username, limit)
        base = root(request)
        events = [item_event(r, base, str(subscription)) for r in rows if r["readable"]]
        cursor = rows[-1]["number"] if rows else after
        links = [{"rel": "self", "href": str(request.url), "type": "application/json"}]
        if len(rows) == limit or cursor < row["last_number"]:
            links.append({"rel": "next", "type": "application/json", "href": str(
                request.url.include_query_params(after=cursor, limit=limit))})
        return {"events": events, "cursor": cursor, "links": links}

    def log_route(name: str, query: str, summary: str, description: str,
                  listed: Callable[[asyncpg.Record], dict[str, Any]]) -> None:
        """`/{subscription}/<name>`: one of a subscription's logs, its newest rows first,
        each as `listed` shows it."""

        async def log(subscription: uuid.UUID, request: Request,
                      principal: Principal = Depends(user),
                      limit: LogLength = 100) -> dict:
            rows = await owned_log(request, subscription, principal, query, limit)
            return {name: [listed(r) for r in rows]}

        router.get(f"/{{subscription}}/{name}", name=name, summary=summary,
                   description=description)(log)

    log_route("deliveries", queries.DELIVERIES, "Its delivery log",
              "Its webhook's last attempts, newest first: the event, the receiver's status "
              "(none: no answer), the error.", _delivery)
    log_route("runs", queries.RUNS, "Its standing job's runs",
              "Each window, newest first: its items, its status (`open`, `due`, `submitting`, "
              "`submitted`, `successful`, `failed`), attempts and job.", _run)

    return router
