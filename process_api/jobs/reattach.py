"""What a worker does with a job whose worker died or stopped while the job ran: whether it
runs again (its Slurm job reattached to, else another attempt as its process allows), the
Slurm job a worker submitted but stopped before it kept the id, and the Slurm job and
folder of a job that fails without them."""

from __future__ import annotations

import logging

from process_api.jobs.store import Job, JobStore
from process_api.processes.definition import Process
from process_api.runner.slurm import SlurmError
from process_api.runner.slurm_launcher import SlurmExecutor

logger = logging.getLogger("geocatalog.jobs")

#: How many more times than its process's retries a job run by Slurm is reattached to (its
#: worker died or stopped while its Slurm job ran on).
REATTACHMENTS = 3


class Reattachment:
    """The jobs of workers that died or stopped, with the executor they ran on (None: this
    host's)."""

    def __init__(self, store: JobStore, executor: SlurmExecutor | None) -> None:
        self.store = store
        self.executor = executor

    @staticmethod
    def again(job: Job, process: Process | None) -> bool:
        """Whether the job runs again: its Slurm job, which runs on, reattached to; else
        another attempt, as its process allows."""
        retries = process.retries if process is not None else 0
        if job.get("batch_job"):
            return job["attempts"] <= retries + REATTACHMENTS
        return process is not None and job["attempts"] <= retries

    async def recorded(self, job: Job) -> Job:
        """The job with its Slurm job in its record, also when its worker submitted it but
        stopped before it kept the id (then found by its name)."""
        if self.executor is None or job.get("batch_job"):
            return job
        try:
            slurm_id = await self.executor.submitted(str(job["id"]))
        except SlurmError as e:
            logger.warning("job %s: its Slurm job not looked for (%s)", job["id"], e)
            return job
        if slurm_id is None:
            return job
        await self.store.set_batch_job(job["id"], slurm_id)
        return {**job, "batch_job": slurm_id}

    async def end(self, job: Job) -> None:
        """The Slurm job of a job that fails without it cancelled, its folder removed."""
        if self.executor is None:
            return
        try:
            await self.executor.end(str(job["id"]), job.get("batch_job"))
        except SlurmError as e:
            logger.warning("job %s: its Slurm job %s not cancelled (%s)", job["id"],
                           job["batch_job"], e)
