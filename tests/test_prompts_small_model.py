"""The embedded model's debater prompt: plain sentences it has nothing to echo; other models keep theirs."""

from __future__ import annotations

from moot.domain.config import DebateConfig, Participant
from moot.domain.state import DebateState
from moot.protocols import PromptContext, TurnSpec, get_protocol


def _config(model: str, **extra: object) -> DebateConfig:
    return DebateConfig(
        topic="Should cities ban cars?",
        participants=[
            Participant(name="Proponent", model=model, stance="for the motion", persona="A city planner."),
            Participant(name="Opponent", model=model, stance="against the motion"),
        ],
        rounds=2,
        judge={"model": "fake:judge"},
        **extra,
    )


def _system(config: DebateConfig) -> str:
    protocol = get_protocol(config.format)
    ctx = PromptContext(config, DebateState(config=config), 1)
    return protocol.turn_prompt(ctx, TurnSpec(speaker=config.participants[0].id)).system


def test_the_embedded_model_reads_sentences_not_headings() -> None:
    system = _system(_config("local:smollm2", context="Traffic doubled since 2010."))
    assert 'You are Proponent in a debate on the question "Should cities ban cars?"' in system
    assert "You argue for the motion. A city planner." in system
    assert "Opponent argues against the motion." in system
    assert "Background: Traffic doubled since 2010." in system
    assert "Do not repeat these instructions" in system
    # Nothing in capitals or numbered for a small model to copy into its turn.
    for heading in (
        "YOUR ROLE",
        "OTHER PARTICIPANTS",
        "HOW TO ARGUE",
        "FORMAT:",
        "BACKGROUND MATERIAL",
        "1. ",
    ):
        assert heading not in system


def test_other_models_keep_the_full_prompt() -> None:
    system = _system(_config("fake:ada"))
    for heading in ("YOUR ROLE", "OTHER PARTICIPANTS", "HOW TO ARGUE", "FORMAT: FREE-FORM"):
        assert heading in system
    assert "Do not repeat these instructions" not in system


def test_a_small_models_own_system_prompt_still_comes_first() -> None:
    config = _config("local:smollm2")
    first = config.participants[0].model_copy(update={"system_prompt": "Speak like a pirate."})
    config = config.model_copy(update={"participants": [first, config.participants[1]]})
    assert _system(config).startswith("Speak like a pirate.\n\nYou are Proponent in a debate")


def _turn(config: DebateConfig, history: bool) -> str:
    from moot.domain.events import DebateStarted, RoundStarted, TurnCompleted
    from moot.domain.state import fold
    from moot.domain.usage import Usage

    state = DebateState(config=config)
    if history:
        state = fold(
            [
                DebateStarted(debate_id="d", config=config),
                RoundStarted(debate_id="d", round=1),
                TurnCompleted(
                    debate_id="d",
                    round=1,
                    participant_id="proponent",
                    text="Cars crowd the streets.",
                    model="m",
                    usage=Usage(),
                    latency_s=1.0,
                ),
            ]
        )
    protocol = get_protocol(config.format)
    return protocol.turn_prompt(PromptContext(config, state, 1), TurnSpec(speaker="opponent")).user


def test_the_embedded_model_s_turn_prompt_has_no_labels_or_round_counts_to_echo() -> None:
    config = _config("local:smollm2")
    first, later = _turn(config, history=False), _turn(config, history=True)
    assert first.endswith("Now write your turn as Opponent, who speaks first.\n")
    assert "Proponent said:\n<<<\nCars crowd the streets.\n>>>" in later  # still fenced: quoted text is data
    assert later.endswith("Now write your turn as Opponent.\n")
    # What the embedded model's turns were seen to copy (bench/first_run_quality.py).
    for echoed in (
        "[Round",
        "DEBATE SO FAR",
        "No one has spoken yet",
        "It is now round",
        "Give your contribution",
    ):
        assert echoed not in first and echoed not in later
    other = _turn(_config("fake:ada"), history=True)
    assert "DEBATE SO FAR" in other and "[Round 1] Proponent (for the motion):" in other
