"""OGC API Processes under `/processes`: the sub-app, job store, engine, built-in processes.

May import FastAPI, procrastinate, psycopg, jsonschema, joserfc, prometheus-client,
OpenTelemetry, cwltool (and its loader's schema-salad and ruamel.yaml), httpx, fsspec and
s3fs (jobs' data), prov and rocrate (jobs' provenance) and the standard library;
never `stac_ext` or `catalogs_ext`: the composition root hands it the DSN, the secrets key
and the auth dependency (`ProcessesConfig`).

The public exports are `_EXPORTS` (name -> module), imported as well in the `TYPE_CHECKING`
block for type checkers (`tests/processes/test_exports.py` holds the two equal). At run time
each loads from its module on first use: a job's child process imports modules of
this package and must not pay for FastAPI and procrastinate (0.7 s of imports per job).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

if TYPE_CHECKING:
    from process_api.app import ProcessesConfig as ProcessesConfig
    from process_api.app import create_process_app as create_process_app
    from process_api.app import lifespan_of as lifespan_of
    from process_api.callbacks import Notifier as Notifier
    from process_api.definition import JOB_DATABASE_URL as JOB_DATABASE_URL
    from process_api.definition import Context as Context
    from process_api.definition import Process as Process
    from process_api.definitions import SHIPPED as SHIPPED
    from process_api.definitions import DefinitionError as DefinitionError
    from process_api.definitions import load_definitions as load_definitions
    from process_api.documents import HAS_PROVENANCE as HAS_PROVENANCE
    from process_api.engine import JOB_REFUSALS as JOB_REFUSALS
    from process_api.engine import Engine as Engine
    from process_api.entry import load_entry as load_entry
    from process_api.errors import exception_body as exception_body
    from process_api.file_inputs import Catalog as Catalog
    from process_api.isolation import JOB_ENVIRONMENT as JOB_ENVIRONMENT
    from process_api.isolation import job_environment as job_environment
    from process_api.job_data import DataConfig as DataConfig
    from process_api.openapi30 import OPENAPI30_MEDIA_TYPE as OPENAPI30_MEDIA_TYPE
    from process_api.outbound import OutboundPolicy as OutboundPolicy
    from process_api.outbound import TargetRefused as TargetRefused
    from process_api.outbound import allowed_http_client as allowed_http_client
    from process_api.processes.s3_manifest import s3_filesystem as s3_filesystem
    from process_api.processes.sections import DISPLAY as DISPLAY
    from process_api.processes.sections import RESOURCES as RESOURCES
    from process_api.processes.sections import S3 as S3
    from process_api.queue import install_engine_schema as install_engine_schema
    from process_api.quotas import Quotas as Quotas
    from process_api.registry import Registry as Registry
    from process_api.resources import MEMORY_PATTERN as MEMORY_PATTERN
    from process_api.resources import Ceilings as Ceilings
    from process_api.resources import parse_memory as parse_memory
    from process_api.sandbox import Sandbox as Sandbox
    from process_api.sandbox import SandboxError as SandboxError
    from process_api.secrets import SecretBox as SecretBox
    from process_api.staging import StageLimits as StageLimits
    from process_api.staging import StagingError as StagingError
    from process_api.staging import storage_failure as storage_failure


#: name -> module of each public export (the `TYPE_CHECKING` block above imports the same,
#: for type checkers; a test holds the two equal)
_EXPORTS = {
    "ProcessesConfig": "process_api.app",
    "create_process_app": "process_api.app",
    "lifespan_of": "process_api.app",
    "Notifier": "process_api.callbacks",
    "JOB_DATABASE_URL": "process_api.definition",
    "Context": "process_api.definition",
    "Process": "process_api.definition",
    "SHIPPED": "process_api.definitions",
    "DefinitionError": "process_api.definitions",
    "load_definitions": "process_api.definitions",
    "HAS_PROVENANCE": "process_api.documents",
    "JOB_REFUSALS": "process_api.engine",
    "Engine": "process_api.engine",
    "load_entry": "process_api.entry",
    "exception_body": "process_api.errors",
    "Catalog": "process_api.file_inputs",
    "JOB_ENVIRONMENT": "process_api.isolation",
    "job_environment": "process_api.isolation",
    "DataConfig": "process_api.job_data",
    "OPENAPI30_MEDIA_TYPE": "process_api.openapi30",
    "OutboundPolicy": "process_api.outbound",
    "TargetRefused": "process_api.outbound",
    "allowed_http_client": "process_api.outbound",
    "s3_filesystem": "process_api.processes.s3_manifest",
    "MEMORY_PATTERN": "process_api.resources",
    "Ceilings": "process_api.resources",
    "parse_memory": "process_api.resources",
    "DISPLAY": "process_api.processes.sections",
    "RESOURCES": "process_api.processes.sections",
    "S3": "process_api.processes.sections",
    "install_engine_schema": "process_api.queue",
    "Quotas": "process_api.quotas",
    "Registry": "process_api.registry",
    "Sandbox": "process_api.sandbox",
    "SandboxError": "process_api.sandbox",
    "SecretBox": "process_api.secrets",
    "StageLimits": "process_api.staging",
    "StagingError": "process_api.staging",
    "storage_failure": "process_api.staging",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'process_api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
