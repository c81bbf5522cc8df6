"""A throwaway PostgreSQL server for the tests (a pytest plugin, loaded by tests/conftest.py).

`postgres_url` (session) starts one: initdb into a temporary directory, trust auth, listening on
127.0.0.1 on a free port, stopped and removed when the session ends. `postgres_db` gives each test
a database of its own on it. With `MOOT_TEST_POSTGRES_URL` set, that server is used instead (its user
needs CREATEDB), and every database made there is dropped again.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import URL, make_url

SERVER_URL_VAR = "MOOT_TEST_POSTGRES_URL"
NOT_FOUND = "PostgreSQL not found: run scripts/install-test-system.sh"
START_TRIES = 3  # another process may take the free port between choosing it and listening on it

INITDB_OPTIONS = ["-E", "UTF8", "--no-locale", "--no-sync"]
# The server is thrown away afterwards, so durability only costs time.
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"


@pytest.fixture(autouse=True)
def _no_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's MOOT_DATABASE_URL would make CLI and server tests write into their real database.
    monkeypatch.delenv("MOOT_DATABASE_URL", raising=False)


@dataclass
class PostgresServer:
    """A server the tests may create and drop databases on."""

    url: URL  # of its maintenance database, as a SQLAlchemy URL with the psycopg driver

    def create_database(self) -> str:
        """A new, empty database; its SQLAlchemy URL."""
        name = f"moot_test_{uuid.uuid4().hex[:16]}"
        with self._admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url.set(database=name).render_as_string(hide_password=False)

    def drop_database(self, url: str) -> None:
        name = make_url(url).database
        assert name is not None and name.startswith("moot_test_")
        with self._admin() as conn:
            # FORCE ends the connections a failed test may have left open (PostgreSQL 13 and later).
            force = sql.SQL(" WITH (FORCE)") if conn.info.server_version >= 130000 else sql.SQL("")
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)) + force)

    @contextlib.contextmanager
    def _admin(self) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
        libpq_url = self.url.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(libpq_url, autocommit=True, connect_timeout=10) as conn:
            yield conn


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The server: `$MOOT_TEST_POSTGRES_URL`, else a throwaway one."""
    given = os.environ.get(SERVER_URL_VAR, "").strip()
    if given:
        url = make_url(given)
        yield PostgresServer(url.set(drivername="postgresql+psycopg"))
        return
    bindir = find_bindir()
    if bindir is None:
        pytest.fail(NOT_FOUND, pytrace=False)
    with throwaway_server(bindir) as url:
        yield PostgresServer(url)


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A database for the whole session, as a SQLAlchemy URL."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture
def postgres_db(postgres_server: PostgresServer) -> Iterator[str]:
    """A new, empty database for one test, as a SQLAlchemy URL."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl: `pg_config --bindir`, else the newest
    /usr/lib/postgresql/*/bin, else wherever initdb is on the PATH."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            candidates.append(Path(done.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_major_version, reverse=True)
    initdb = shutil.which("initdb")
    if initdb is not None:
        candidates.append(Path(initdb).resolve().parent)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


def _major_version(bindir: Path) -> int:
    version = bindir.parent.name
    return int(version) if version.isdigit() else -1


@contextlib.contextmanager
def throwaway_server(bindir: Path) -> Iterator[URL]:
    """Run a fresh cluster in a temporary directory until the block ends, then remove it."""
    as_user = _unprivileged_user()
    root = Path(tempfile.mkdtemp(prefix="moot-pg-"))
    try:
        if as_user is not None:
            os.chown(root, as_user.pw_uid, as_user.pw_gid)
        data, log = root / "data", root / "server.log"
        _run(
            as_user,
            root,
            [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", *INITDB_OPTIONS],
        )
        port = _start(bindir, as_user, root, data, log)
        try:
            yield URL.create("postgresql+psycopg", username="postgres", host="127.0.0.1", port=port)
        finally:
            _run(as_user, root, [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start(bindir: Path, as_user: pwd.struct_passwd | None, root: Path, data: Path, log: Path) -> int:
    for attempt in range(1, START_TRIES + 1):
        port = _free_port()
        options = f"-h 127.0.0.1 -p {port} -k {shlex.quote(str(root))} {SERVER_OPTIONS}"
        command = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", options]
        done = _run(as_user, root, [*command, "start"], check=attempt == START_TRIES, log=log)
        if done.returncode == 0:
            return port
    raise AssertionError("unreachable: the last try raises")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _unprivileged_user() -> pwd.struct_passwd | None:
    """The user to run the server as: None for ourselves, `postgres` when we are root (initdb and
    the server refuse to run as root)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        pytest.fail("running as root needs a 'postgres' user to run PostgreSQL as", pytrace=False)


def _run(
    as_user: pwd.struct_passwd | None,
    cwd: Path,
    command: list[str],
    *,
    check: bool = True,
    log: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    name = Path(command[0]).name
    if as_user is not None:
        if shutil.which("runuser") is not None:
            command = ["runuser", "-u", as_user.pw_name, "--", *command]
        else:
            command = ["su", "-s", "/bin/sh", as_user.pw_name, "-c", shlex.join(command)]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    if check and done.returncode != 0:
        said = done.stderr + done.stdout + (log.read_text() if log is not None and log.exists() else "")
        last = [line for line in said.splitlines() if re.search(r"\S", line)][-1:] or ["no output"]
        pytest.fail(f"PostgreSQL: {name} failed: {last[0]}", pytrace=False)
    return done
