"""A job's data in and out, done by its worker outside the job's sandbox (which has no
network): the files its inputs reference, fetched into a folder the sandbox mounts
read-only (bounded in files and bytes, through the outbound policy, with the request's
storage credentials), and the files it wrote, put in the caller's storage or the service's
results store (`ResultsStore`).

Every file gets a SHA-256 checksum as a multihash (STAC's `file:checksum`)."""

from __future__ import annotations

import hashlib
import mimetypes
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from fsspec.callbacks import Callback

from process_api.processes.outbound import OutboundPolicy, TargetRefused, allowed_http_client
from process_api.processes.resources import quantity
from process_api.processes.s3_manifest import s3_filesystem

#: Bytes read or written at a time.
CHUNK = 1 << 20
#: The media types of the formats the catalog describes (others: by file extension).
MEDIA_TYPES = {".nc": "application/netcdf", ".parquet": "application/vnd.apache.parquet",
               ".zarr": "application/vnd+zarr", ".csv": "text/csv", ".json": "application/json",
               ".tif": "image/tiff; application=geotiff"}


#: A file of the service's store after its API's address: `jobs/<job id>/files/<path>`.
_FILES = re.compile(r"jobs/([0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12})/files/"
                    r"([^?#]+)$")


class StagingError(RuntimeError):
    """A job's data could not be moved; the message is for its owner."""


def multihash(digest: Any) -> str:
    """A SHA-256 digest as STAC's `file:checksum` writes it (multihash, hex)."""
    return "1220" + digest.hexdigest()


def media_type(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    return MEDIA_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or \
        "application/octet-stream"


def safe_name(href: str) -> str:
    """A file's name from its URL, safe as one path component."""
    name = PurePosixPath(urlsplit(href).path).name
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")[:200] or "data"


@dataclass(frozen=True)
class StageLimits:
    files: int = 1000
    bytes: int = 10 * 2**30
    #: A source that sends no byte for this long fails the job, named.
    stall_seconds: float = 30.0


#: What a storage's failure was, whatever its client raised: `refused` (the keys),
#: `missing` (no such bucket or object), `unreachable`; None for anything else.
Failure = Literal["refused", "missing", "unreachable"]


def storage_failure(error: Exception) -> Failure | None:
    """fsspec, s3fs and botocore raise many kinds: which one this is, in words."""
    text = f"{type(error).__name__} {error}".lower()
    # a status is a number of its own: an endpoint's port (127.0.0.1:40312) is none
    if isinstance(error, PermissionError) or re.search(
            r"accessdenied|forbidden|signature|invalidaccesskeyid|(?<![\d.:])403(?!\d)", text):
        return "refused"
    if isinstance(error, FileNotFoundError) or re.search(
            r"nosuchkey|nosuchbucket|(?<![\d.:])404(?!\d)", text):
        return "missing"
    if isinstance(error, OSError | ConnectionError | TimeoutError) or any(
            word in type(error).__name__ for word in ("Connect", "Endpoint", "Timeout")):
        return "unreachable"
    return None


def _wrapped(error: BaseException) -> BaseException:
    """The failure fsspec's HTTP files wrap: they say FileNotFoundError for any (a 403, a
    500, a refused connection)."""
    while isinstance(error, FileNotFoundError) and error.__cause__ is not None:
        error = error.__cause__
    return error


def _storage_error(error: Exception, href: str) -> StagingError:
    cause = _wrapped(error)
    if isinstance(cause, TargetRefused):
        return StagingError(f"{href}: {cause}")
    status = getattr(cause, "status", None)  # an HTTP server's answer (aiohttp's error)
    if not href.startswith("s3://") and isinstance(status, int) and status != 404:
        if status in (401, 403):
            return StagingError(f"The server of {href} refused access (HTTP {status}): a "
                                "job reads a URL as anyone would, without credentials.")
        return StagingError(f"{href} could not be read: its server answered HTTP {status}.")
    failure = storage_failure(cause if isinstance(cause, Exception) else error)
    if failure == "refused":
        return StagingError(f"The object storage refused access to {href}: check "
                            "s3.accessKeyId and s3.secretAccessKey (and sessionToken).")
    if failure == "missing":
        return StagingError(f"{href} does not exist.")
    if failure == "unreachable" and href.startswith("s3://"):
        return StagingError(f"{href} could not be read: its object storage did not answer "
                            f"({type(error).__name__}). An s3:// file is read at the job's "
                            "s3.endpoint, AWS's when it names none.")
    return StagingError(f"{href} could not be read ({type(error).__name__}).")


def _over(limits: StageLimits, href: str) -> StagingError:
    return StagingError(f"Stage-in stopped: the job's inputs are more than "
                        f"{quantity(limits.bytes)} (JOB_STAGE_BYTES), at {href}.")


def stalled(href: str | None, limits: StageLimits) -> StagingError:
    return StagingError(f"Stage-in stopped: {href} sent nothing for "
                        f"{limits.stall_seconds:g} s (JOB_STAGE_STALL_SECONDS).")


class StageWatch:
    """What the worker and the thread fetching a job's inputs share: the file being
    fetched and when its last byte came (a stalled source is seen from outside, its read
    blocked), and why the worker stopped the staging (dismissed, out of time), which the
    fetch meets at its next bytes."""

    def __init__(self) -> None:
        self.href: str | None = None
        self.last = time.monotonic()
        self._stopped: StagingError | None = None
        self._lock = threading.Lock()

    def fetching(self, href: str) -> None:
        self.href, self.last = href, time.monotonic()

    def arrived(self) -> None:
        self.last = time.monotonic()
        if self._stopped is not None:
            raise self._stopped

    def stop(self, why: StagingError) -> None:
        with self._lock:
            self._stopped = self._stopped or why

    @property
    def stopped(self) -> StagingError | None:
        return self._stopped


class _Counted(Callback):
    """fsspec's progress hook of one file's copy, told of each chunk as it is written: the
    copy stops past `room` bytes, whatever its server said it would send, and when the
    staging is stopped."""

    def __init__(self, href: str, room: int, limits: StageLimits, watch: StageWatch) -> None:
        super().__init__()
        self.href, self.room, self.limits, self.watch = href, room, limits, watch

    def call(self, hook_name: str | None = None, **kwargs: Any) -> None:
        self.watch.arrived()
        if self.value > self.room:
            raise _over(self.limits, self.href)


def _looks_like_html(path: Path) -> bool:
    with path.open("rb") as data:
        head = data.read(512).lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


class Fetcher:
    """Fetches the data a job reads: `s3://` with the caller's credentials, http(s) through
    the outbound policy (no redirects); each file in one streamed request, counted as it
    arrives (a file over the room left is not fetched, nor kept past it)."""

    def __init__(self, s3: dict[str, Any], limits: StageLimits, watch: StageWatch,
                 store: ResultsStore | None = None) -> None:
        self.s3 = s3
        self.limits = limits
        self.watch = watch
        self.store = store  # the service's results store (a file of it given by its key)
        self._s3fs: Any = None
        self._https: Any = None

    def _source(self, href: str, key: str | None) -> tuple[Any, str]:
        if key is not None:
            if self.store is None:
                raise StagingError(f"{href}: this service has no results store "
                                   "(RESULTS_STORE).")
            return self.store.fs, self.store.path(key)
        if href.startswith("s3://"):
            if self.s3.get("enabled") is False:
                raise StagingError(f"{href}: S3 access is disabled (s3.enabled = false).")
            if self._s3fs is None:
                self._s3fs = s3_filesystem(self.s3, read_timeout=self.limits.stall_seconds)
            return self._s3fs, href.removeprefix("s3://")
        import aiohttp
        import fsspec

        OutboundPolicy.from_env().check(href)
        if self._https is None:
            stall = self.limits.stall_seconds  # a blocked read ends, so does its thread
            self._https = fsspec.filesystem(
                "https", allow_redirects=False, get_client=allowed_http_client,
                skip_instance_cache=True, client_kwargs={"timeout": aiohttp.ClientTimeout(
                    total=None, sock_connect=stall, sock_read=stall)})
        return self._https, href

    def fetch(self, href: str, target: Path, room: int, key: str | None = None
              ) -> tuple[int, str]:
        """`href` into `target`, if it fits in `room` bytes: its size and checksum; a file
        of the service's results store (`key`, the submission checked its reader) read from
        the store, not over HTTP, where the worker is no one."""
        self.watch.fetching(href)
        try:
            fs, path = self._source(href, key)
            info = fs.info(path)
            announced = info.get("size")
            if announced is not None and int(announced) > room:
                raise _over(self.limits, href)
            self.watch.arrived()
            fs.get_file(path, str(target), callback=_Counted(href, room, self.limits,
                                                               self.watch),
                        **({} if key is not None else {"max_concurrency": 1}
                           if href.startswith("s3://") else {"chunk_size": CHUNK}))
        except StagingError:
            target.unlink(missing_ok=True)
            raise
        except Exception as e:  # fsspec and its storages raise many kinds: say which
            target.unlink(missing_ok=True)
            if self.watch.stopped is not None:
                raise self.watch.stopped from None
            if isinstance(e, TimeoutError) or "Timeout" in type(e).__name__:
                raise stalled(href, self.limits) from None
            raise _storage_error(e, href) from None
        if key is None and not href.startswith("s3://") and (
                info.get("mimetype") == "text/html" or _looks_like_html(target)):
            target.unlink()
            raise StagingError(
                f"{href} is a web page (HTML), not data: give the data file's own URL, or "
                "the address of its item in this catalog.")
        digest, size = hashlib.sha256(), 0
        with target.open("rb") as data:
            while chunk := data.read(CHUNK):
                size += len(chunk)
                digest.update(chunk)
        return size, multihash(digest)


def stage_in(staging: list[dict[str, Any]], folder: Path, s3: dict[str, Any],
             limits: StageLimits, mount: str, watch: StageWatch | None = None,
             store: ResultsStore | None = None) -> list[dict[str, Any]]:
    """Fetch every file of `staging` into `folder` (`<n>/<name>`); the staging with each
    file's `path` (where the job sees `folder`: `mount`), `size` and `checksum`; a file
    with a `key` from the service's results store (`store`).
    StagingError when one cannot be read, the whole is over the limits, or `watch` was
    stopped (the caller removes the folder)."""
    watch = watch or StageWatch()
    fetcher = Fetcher(s3, limits, watch, store)
    total, count = 0, 0
    staged = []
    for entry in staging:
        files = []
        for file in entry["files"]:
            if watch.stopped is not None:
                raise watch.stopped
            count += 1
            if count > limits.files:
                raise StagingError(f"The job's inputs are more than {limits.files} files "
                                   "(JOB_STAGE_FILES).")
            href, name = file["href"], safe_name(file["href"])
            target = folder / str(count) / name
            target.parent.mkdir(parents=True)
            size, checksum = fetcher.fetch(href, target, limits.bytes - total,
                                           file.get("key"))
            total += size
            files.append({**file, "path": f"{mount}/{count}/{name}", "size": size,
                          "checksum": checksum})
        staged.append({**entry, "files": files})
    return staged


@dataclass(frozen=True)
class ResultsStore:
    """Where a job's files go: a filesystem (fsspec) and a root in it; `href` makes a stored
    key's public address."""

    fs: Any
    root: str
    href: Callable[[str], str]

    def path(self, key: str) -> str:
        """Where `key` is in the filesystem."""
        return f"{self.root.rstrip('/')}/{key}"

    def put(self, local: Path, key: str) -> str:
        """`local` stored at `key` (under the root): its href."""
        remote = self.path(key)
        try:
            if getattr(self.fs, "local_file", False):  # a folder: its parents made first
                self.fs.makedirs(remote.rsplit("/", 1)[0], exist_ok=True)
            self.fs.put_file(str(local), remote)
        except Exception as e:
            raise _storage_error(e, f"{self.href(key)} (writing)") from None
        return self.href(key)

    def open(self, key: str) -> Any:
        return self.fs.open(self.path(key), "rb", block_size=CHUNK)

    def keys(self) -> list[str]:
        """Every file's key."""
        root = self.root.rstrip("/")
        return sorted(path.removeprefix(root).lstrip("/") for path in self.fs.find(root))

    def remove(self, keys: list[str]) -> None:
        """The files of `keys` removed; in a folder, the folders they leave empty too."""
        for key in keys:
            if self.fs.exists(path := self.path(key)):
                self.fs.rm(path)
                if getattr(self.fs, "local_file", False):
                    _without_empty_folders(Path(path).parent, Path(self.root))


def _without_empty_folders(folder: Path, root: Path) -> None:
    """`folder` and its parents below `root` removed while they are empty."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone)
            return
        folder = folder.parent


def caller_store(prefix: str, s3: dict[str, Any]) -> ResultsStore:
    """The caller's storage: `prefix` (`s3://bucket/path`), written with their keys."""
    if s3.get("enabled") is False:
        raise StagingError("results.prefix: S3 access is disabled (s3.enabled = false).")
    root = prefix.removeprefix("s3://").rstrip("/")
    try:
        fs = s3_filesystem(s3)
    except TargetRefused as e:
        raise StagingError(f"results.prefix: {e}") from None
    return ResultsStore(fs, root, lambda key: f"s3://{root}/{key}")


def files_href(api_url: str, key: str) -> str:
    """Where the API serves a file of the service's store (`<job id>/<path>`)."""
    job, _, path = key.partition("/")
    return f"{api_url}jobs/{job}/files/{path}"


def files_key(api_url: str, href: str) -> tuple[str, str] | None:
    """The job and path of the file of the service's store `href` names (`files_href`'s
    inverse), or None: another address."""
    return job_file_of(href[len(api_url):]) if href.startswith(api_url) else None


def job_file_of(path: str) -> tuple[str, str] | None:
    """The job and file path of a job's file address after the process API's
    (`jobs/<job id>/files/<path>`, quoted), or None: not one, or a path that steps out."""
    found = _FILES.match(path)
    if found is None:
        return None
    job, file = found[1].lower(), unquote(found[2])
    if any(part in ("", ".", "..") for part in file.split("/")):
        return None
    return job, file


def service_filesystem(url: str, options: dict[str, Any]) -> tuple[Any, str]:
    """The service's results store (`RESULTS_STORE`: a folder, or `s3://bucket/prefix`
    with `options`): its filesystem and root (a folder made if missing)."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(url, **options)
    if urlsplit(url).scheme in ("", "file"):
        Path(root).mkdir(parents=True, exist_ok=True)
    return fs, root
