"""OGC API Processes under `/processes`: the sub-app, job store, engine, built-in processes.

May import FastAPI, procrastinate, psycopg, jsonschema, joserfc and the standard library;
never `stac_ext` or `catalogs_ext`: the composition root hands it the DSN, the secrets key
and the auth dependency (`ProcessesConfig`).
"""

from pathlib import Path

from process_api.app import ProcessesConfig, create_process_app, lifespan_of
from process_api.engine import Engine, install_engine_schema
from process_api.errors import exception_body
from process_api.registry import Process, Registry
from process_api.secrets import SecretBox

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

__all__ = [
           "MIGRATIONS_DIR",
           "Engine",
           "Process",
           "ProcessesConfig",
           "Registry",
           "SecretBox",
           "create_process_app",
           "exception_body",
           "install_engine_schema",
           "lifespan_of",
]
