"""OpenTelemetry: the span tree and metrics of a fake debate, and no prompt text unless MOOT_OTEL_CONTENT=1."""

from __future__ import annotations

import atexit
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.engine import InMemoryLog, resume_debate, run_debate
from moot.engine import telemetry as otel
from tests.conftest import FAST_RETRY, Recorder, judge_answer, judge_model, make_config, resolver


@dataclass
class Collected:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader


@pytest.fixture
def collected() -> Iterator[Collected]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    otel.install(tracer_provider, MeterProvider(metric_readers=[metrics]))
    yield Collected(spans, metrics)
    otel.uninstall()


async def _debate(config: DebateConfig) -> None:
    judge, _ = judge_model([judge_answer(config)])
    async for _ in run_debate(config, resolve=resolver(Recorder(), judge)):
        pass


async def broken(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    """A model whose every call fails."""
    if messages:
        raise RuntimeError("provider exploded")
    yield ""  # pragma: no cover - there are always messages


def _tree(spans: tuple[ReadableSpan, ...]) -> dict[str, list[str]]:
    """Each span's name to the names of its children."""
    by_id = {s.context.span_id: s for s in spans}
    tree: dict[str, list[str]] = {s.name: [] for s in spans}
    for s in spans:
        if s.parent is not None and s.parent.span_id in by_id:
            tree[by_id[s.parent.span_id].name].append(s.name)
    return tree


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _all_text(spans: tuple[ReadableSpan, ...]) -> str:
    parts = []
    for s in spans:
        parts.append(json.dumps(dict(s.attributes or {}), default=str))
        parts += [json.dumps(dict(e.attributes or {}), default=str) for e in s.events]
    return "\n".join(parts)


def _points(reader: InMemoryMetricReader, name: str) -> list[Any]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


async def test_a_debate_is_a_tree_of_rounds_turns_model_calls_and_the_judge_call(
    collected: Collected,
) -> None:
    config = make_config(2, rounds=2)
    await _debate(config)
    spans = collected.spans.get_finished_spans()
    tree = _tree(spans)
    roots = [s for s in spans if s.parent is None]
    assert [s.name for s in roots] == ["debate"]  # one trace: nothing escapes the debate
    assert sorted(tree["debate"]) == ["judge verdict", "round 1", "round 2"]
    assert sorted(tree["round 1"]) == ["turn ada", "turn bo"]
    turns = [s for s in spans if s.name.startswith("turn ")]
    assert len(turns) == 4
    by_id = {s.context.span_id: s for s in spans}
    for turn in turns:
        calls = [s for s in spans if s.parent is not None and s.parent.span_id == turn.context.span_id]
        assert [c.name for c in calls] == [f"chat rec-{_attrs(turn)['moot.participant']}"]  # pydantic-ai's
        assert _attrs(calls[0])["gen_ai.operation.name"] == "chat"
        assert _attrs(turn)["gen_ai.provider.name"] == "fake"
        assert _attrs(turn)["gen_ai.usage.output_tokens"] > 0
    judge_call = next(s for s in spans if s.name == "judge verdict")
    under_judge = [
        s for s in spans if s.parent is not None and s.parent.span_id == judge_call.context.span_id
    ]
    assert under_judge and all(by_id[s.parent.span_id] is judge_call for s in under_judge)  # type: ignore[union-attr]
    debate = roots[0]
    assert _attrs(debate)["moot.status"] == "completed"
    assert _attrs(debate)["moot.format"] == config.format


async def test_metrics_count_tokens_cost_and_latency_by_provider_model_and_role(collected: Collected) -> None:
    await _debate(make_config(2, rounds=1))
    tokens = _points(collected.metrics, "moot.tokens")
    by_key = {
        (
            p.attributes["gen_ai.request.model"],
            p.attributes["moot.role"],
            p.attributes["gen_ai.token.type"],
        ): p.value
        for p in tokens
    }
    assert by_key[("ada", "debater", "output")] > 0
    assert by_key[("bo", "debater", "input")] > 0
    assert by_key[("judge", "judge", "input")] > 0
    assert {p.attributes["gen_ai.provider.name"] for p in tokens} == {"fake"}
    latency = {
        (p.attributes["gen_ai.request.model"], p.attributes["moot.role"]): p.count
        for p in _points(collected.metrics, "moot.call.duration")
    }
    assert latency[("ada", "debater")] == 1
    assert latency[("judge", "judge")] == 1
    costs = {p.attributes["moot.role"]: p.value for p in _points(collected.metrics, "moot.cost")}
    assert costs["debater"] == 0  # fake models are free, and say so: a priced zero, counted


async def test_no_prompt_or_reply_text_leaves_without_moot_otel_content(collected: Collected) -> None:
    config = make_config(2, rounds=1)
    await _debate(config)
    text = _all_text(collected.spans.get_finished_spans())
    assert "Should cities ban cars" not in text  # the topic, in every prompt
    assert "speaks in call" not in text  # the replies


async def test_with_moot_otel_content_the_words_are_exported() -> None:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    otel.install(tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()]), content=True)
    try:
        await _debate(make_config(2, rounds=1))
    finally:
        otel.uninstall()
    text = _all_text(spans.get_finished_spans())
    assert "Should cities ban cars" in text
    assert "speaks in call" in text


def test_off_by_default_and_on_with_moot_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    otel.uninstall()
    monkeypatch.delenv("MOOT_OTEL", raising=False)
    assert otel.for_run("d") is None
    otel.uninstall()
    monkeypatch.setenv("MOOT_OTEL", "1")
    # Never reached: no span is made, no periodic metric export comes in the session, nothing is flushed at exit.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", str(24 * 3600 * 1000))
    monkeypatch.setattr(atexit, "register", lambda *a: None)
    try:
        run = otel.for_run("d")
        assert run is not None and run.telemetry.content is False
    finally:
        otel.uninstall()
    monkeypatch.setenv("MOOT_OTEL_CONTENT", "1")  # the variable itself, not install(content=True)
    try:
        run = otel.for_run("d")
        assert run is not None and run.telemetry.content is True
    finally:
        otel.uninstall()


def test_a_model_label_splits_into_provider_and_model() -> None:
    assert otel.split_label("openai:gpt-4o") == ("openai", "gpt-4o")
    assert otel.split_label("panel") == ("", "panel")


async def test_a_dropped_participant_s_turn_ends_in_error_and_a_resumed_run_is_its_own_trace(
    collected: Collected,
) -> None:

    config = make_config(3, rounds=1, limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    rec = Recorder()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        if name == "cy":
            return FunctionModel(stream_function=broken, model_name="broken")
        return judge if name == "judge" else rec.model(name)

    log = InMemoryLog()
    held = [e async for e in run_debate(config, resolve=resolve, log=log, hold="created")]
    async for _ in resume_debate(held, log=log, resolve=resolve):
        pass
    spans = collected.spans.get_finished_spans()
    debates = [s for s in spans if s.name == "debate"]
    assert [_attrs(d)["moot.status"] for d in debates] == ["paused", "completed"]
    assert _attrs(debates[1])["moot.resumed_from"] == "created"
    (cy,) = [s for s in spans if s.name == "turn cy"]
    assert cy.status.status_code.name == "ERROR" and "provider exploded" in (cy.status.description or "")
    assert all(s.status.status_code.name != "ERROR" for s in spans if s.name in ("turn ada", "turn bo"))


async def test_a_round_s_assessment_is_a_judge_call_that_names_its_round(collected: Collected) -> None:
    config = make_config(2, rounds=1, stopping={"assess_rounds": True})
    await _debate(config)
    spans = collected.spans.get_finished_spans()
    # Asked once the round has completed (its span ended): beside the rounds, under the debate.
    assert "judge assessment" in _tree(spans)["debate"]
    (assessment,) = [s for s in spans if s.name == "judge assessment"]
    assert _attrs(assessment)["moot.round"] == 1 and _attrs(assessment)["moot.purpose"] == "assessment"
    under = [s.name for s in spans if s.parent is not None and s.parent.span_id == assessment.context.span_id]
    assert under  # pydantic-ai's agent run, its model call under that


async def test_a_failed_debate_s_span_says_so_and_closes_what_was_open(collected: Collected) -> None:

    def resolve(options: ModelOptions) -> Model:
        return FunctionModel(stream_function=broken, model_name="broken")

    config = make_config(2, rounds=1, limits={"retry": FAST_RETRY}, judge=None)
    async for _ in run_debate(config, resolve=resolve):
        pass
    spans = collected.spans.get_finished_spans()
    (debate,) = [s for s in spans if s.name == "debate"]
    assert _attrs(debate)["moot.status"] == "failed" and debate.status.status_code.name == "ERROR"
    assert "round 1" in _tree(spans)["debate"]  # ended with the debate, though never completed
