"""What only reads writes nothing, and what is refused leaves nothing behind: on a home with no store, `moot
list`, `show`, `export`, `judge`, `resume` and `arena --from-history` answer as an empty store would and leave
the directory as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.errors import StoreError
from moot.store import EventStore
from tests.cli_helpers import moot
from tests.test_store import started


def listing(folder: Path) -> list[str]:
    """Everything under `folder`, so a file made anywhere in it (a database, its folder, a WAL) is seen."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def home() -> Path:
    """An empty home that exists: what is made in it shows in its listing."""
    path = Path(os.environ["MOOT_HOME"])
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["list"], 0, "No debates yet"),
        (["list", "--csv"], 0, "id,created,topic"),
        (["list", "--json"], 0, "[]"),
        (["list", "--status", "completed"], 0, "No debates match"),
        (["show", "abcd1234"], 2, "no debate with id 'abcd1234'"),
        (["export", "abcd1234", "-f", "json"], 2, "no debate with id 'abcd1234'"),
        (["judge", "abcd1234", "-j", "fake:judge"], 2, "no debate with id 'abcd1234'"),
        (["resume", "abcd1234"], 2, "no debate with id 'abcd1234'"),
        (["arena", "--from-history"], 2, "0 stored debates fit"),
    ],
)
def test_a_read_only_command_on_a_home_without_a_store_answers_as_empty_and_writes_nothing(
    home: Path, args: list[str], code: int, said: str
) -> None:
    before = listing(home)
    got, out, err = moot(*args)
    assert got == code, out + err
    assert said in out + err
    assert listing(home) == before == []


def test_nor_does_it_make_a_home_that_is_not_there(home: Path) -> None:
    home.rmdir()
    assert moot("list")[0] == 0
    assert moot("show", "abcd1234")[0] == 2
    assert not home.exists()


def test_a_db_flag_naming_a_file_not_there_makes_nothing_either(tmp_path: Path) -> None:
    db = tmp_path / "elsewhere" / "moot.db"
    code, out, _ = moot("list", "--db", str(db))
    assert code == 0 and "No debates yet" in out
    assert not db.parent.exists()


async def test_the_empty_store_a_reader_gets_refuses_a_write_rather_than_lose_it(tmp_path: Path) -> None:
    db = tmp_path / "moot.db"
    async with await EventStore.open(str(db), create=False) as store:
        assert await store.list_debates() == []
        with pytest.raises(StoreError, match="readonly"):
            await store.append(started("d1"))
    assert listing(tmp_path) == []


async def test_a_store_that_is_there_is_read_as_it_is(tmp_path: Path) -> None:
    db = str(tmp_path / "moot.db")
    async with await EventStore.open(db) as store:
        await store.append(started("d1"))
    async with await EventStore.open(db, create=False) as store:
        assert [r.id for r in await store.list_debates()] == ["d1"]


# --- a run refused by its checks ---------------------------------------------------------------------------

REFUSED = {
    "webhooks without their secret": (
        ["-p", "fake:a", "-p", "fake:b", "-c", "{config}"],
        "notify: webhooks are signed, and MOOT_WEBHOOK_SECRET is not set",
    ),
    "a key that is not set": (
        ["-p", "openai:gpt-4o-mini", "-p", "fake:b"],
        "participant 1 (Proponent), model: openai needs OPENAI_API_KEY",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.parametrize(
    "extra", [[], ["--save-preset", "mine"], ["--enqueue"], ["--output", "out.md"]], ids=str
)
def test_a_run_its_checks_refuse_leaves_nothing_behind(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, extra: list[str]
) -> None:
    monkeypatch.delenv("MOOT_WEBHOOK_SECRET", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "hooks.yaml"
    config.write_text("topic: Tabs?\nnotify: [{url: 'http://127.0.0.1:9/hook'}]\n", encoding="utf-8")
    args, said = REFUSED[case]
    before = listing(tmp_path)
    code, out, err = moot("run", "Tabs?", *[a.format(config=config) for a in args], "-r", "1", *extra)
    assert code == 2, out + err
    assert err.startswith(f"error: {said}") and len(err.strip().splitlines()) == 1
    assert listing(tmp_path) == before  # no store, queue, preset or output in the home or beside it


@pytest.mark.parametrize(
    "args",
    [
        ["arena", "-m", "openai:gpt-4o-mini", "-m", "fake:b", "--motion", "Tabs?", "-j", "fake:j"],
        ["eval", "--generate", "arithmetic", "-n", "2", "-m", "openai:gpt-4o-mini", "-a", "single"],
    ],
    ids=["arena", "eval"],
)
def test_an_arena_or_eval_its_checks_refuse_leaves_nothing_behind(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # where their results folders would go
    for queued in ([], ["--enqueue"]):
        code, out, err = moot(*args, *queued)
        assert code == 2, out + err
        assert "participant 1, model: openai needs OPENAI_API_KEY" in err
        assert listing(tmp_path) == ["moot-home"]
