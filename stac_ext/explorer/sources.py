"""Where the explorer reads an asset from: `s3://` with the deployment's own access
(`ASSETS_S3`), http(s) through the outbound policy (no redirects; every connection to an
allowed address), and a job's file of this service from the results store, once the
process API has said that the caller may read it (`own_files`). Keys stay here: the
browser only ever sees the answers."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from process_api import (
    OutboundPolicy,
    TargetRefused,
    allowed_http_client,
    s3_filesystem,
    storage_failure,
)
from stac_ext.content.formats import Format
from stac_ext.explorer.problems import ExploreError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Source:
    """An asset to read: its address and format; `job_key`: where the results store keeps
    it when it is a job's file of this service (`<job id>/<path>`), else None."""

    href: str
    format: Format
    job_key: str | None = None

    @property
    def name(self) -> str:
        return urlsplit(self.href).path.rstrip("/").rsplit("/", 1)[-1] or self.href


@dataclass
class Storage:
    """How the service reads assets: `s3`, an `s3` section as processes take it (None:
    anonymous); `results_url` and `results_options`, the results store (fsspec)."""

    s3: dict[str, Any] | None = None
    results_url: str = ""
    results_options: dict[str, Any] = field(default_factory=dict)
    _made: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _once(self, name: str, make: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._made:
                self._made[name] = make()
            return self._made[name]

    def filesystem(self, source: Source) -> tuple[Any, str]:
        """The filesystem holding the source and its path there (blocking: a DNS lookup)."""
        if source.job_key is not None:
            fs, root = self.results()
            return fs, f"{root.rstrip('/')}/{source.job_key}"
        scheme = urlsplit(source.href).scheme.lower()
        if scheme == "s3":
            return self._once("s3", lambda: s3_filesystem(self.s3 or {})), \
                source.href.removeprefix("s3://")
        if scheme in ("http", "https"):
            OutboundPolicy.from_env().check(source.href)
            import fsspec

            return self._once("https", lambda: fsspec.filesystem(
                "https", allow_redirects=False, get_client=allowed_http_client,
                skip_instance_cache=True)), source.href
        raise ExploreError(422, f"The explorer reads s3:// and http(s) addresses; "
                           f"{source.name} is at a `{scheme or 'relative'}` address.")

    def results(self) -> tuple[Any, str]:
        """The results store's filesystem and root (jobs' files, quicklooks)."""
        if not self.results_url:
            raise ExploreError(404, "This service has no results store.")

        def make() -> tuple[Any, str]:
            import fsspec

            return fsspec.core.url_to_fs(self.results_url, **self.results_options)

        found: tuple[Any, str] = self._once("results", make)
        return found


@contextmanager
def read_errors(source: Source) -> Iterator[None]:
    """A storage's or a library's failure as the explorer says it (the file is the user's:
    a failure to read it is never the service's 500)."""
    try:
        yield
    except ExploreError:
        raise
    except TargetRefused as e:
        raise ExploreError(422, f"{source.name}: {e}") from None
    except ImportError as e:  # a format's optional reader (NetCDF classic: scipy)
        raise ExploreError(422, f"{source.name}: this service has no reader for it "
                           f"({e.name}).") from None
    except MemoryError:
        raise ExploreError(413, f"{source.name}: this part is too large to draw here.") \
            from None
    except Exception as e:  # the storages and readers raise many kinds: which one, in words
        failure = storage_failure(e)
        if failure == "refused":
            raise ExploreError(502, f"The storage refused the service's access to "
                               f"{source.href} (ASSETS_S3).") from None
        if failure == "missing":
            raise ExploreError(404, f"{source.href} does not exist.") from None
        if failure == "unreachable":
            raise ExploreError(502, f"The storage of {source.href} cannot be reached.") \
                from None
        logger.info("explorer cannot read %s: %s: %s", source.href, type(e).__name__,
                    str(e).splitlines()[0][:300] if str(e) else "")
        raise ExploreError(422, f"{source.name} could not be read as "
                           f"{source.format.value.capitalize()} ({type(e).__name__}).") \
            from None
