"""OGC API Processes under `/processes`: the sub-app, job store, engine, built-in processes.

In layers, each importing only those below it: `api` (HTTP), `jobs` (the engine),
`deployment` (Part 2's packages), `data` (a job's files), `runner` (where a job's code
runs), `processes` (what a process is; the built-ins); its own settings (`settings`:
`ProcessSettings`, handed whole to the engine, which composes its parts from them). Of
ours, imports the platform only; never the data API or `catalogs_ext`: the composition
root hands it the DSNs, the secrets key, the auth dependencies and the catalog reader
(`ProcessesConfig`).

The public exports are `_EXPORTS` (name -> module), imported as well in the `TYPE_CHECKING`
block for type checkers (`tests/processes/test_exports.py` holds the two equal). At run time
each loads from its module on first use: a job's child process imports modules of
this package and must not pay for FastAPI and procrastinate.

Third-party imports: `pydantic`, `pydantic_settings`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: Its SQL functions, one source per concern (applied again when one changes).
FUNCTIONS_DIR = Path(__file__).parent / "functions"

if TYPE_CHECKING:
    from process_api.api.app import ProcessesConfig as ProcessesConfig
    from process_api.api.app import create_process_app as create_process_app
    from process_api.api.app import lifespan_of as lifespan_of
    from process_api.api.openapi30 import OPENAPI30_MEDIA_TYPE as OPENAPI30_MEDIA_TYPE
    from process_api.api.openapi30 import openapi30 as openapi30
    from process_api.data.file_inputs import Catalog as Catalog
    from process_api.data.staging import ResultsStore as ResultsStore
    from process_api.data.staging import StageLimits as StageLimits
    from process_api.data.staging import StagingError as StagingError
    from process_api.data.staging import job_file_of as job_file_of
    from process_api.data.staging import service_filesystem as service_filesystem
    from process_api.data.staging import storage_failure as storage_failure
    from process_api.jobs.callbacks import Notifier as Notifier
    from process_api.jobs.engine import Engine as Engine
    from process_api.jobs.engine import slurm_site as slurm_site
    from process_api.jobs.job_data import DataConfig as DataConfig
    from process_api.jobs.job_status import ENDED as ENDED
    from process_api.jobs.job_status import JOB_LIST_STATUSES as JOB_LIST_STATUSES
    from process_api.jobs.queue import install_engine_schema as install_engine_schema
    from process_api.jobs.quotas import QueueFull as QueueFull
    from process_api.jobs.quotas import Quotas as Quotas
    from process_api.jobs.results_gc import orphans as orphans
    from process_api.jobs.results_gc import records_of as records_of
    from process_api.jobs.secrets import SecretBox as SecretBox
    from process_api.jobs.secrets import merge_secrets as merge_secrets
    from process_api.jobs.secrets import split_secrets as split_secrets
    from process_api.jobs.status import HAS_PROVENANCE as HAS_PROVENANCE
    from process_api.jobs.submissions import JOB_REFUSALS as JOB_REFUSALS
    from process_api.processes.definition import JOB_DATABASE_URL as JOB_DATABASE_URL
    from process_api.processes.definition import Context as Context
    from process_api.processes.definition import Process as Process
    from process_api.processes.definitions import SHIPPED as SHIPPED
    from process_api.processes.definitions import DefinitionError as DefinitionError
    from process_api.processes.definitions import load_definitions as load_definitions
    from process_api.processes.entry import load_entry as load_entry
    from process_api.processes.failure import JobFailed as JobFailed
    from process_api.processes.outbound import OutboundPolicy as OutboundPolicy
    from process_api.processes.outbound import OutboundSettings as OutboundSettings
    from process_api.processes.outbound import TargetRefused as TargetRefused
    from process_api.processes.outbound import allowed_http_client as allowed_http_client
    from process_api.processes.outbound import has_credentials as has_credentials
    from process_api.processes.registry import Registry as Registry
    from process_api.processes.resources import MEMORY_PATTERN as MEMORY_PATTERN
    from process_api.processes.resources import Ceilings as Ceilings
    from process_api.processes.resources import parse_memory as parse_memory
    from process_api.processes.s3_manifest import s3_filesystem as s3_filesystem
    from process_api.processes.sections import DISPLAY as DISPLAY
    from process_api.processes.sections import RESOURCES as RESOURCES
    from process_api.processes.sections import S3 as S3
    from process_api.runner.containers import ImageRefused as ImageRefused
    from process_api.runner.containers import Podman as Podman
    from process_api.runner.isolation import JOB_ENVIRONMENT as JOB_ENVIRONMENT
    from process_api.runner.isolation import job_environment as job_environment
    from process_api.runner.sandbox import Sandbox as Sandbox
    from process_api.runner.sandbox import SandboxError as SandboxError
    from process_api.runner.slurm import Slurm as Slurm
    from process_api.runner.slurm import SlurmError as SlurmError
    from process_api.settings import ProcessSettings as ProcessSettings


#: name -> module of each public export (the `TYPE_CHECKING` block above imports the same,
#: for type checkers; a test holds the two equal)
_EXPORTS = {
    "ProcessesConfig": "process_api.api.app",
    "create_process_app": "process_api.api.app",
    "lifespan_of": "process_api.api.app",
    "Notifier": "process_api.jobs.callbacks",
    "JOB_DATABASE_URL": "process_api.processes.definition",
    "Context": "process_api.processes.definition",
    "Process": "process_api.processes.definition",
    "SHIPPED": "process_api.processes.definitions",
    "DefinitionError": "process_api.processes.definitions",
    "load_definitions": "process_api.processes.definitions",
    "HAS_PROVENANCE": "process_api.jobs.status",
    "JOB_REFUSALS": "process_api.jobs.submissions",
    "slurm_site": "process_api.jobs.engine",
    "ProcessSettings": "process_api.settings",
    "OutboundSettings": "process_api.processes.outbound",
    "Engine": "process_api.jobs.engine",
    "load_entry": "process_api.processes.entry",
    "JobFailed": "process_api.processes.failure",
    "Catalog": "process_api.data.file_inputs",
    "JOB_ENVIRONMENT": "process_api.runner.isolation",
    "ImageRefused": "process_api.runner.containers",
    "Podman": "process_api.runner.containers",
    "job_environment": "process_api.runner.isolation",
    "DataConfig": "process_api.jobs.job_data",
    "ENDED": "process_api.jobs.job_status",
    "JOB_LIST_STATUSES": "process_api.jobs.job_status",
    "OPENAPI30_MEDIA_TYPE": "process_api.api.openapi30",
    "openapi30": "process_api.api.openapi30",
    "OutboundPolicy": "process_api.processes.outbound",
    "TargetRefused": "process_api.processes.outbound",
    "has_credentials": "process_api.processes.outbound",
    "allowed_http_client": "process_api.processes.outbound",
    "s3_filesystem": "process_api.processes.s3_manifest",
    "MEMORY_PATTERN": "process_api.processes.resources",
    "Ceilings": "process_api.processes.resources",
    "parse_memory": "process_api.processes.resources",
    "DISPLAY": "process_api.processes.sections",
    "RESOURCES": "process_api.processes.sections",
    "S3": "process_api.processes.sections",
    "install_engine_schema": "process_api.jobs.queue",
    "QueueFull": "process_api.jobs.quotas",
    "Quotas": "process_api.jobs.quotas",
    "Registry": "process_api.processes.registry",
    "Sandbox": "process_api.runner.sandbox",
    "SandboxError": "process_api.runner.sandbox",
    "Slurm": "process_api.runner.slurm",
    "SlurmError": "process_api.runner.slurm",
    "SecretBox": "process_api.jobs.secrets",
    "ResultsStore": "process_api.data.staging",
    "merge_secrets": "process_api.jobs.secrets",
    "split_secrets": "process_api.jobs.secrets",
    "StageLimits": "process_api.data.staging",
    "service_filesystem": "process_api.data.staging",
    "orphans": "process_api.jobs.results_gc",
    "records_of": "process_api.jobs.results_gc",
    "StagingError": "process_api.data.staging",
    "job_file_of": "process_api.data.staging",
    "storage_failure": "process_api.data.staging",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'process_api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
