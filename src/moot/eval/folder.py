"""An evaluation's results folder: its settings (`run.json`), the rows so far (`results.jsonl`, one appended
as each lands, so a stopped run resumes) and what was queued (`queued.jsonl`)."""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path

from moot.errors import UserError
from moot.eval.results import ResultRow, RunSpec

RESULTS = "results.jsonl"
SPEC = "run.json"
QUEUED = "queued.jsonl"
RUN_NAME_CHARS = 40  # of the folder's name in a run's tag, whose whole must fit DebateStarted.eval_run's 64


class ResultsFolder:
    """`run.json` (the settings), `results.jsonl` (a row per finished pair) and `queued.jsonl` in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_id = ""  # the run's tag, known once `start` has read or written run.json

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    def start(self, spec: RunSpec) -> list[ResultRow]:
        """The rows already there, after checking they are from a run with these settings (else a UserError:
        a folder holds one comparison). Creates the folder and records the settings for a new run, with the
        run's tag (`run_id`), which a resumed run keeps."""
        self.path.mkdir(parents=True, exist_ok=True)
        spec_file = self.path / SPEC
        before: RunSpec | None = None
        if spec_file.exists():
            try:
                before = RunSpec.model_validate_json(spec_file.read_text(encoding="utf-8"))
            except ValueError:
                raise UserError(
                    f"{spec_file} is not a moot eval run file; give another --out", field="--out"
                ) from None
            changed = before.differences(spec)
            if changed:
                raise UserError(
                    f"{self.path} holds a run with other settings ({'; '.join(changed)}); give a new "
                    "--out, or the same settings to resume it",
                    field="--out",
                )
        if before is None or before.run_id is None:  # a new run, or one from before runs were tagged
            self.run_id = new_run_id(self.path)
            spec_file.write_text(
                spec.model_copy(update={"run_id": self.run_id}).model_dump_json(indent=2) + "\n",
                encoding="utf-8",
            )
        else:
            self.run_id = before.run_id
        return [ResultRow.model_validate_json(line) for line in whole_lines(self.results)]

    def queued(self) -> dict[tuple[str, str], str]:
        """Debates an earlier run queued, by (item id, arm): their ids."""
        out: dict[tuple[str, str], str] = {}
        for line in whole_lines(self.path / QUEUED):
            entry = json.loads(line)
            out[(entry["item_id"], entry["arm"])] = entry["debate_id"]
        return out

    def append(self, row: ResultRow) -> None:
        append_line(self.results, row.model_dump_json())

    def mark_queued(self, item_id: str, arm: str, debate_id: str) -> None:
        append_line(self.path / QUEUED, json.dumps({"item_id": item_id, "arm": arm, "debate_id": debate_id}))


def new_run_id(folder: Path) -> str:
    """A tag for a new run: the folder's name, which the user chose, made safe for a URL and a terminal, and
    six random hex digits, so two folders of one name (in different places) stay apart."""
    name = (
        re.sub(r"[^A-Za-z0-9._-]+", "-", folder.resolve().name).lstrip("._-")[:RUN_NAME_CHARS].rstrip("._-")
    )
    return f"{name or 'eval'}-{secrets.token_hex(3)}"


def whole_lines(path: Path) -> list[str]:
    """Whole lines of a JSONL file; a last line cut short by a crash is dropped from the file."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with path.open("r+b") as f:
            f.truncate(end)
    return [line for line in data[:end].decode("utf-8").splitlines() if line.strip()]


def append_line(path: Path, line: str) -> None:
    # One write of a whole line, flushed to disk: a crash loses at most the row being written.
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
