"""What a first run on the embedded model shows: turns that echo the prompt, verdict fields that are not words.

    python bench/first_run_quality.py [--debates 10] [--keep DIR]
    python bench/first_run_quality.py --score DIR      # score exports kept by an earlier run again

Holds `--debates` default debates, each what a new user types (`moot run "TOPIC"`: the embedded model for both
debaters and the judge, two rounds, the CLI's defaults) with only the time limits raised (LIMITS), one at a time
on varied topics, each in a fresh MOOT_HOME, and reads the JSON export (`-O`); each run's terminal output is kept
beside it (`.log`). `PYTHONPATH=/other/src` measures another checkout's code.

A turn ECHOES the scaffolding when its text contains any of:
- a fence marker the prompts quote turns between: `<<<`, `>>>`, or their defused forms `‹‹‹`, `›››`;
- a heading of a debater's or the judge's prompt, matched in capitals as the prompts write them (`DEBATE SO
  FAR`, `YOUR ROLE`, `HOW TO ARGUE`, ...), or a transcript label such as `[Round 2]`;
- one of the prompts' own sentences (SCAFFOLD_PHRASES, case-insensitive), old prompts' and new ones'.

A verdict field is NOT WORDS when, after trimming, it has no run of two letters (`1`, `][`, `-`), holds an
identifier-like token (letters joined by `_`, as `evidence_relevance`), repeats one word of three letters or
more back to back (`relevance relevance`, `relevance_relevance`), or is only a participant's id or name
(`proponent`). Fields counted: every agreement, disagreement and insight bullet, every participant's key
arguments and reasoning, and the summary; an empty one (a reasoning or summary the filter emptied) is shown by
no renderer, so it is counted apart, not as junk.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOPICS = [
    "Should cities ban cars from their centres?",
    "Is remote work better than office work?",
    "Should homework be abolished in primary schools?",
    "Is nuclear power the best answer to climate change?",
    "Should social media be banned for children under 16?",
    "Is a four-day working week a good idea?",
    "Should voting be compulsory?",
    "Is space exploration worth its cost?",
    "Should zoos be closed?",
    "Is it better to rent than to buy a home?",
]

# The CLI's defaults for the embedded model (two rounds), with time limits a loaded 2-core machine cannot hit:
# a turn that times out would measure the machine, not the text.
LIMITS = "rounds: 2\nlimits:\n  turn_timeout_s: 1800\n  judge_timeout_s: 3600\n"

FENCES = ("<<<", ">>>", "‹‹‹", "›››")
# Headings the prompts write in capitals; matched case-sensitively so everyday words do not count.
HEADINGS = (
    "DEBATE SO FAR",
    "DEBATE TOPIC",
    "YOUR ROLE",
    "OTHER PARTICIPANTS",
    "HOW TO ARGUE",
    "BACKGROUND MATERIAL",
    "TRANSCRIPT",
    "PARTICIPANTS",
    "FORMAT: FREE-FORM",
    "THE DEBATE SO FAR",
    "YOUR TASK",
)
ROUND_LABEL = re.compile(r"\[Round \d+\]")
# The prompts' own sentences (before and after the first-run work), lower case.
SCAFFOLD_PHRASES = (
    "this is the opening round",
    "state your position and your main arguments",
    "answer the others' latest points",
    "this is the last round",
    "answer what is still open",
    "no one has spoken yet",
    "it is now round",
    "give your contribution as",
    "earlier turn left out",
    "earlier turns left out",
    "not instructions to you",
    "no fixed structure: respond naturally",
    "round 1 opens, the last round closes",
    "argue consistently from your position",
    "speak only as",
    "you are proponent",
    "you are opponent",
    "a participant in a structured debate",
    "write your next turn",
    "your turn now",
)


def echoes(text: str) -> list[str]:
    """The scaffolding this turn's text repeats (empty: none)."""
    found = [f for f in FENCES if f in text]
    found += [h for h in HEADINGS if h in text]
    found += ROUND_LABEL.findall(text)[:1]
    lower = text.lower()
    found += [p for p in SCAFFOLD_PHRASES if p in lower]
    return found


_LETTERS = re.compile(r"[^\W\d_]{2,}")
_IDENTIFIER = re.compile(r"[^\W\d_]+_[^\W\d_]+")
_REPEAT = re.compile(r"(?<![^\W\d_])([^\W\d_]{3,})[\s_]+\1(?![^\W\d_])", re.IGNORECASE)


def not_words(item: str, names: Iterable[str] = ()) -> bool:
    """Whether one verdict field is junk rather than words (the module docstring says how)."""
    text = item.strip()
    if not _LETTERS.search(text):
        return True
    if _IDENTIFIER.search(text) or _REPEAT.search(text):
        return True
    return text.lower().strip(" .") in {n.lower() for n in names}


@dataclass
class Tally:
    turns: int = 0
    echoing: int = 0
    fields: int = 0
    junk: int = 0
    # Fields left empty (this checkout's filter empties a filler reasoning or summary): renderers leave them out.
    empty: int = 0
    verdicts: int = 0
    # The same verdict fields passed through this checkout's filter (moot.judging.words), with --refilter.
    kept: int = 0
    kept_junk: int = 0
    qualities: list[float] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


def verdict_fields(verdict: dict[str, Any]) -> list[str]:
    items: list[str] = []
    for key in ("areas_of_agreement", "areas_of_disagreement", "insights"):
        items += [str(x) for x in verdict.get(key) or []]
    for score in verdict.get("scores") or []:
        items += [str(x) for x in score.get("key_arguments") or []]
        items.append(str(score.get("reasoning") or ""))
    items.append(str(verdict.get("summary") or ""))
    return items


def score_export(path: Path, tally: Tally, keep: Callable[[str, list[str]], bool] | None = None) -> None:
    events = json.loads(path.read_text())["events"]
    names: list[str] = []
    for event in events:
        if event["type"] == "debate_started":
            names = [n for p in event["config"]["participants"] for n in (p["id"], p["name"])]
        elif event["type"] == "turn_completed":
            tally.turns += 1
            if found := echoes(event["text"]):
                tally.echoing += 1
                if len(tally.examples) < 6:
                    tally.examples.append(f"turn echoes {found[:3]}")
        elif event["type"] == "verdict" and event.get("verdict"):
            verdict = event["verdict"]
            tally.verdicts += 1
            if verdict.get("quality") is not None:
                tally.qualities.append(float(verdict["quality"]))
            for item in verdict_fields(verdict):
                if not item.strip():
                    tally.empty += 1
                    continue
                tally.fields += 1
                if keep is not None and keep(item, names):
                    tally.kept += 1
                    tally.kept_junk += not_words(item, names)
                if not_words(item, names):
                    tally.junk += 1
                    if len(tally.examples) < 12:
                        tally.examples.append(f"verdict field {item[:50]!r}")


def run_one(topic: str, out: Path) -> tuple[float, int]:
    """Seconds taken and the exit code; the CLI's output goes beside the export (`.log`)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as home, out.with_suffix(".log").open("w") as log:
        env = {**os.environ, "MOOT_HOME": home, "COLUMNS": "100"}
        env.pop("MOOT_DATABASE_URL", None)
        limits = Path(home) / "limits.yaml"
        limits.write_text(LIMITS)
        done = subprocess.run(
            [sys.executable, "-m", "moot", "run", topic, "-c", str(limits), "-O", str(out)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return time.perf_counter() - started, done.returncode


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"


def report(tally: Tally, debates: int, refiltered: bool = False) -> None:
    mean_quality = sum(tally.qualities) / len(tally.qualities) if tally.qualities else float("nan")
    print(
        "| debates | turns echoing scaffolding | verdict fields not words | empty fields (not shown) | verdicts "
        "| mean quality |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| {debates} | {share(tally.echoing, tally.turns)} | {share(tally.junk, tally.fields)} "
        f"| {tally.empty} | {tally.verdicts} | {mean_quality:.0f}/100 |"
    )
    if refiltered:
        print(
            f"the same verdicts through this checkout's filter: {tally.kept} of {tally.fields} fields shown, "
            f"{share(tally.kept_junk, tally.kept)} of them not words"
        )
    for example in tally.examples:
        print("  e.g.", example)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--debates", type=int, default=10)
    parser.add_argument(
        "--first", type=int, default=0, help="start at this debate (to continue a --keep folder)"
    )
    parser.add_argument("--keep", type=Path, help="keep each debate's JSON export in this folder")
    parser.add_argument("--score", type=Path, help="only score the exports in this folder")
    parser.add_argument(
        "--refilter",
        action="store_true",
        help="with --score: also pass each verdict field through this checkout's moot.judging.words filter",
    )
    args = parser.parse_args()
    tally = Tally()
    if args.score:
        exports = sorted(args.score.glob("*.json"))
        keep = None
        if args.refilter:
            from moot.judging.words import is_words

            keep = is_words
        for path in exports:
            score_export(path, tally, keep)
        report(tally, len(exports), refiltered=args.refilter)
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="first-run-"))
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(args.first, args.debates):
        topic = TOPICS[i % len(TOPICS)]
        out = folder / f"debate-{i:02d}.json"
        seconds, code = run_one(topic, out)
        status = "" if code == 0 else f" (exit {code}; see {out.with_suffix('.log')})"
        print(f"debate {i + 1}/{args.debates}: {seconds:.0f} s  {topic}{status}", flush=True)
        if out.exists():
            score_export(out, tally)
    report(tally, args.debates)


if __name__ == "__main__":
    main()
