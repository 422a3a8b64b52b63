"""OGC API Processes under `/processes`: the sub-app, job store, engine, built-in processes.

May import FastAPI, procrastinate, psycopg, jsonschema, joserfc and the standard library;
never `stac_ext` or `catalogs_ext`: the composition root hands it the DSN, the secrets key
and the auth dependency (`ProcessesConfig`).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

# Exports load on first use: each job's child process imports process modules from this
# package and must not pay for FastAPI and procrastinate (0.7 s of imports per job).
_EXPORTS = {
    "ProcessesConfig": "process_api.app", "create_process_app": "process_api.app",
    "lifespan_of": "process_api.app", "Engine": "process_api.engine",
    "install_engine_schema": "process_api.engine", "exception_body": "process_api.errors",
    "Process": "process_api.registry", "Registry": "process_api.registry",
    "SecretBox": "process_api.secrets",
}

if TYPE_CHECKING:
    from process_api.app import ProcessesConfig, create_process_app, lifespan_of
    from process_api.engine import Engine, install_engine_schema
    from process_api.errors import exception_body
    from process_api.registry import Process, Registry
    from process_api.secrets import SecretBox


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'process_api' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


# literal, so that linters see the lazy names as exported
__all__ = ["MIGRATIONS_DIR", "Engine", "Process", "ProcessesConfig", "Registry", "SecretBox",
           "create_process_app", "exception_body", "install_engine_schema", "lifespan_of"]
