"""Where a job's code runs: one interface for every executor (`executor`: launch, follow,
reattach, end) and a worker's executors chosen by setting (`executors`); on the worker's
host (`fork_servers`; a sandbox of the job's own: `own_sandbox`; the same with its tools'
podman containers, asked for by the job and checked by its worker: `container_sandbox`,
`container_broker`, one tool's container run: `container_run`; a job's start on its
connection: `handshake`), or each job a Slurm job (`slurm_executor`, its batch step on the
node: `slurm_job`; a workflow's steps each a Slurm job of its own: `slurm_step`); one
supervised OS process per job, bubblewrap's sandbox, control groups, the job's protocol
stream to its worker, what a job keeps of the service (nothing: `isolation`). Imports
nothing else of the package but the processes' declarations, so a job's process stays
light.

Third-party imports: `prometheus_client`.
"""
