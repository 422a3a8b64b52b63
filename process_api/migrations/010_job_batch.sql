-- The scheduler's job that runs a job (its Slurm job id, `JOB_EXECUTOR=slurm`), kept once
-- submitted: a worker started again after a crash reattaches to it instead of submitting
-- the job again.
ALTER TABLE processes.jobs ADD COLUMN batch_job text;
