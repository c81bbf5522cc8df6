"""`moot run --check` and `moot models --check`: the providers' own word on keys and model names, asked before
anything is stored or spent (moot.engine's live check does the asking; this prints what came of it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from moot.cli.waiting import waiting
from moot.config_files import parse_participant_spec, read_config_file
from moot.config_files.compose import ConfigFile, DebateRequest, compose
from moot.domain.config import DebateConfig, ModelOptions
from moot.errors import ConfigError

if TYPE_CHECKING:
    from moot.engine import Checked, LiveResult

# What a config read only for its models is given when it names no topic.
_NO_TOPIC = "(models check)"


async def checked_live(config: DebateConfig, console: Console) -> Checked:
    """`moot run --check`: every check a run makes, then one call per distinct model; a ConfigError naming the
    field of the first refused key or model. The run starts on these checks."""
    from moot.engine import check_live, check_run

    checked = check_run(config)
    with waiting(console, "asking the providers whether the keys and model names are good"):
        await check_live(checked.config, checked.resolve)
    return checked


async def check_models(console: Console, specs: list[str], config_file: Path | None) -> int:
    """`moot models --check`: ask about the models named (`-p`) or in a config file, else each keyed provider's
    key; print one row per model or provider. 0 when every answer is good, 2 when any is not."""
    from moot.engine import check_targets, key_targets, live_resolver, live_targets, model_targets

    if config_file is not None:
        data = read_config_file(config_file)
        data.setdefault("topic", _NO_TOPIC)
        file = ConfigFile(name=config_file.name, fields=data)
        targets = live_targets(compose(DebateRequest(file=file, given_by="flag")).config)
    else:
        targets = []
    if specs:
        options = [_options(spec, i) for i, spec in enumerate(specs)]
        targets += model_targets(options, field="-p")
    if not targets:
        targets = key_targets()
    if not targets:
        console.print(
            "No provider's key is set, and no model was named: nothing to ask (-p PROVIDER:MODEL).",
            soft_wrap=True,
        )
        return 0
    with waiting(
        console, f"asking the providers about {len(targets)} model{'s' if len(targets) != 1 else ''}"
    ):
        results = await check_targets(targets, live_resolver(targets))
    _print(console, results)
    return 0 if all(r.ok for r in results) else 2


def _options(spec: str, index: int) -> ModelOptions:
    raw = parse_participant_spec(spec, index=index)
    try:
        return ModelOptions.model_validate({k: v for k, v in raw.items() if k in ModelOptions.model_fields})
    except ValueError as exc:
        raise ConfigError(f"{spec!r}: {str(exc).splitlines()[-1].strip()}", field=f"-p {index + 1}") from None


def _print(console: Console, results: list[LiveResult]) -> None:
    """One line per model or provider asked, whole (never wrapped: scripts grep it); keys are never shown."""
    for result in results:
        target = result.target
        where = f" at {target.endpoint}" if target.endpoint else ""
        mark = Text("ok   ", style="green") if result.ok else Text("FAIL ", style="bold red")
        # A provider's words: text, never markup.
        line = Text.assemble(mark, f"{target.label}{where} ({', '.join(target.fields)}): {result.line}")
        console.print(line, soft_wrap=True)
