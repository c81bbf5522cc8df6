"""A store that cannot be opened (a file that is not a database) is one line naming it and exit 1, whichever
command meets it: `moot serve` too, before it listens, not the traceback of a failed startup."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import moot

NOT_A_DATABASE = b"this is no SQLite database, " * 200


@pytest.fixture
def corrupt() -> Path:
    path = Path(os.environ["MOOT_HOME"]) / "moot.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(NOT_A_DATABASE)
    return path


def one_line_naming(err: str, path: Path) -> None:
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("failed: could not open the event store at ") and str(path) in err
    assert "file is not a database" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "args",
    [["list"], ["show", "abcd1234"], ["run", "Tabs?", "-p", "fake:a", "-p", "fake:b", "-r", "1"], ["serve"]],
)
def test_every_command_says_it_in_one_line(
    corrupt: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("the server started on a store it could not open")

    monkeypatch.setattr("uvicorn.run", never)
    code, out, err = moot(*args)
    assert code == 1, out + err
    one_line_naming(err, corrupt)
    assert corrupt.read_bytes() == NOT_A_DATABASE  # left as it was, for the person to look at


@pytest.mark.subprocess
def test_a_real_moot_serve_says_it_in_one_line_and_exits(corrupt: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "moot", "serve", "--port", "1"],  # never bound: it stops before listening
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    one_line_naming(done.stderr, corrupt)
