"""A store whose schema is current opens without Alembic; one that is not is migrated by it."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

from moot.errors import StoreError
from moot.store import EventStore
from moot.store import db as store_db


def test_the_head_read_from_the_files_is_alembics() -> None:
    assert store_db.head_revision() is not None
    assert (
        store_db.head_revision() == ScriptDirectory.from_config(store_db.alembic_config()).get_current_head()
    )


async def test_a_current_store_opens_without_running_alembic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    upgrades: list[str] = []
    real = command.upgrade

    def counted(config: object, revision: str) -> None:
        upgrades.append(revision)
        real(config, revision)  # type: ignore[arg-type]

    monkeypatch.setattr(command, "upgrade", counted)
    async with await EventStore.open(url):
        pass
    assert upgrades == []  # a new file: the tables at once, stamped at the head
    async with await EventStore.open(url):
        pass
    assert upgrades == []  # current: Alembic is not asked either

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        assert store_db.stored_revision(conn) == store_db.head_revision()
        conn.execute(sa.text("update alembic_version set version_num = 'from_the_future'"))
    engine.dispose()
    # Not the head: Alembic is asked, and its refusal is still the store's one-line error.
    with pytest.raises(StoreError, match="newer moot"):
        await EventStore.open(url)
    assert upgrades == ["head"]


def _plain(tmp_path: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str | None:
    versions = tmp_path / "versions"
    versions.mkdir()
    for name, text in files.items():
        (versions / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(store_db, "MIGRATIONS_DIR", tmp_path)
    store_db.head_revision.cache_clear()
    try:
        return store_db.head_revision()
    finally:
        monkeypatch.undo()
        store_db.head_revision.cache_clear()


@pytest.mark.parametrize(
    ("files", "head"),
    [
        (
            {
                "a.py": 'revision = "1"\ndown_revision = None\n',
                "b.py": 'revision = "2"\ndown_revision = "1"\n',
            },
            "2",
        ),
        # Two heads, or a file that is not plain: Alembic decides.
        (
            {
                "a.py": 'revision = "1"\ndown_revision = None\n',
                "b.py": 'revision = "2"\ndown_revision = None\n',
            },
            None,
        ),
        ({"a.py": "revision = make_id()\ndown_revision = None\n"}, None),
        ({"a.py": 'revision = "1"\n'}, None),
        ({"a.py": 'revision = "1"\nrevision = "2"\ndown_revision = None\n'}, None),
        # A merge names both parents.
        (
            {
                "a.py": 'revision = "1"\ndown_revision = None\n',
                "b.py": 'revision = "2"\ndown_revision = "1"\n',
                "c.py": 'revision = "3"\ndown_revision = "1"\n',
                "d.py": 'revision = "4"\ndown_revision = ("2", "3")\n',
            },
            "4",
        ),
    ],
)
def test_the_head_is_read_only_from_plain_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], head: str | None
) -> None:
    assert _plain(tmp_path, files, monkeypatch) == head
