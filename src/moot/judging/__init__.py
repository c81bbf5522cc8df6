"""Judging: the verdict schema a judge answers in, its prompt, panels of judges and their bias controls,
and turning answers into verdicts."""

from moot.judging.prompt import JudgePrompt, judge_prompt
from moot.judging.schema import JudgeAnswer, answer_model, to_verdict

__all__ = ["JudgeAnswer", "JudgePrompt", "answer_model", "judge_prompt", "to_verdict"]
