"""The CWL schemas every deployed job's process loads (cwltool's, and schema_salad's
metaschema that a tool's types are made with), made once per worker: built from their
YAML they cost about a second of a core, which every sandbox started ahead (one a job)
would spend again. A worker's own process (`python -m process_api.deployment.cwl_schemas
FILE`) builds and pickles them into a folder of the worker's; each job's sandbox sees that
file read-only at `MOUNT` and loads it in tens of milliseconds (`load`), or builds the
schemas itself where it is missing or unreadable.

The file is the worker's own, written before any job runs and mounted read-only, so no
job's code can change what another job's process unpickles.
"""

from __future__ import annotations

import copyreg
import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: Where a job's process finds the worker's file.
MOUNT = "/run/cwl-schemas.pickle"
#: The CWL versions every run reads (its document's; v1.0: its job order's).
VERSIONS = ("v1.2", "v1.0")
FILE_NAME = "cwl-schemas.pickle"


def _picklable() -> None:
    """schema_salad's NormDict keeps its normaliser in an attribute that pickle's default
    restores after the items, which it needs to store them: rebuilt with it first."""
    from schema_salad.ref_resolver import NormDict

    def reduced(d: Any) -> Any:
        return NormDict, (d.normalize,), None, None, iter(dict.items(d))

    copyreg.pickle(NormDict, reduced)


def build(path: Path) -> None:
    """The schemas of `VERSIONS` built and written to `path` (whole, or not at all)."""
    from cwltool import process
    from schema_salad import schema

    _picklable()
    for version in VERSIONS:
        process.get_schema(version)
    data = pickle.dumps({"schemas": {v: process.SCHEMA_CACHE[v] for v in VERSIONS},
                         "metaschema": schema.get_metaschema()},
                        protocol=pickle.HIGHEST_PROTOCOL)
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.chmod(0o444)
    partial.rename(path)


def made(folder: Path) -> list[tuple[Path, str]]:
    """The worker's file made in `folder` by a process of its own (cwltool loaded there,
    not in the worker), as `(file, where a sandbox sees it)`; none if it could not be
    made (each job's process then builds the schemas itself)."""
    path = folder / FILE_NAME
    done = subprocess.run([sys.executable, "-m", __name__, str(path)], capture_output=True,
                          text=True, env={k: v for k, v in os.environ.items()
                                          if k in ("PATH", "LANG", "HOME")})
    if done.returncode != 0 or not path.is_file():
        logger.warning("the CWL schemas could not be made ahead (%s); each deployed job "
                       "builds its own", done.stderr.strip().splitlines()[-1:] or "no reason")
        return []
    return [(path, MOUNT)]


def load(path: Path = Path(MOUNT)) -> bool:
    """The schemas of the worker's file in cwltool's cache; False: none to load."""
    from cwltool import process
    from schema_salad import schema

    try:
        data = path.read_bytes()
    except OSError:
        return False
    _picklable()
    try:
        made: dict[str, Any] = pickle.loads(data)  # the worker's own file (above)
        schemas, metaschema = made["schemas"], made["metaschema"]
    except Exception:  # made by another cwltool than this one: built as without it
        logger.warning("the CWL schemas made ahead do not load; building them")
        return False
    for version, loaded in schemas.items():
        process.SCHEMA_CACHE.setdefault(version, loaded)
    if schema.cached_metaschema is None:  # what every tool's types are made with
        schema.cached_metaschema = metaschema
    return True


if __name__ == "__main__":
    build(Path(sys.argv[1]))
