#!/usr/bin/env bash
# Regenerates constraints.txt, the exact version of every package a moot install can pull in (direct and
# transitive, every extra, the test tools and the build backends), from pyproject.toml and
# scripts/build-requirements.in. The README's two commands install through it, so CI and a new machine next
# month get the same set.
#
#   bash scripts/lock.sh                      # keep every pin that still fits pyproject.toml; add what is new
#   bash scripts/lock.sh --upgrade            # move every package to its newest release that fits
#   bash scripts/lock.sh --upgrade-package pyyaml --upgrade-package fastapi   # move only these
#
# Then run the README's test command, and commit constraints.txt with the change that needed it.
set -euo pipefail
cd "$(dirname "$0")/.."

# uv resolves for every platform and Python version at once (--universal), so one file serves Linux, macOS
# and Windows, Python 3.11 to 3.14. Its own version is pinned too: a new resolver may order the file anew.
UV_VERSION=0.13.9
tools="${MOOT_LOCK_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/moot-lock-tools}"
if [[ ! -x "$tools/bin/uv" ]] || [[ "$("$tools/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]]; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install --quiet "uv==$UV_VERSION"
fi

before=$(mktemp)
trap 'rm -f "$before"' EXIT
[[ -f constraints.txt ]] && cp constraints.txt "$before"

# The existing file is uv's list of preferred versions: without --upgrade, pins move only where they must.
"$tools/bin/uv" pip compile pyproject.toml scripts/build-requirements.in \
    --all-extras --universal --python-version 3.11 \
    --no-emit-package moot --custom-compile-command "bash scripts/lock.sh" \
    --quiet --output-file constraints.txt "$@"

pins() { grep -E '^[A-Za-z0-9]' "$1" | sed -E 's/ *;.*//' | sort -u; }
changed=$(diff <(pins "$before") <(pins constraints.txt) || true)
if [[ -z "$changed" ]]; then
    echo "lock: constraints.txt unchanged ($(pins constraints.txt | wc -l) pins)"
else
    echo "lock: constraints.txt changed (< before, > now):"
    echo "$changed" | grep -E '^[<>]'
fi
