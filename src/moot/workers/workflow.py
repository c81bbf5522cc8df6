"""The DBOS workflow of one debate. Its one step runs the debate on this worker (moot.workers.runs); DBOS
records the step's outcome, so a workflow whose step finished is not run again when it is recovered."""

from __future__ import annotations

from typing import cast

from dbos import DBOS

from moot.workers.queue import WORKFLOW_NAME, Action
from moot.workers.runs import DebateRuns, Job, WorkerStopping

_runs: DebateRuns | None = None


def attach(runs: DebateRuns | None) -> None:
    """The runs this process's workflows hand their debates to (None: this process runs none)."""
    global _runs
    _runs = runs


@DBOS.workflow(name=WORKFLOW_NAME)
def debate_workflow(debate_id: str, after_seq: int, action: str, watched: bool = True) -> str:
    """Carry one debate on from its log; its status afterwards (or `superseded`, `missing`). `watched` has a
    default so that a workflow queued before it existed still runs."""
    return run_debate(debate_id, after_seq, action, watched)


@DBOS.step(name="moot.run-debate", retries_allowed=False)
def run_debate(debate_id: str, after_seq: int, action: str, watched: bool = True) -> str:
    if _runs is None:  # a process that launched DBOS without being a worker: leave the workflow pending
        raise WorkerStopping
    return _runs.run_blocking(Job(debate_id, after_seq, cast(Action, action), watched))
