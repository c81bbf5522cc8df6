"""The CPU of runs nobody watches token by token, asked for whole replies (now) or streamed (before).

    python bench/bench_unwatched.py [--models 6] [--motions 10] [--items 20] [--repeat 2]

Two batch runs, each the real CLI in a subprocess of its own, as a user runs it, on moot's `fake:` models (which
stream a reply word by word, as a provider streams tokens, or answer it whole when asked so):

- `moot arena` of `--models` contenders x `--motions` motions (every pair debates every motion twice, sides
  swapped; 2 rounds; one fake judge), 4 debates at once;
- `moot eval` of `--items` arithmetic items x the arms single, sc:3 and society:3x2.

Each runs twice per round, in turn: once as moot runs batches now (whole replies: `watched=False` in the batch
runner), once "before": every debate forced to stream (a launcher wraps the batch runner's `run_debate` to pass
`watched=True`), or, with `--before-src DIR` (an older moot's src/, a git worktree), that moot run as it is. The
figure is the child's CPU (user + system, from the OS), best of `--repeat` interleaved rounds; each run must
complete every debate.

Beside them, each run's floors: processes that only import, and exit, timed the same way in the same rounds.
`python -X importtime` lists every module the command imports; "libraries" imports those that are not moot's own
(pydantic-ai, SQLAlchemy, typer and rich, matplotlib for report.png, ...), "no chart" leaves out what only
matplotlib brings (what a bare `import matplotlib.figure` imports), and "imports" adds moot's own modules. A run
cannot cost less than its imports; where a third of "before" is under a floor, 3x less CPU than before needs what
that floor holds to go too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench_startup import import_rows

out = Console(highlight=False, width=120)  # the table whole when piped
ROOT = Path(__file__).resolve().parents[1]

LAUNCHER = """
import sys
import moot.batch.runner as runner
if sys.argv[1] == "streamed":  # "as is": an older moot, run unchanged
    real = runner.run_debate
    def streamed(*args, **kwargs):
        kwargs["watched"] = True  # as every batch debate ran before whole replies
        return real(*args, **kwargs)
    runner.run_debate = streamed
from moot.cli.app import main
sys.argv = ["moot", *sys.argv[2:]]
main()
"""


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(mode: str, args: list[str], home: Path, before_src: Path | None = None) -> float:
    env = {**os.environ, "MOOT_HOME": str(home), "COLUMNS": "120"}
    if mode == "streamed" and before_src is not None:  # moot as it was: its own source tree, nothing forced
        env["PYTHONPATH"] = str(before_src)
        mode = "as is"
    before = child_cpu()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, mode, *args], env=env, cwd=ROOT, capture_output=True, text=True
    )
    spent = child_cpu() - before
    if done.returncode != 0:
        raise SystemExit(
            f"moot {' '.join(args[:1])} ({mode}) failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return spent


FLOOR = """
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:  # a module only importable the way its package imports it: its package is imported anyway
        pass
"""


def imported(code: list[str], home: Path) -> list[str]:
    """Every module `python -X importtime -c ...code` imports, in order, but those of the interpreter's start."""
    env = {**os.environ, "MOOT_HOME": str(home), "COLUMNS": "120"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", *code], env=env, cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{code[1:3]} failed while its imports were listed:\n{done.stderr[-2000:]}")
    return [name for _, name in import_rows(done.stderr) if name != "__main__"]


def floors(args: list[str], home: Path) -> dict[str, list[str]]:
    """The modules of each floor of the command `args`: its libraries without the chart, its libraries, all."""
    every = imported([LAUNCHER, "whole", *args], home)
    charting = set(imported(["import matplotlib.figure, matplotlib.backends.backend_agg"], home))
    libraries = [n for n in every if n.split(".")[0] != "moot"]
    return {
        "libraries, no chart": [n for n in libraries if n not in charting],
        "libraries": libraries,
        "imports": every,
    }


def floor(modules: list[str]) -> float:
    before = child_cpu()
    subprocess.run([sys.executable, "-c", FLOOR, *modules], cwd=ROOT, check=True)
    return child_cpu() - before


def arena_args(models: int, motions: int, folder: Path) -> list[str]:
    motions_file = folder / "motions.txt"
    motions_file.write_text("".join(f"Motion number {i} should pass\n" for i in range(motions)))
    args = ["arena", "--motions", str(motions_file), "-j", "fake:judge", "-r", "2", "--concurrency", "4"]
    for i in range(models):
        args += ["-m", f"fake:{chr(97 + i)}"]
    return [*args, "--samples", "200", "-o", str(folder / "out")]


def eval_args(items: int, folder: Path) -> list[str]:
    return [
        "eval", "--generate", "arithmetic", "-n", str(items), "--arm", "single", "--arm", "sc:3",
        "--arm", "society:3x2", "-m", "fake:a", "--concurrency", "4", "--out", str(folder / "out"),
    ]  # fmt: skip


def rows_of(folder: Path) -> int:
    path = folder / "out" / "results.jsonl"
    return (
        sum(1 for line in path.read_text().splitlines() if line.strip() and json.loads(line))
        if path.exists()
        else 0
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=int, default=6)
    parser.add_argument("--motions", type=int, default=10)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--before-src",
        type=Path,
        help="the src/ folder of an older moot (a git worktree) to run as 'before', instead of forcing streams",
    )
    args = parser.parse_args()
    pairs = args.models * (args.models - 1) // 2
    arena = f"arena {args.models} models x {args.motions} motions ({pairs * args.motions * 2} debates)"
    evaluation = f"eval {args.items} items x 3 arms ({args.items * 3} debates)"

    def command(name: str, folder: Path) -> tuple[list[str], int]:
        if name == arena:
            return arena_args(args.models, args.motions, folder), pairs * args.motions * 2
        return eval_args(args.items, folder), args.items * 3

    runs = (arena, evaluation)
    best: dict[tuple[str, str], float] = {}
    modules: dict[str, dict[str, list[str]]] = {}
    for name in runs:
        with tempfile.TemporaryDirectory() as tmp:
            modules[name] = floors(command(name, Path(tmp))[0], Path(tmp) / "home")
    for round_ in range(args.repeat):
        for name in runs:
            for layer, names in modules[name].items():
                spent = floor(names)
                out.print(f"round {round_ + 1}: {name}, {layer} ({len(names)} modules): {spent:.2f} s CPU")
                best[(name, layer)] = min(best.get((name, layer), spent), spent)
            for mode in ("streamed", "whole"):
                with tempfile.TemporaryDirectory() as tmp:
                    folder = Path(tmp)
                    words, debates = command(name, folder)
                    spent = run(mode, words, folder / "home", args.before_src)
                    rows = rows_of(folder)
                    if rows != debates:
                        raise SystemExit(f"{name} ({mode}): {rows} rows, not {debates}")
                out.print(f"round {round_ + 1}: {name}, {mode}: {spent:.2f} s CPU")
                key = (name, mode)
                best[key] = min(best.get(key, spent), spent)
    table = Table(
        title=f"CPU of a batch run (the CLI's process), best of {args.repeat}", title_justify="left"
    )
    headings = ("run", "before, s", "now, s", "before / now", "before / 3, s")
    for heading in headings:
        table.add_column(heading, justify="left" if heading == "run" else "right")
    for name in runs:
        before, after = best[(name, "streamed")], best[(name, "whole")]
        table.add_row(name, f"{before:.2f}", f"{after:.2f}", f"{before / after:.2f}x", f"{before / 3:.2f}")
    out.print(table)
    layers = list(modules[runs[0]])
    table = Table(
        title=f"Its floors: processes that only import, best of {args.repeat}", title_justify="left"
    )
    for heading in ("run", *(f"{layer}, s" for layer in layers), "now - imports, s"):
        table.add_column(heading, justify="left" if heading == "run" else "right")
    for name in runs:
        table.add_row(
            name,
            *(f"{best[(name, layer)]:.2f}" for layer in layers),
            f"{best[(name, 'whole')] - best[(name, 'imports')]:.2f}",
        )
    out.print(table)
    out.print(
        "A run cannot cost less than its imports: where before / 3 is under a floor, 3x less CPU than before needs"
        " that floor's modules gone too (the chart's: matplotlib drawing report.png)."
    )


if __name__ == "__main__":
    main()
