"""The report of an evaluation: per-arm accuracy with 95 % Wilson intervals, the unparsed rate, and the
mean calls, tokens, cost and latency per item; accuracy against rounds; `results.json` (everything, with
what is needed to reproduce it), a standalone `report.html` (inline CSS and SVG, no script, no request),
`report.png` when matplotlib is installed (both drawn in moot.eval.charts), and a rich table for the terminal."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
from rich import box
from rich.table import Table

from moot import __version__
from moot.eval.arms import SEED_STRIDE, ArmSpec, planned_calls
from moot.eval.charts import money, pct, render_html, write_png
from moot.eval.results import ArmSummary, ResultRow, RoundAccuracy
from moot.eval.runner import EvalPlan, EvalRun
from moot.eval.stats import wilson
from moot.install import install_command
from moot.prompts.render import template_source, user_prompt_dir

RESULTS_JSON = "results.json"
REPORT_HTML = "report.html"
REPORT_PNG = "report.png"
PNG_HINT = f"install matplotlib for report.png: {install_command('eval')}"
# The templates each format renders itself; what they include is followed (see `templates_used`).
FORMAT_TEMPLATES: dict[str, tuple[str, ...]] = {
    "society-of-minds": ("society_system.j2", "society_turn.j2"),
    "council": (
        "council_answer_system.j2",
        "council_answer.j2",
        "council_ranking_system.j2",
        "council_ranking.j2",
        "council_chair_system.j2",
        "council_chair.j2",
    ),
}


# --- figures --------------------------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarise(rows: list[ResultRow], arms: list[ArmSpec]) -> list[ArmSummary]:
    """One summary per arm, in the order the arms were given."""
    out: list[ArmSummary] = []
    for arm in arms:
        mine = [r for r in rows if r.arm == arm.label]
        n = len(mine)
        correct = sum(r.correct for r in mine)
        low, high = wilson(correct, n)
        unparsed = sum(not r.parsed for r in mine)
        costs = [r.cost_usd for r in mine if r.cost_usd is not None]
        by_round: list[RoundAccuracy] = []
        if arm.voted_rounds > 1:
            for number in range(1, arm.voted_rounds + 1):
                held = [rr for r in mine for rr in r.rounds if rr.round == number]
                right = sum(rr.correct for rr in held)
                lo, hi = wilson(right, len(held))
                by_round.append(
                    RoundAccuracy(
                        round=number,
                        n=len(held),
                        correct=right,
                        accuracy=right / len(held) if held else 0.0,
                        ci_low=lo,
                        ci_high=hi,
                    )
                )
        out.append(
            ArmSummary(
                arm=arm.label,
                format=arm.format,
                agents=arm.agents,
                rounds=arm.rounds,
                planned_calls=planned_calls(arm),
                n=n,
                correct=correct,
                accuracy=correct / n if n else 0.0,
                ci_low=low,
                ci_high=high,
                unparsed=unparsed,
                unparsed_rate=unparsed / n if n else 0.0,
                failed=sum(r.status != "completed" for r in mine),
                mean_calls=_mean([r.calls for r in mine]),
                mean_input_tokens=_mean([r.input_tokens for r in mine]),
                mean_output_tokens=_mean([r.output_tokens for r in mine]),
                mean_cost_usd=_mean(costs) if costs else None,
                mean_latency_s=_mean([r.latency_s for r in mine]),
                by_round=by_round,
            )
        )
    return out


# --- reproducibility ------------------------------------------------------------------------------------


def templates_used(arms: list[ArmSpec]) -> list[str]:
    """The prompt templates the arms' formats render, with every template they include."""
    env = jinja2.Environment()
    todo = [name for fmt in dict.fromkeys(a.format for a in arms) for name in FORMAT_TEMPLATES[fmt]]
    seen: list[str] = []
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.append(name)
        # A computed include (a role preset by name) is None here: the arms set no role, so it is not used.
        todo += [n for n in jinja2.meta.find_referenced_templates(env.parse(template_source(name))) if n]
    return sorted(seen)


def template_hashes(arms: list[ArmSpec]) -> dict[str, dict[str, Any]]:
    """sha256 of each template's source as this run used it (a user's override where there is one)."""
    overrides = user_prompt_dir()
    return {
        name: {
            "sha256": hashlib.sha256(template_source(name).encode("utf-8")).hexdigest(),
            "overridden": (overrides / name).is_file(),
        }
        for name in templates_used(arms)
    }


def results_document(plan: EvalPlan, run: EvalRun, summaries: list[ArmSummary]) -> dict[str, Any]:
    """Everything results.json holds: settings, reproducibility, per-arm figures and every row."""
    versions = sorted({v for r in run.rows for v in r.model_versions})
    dataset = plan.dataset
    return {
        "moot_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "dataset": {
            "name": dataset.name,
            "source": dataset.source,
            "digest": dataset.digest,
            "task": dataset.task,
            "items": len(dataset.items),
            "skipped_lines": [p.model_dump() for p in dataset.problems],
        },
        "settings": {
            **plan.spec.model_dump(),
            "model_options": plan.model.model_dump(mode="json", exclude_none=True),
            "seeds": f"item i's debate has seed + {SEED_STRIDE} * i; its participant j adds j",
            "equal_compute": {
                a.label: planned_calls(a) for a in plan.arms
            },  # planned model calls per item, judge none
        },
        "reproducibility": {
            "moot_version": __version__,
            "seed": plan.seed,
            "models": [str(plan.model.model)],
            "model_versions": versions,
            "prompt_templates": template_hashes(plan.arms),
        },
        # The tag its debates carry: `moot list` hides them; `moot list --eval` with this tag lists them.
        "eval_run": run.run_id,
        "wall_s": round(run.wall_s, 3),
        "arms": [s.model_dump() for s in summaries],
        "rows": [r.model_dump() for r in run.rows],
    }


# --- terminal --------------------------------------------------------------------------------------------


def table(summaries: list[ArmSummary]) -> Table:
    """The per-arm table: accuracy and interval, unparsed, and the means per item."""
    out = Table(
        title="Accuracy per arm; calls, tokens, cost and latency per item (means)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        collapse_padding=True,
        pad_edge=False,
    )
    headings = (
        "Arm",
        "N",
        "Acc",
        "95% CI",
        "Unparsed",
        "Failed",
        "Calls",
        "Tok in",
        "Tok out",
        "Cost",
        "Latency",
    )
    rows = [
        (
            s.arm,
            str(s.n),
            pct(s.accuracy),
            f"{100 * s.ci_low:.0f}-{100 * s.ci_high:.0f}%",
            pct(s.unparsed_rate),
            str(s.failed),
            f"{s.mean_calls:.1f}",
            f"{s.mean_input_tokens:.0f}",
            f"{s.mean_output_tokens:.0f}",
            money(s.mean_cost_usd),
            f"{s.mean_latency_s:.2f}s",
        )
        for s in summaries
    ]
    # The Failed column only when a debate failed: 80 columns hold the rest.
    shown = [i for i, h in enumerate(headings) if h != "Failed" or any(s.failed for s in summaries)]
    for i in shown:
        # Figures are never cut: on a narrow terminal only the headings wrap.
        widest = max((len(r[i]) for r in rows), default=1)
        out.add_column(headings[i], justify="left" if i == 0 else "right", min_width=widest, overflow="fold")
    for row in rows:
        out.add_row(*(row[i] for i in shown))
    return out


def rounds_table(summaries: list[ArmSummary]) -> Table | None:
    """Majority accuracy after each round, for the arms of several rounds; None when there are none."""
    multi = [s for s in summaries if s.by_round]
    if not multi:
        return None
    out = Table(title="Accuracy against rounds (the majority after each)", box=box.SIMPLE_HEAD)
    out.add_column("Arm")
    for number in range(1, max(len(s.by_round) for s in multi) + 1):
        out.add_column(f"Round {number}", justify="right")
    for s in multi:
        out.add_row(s.arm, *(f"{pct(r.accuracy)} ({r.correct}/{r.n})" for r in s.by_round))
    return out


# --- all of it ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    results_json: Path
    report_html: Path
    report_png: Path | None
    summaries: list[ArmSummary]


def write_report(out: Path, plan: EvalPlan, run: EvalRun) -> ReportFiles:
    """results.json, report.html and (with matplotlib) report.png in `out`."""
    summaries = summarise(run.rows, plan.arms)
    document = results_document(plan, run, summaries)
    json_path = out / RESULTS_JSON
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    html_path = out / REPORT_HTML
    html_path.write_text(render_html(document, summaries), encoding="utf-8")
    png_path = out / REPORT_PNG
    return ReportFiles(json_path, html_path, png_path if write_png(png_path, summaries) else None, summaries)
