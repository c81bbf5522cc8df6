"""The documentation site's page for each debate format, generated each time the site is built: what the format
is, its phases and options (from the format itself), and a short transcript of a real debate in it, held in
memory by moot's scripted `fake:` models.

mkdocs.yml loads this file as a hook after scripts/docs_reference.py (which puts this checkout's `src` on the
import path). The transcript is the Markdown export of that debate, as `moot export ID -f markdown` writes it: a
reader sees exactly what moot records and shows for the format, on models that say the same words every time.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

    from moot.domain.events import Event
    from moot.protocols import DebateProtocol

TOPIC = "Should cities ban private cars from their centres?"
NAMES = ("Ada", "Bo", "Cy", "Di")
ROUNDS = 2  # short: enough to show every phase's shape without a wall of the fakes' words


def hold(name: str) -> tuple[list[Event], int]:
    """A debate in this format on fake models: as few participants as the format takes (two, else three...)."""
    import moot
    from moot.models.fake import fake_model

    last: Exception | None = None
    for count in (2, 3, 4):
        fields: dict[str, Any] = {
            "topic": TOPIC,
            "format": name,
            "rounds": ROUNDS,
            "participants": [{"model": f"fake:{n.lower()}", "name": n} for n in NAMES[:count]],
            "judge": {"model": "fake:judge"},
        }
        try:
            record = moot.run(
                moot.DebateRequest(fields=fields, saved_defaults=False),
                resolve=lambda options: fake_model(options.model.name),
            )
        except moot.UserError as exc:  # too few participants for this format: one more
            last = exc
            continue
        return list(record.events), count
    raise RuntimeError(f"no debate in {name} on fake models: {last}")


# The export's lines that differ on every build and say nothing about the format.
_VOLATILE = re.compile(r"^- \*\*(Date|Wall time|Debate id):\*\*.*\n", re.M)


def transcript(events: list[Event]) -> str:
    """The debate's Markdown export, its headings pushed two levels down to sit under the page's own."""
    import moot

    text = _VOLATILE.sub("", moot.export(events, "markdown"))
    return re.sub(r"^(#+) ", lambda m: "#" * min(len(m.group(1)) + 2, 6) + " ", text, flags=re.M)


def page(protocol: DebateProtocol[Any]) -> str:
    from moot.cli.formats import default_words, value_words
    from moot.domain.config import DebateConfig

    rounds = DebateConfig.model_fields["rounds"].default
    lines = [f"# {protocol.name}", "", " ".join(protocol.description.split()), ""]
    lines += [
        f"## Phases of a {rounds}-round debate",
        "",
        "| phase | rounds | what speakers do |",
        "|---|---|---|",
    ]
    lines += [
        f"| {p.name} | {p.rounds} | {' '.join(p.description.split())} |" for p in protocol.phases(rounds)
    ]
    lines += ["", "## Options", ""]
    fields = protocol.options_type.model_fields
    if not fields:
        lines.append("None.")
    for key, field in fields.items():
        described = f": {' '.join(field.description.split())}" if field.description else ""
        lines.append(
            f"- `{key}` = {value_words(field.annotation)} (default: {default_words(field)}){described}"
        )
    lines += [
        "",
        f"Set them with `-o KEY=VALUE` or `format_options:` in a config; `moot formats {protocol.name}` shows this "
        "in the terminal.",
        "",
    ]
    events, count = hold(protocol.name)
    lines += [
        "## A transcript",
        "",
        f"A {ROUNDS}-round debate of {count} of moot's scripted `fake:` models, held when this page was built "
        f'(`moot run "{TOPIC}" -f {protocol.name} -r {ROUNDS}` with `fake:` participants and judge), as '
        "`moot export ID -f markdown` writes it. The fakes say the same words every time and fill every answer's "
        "schema with plausible values: read it for the format's shape, not for the arguments.",
        "",
        transcript(events),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def pages() -> dict[str, str]:
    """Each format's page, by its path under docs/."""
    from moot.protocols import PROTOCOLS

    return {f"formats/{name}.md": page(protocol) for name, protocol in PROTOCOLS.items()}


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    from mkdocs.structure.files import File

    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files
