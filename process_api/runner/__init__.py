"""Where a job's code runs: the fork server and its launcher, one supervised OS process per
job, bubblewrap's sandbox, control groups, the job's protocol stream to its worker, what
a job keeps of the service (nothing: `isolation`), and the podman containers a deployed
tool runs in (`containers`, asked for by the job and checked by its worker:
`container_broker`); or, with `JOB_EXECUTOR=slurm`, each job as a Slurm job
(`slurm_launcher`, its batch step on the node: `slurm_job`; a workflow's steps each a
Slurm job of its own: `slurm_step`). Imports nothing else of the
package but the processes' declarations, so a job's process stays light.

Third-party imports: none.
"""
