"""An arena's results folder (`moot.batch.folder`): `ArenaSpec` settings and a `MatchRow` per debate of the
plan, beside the reports written from them."""

from __future__ import annotations

from pathlib import Path

from moot.arena.results import ArenaSpec, MatchRow
from moot.batch.folder import BatchFolder


class ArenaFolder(BatchFolder[ArenaSpec, MatchRow]):
    def __init__(self, path: Path) -> None:
        super().__init__(
            path,
            spec_type=ArenaSpec,
            row_type=MatchRow,
            key=lambda row: row.key,
            flag="-o",
            holds="an arena",
            file_words="a moot arena's run file",
        )
