"""The project speaks for itself: no text a user or a reader of the code sees cites the specification documents
moot was first written from ("seed 003's enabled agents", docs/SEED-003-CONFIG.md) or the project's own work
items ("(issue 22)"). A reader of a docstring, the API schema, an error, the CLI's help, the README or docs/ has
seen neither, so each place names the feature by what it is instead."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
# Third-party files shipped as they came (their licences and minified code are not moot's words).
VENDORED = ROOT / "src" / "moot" / "web" / "static" / "vendor"

# "seed 003", "Seed-004", "seed000", "SEED-003-CONFIG", "seed_003_config": a spec document by its number.
SPEC_DOCUMENT = re.compile(r"\bseed[ _-]?00\d", re.IGNORECASE)
# "issue 22", "(issue 21)", "issue #22", "issues 16": a work item of this project by its number.
WORK_ITEM = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
# Citations of other projects' trackers, kept because they are sources a reader can look up.
OTHER_PROJECTS = ("FastChat issue #3911",)


def scanned_files() -> list[Path]:
    """Every text file of src/ (Python, templates, scripts, styles, data), README.md and docs/."""
    files = [ROOT / "README.md"]
    for folder in (ROOT / "src", ROOT / "docs"):
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.is_relative_to(VENDORED):
                continue
            files.append(path)
    return files


def offences(text: str) -> list[str]:
    for citation in OTHER_PROJECTS:
        text = text.replace(citation, "")
    return [m.group(0) for pattern in (SPEC_DOCUMENT, WORK_ITEM) for m in pattern.finditer(text)]


def test_the_patterns_catch_every_spelling_and_spare_ordinary_words() -> None:
    for cited in (
        "seed 003's enabled agents",
        "Seed 000 §4.1",
        "a seed-004-shaped file",
        "docs/SEED-003-CONFIG.md",
        "seed002",
        "moot.config_files.seed_003_config",
        "(issue 21)",
        "issue 22, point 4",
        "Issue 17 item 6",
        "issue #22",
        "issues 16 and 17",
    ):
        assert offences(cited), cited
    for fine in (
        "the seed moved on",
        "`--seed S` fixes the debates' seeds",
        "seed + 10 * index",
        "moot arena --seed 123",
        "the best seed advances",
        "issues voter ids",
        "name the key voting issues",
        "FastChat issue #3911 (GPT-4 as a judge)",
    ):
        assert not offences(fine), fine


def test_no_text_cites_a_spec_document_or_an_issue_number() -> None:
    files = scanned_files()
    found: list[str] = []
    read = 0
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue  # a binary file says nothing to a reader
        read += 1
        for number, line in enumerate(lines, start=1):
            for cited in offences(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {cited!r} in {line.strip()[:120]!r}")
    # Not vacuous: the walk reached the package's modules, templates, scripts, the README and the docs.
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert read >= 300, f"only {read} text files read"
    assert sum(n.endswith(".py") for n in names) >= 200
    assert sum(n.endswith(".j2") for n in names) >= 40
    assert sum(n.endswith(".js") for n in names) >= 10
    assert {
        "README.md",
        "docs/DECISIONS.md",
        "docs/DESIGN-TEAM-CONFIG.md",
        "src/moot/web/static/app.css",
    } <= names
    assert not found, (
        "name the feature by what it is, not by the spec document or issue that asked for it:\n"
        + "\n".join(found)
    )
