"""SIGTERM (a service manager, `timeout`, `kill`) stops `moot run` as Ctrl-C does: the debate is recorded as
interrupted, not left listed as running, and `moot resume` finishes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from moot.domain.state import fold
from tests.cli_helpers import moot, stored
from tests.isolation import default_signals


@pytest.mark.subprocess
def test_sigterm_records_the_debate_as_interrupted_and_resume_finishes_it() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "moot",
            "run",
            "Tabs or spaces?",
            "-p",
            "fake:drip-30",
            "-p",
            "fake:drip-30",
            "-r",
            "3",
            "--no-judge",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=default_signals,  # the SIGTERM below reaches it however the suite was started
    )
    try:
        assert proc.stdout is not None
        seen = b""
        while b"Round 1" not in seen:  # the debate is under way
            chunk = proc.stdout.read1(4096)  # type: ignore[attr-defined]
            assert chunk, seen
            seen += chunk
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143
    assert err.decode().strip().endswith("interrupted: stopped by SIGTERM")
    state = fold(stored())
    assert state.status == "interrupted"
    code, _, errors = moot("resume", state.debate_id or "")
    assert code == 0, errors
    assert fold(stored()).status == "completed"
