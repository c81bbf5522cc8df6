"""The engine: runs a debate's steps, calls models, emits the event stream.

Edges (cli, server, eval, workers) import the engine from here only, never from its modules, so the engine can
reorganise inside (tests/test_layers.py holds them to it).
"""

from moot.context.windows import LOCAL_JUDGE_TOKENS
from moot.engine.budget import costs_nothing, price_notice
from moot.engine.calls.caller import Caller
from moot.engine.calls.live_check import (
    LiveResult,
    LiveTarget,
    check_live,
    check_targets,
    key_targets,
    live_resolver,
    live_targets,
    model_targets,
)
from moot.engine.calls.settings import model_settings
from moot.engine.checks import Checked, ModelResolver, check_run, preflight
from moot.engine.control import RunControl
from moot.engine.estimate import HIGH_SHARE, LOW_SHARE, Estimate, ModelEstimate, estimate_lines
from moot.engine.estimate import estimate as estimate_debate  # `moot.engine.estimate` names the module
from moot.engine.judging_again import Fields as JudgeFields
from moot.engine.judging_again import PlannedJudging, plan_judging, verdict_failed
from moot.engine.people import People, TurnAsk, VerdictAsk, VerdictCheck, require_people
from moot.engine.personas import propose_personas, with_reviewed_personas
from moot.engine.runner import EventLog, InMemoryLog, judge_again, resumable, resume_debate, run_debate
from moot.engine.webhooks import PUBLIC_URL_ENV, check_public_url, public_url

__all__ = [
    "HIGH_SHARE",
    "LOCAL_JUDGE_TOKENS",
    "LOW_SHARE",
    "PUBLIC_URL_ENV",
    "Caller",
    "Checked",
    "Estimate",
    "EventLog",
    "InMemoryLog",
    "JudgeFields",
    "LiveResult",
    "LiveTarget",
    "ModelEstimate",
    "ModelResolver",
    "People",
    "PlannedJudging",
    "RunControl",
    "TurnAsk",
    "VerdictAsk",
    "VerdictCheck",
    "check_live",
    "check_public_url",
    "check_run",
    "check_targets",
    "costs_nothing",
    "estimate_debate",
    "estimate_lines",
    "judge_again",
    "key_targets",
    "live_resolver",
    "live_targets",
    "model_settings",
    "model_targets",
    "plan_judging",
    "preflight",
    "price_notice",
    "propose_personas",
    "public_url",
    "require_people",
    "resumable",
    "resume_debate",
    "run_debate",
    "verdict_failed",
    "with_reviewed_personas",
]
