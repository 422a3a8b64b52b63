"""Where a job's results may be published: the catalog its request names, checked when the
job is submitted, by the rule the publisher links by (it refused once the job had run)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from catalogs_ext import may_link, not_yours
from stac_ext.data_api.caller_reads import CallerReads


class PublishingReads(CallerReads):
    """The data API read as a job's caller (`process_api`'s `Catalog`), and whether the
    job's results may be linked into a catalog."""

    async def publish_refusal(self, path: str, caller: Any, project: str | None,
                              service_url: str) -> str | None:
        """Why the results may not be linked into the catalog at `path` (it is hidden from
        the caller, missing, or neither theirs nor of the job's `project`), or None."""
        found = await self.read(f"catalogs/{quote(path, safe='/')}", caller, service_url)
        if not isinstance(found, dict) or not may_link(
                found.get("owner"), found.get("project"), caller.username, project):
            return not_yours(path)
        return None
