"""How much of the job engine one user or one project may hold, so that nobody's backlog
stops everyone's jobs: at most so many jobs queued or running (a submission beyond is a
429), and at most so many of one user's jobs running at once, across every worker.

The running bound is the job queue's own: each job is queued with a lock of its owner's
(procrastinate runs one job per lock at a time, in order), one of `user_running` locks per
user, taken in turn. A user's queued jobs then wait for their own, while free workers take
other users'. (Jobs submitted at the same instant may share a lock: they run one after
the other.)

Free workers take users' jobs in turns (fair share), not in the order submitted: a job's
queue priority is minus the jobs its owner had queued or running then, so every user's
next job runs before anyone's job after it, and a user who arrives behind another's
backlog waits for one job of each, not for the backlog. A user's own jobs keep their
order: a job is never given a higher priority than their jobs already waiting.

Both bounds are counted in the transaction that writes the new jobs, under a lock of each
user and project it counts: concurrent submissions never pass a quota together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The seconds a refused submission is told to wait (`Retry-After`).
RETRY_SECONDS = 30


@dataclass(frozen=True)
class Quotas:
    user_running: int = 1
    user_queued: int = 100  # queued or running
    project_queued: int = 500  # queued or running, of every member

    def lock(self, owner: str, owner_jobs: int) -> str:
        """The queue lock of a job of `owner`, who has `owner_jobs` queued or running: one
        of their `user_running` locks, in turn (a job queued again keeps its lock)."""
        return f"owner:{owner}:{owner_jobs % self.user_running}"

    def admit(self, jobs: Sequence[dict[str, Any]], active: dict[str, int]
              ) -> list[QueueFull | None]:
        """Each new job, in order, accepted (None; its queue `lock` and `priority` set) or
        refused, given the jobs queued or running of each user (`user:<name>`) and project
        (`project:<name>`), and the lowest priority of each user's jobs waiting
        (`turn:<name>`): those before it accepted count against it."""
        verdicts: list[QueueFull | None] = []
        for job in jobs:
            user = f"user:{job['owner']}"
            project = f"project:{job['project']}" if job.get("project") else None
            owner_jobs = active.get(user, 0)
            refused = self.refusal(owner_jobs, active.get(project, 0) if project else 0)
            if refused is None:
                job["lock"] = self.lock(job["owner"], owner_jobs)
                turn = f"turn:{job['owner']}"
                job["priority"] = active[turn] = min(-owner_jobs, active.get(turn, 0))
                active[user] = owner_jobs + 1
                if project:
                    active[project] = active.get(project, 0) + 1
            verdicts.append(refused)
        return verdicts

    def refusal(self, owner_jobs: int, project_jobs: int) -> QueueFull | None:
        """Why one more job is refused, given the jobs its owner and its project have
        queued or running; None: accepted."""
        if owner_jobs >= self.user_queued:
            return QueueFull("user_queued", f"You have {owner_jobs} jobs queued or running, "
                             f"the most one user may have (JOB_USER_QUEUED); submit more "
                             "once some have ended.")
        if project_jobs >= self.project_queued:
            return QueueFull("project_queued", f"The project has {project_jobs} jobs queued "
                             "or running, the most one project may have "
                             "(JOB_PROJECT_QUEUED); submit more once some have ended.")
        return None


class QueueFull(Exception):
    """A submission beyond a quota (a 429)."""

    def __init__(self, quota: str, message: str) -> None:
        super().__init__(message)
        self.quota = quota
