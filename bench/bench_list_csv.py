"""What `moot list --csv` costs against `moot list --json`: the CSV folds each listed debate's log (rounds held,
tokens and cost are not in the listing's rows), the JSON reads the rows alone.

N finished debates (fake models, 3 rounds of 2 debaters and a verdict: about 30 events each) are stored in a
temporary MOOT_HOME; then `moot list --csv -n N` and `moot list --json -n N` run as a user runs them (a new
process each), R times each, and the medians and their ratio are printed. Ratios within one run are what to read.

    python bench/bench_list_csv.py --debates 20,200,1000 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


async def _hold(home: Path, count: int) -> None:
    from moot.config_files import build_config
    from moot.engine import run_debate
    from moot.store import EventStore

    config = build_config(
        {
            "topic": "Should cities ban private cars from their centres?",
            "rounds": 3,
            "participants": [{"model": "fake:a"}, {"model": "fake:b"}],
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": False},
        }
    )
    async with await EventStore.open(f"sqlite:///{home / 'moot.db'}") as store:
        for _ in range(count):
            async for _event in run_debate(config, log=store):
                pass


def _timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "moot", *args], env=env, capture_output=True, check=True)
    assert done.stdout
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debates", default="20,200,1000", help="comma-separated store sizes")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'debates':>8} {'--json s':>9} {'--csv s':>9} {'csv/json':>9} {'csv ms/debate':>14}")
    for count in (int(n) for n in args.debates.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            asyncio.run(_hold(home, count))
            env = {**os.environ, "MOOT_HOME": str(home)}
            limit = ["-n", str(count)]
            as_json = statistics.median(_timed(["list", "--json", *limit], env) for _ in range(args.repeat))
            as_csv = statistics.median(_timed(["list", "--csv", *limit], env) for _ in range(args.repeat))
            print(
                f"{count:>8} {as_json:>9.2f} {as_csv:>9.2f} {as_csv / as_json:>8.1f}x "
                f"{1000 * (as_csv - as_json) / count:>13.1f}"
            )


if __name__ == "__main__":
    main()
