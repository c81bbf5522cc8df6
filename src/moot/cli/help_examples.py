"""The examples each command's `--help` ends with: real command lines, each short enough to stay one line at 80
columns so that it can be copied whole. tests/test_cli_help.py parses every one against the command it is for.

Data only, light to import: `moot --help` reads it and must start fast.
"""

from __future__ import annotations

# By command path under `moot` ("" is `moot` itself, "presets show" a subcommand of a group).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        'moot run "Should cities ban cars from their centres?"',
        "moot run -i",
        "moot list",
    ),
    "run": (
        'moot run "Tabs or spaces?"',
        'moot run "Tabs or spaces?" -p openai:gpt-4o -p anthropic:claude-sonnet-4-5',
        'moot run "Design a URL shortener" --agents architect,security -r 2',
    ),
    "list": (
        "moot list",
        "moot list -f council -n 5",
        "moot list --status failed --json",
    ),
    "show": ("moot show 3f2a",),
    "export": (
        "moot export 3f2a",
        "moot export 3f2a -f html -o debate.html",
    ),
    "models": (
        "moot models",
        "moot models --check -p openai:gpt-4o-mini",
    ),
    "formats": (
        "moot formats",
        "moot formats oxford -r 2",
    ),
    "templates": (
        "moot templates rate-limiting",
        'moot run --template rate-limiting --var "rate=100"',
    ),
    "serve": (
        "moot serve",
        "moot serve --port 8080 --max-running 4",
    ),
    "resume": ("moot resume 3f2a",),
    "judge": (
        "moot judge 3f2a -j openai:gpt-4o",
        "moot judge 3f2a -j openai:gpt-4o -j anthropic:claude-sonnet-4-5",
    ),
    "worker": ("moot worker -n 4",),
    "eval": ("moot eval --generate arithmetic -n 20 -m openai:gpt-4o-mini",),
    "arena": (
        'moot arena -m openai:gpt-4o-mini -m google:gemini-2.5-flash --motion "Tabs?"',
        "moot arena --from-history",
    ),
    "mcp": ("moot mcp",),
    "configure": (
        "moot configure -m openai:gpt-4o-mini -j openai:gpt-4o",
        "moot configure --show",
    ),
    "schema": ("moot schema",),
    "prompts": (
        "moot prompts",
        "moot prompts debater_system.j2",
    ),
    "presets": (
        "moot presets",
        'moot run --preset council "Which database for a small team?"',
    ),
    "presets show": ("moot presets show council",),
    "presets save": ("moot presets save mine -c debate.yaml",),
}
