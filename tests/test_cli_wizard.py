"""`moot run -i`: the kind of run first (a debate, a design review, or any other format), then what that kind
needs; Ctrl-C at any question quits at once, storing nothing."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator

import pytest
from rich.console import Console

from moot.cli.interactive import Setup, ask_setup, flags_of, kinds
from moot.config_files.user_defaults import UserDefaults
from moot.domain.config import ModelOptions
from moot.domain.state import fold
from moot.protocols import PROTOCOLS
from tests.cli_helpers import moot, read_until, scripted, stored
from tests.test_people_cli import _on_a_terminal, plain

TOPIC = "Should cities ban cars from their centres?"
FAKES = UserDefaults(participants=[ModelOptions.model_validate({"model": "fake:ada"})])


def test_the_first_question_is_the_kind_and_enter_holds_a_debate() -> None:
    console = Console(record=True, width=80)
    asked, read = scripted("", TOPIC, "", "", "")
    setup = ask_setup(console, FAKES, topic=None, rounds=None, read=read)
    assert setup == Setup(TOPIC, "free-form", [], 3, None, ["fake:ada", "fake:ada"])
    assert asked == [
        "Kind (a number or a name) [1: debate]: ",
        "Topic: ",
        "Debaters' models, 2 to 10, separated by spaces [fake:ada fake:ada]: ",
        "Rounds, 1-50 [3]: ",
        "Judge model [the first debater's model]: ",
    ]
    shown = console.export_text()
    # Every kind moot has is offered, one line each, the two most asked for first.
    assert kinds()[:2] == ["free-form", "design-review"] and set(kinds()) == set(PROTOCOLS)
    for n, name in enumerate(kinds(), 1):
        label = {"free-form": "debate", "design-review": "design review"}.get(name, name)
        assert f"{n:>3}  {label} " in shown, name
    assert all(len(line) <= 80 for line in shown.splitlines())
    assert flags_of(setup) == f"moot run '{TOPIC}' -f free-form -p fake:ada -p fake:ada -r 3"


@pytest.mark.parametrize("kind", ["council", "11", "Council", "  council "])
def test_a_council_asks_for_three_members_and_no_rounds(kind: str) -> None:
    console = Console(record=True, width=120)
    asked, read = scripted(kind, TOPIC, "fake:a fake:b", "fake:a, fake:b fake:c", "fake:chair")
    setup = ask_setup(console, FAKES, topic=None, rounds=None, read=read)
    assert setup == Setup(TOPIC, "council", [], None, "fake:chair", ["fake:a", "fake:b", "fake:c"])
    assert asked[2] == "Debaters' models, 3 to 10, separated by spaces [fake:ada fake:ada fake:ada]: "
    assert not any(q.startswith("Rounds") for q in asked)
    shown = console.export_text()
    assert "this kind of run seats 3 to 10 debaters, not 2; try again" in shown
    assert "Rounds: 3, as council always holds" in shown
    assert flags_of(setup) == f"moot run '{TOPIC}' -f council -p fake:a -p fake:b -p fake:c -j fake:chair"


def test_a_wrong_kind_or_model_is_refused_in_one_line_and_asked_again() -> None:
    console = Console(record=True, width=120)
    _, read = scripted("counsil", "99", "oxford", TOPIC, "opnai:gpt-4o fake:b", "", "2", "")
    setup = ask_setup(console, FAKES, topic=None, rounds=None, read=read)
    assert setup.kind == "oxford" and setup.models == ["fake:ada", "fake:ada"] and setup.rounds == 2
    shown = console.export_text()
    assert "kind: unknown kind 'counsil'; did you mean 'council'?" in shown
    assert "unknown kind '99'" in shown
    assert "model: unknown provider 'opnai' in 'opnai:gpt-4o'; did you mean 'openai'?" in shown


def test_flags_answer_their_questions() -> None:
    # -f names the kind, -p the debaters (with their settings), -r and a topic are the defaults shown.
    asked, read = scripted("", "", "")
    setup = ask_setup(
        Console(record=True),
        FAKES,
        topic=TOPIC,
        rounds=2,
        fmt="oxford",
        models=["fake:a,name=Ada", "fake:b"],
        read=read,
    )
    assert asked == [f"Topic [{TOPIC}]: ", "Rounds, 1-50 [2]: ", "Judge model [the first debater's model]: "]
    assert setup == Setup(TOPIC, "oxford", [], 2, None, ["fake:a,name=Ada", "fake:b"])


@pytest.fixture
def at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    def answering(*answers: str | BaseException) -> None:
        replies: Iterator[str | BaseException] = iter(answers)

        def read(prompt: str) -> str | None:
            reply = next(replies, None)
            if isinstance(reply, BaseException):
                raise reply
            return reply

        monkeypatch.setattr("moot.cli.app._asks_at_terminal", lambda: True)
        monkeypatch.setattr("moot.cli.interactive.console_reader", lambda console: read)

    return answering


def test_the_answers_hold_that_kind_of_run(at_a_terminal: Callable[..., None]) -> None:
    at_a_terminal("council", TOPIC, "fake:a fake:b fake:c", "fake:chair")
    code, _, err = moot("run", "-i")
    assert code == 0, err
    config = fold(stored()).config
    assert config is not None and config.format == "council"
    assert [str(p.model) for p in config.participants] == ["fake:a", "fake:b", "fake:c"]
    assert "The same run next time: moot run" in " ".join(err.split())


@pytest.mark.parametrize("answered", [0, 1, 3])
def test_ctrl_c_at_any_question_quits_at_once_and_stores_nothing(
    at_a_terminal: Callable[..., None], answered: int
) -> None:
    at_a_terminal(*["debate", TOPIC, "fake:a fake:b"][:answered], KeyboardInterrupt())
    code, out, err = moot("run", "-i")
    assert code == 130 and out == ""
    assert err.strip().splitlines()[-1] == "interrupted"
    assert json.loads(moot("list", "--json")[1]) == []


@pytest.mark.subprocess
def test_on_a_terminal_the_first_ctrl_c_at_the_first_question_quits() -> None:
    leader, proc = _on_a_terminal(["run", "-i"])
    try:
        shown = read_until(leader, b"[1: debate]: ")
        time.sleep(0.2)
        os.write(leader, b"\x03")  # Ctrl-C, once
        shown += read_until(leader, None)
        assert proc.wait(timeout=30) == 130, plain(shown)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    assert plain(shown).rstrip().endswith("interrupted")
    assert json.loads(moot("list", "--json")[1]) == []
