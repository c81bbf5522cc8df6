"""The arena's report: `leaderboard.json` (the standings, the figures as the report words them, and what
reproduces them), a standalone `report.html` and `report.png` (drawn in moot.arena.charts), and rich tables
for the terminal: the leaderboard, the head-to-head matrix and the diagnostics.

Model labels, judge labels and motions are data the user (or a provider) typed. The page escapes them; the
terminal tables show them as text (`Label`: never read as rich markup) and leave control sequences to the caller's
console: the CLI prints them through its `SafeConsole`, which strips them."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from moot import __version__
from moot.arena.charts import (
    elo_interval_text,
    elo_text,
    figures,
    rank_text,
    ranked,
    record_text,
    render_html,
    write_png,
)
from moot.arena.results import ArenaSpec, MatchRow, Record, Standings
from moot.install import install_command

Source = Literal["arena", "history"]

LEADERBOARD_JSON = "leaderboard.json"
REPORT_HTML = "report.html"
REPORT_PNG = "report.png"
PNG_HINT = f"install matplotlib for report.png: {install_command('eval')}"
INLINE_MOTIONS = "--motion"  # a spec's motions_source when the motions were given on the command line
DEFAULT_SAMPLES = 1000
# The options of `moot arena --from-history` by the HistoryFilters field each sets.
HISTORY_OPTIONS = {
    "text": "--search",
    "format": "--format",
    "since": "--since",
    "until": "--until",
    "eval_run": "--run",
}
OPEN_DEBATE = "moot show ID"  # the command that opens one of the rated debates


# --- leaderboard.json ---------------------------------------------------------------------------------------


def model_versions(rows: Sequence[MatchRow]) -> dict[str, str | list[str]]:
    """Each label's versions as its provider reported them over the rows: one string, or a list when a
    provider changed the model under the same name during the run (which the reader should know)."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        for label, version in row.versions.items():
            seen.setdefault(label, set()).add(version)
    return {label: _one_or_all(sorted(v)) for label, v in sorted(seen.items())}


def _one_or_all(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def motions_of(rows: Sequence[MatchRow]) -> list[dict[str, Any]]:
    """The motions debated, in the rows' order, with how many debates each had."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = out.setdefault(row.motion_id, {"id": row.motion_id, "motion": row.motion, "debates": 0})
        entry["debates"] += 1
    return list(out.values())


def arena_command(spec: ArenaSpec, samples: int, motions: Sequence[str] = (), folder: str = "DIR") -> str:
    """The `moot arena` command of a run's settings, quoted for a POSIX shell (labels are whatever was typed).
    Motions given inline (`--motion`) are repeated from the rows. Run again on the same folder, it resumes
    rather than repeats; on a new one, it holds the same debates with the same seeds."""
    words = ["moot", "arena"]
    for model in spec.models:
        words += ["-m", model]
    if spec.motions_source == INLINE_MOTIONS:
        for motion in motions:
            words += ["--motion", motion]
    else:
        words += ["--motions", spec.motions_source]
    for judge in spec.judges:
        words += ["-j", judge]
    words += ["--format", spec.format, "--rounds", str(spec.rounds), "--seed", str(spec.seed)]
    if samples != DEFAULT_SAMPLES:
        words += ["--samples", str(samples)]
    if spec.allow_self_judging:
        words.append("--allow-self-judging")
    return shlex.join([*words, "-o", folder])


def history_command(filters: dict[str, str], samples: int, seed: int, folder: str = "DIR") -> str:
    """The `moot arena --from-history` command with the options that chose the debates. `filters` are named
    as `HistoryFilters` names them (text, format, since, until, eval_run) or as the options are."""
    words = ["moot", "arena", "--from-history"]
    for name, value in filters.items():
        words += [HISTORY_OPTIONS.get(name, name if name.startswith("-") else f"--{name}"), value]
    words += ["--seed", str(seed)]
    if samples != DEFAULT_SAMPLES:
        words += ["--samples", str(samples)]
    return shlex.join([*words, "-o", folder])


def _default_title(spec: ArenaSpec | None, standings: Standings) -> str:
    if spec is None:
        return f"moot arena: {len(standings.ratings)} models rated from stored debates"
    return f"moot arena: {len(spec.models)} models, {spec.motions} motions, {spec.format}"


def _reproduce(
    spec: ArenaSpec | None,
    standings: Standings,
    rows: Sequence[MatchRow],
    filters: dict[str, str] | None,
    folder: str,
) -> dict[str, Any]:
    common = {
        "moot_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "bootstrap": {"samples": standings.samples, "seed": standings.seed},
        "model_versions": model_versions(rows),
    }
    if spec is None:
        return {
            "command": history_command(filters or {}, standings.samples, standings.seed, folder),
            "source": "history",
            "filters": dict(filters or {}),
            # What was rated, whatever the store holds by the time it is asked again.
            "debates": [row.debate_id for row in rows],
            **common,
        }
    motions = [m["motion"] for m in motions_of(rows)]
    return {
        "command": arena_command(spec, standings.samples, motions, folder),
        "source": "arena",
        "run_id": spec.run_id,
        "seed": spec.seed,
        "motions_digest": spec.motions_digest,
        "motions_source": spec.motions_source,
        "motions": spec.motions,
        "models": list(spec.models),
        "judges": list(spec.judges),
        "format": spec.format,
        "rounds": spec.rounds,
        "allow_self_judging": spec.allow_self_judging,
        **common,
    }


def leaderboard_document(
    spec: ArenaSpec | None,
    standings: Standings,
    rows: Sequence[MatchRow],
    *,
    source: Source,
    filters: dict[str, str] | None = None,
    title: str | None = None,
    folder: Path | None = None,
) -> dict[str, Any]:
    """Everything leaderboard.json holds. `standings` is there whole (it reads back with
    `Standings.model_validate`); `readings` are the diagnostics worded as every report shows them.
    `filters` (history) are the options that chose the stored debates; `folder` goes in the command."""
    if source == "arena" and spec is None:
        raise ValueError("an arena run's leaderboard needs its spec (run.json)")
    failed = sum(row.status != "completed" for row in rows)
    return {
        "title": title or _default_title(spec, standings),
        "source": source,
        "counts": {
            "rows": len(rows),
            "rated": standings.debates,
            "unrated": standings.unrated,
            "failed": failed,
        },
        "standings": standings.model_dump(mode="json"),
        "readings": [f.shown() for f in figures(standings)],
        "motions": motions_of(rows),
        "open_debate": {
            "command": OPEN_DEBATE,
            "ids_in": "results.jsonl" if source == "arena" else "leaderboard.json: reproduce.debates",
        },
        "reproduce": _reproduce(
            spec if source == "arena" else None, standings, rows, filters, str(folder or "DIR")
        ),
    }


# --- terminal ------------------------------------------------------------------------------------------------


class Label:
    """A label in a table cell (a model, a judge, a phrase), broken after a '/', ':' or space where the column
    is too narrow for it: `openrouter:meta-llama/` over `llama-3.3-70b-instruct`, not cut mid-word. Text,
    never markup: a label's `[bold]` is shown as typed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pieces = [p for p in re.split(r"(?<=[/:\s])", text) if p]

    def __str__(self) -> str:
        return self.text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((cell_len(p.rstrip()) for p in self.pieces), default=1)
        return Measurement(widest, max(cell_len(self.text), 1)).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = [""]
        for piece in self.pieces:
            if lines[-1] and cell_len(lines[-1] + piece.rstrip()) > options.max_width:
                lines.append("")
            lines[-1] += piece
        for line in lines:
            # A piece wider than the column still folds rather than being cut.
            yield Text(line.rstrip(), overflow="fold")


class Titled:
    """A table under its title, the title a line of its own: a table's own title wraps to the table's width,
    which for a few short columns is narrower than the title; this one wraps only at the terminal's (every
    title here is shorter than 80 columns)."""

    def __init__(self, title: str, table: Table) -> None:
        self.title = title
        self.table = table

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        # The table's: the title wraps, so it never widens or narrows the layout chosen.
        return Measurement.get(console, options, self.table)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(self.title, style="bold")
        yield self.table


def _table() -> Table:
    return Table(box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True, pad_edge=False)


def _columns(
    out: Table, headings: Sequence[str], rows: Sequence[Sequence[str | Label]], wrap: set[int]
) -> None:
    """Figures are never cut: a column in `wrap` (a label, a phrase) folds, the others keep their width."""
    for i, heading in enumerate(headings):
        widest = max((len(str(row[i])) for row in rows), default=1)
        if i in wrap:
            out.add_column(heading)
        else:
            out.add_column(heading, justify="right", min_width=widest, no_wrap=True)
    for row in rows:
        out.add_row(*row)


LEADERBOARD_TITLE = "Leaderboard: Bradley-Terry strength on the Elo scale"
MATRIX_TITLE = "Head to head: the row's model against the column's (W-L-T)"
MATRIX_BY_RANK_TITLE = "Head to head, models by rank: the row's W-L-T against the column"
DIAGNOSTICS_TITLE = "Biases of the judging (95% intervals)"


def leaderboard_table(standings: Standings) -> Titled:
    """Rank, model, Elo, its 95 % interval, W-L-T and debates, best first."""
    out = _table()
    rows = [
        (
            rank_text(standings, r),
            Label(r.model),
            elo_text(r),
            elo_interval_text(r),
            record_text(r),
            str(r.debates),
        )
        for r in ranked(standings)
    ]
    _columns(out, ("#", "Model", "Elo", "95% interval", "W-L-T", "Debates"), rows, wrap={1})
    return Titled(LEADERBOARD_TITLE, out)


class Fitted:
    """The first of several layouts whose least width fits the console, measured when it is drawn (the width is
    the console's, unknown when the table is made); the last when none does."""

    def __init__(self, *layouts: Titled) -> None:
        self.layouts = layouts

    def _chosen(self, console: Console, options: ConsoleOptions) -> Titled:
        unbounded = options.update_width(10_000)
        for layout in self.layouts:
            if Measurement.get(console, unbounded, layout).minimum <= options.max_width:
                return layout
        return self.layouts[-1]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._chosen(console, options))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._chosen(console, options)


def matrix_table(standings: Standings) -> Fitted:
    """Each model's W-L-T against each other, opponents as columns named by rank. With many models on a narrow
    terminal the rows are named by rank too (the leaderboard above names them), rather than squeezing each
    label into a sliver."""
    return Fitted(_matrix(standings, labelled=True), _matrix(standings, labelled=False))


def _matrix(standings: Standings, *, labelled: bool) -> Titled:
    ratings = ranked(standings)
    out = _table()
    rows: list[list[str | Label]] = []
    # Numbered by place in the leaderboard, not by rank: models of equal strength share a rank, and a column
    # heading must name one model.
    for place, r in enumerate(ratings, start=1):
        cells: list[str | Label] = [str(place), Label(r.model)] if labelled else [str(place)]
        for other in ratings:
            record = standings.head_to_head.get(r.model, {}).get(other.model, Record())
            cells.append("·" if other.model == r.model else record_text(record))
        rows.append(cells)
    headings = ["#", "Model"] if labelled else ["#"]
    places = [f"vs {place}" for place in range(1, len(ratings) + 1)]
    _columns(out, [*headings, *places], rows, wrap={1} if labelled else set())
    return Titled(MATRIX_TITLE if labelled else MATRIX_BY_RANK_TITLE, out)


def diagnostics_table(standings: Standings) -> Titled:
    """Each diagnostic with its 95 % interval, the cases it rests on and what it means."""
    out = _table()
    rows = [
        (Label(f.name), f.value, f.interval, str(f.estimate.n), Label(f.reading)) for f in figures(standings)
    ]
    _columns(out, ("Figure", "Value", "95% interval", "n", "Reading"), rows, wrap={0, 4})
    out.columns[4].justify = "left"
    return Titled(DIAGNOSTICS_TITLE, out)


# --- all of it -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    leaderboard_json: Path
    report_html: Path
    report_png: Path | None


def write_reports(
    folder: Path,
    spec: ArenaSpec | None,
    standings: Standings,
    rows: Sequence[MatchRow],
    *,
    source: Source,
    filters: dict[str, str] | None = None,
    title: str | None = None,
) -> ReportFiles:
    """leaderboard.json, report.html and (with matplotlib) report.png in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    document = leaderboard_document(
        spec, standings, rows, source=source, filters=filters, title=title, folder=folder
    )
    json_path = folder / LEADERBOARD_JSON
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    html_path = folder / REPORT_HTML
    html_path.write_text(render_html(document, standings), encoding="utf-8")
    png_path = folder / REPORT_PNG
    return ReportFiles(json_path, html_path, png_path if write_png(png_path, standings) else None)
