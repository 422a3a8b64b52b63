"""What a worker does with a job whose worker died or stopped while the job ran: whether it
runs again (its run at a scheduler reattached to, else another attempt as its process
allows), the run a worker launched but stopped before it kept its id, and what is left of
the run of a job that fails without it."""

from __future__ import annotations

import logging

from process_api.jobs.store import Job, JobStore
from process_api.processes.definition import Process
from process_api.runner.executor import End, JobRun
from process_api.runner.executors import Executors
from process_api.runner.slurm import SlurmError

logger = logging.getLogger("geocatalog.jobs")

#: How many more times than its process's retries a job run by a scheduler is reattached to
#: (its worker died or stopped while its run went on).
REATTACHMENTS = 3


class _Recorded:
    """A found run's id, kept in the job's record (`RunEvents`)."""

    def __init__(self, store: JobStore, job_id: str) -> None:
        self.store, self.job_id = store, job_id
        self.batch_id: str | None = None

    async def submitted(self, batch_id: str) -> None:
        self.batch_id = batch_id
        await self.store.set_batch_job(self.job_id, batch_id)

    async def where(self, words: str) -> None:
        pass


class Reattachment:
    """The jobs of workers that died or stopped, with the executors they ran on."""

    def __init__(self, store: JobStore, executors: Executors) -> None:
        self.store = store
        self.executors = executors

    @staticmethod
    def again(job: Job, process: Process | None) -> bool:
        """Whether the job runs again: its run at a scheduler, which goes on, reattached
        to; else another attempt, as its process allows."""
        retries = process.retries if process is not None else 0
        if job.get("batch_job"):
            return job["attempts"] <= retries + REATTACHMENTS
        return process is not None and job["attempts"] <= retries

    async def recorded(self, job: Job) -> Job:
        """The job with its run at a scheduler in its record, also when its worker launched
        it but stopped before it kept the id (then found)."""
        if self.executors.local or job.get("batch_job"):
            return job
        recorder = _Recorded(self.store, str(job["id"]))
        # every executor of a scheduler finds the runs of any of its jobs
        executor = self.executors.deployed
        try:
            handle = await executor.reattach(JobRun(str(job["id"]), b"", events=recorder))
        except SlurmError as e:
            logger.warning("job %s: its Slurm job not looked for (%s)", job["id"], e)
            return job
        if handle is None:
            return job
        await executor.end(handle, End.RELEASED)  # found: its worker follows it
        return {**job, "batch_job": recorder.batch_id}

    async def end(self, job: Job) -> None:
        """What is left of the run of a job that fails without it: cancelled, removed."""
        if self.executors.local:
            return
        executor = self.executors.deployed
        try:
            handle = await executor.reattach(JobRun(str(job["id"]), b"",
                                                    batch_id=job.get("batch_job")))
            if handle is not None:
                await executor.end(handle, End.ABANDONED)
        except SlurmError as e:
            logger.warning("job %s: its Slurm job %s not cancelled (%s)", job["id"],
                           job.get("batch_job"), e)
