"""A process's failure in its own words: what a process raises for its user to read, the
job's message as it is (another exception is quoted with its class name). No imports: a
job's process loads it with nothing else."""


class JobFailed(RuntimeError):
    """The job cannot go on; the message is for its user, as it is."""
