"""An evaluation's results folder (`moot.batch.folder`): `RunSpec` settings and a `ResultRow` per (item, arm)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from moot.batch.folder import BatchFolder
from moot.eval.results import ResultRow, RunSpec


def pair_key(item_id: str, arm: str) -> str:
    """An (item, arm)'s key in the folder. An arm's label has no space, so the first space ends it and no two
    pairs share a key, whatever the item's id holds."""
    return f"{arm} {item_id}"


def _old_key(entry: dict[str, Any]) -> str:
    # queued.jsonl as eval wrote it before its entries were keyed: a run queued then still collects its debates.
    return pair_key(entry["item_id"], entry["arm"])


class ResultsFolder(BatchFolder[RunSpec, ResultRow]):
    def __init__(self, path: Path) -> None:
        super().__init__(
            path,
            spec_type=RunSpec,
            row_type=ResultRow,
            key=lambda row: pair_key(row.item_id, row.arm),
            flag="--out",
            holds="a run",
            file_words="a moot eval run file",
            old_key=_old_key,
        )
