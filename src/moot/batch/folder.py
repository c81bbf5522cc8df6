"""A run's results folder: its settings (`run.json`), the rows so far (`results.jsonl`, one appended as each
lands, so a stopped run resumes) and what was queued (`queued.jsonl`, so a resumed run collects those debates
instead of queueing them again). `moot eval` and `moot arena` each give it their own settings and rows."""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, Protocol, Self, TypeVar

from moot.errors import UserError

RESULTS = "results.jsonl"
SPEC = "run.json"
QUEUED = "queued.jsonl"
RUN_NAME_CHARS = 40  # of the folder's name in a run's tag, whose whole must fit DebateStarted.eval_run's 64


class Settings(Protocol):
    """What the folder needs of a run's settings: a pydantic model with the run's tag, which is identity
    rather than a setting, and the settings that differ from another's, in words."""

    @property
    def run_id(self) -> str | None: ...

    def differences(self, other: Self, /) -> list[str]: ...

    @classmethod
    def model_validate_json(cls, json_data: str, /) -> Self: ...

    def model_dump_json(self, *, indent: int | None = None) -> str: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


class Row(Protocol):
    """What the folder and the runner need of a row: a pydantic model with the error of its debate, if any."""

    @property
    def error(self) -> str | None: ...

    @classmethod
    def model_validate_json(cls, json_data: str, /) -> Self: ...

    def model_dump_json(self, *, indent: int | None = None) -> str: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


SpecT = TypeVar("SpecT", bound=Settings)
RowT = TypeVar("RowT", bound=Row)


class BatchFolder(Generic[SpecT, RowT]):
    """`run.json`, `results.jsonl` and `queued.jsonl` in `path`, for one kind of run.

    `flag` is the option that names the folder (each refusal names it), `holds` what a folder holds ("a run"),
    `file_words` what a readable `run.json` is; `key` names a row's place in the plan. `old_key` reads a
    `queued.jsonl` entry written before entries were keyed, so a run queued then still resumes."""

    def __init__(
        self,
        path: Path,
        *,
        spec_type: type[SpecT],
        row_type: type[RowT],
        key: Callable[[RowT], str],
        flag: str,
        holds: str,
        file_words: str,
        old_key: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.path = path
        self.spec_type = spec_type
        self.row_type = row_type
        self.key = key
        self.flag = flag
        self.holds = holds
        self.file_words = file_words
        self.old_key = old_key
        self.run_id = ""  # the run's tag, known once `start` has read or written run.json

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    def start(self, spec: SpecT) -> list[RowT]:
        """The rows already there, after checking they are from a run with these settings (else a UserError
        naming each difference: a folder holds one comparison). Creates the folder and records the settings
        for a new run, with the run's tag (`run_id`), which a resumed run keeps."""
        self.path.mkdir(parents=True, exist_ok=True)
        spec_file = self.path / SPEC
        before: SpecT | None = None
        if spec_file.exists():
            try:
                before = self.spec_type.model_validate_json(spec_file.read_text(encoding="utf-8"))
            except ValueError:
                raise UserError(
                    f"{spec_file} is not {self.file_words}; give another {self.flag}", field=self.flag
                ) from None
            changed = before.differences(spec)
            if changed:
                raise UserError(
                    f"{self.path} holds {self.holds} with other settings ({'; '.join(changed)}); give a new "
                    f"{self.flag}, or the same settings to resume it",
                    field=self.flag,
                )
        if before is None or before.run_id is None:
            # A new run, or one from before runs were tagged: the tag is written down, so that the debates
            # this run holds and those a later resume holds carry the same one.
            self.run_id = new_run_id(self.path)
            spec_file.write_text(
                spec.model_copy(update={"run_id": self.run_id}).model_dump_json(indent=2) + "\n",
                encoding="utf-8",
            )
        else:
            self.run_id = before.run_id
        return [self.row_type.model_validate_json(line) for line in whole_lines(self.results)]

    def append(self, row: RowT) -> None:
        append_line(self.results, row.model_dump_json())

    def queued(self) -> dict[str, str]:
        """Debates an earlier run queued: key -> debate id."""
        out: dict[str, str] = {}
        for line in whole_lines(self.path / QUEUED):
            entry = json.loads(line)
            if "key" in entry:
                out[entry["key"]] = entry["debate_id"]
            elif self.old_key is not None:
                out[self.old_key(entry)] = entry["debate_id"]
        return out

    def mark_queued(self, key: str, debate_id: str) -> None:
        append_line(self.path / QUEUED, json.dumps({"key": key, "debate_id": debate_id}))


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
