"""An evaluation's results folder: its settings (`run.json`), the rows so far (`results.jsonl`, one appended
as each lands, so a stopped run resumes) and what was queued (`queued.jsonl`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from moot.errors import UserError
from moot.eval.results import ResultRow, RunSpec

RESULTS = "results.jsonl"
SPEC = "run.json"
QUEUED = "queued.jsonl"


class ResultsFolder:
    """`run.json` (the settings), `results.jsonl` (a row per finished pair) and `queued.jsonl` in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    def start(self, spec: RunSpec) -> list[ResultRow]:
        """The rows already there, after checking they are from a run with these settings (else a UserError:
        a folder holds one comparison). Creates the folder and records the settings for a new run."""
        self.path.mkdir(parents=True, exist_ok=True)
        spec_file = self.path / SPEC
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
        else:
            spec_file.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return [ResultRow.model_validate_json(line) for line in self._lines(self.results)]

    def queued(self) -> dict[tuple[str, str], str]:
        """Debates an earlier run queued, by (item id, arm): their ids."""
        out: dict[tuple[str, str], str] = {}
        for line in self._lines(self.path / QUEUED):
            entry = json.loads(line)
            out[(entry["item_id"], entry["arm"])] = entry["debate_id"]
        return out

    def append(self, row: ResultRow) -> None:
        _append_line(self.results, row.model_dump_json())

    def mark_queued(self, item_id: str, arm: str, debate_id: str) -> None:
        _append_line(self.path / QUEUED, json.dumps({"item_id": item_id, "arm": arm, "debate_id": debate_id}))

    @staticmethod
    def _lines(path: Path) -> list[str]:
        """Whole lines of a JSONL file; a last line cut short by a crash is dropped from the file."""
        if not path.exists():
            return []
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with path.open("r+b") as f:
                f.truncate(end)
        return [line for line in data[:end].decode("utf-8").splitlines() if line.strip()]


def _append_line(path: Path, line: str) -> None:
    # One write of a whole line, flushed to disk: a crash loses at most the row being written.
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
