"""An arena's results folder: `run.json` (the settings, `ArenaSpec`), `results.jsonl` (a `MatchRow` appended as
each debate's judging lands, so a stopped run resumes), `queued.jsonl` (debates put on the workers' queue) and
the reports written from them."""

from __future__ import annotations

import json
from pathlib import Path

from moot.arena.results import ArenaSpec, MatchRow
from moot.errors import UserError
from moot.eval.folder import append_line, new_run_id, whole_lines

RESULTS = "results.jsonl"
SPEC = "run.json"
QUEUED = "queued.jsonl"


class ArenaFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_id = ""  # the debates' tag, known once `start` has read or written run.json

    def start(self, spec: ArenaSpec) -> list[MatchRow]:
        """The rows already there, after checking they are from an arena with these settings (else a UserError
        naming each difference). Creates the folder and records the settings for a new run."""
        self.path.mkdir(parents=True, exist_ok=True)
        spec_file = self.path / SPEC
        if spec_file.exists():
            try:
                before = ArenaSpec.model_validate_json(spec_file.read_text(encoding="utf-8"))
            except ValueError:
                raise UserError(
                    f"{spec_file} is not a moot arena's run file; give another -o", field="-o"
                ) from None
            changed = before.differences(spec)
            if changed:
                raise UserError(
                    f"{self.path} holds an arena with other settings ({'; '.join(changed)}); give a new -o, or "
                    "the same settings to resume it",
                    field="-o",
                )
            self.run_id = before.run_id or new_run_id(self.path)
        else:
            self.run_id = new_run_id(self.path)
            spec_file.write_text(
                spec.model_copy(update={"run_id": self.run_id}).model_dump_json(indent=2) + "\n",
                encoding="utf-8",
            )
        return self.rows()

    def rows(self) -> list[MatchRow]:
        return [MatchRow.model_validate_json(line) for line in whole_lines(self.path / RESULTS)]

    def spec(self) -> ArenaSpec | None:
        spec_file = self.path / SPEC
        if not spec_file.exists():
            return None
        return ArenaSpec.model_validate_json(spec_file.read_text(encoding="utf-8"))

    def append(self, row: MatchRow) -> None:
        append_line(self.path / RESULTS, row.model_dump_json())

    def queued(self) -> dict[str, str]:
        """Debates an earlier run queued: match key -> debate id."""
        out: dict[str, str] = {}
        for line in whole_lines(self.path / QUEUED):
            entry = json.loads(line)
            out[entry["key"]] = entry["debate_id"]
        return out

    def mark_queued(self, key: str, debate_id: str) -> None:
        append_line(self.path / QUEUED, json.dumps({"key": key, "debate_id": debate_id}))
