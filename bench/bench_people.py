"""What debates waiting for people cost a server: memory per waiting debate, whether debates of models only still
run at their speed beside them, and how long a person's turn takes from POST to stored.

One server in process (`create_app` over SQLite, `max_running` 4). N debates are created whose first speaker is a
person (`human`) and left waiting; then 20 debates of fake models only run to their end, timed; then a person's
turn is given in each of 50 waiting debates, each POST timed until it is answered (the turn stored). The same model-
only debates are timed with no debate waiting first, in the same run, so the ratio compares like with like.

    python bench/bench_people.py --waiting 0,100,1000
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from moot.server import create_app
from moot.server.settings import ServerSettings

MODELS_ONLY = 20
TURNS_TIMED = 50


def person_debate() -> dict[str, Any]:
    return {
        "topic": "Should cities ban cars from their centres?",
        "rounds": 1,
        "participants": [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "fake:bo"}],
        "judge": {"model": "fake:judge"},
    }


def models_debate() -> dict[str, Any]:
    return {
        **person_debate(),
        "participants": [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}],
    }


def rss_kib() -> int:
    with Path("/proc/self/status").open() as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def wait_for(check: Any, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the server never got there")
        time.sleep(0.02)


def one(waiting: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "moot.db")
        with TestClient(
            create_app(db, max_running=4, settings=ServerSettings(max_running_per_token=100_000))
        ) as client:
            manager = client.app.state.manager  # type: ignore[attr-defined]
            gc.collect()
            before = rss_kib()
            links = []
            for _ in range(waiting):
                made = client.post("/api/debates", json=person_debate()).json()
                links.append((made["id"], made["links"]["ada"]["token"]))
            wait_for(lambda: sum(len(manager.people.pending(i)) for i, _ in links) == waiting)
            gc.collect()
            per_debate = (rss_kib() - before) / waiting if waiting else 0.0
            started = time.perf_counter()
            ids = [client.post("/api/debates", json=models_debate()).json()["id"] for _ in range(MODELS_ONLY)]
            wait_for(
                lambda: all(
                    client.get(f"/api/debates/{i}/status").json()["status"] == "completed" for i in ids
                )
            )
            models_wall = time.perf_counter() - started
            posts = []
            for debate_id, token in links[:TURNS_TIMED]:
                t0 = time.perf_counter()
                r = client.post(
                    f"/api/debates/{debate_id}/turns",
                    json={"text": "Cars crowd out people."},
                    headers={"X-Moot-Seat": token},
                )
                posts.append(time.perf_counter() - t0)
                assert r.status_code == 201, r.text
    return {
        "waiting": waiting,
        "kib": per_debate,
        "models_wall": models_wall,
        "post_p50": statistics.median(posts) * 1000 if posts else 0.0,
        "post_p95": statistics.quantiles(posts, n=20)[18] * 1000 if len(posts) >= 20 else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--waiting", default="0,100,1000", help="Debates left waiting for a person, per run")
    args = parser.parse_args()
    rows = [one(int(n)) for n in args.waiting.split(",")]
    base = rows[0]["models_wall"] if rows and rows[0]["waiting"] == 0 else None
    print(
        f"{'waiting':>8} {'KiB/waiting':>12} {MODELS_ONLY} model-only debates {'vs none':>8} "
        f"{'turn POST p50':>14} {'p95':>8}"
    )
    for r in rows:
        ratio = f"{r['models_wall'] / base:.2f}x" if base else "-"
        post = f"{r['post_p50']:.0f} ms" if r["post_p50"] else "-"
        p95 = f"{r['post_p95']:.0f} ms" if r["post_p95"] else "-"
        print(
            f"{r['waiting']:>8} {r['kib']:>12.1f} {r['models_wall']:>21.2f} s {ratio:>8} {post:>14} {p95:>8}"
        )


if __name__ == "__main__":
    main()
