"""What only PostgreSQL has: its schema, its connection errors, and the CLI and server running on it.

The store's behaviours themselves run on PostgreSQL in tests/test_store.py (its `db_url` fixture).
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest
import sqlalchemy as sa
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from moot.errors import StoreError
from moot.server import create_app
from moot.store import EventStore, db_url_from
from moot.store.db import alembic_config
from tests.cli_helpers import moot
from tests.test_server import body, start, wait_for
from tests.test_store import one_of_each

pytestmark = pytest.mark.postgres


async def test_opening_an_empty_database_creates_the_schema(postgres_db: str) -> None:
    await (await EventStore.open(postgres_db)).close()
    engine = sa.create_engine(db_url_from(postgres_db))
    try:
        inspector = sa.inspect(engine)
        assert set(inspector.get_table_names()) == {
            "alembic_version",
            "debates",
            "events",
            "seats",
            "audience_votes",
        }
        types = {c["name"]: str(c["type"]) for c in inspector.get_columns("debates")}
        assert (types["created_at"], types["participants"]) == ("TIMESTAMP", "JSON")
        created = next(c for c in inspector.get_columns("debates") if c["name"] == "created_at")
        assert isinstance(created["type"], sa.DateTime) and created["type"].timezone  # timestamptz
        indexes = sorted(str(i["name"]) for i in inspector.get_indexes("debates"))
        assert indexes == ["ix_debates_created_at", "ix_debates_eval_run"]
        with engine.connect() as conn:
            # every migration applied: the newest one moot ships
            head = ScriptDirectory.from_config(alembic_config()).get_current_head()
            assert head is not None and head >= "0005"
            assert conn.execute(sa.text("select version_num from alembic_version")).all() == [(head,)]
    finally:
        engine.dispose()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_connection_refused_names_the_url_without_its_password() -> None:
    port = _closed_port()
    before = threading.active_count()
    with pytest.raises(StoreError) as caught:
        await EventStore.open(f"postgresql://moot:s3cret-pw@127.0.0.1:{port}/moot")
    message = str(caught.value)
    assert message.startswith(
        f"could not open the event store at postgresql+psycopg://moot:***@127.0.0.1:{port}/moot: "
    )
    assert "refused" in message
    assert "s3cret" not in message and "\n" not in message
    assert threading.active_count() == before


async def test_a_missing_database_is_a_store_error(postgres_db: str) -> None:
    url = make_url(postgres_db).set(database="moot_no_such_db").render_as_string(hide_password=False)
    with pytest.raises(StoreError, match=r'could not open the event store at .*: .*"moot_no_such_db"'):
        await EventStore.open(url)


def test_cli_uses_moot_database_url_without_db(postgres_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def store_a_debate() -> None:
        async with await EventStore.open(postgres_db) as store:
            for event in one_of_each("pg-debate-1"):
                await store.append(event)

    asyncio.run(store_a_debate())
    monkeypatch.setenv("MOOT_DATABASE_URL", postgres_db)
    code, out, err = moot("list")
    assert code == 0, err
    assert "pg-debat" in out and "completed" in out
    code, out, _ = moot("show", "pg-debate-1")
    assert code == 0 and "Tea calms." in out
    # An explicit --db still wins over the environment.
    code, out, _ = moot("list", "--db", "sqlite://")
    assert code == 0 and "pg-debat" not in out


def test_server_runs_a_debate_on_postgres_and_reads_it_back(
    postgres_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`moot serve` without --db, MOOT_DATABASE_URL naming PostgreSQL: one whole debate, stored there."""
    monkeypatch.setenv("MOOT_DATABASE_URL", postgres_db)
    with TestClient(create_app()) as client:
        debate_id = start(client, body("Should cities ban cars?", rounds=2))
        wait_for(client, debate_id)
        listed = client.get("/api/debates", params={"text": "CITIES", "status": "completed"}).json()
        assert [d["id"] for d in listed] == [debate_id]
        state = client.get(f"/api/debates/{debate_id}").json()
        assert state["status"] == "completed" and len(state["rounds"]) == 2
    # A second server on the same database sees the stored debate whole.
    with TestClient(create_app(postgres_db)) as again:
        assert again.get(f"/api/debates/{debate_id}").json() == state
        exported = again.get(f"/api/debates/{debate_id}/export", params={"format": "json"})
        assert exported.status_code == 200
