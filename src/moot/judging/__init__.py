"""Judging: the verdict schema a judge answers in, its prompt, and turning answers into verdicts."""

from moot.judging.prompt import JudgePrompt, judge_prompt
from moot.judging.schema import Assessment, JudgeAnswer, answer_model, to_verdict

__all__ = ["Assessment", "JudgeAnswer", "JudgePrompt", "answer_model", "judge_prompt", "to_verdict"]
