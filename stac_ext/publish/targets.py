"""Where a job's results may be published: the catalog its request names, checked when the
job is submitted, by the rule the publisher links by (it refused once the job had run)."""

from __future__ import annotations

from functools import partial
from typing import Any

from catalogs_ext import link_refusal
from stac_ext.data_api.caller_reads import CallerReads


class PublishingReads(CallerReads):
    """The data API read as a job's caller (`process_api`'s `Catalog`), and whether the
    job's results may be linked into a catalog."""

    async def publish_refusal(self, path: str, caller: Any, project: str | None,
                              service_url: str) -> str | None:
        """Why the results may not be linked into the catalog at `path` (it is hidden from
        the caller, missing, or neither theirs nor of the job's `project`), or None."""
        return await link_refusal(partial(self.read, caller=caller, service_url=service_url),
                                  path, caller.username, project)
