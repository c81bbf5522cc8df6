"""Every start runs the checks before a run (`moot.engine.check_run`) once, and builds each model once, in the
flows that must answer before the start: the server's create-then-start, eval's first item, and the CLI's review
of proposed personas. Each hands the engine what it checked (moot.engine.Checked) instead of a bare config.

The checks are counted by the work they do, not by the name they are imported under: every `check_run` checks
the budget's prices once, and every model is built by `moot.engine.checks.build_model`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic_ai.models import Model
from typer.testing import CliRunner

from moot.cli.app import app
from moot.domain.config import DebateConfig, ModelOptions
from moot.engine.budget import check_budget_prices
from moot.eval.runner import run_eval
from moot.models.providers import build_model
from moot.server import create_app
from moot.store import EventStore
from tests.test_eval_runner import Scripted, dataset, plan
from tests.test_server import body, wait_for


class Counted:
    """How many times the checks ran, and how many times each model was built."""

    def __init__(self) -> None:
        self.runs = 0
        self.built: Counter[str] = Counter()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    counts = Counted()
    prices = check_budget_prices
    build = build_model

    def counted_prices(config: DebateConfig) -> None:
        counts.runs += 1
        prices(config)

    def counted_build(options: ModelOptions) -> Model:
        counts.built[str(options.model)] += 1
        return build(options)

    # The names moot.engine.checks calls them by: `check_run` and `preflight` look them up there.
    monkeypatch.setattr("moot.engine.checks.check_budget_prices", counted_prices)
    monkeypatch.setattr("moot.engine.checks.build_model", counted_build)
    return counts


def test_a_debate_created_then_started_on_the_server_is_checked_once(db: str, counted: Counted) -> None:
    with TestClient(create_app(db)) as client:
        created = client.post("/api/debates?start=false", json=body())
        assert created.status_code == 202 and created.json()["status"] == "created"
        assert counted.runs == 1  # the create answers a bad config with a 4xx: it checks
        debate_id = created.json()["id"]
        assert client.post(f"/api/debates/{debate_id}/start").json()["status"] == "starting"
        wait_for(client, debate_id, "completed")
    assert counted.runs == 1
    assert counted.built == {"fake:ada": 1, "fake:bo": 1, "fake:judge": 1}


def test_a_debate_started_at_once_on_the_server_is_checked_once(db: str, counted: Counted) -> None:
    with TestClient(create_app(db)) as client:
        created = client.post("/api/debates", json=body())
        assert created.status_code == 202, created.text
        wait_for(client, created.json()["id"], "completed")
    assert counted.runs == 1
    assert set(counted.built.values()) == {1}


async def test_each_eval_debate_is_checked_once_the_first_items_too(tmp_path: Path, counted: Counted) -> None:
    items = ("q1", "q2", "q3")
    arms = ["single", "sc:3", "society:3x2"]
    model = Scripted()
    async with await EventStore.open(str(tmp_path / "eval.db")) as store:
        run = await run_eval(
            plan(arms, data=dataset(items)), store=store, out=tmp_path / "out", resolve=model.resolver()
        )
    assert run.added == len(items) * len(arms) and not run.failed
    # One check per debate: the first item's in each arm by the plan's check before any call, the others at
    # their start; none twice.
    assert counted.runs == len(items) * len(arms)


def test_reviewed_personas_start_on_the_review_s_checks(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    monkeypatch.setattr("moot.cli.app._is_terminal", lambda: True)
    result = CliRunner().invoke(
        app,
        ["run", "Cars in cities?", "-p", "fake:a", "-p", "fake:b", "-r", "1", "--auto-personas"],
        input="y\n",
    )
    assert result.exit_code == 0, result.output
    assert "Proposed personas" in result.output
    assert counted.runs == 1
    assert counted.built and set(counted.built.values()) == {1}


def test_personas_left_to_the_engine_are_checked_once_too(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "Cars in cities?", "-p", "fake:a", "-p", "fake:b", "-r", "1", "--auto-personas", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert counted.runs == 1
    assert counted.built and set(counted.built.values()) == {1}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")
