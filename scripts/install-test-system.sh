#!/usr/bin/env bash
# Installs (with apt-get) the system packages the test suite needs, and only those missing.
# Silent and quick when everything is there, so it can run before every test command:
#   bash scripts/install-test-system.sh && .venv/bin/pytest
set -euo pipefail

# The Debian packages the tests need; `present` below says how to tell each one is there.
PACKAGES=(postgresql chromium curl)

present() {
    case "$1" in
        postgresql)
            # The tests start their own server; they need its binaries, not a running one.
            [[ -n "${MOOT_TEST_POSTGRES_URL:-}" ]] && return 0
            compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && return 0
            command -v pg_config >/dev/null && [[ -x "$(pg_config --bindir 2>/dev/null)/initdb" ]] && return 0
            command -v initdb >/dev/null
            ;;
        chromium)
            # The browser tests drive Debian's chromium; Playwright's own download is never used.
            [[ -e /usr/bin/chromium ]] || command -v chromium >/dev/null
            ;;
        curl)
            # The README's curl examples run as written (tests/test_readme_examples.py).
            command -v curl >/dev/null
            ;;
        *)
            dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
            ;;
    esac
}

missing=()
for package in "${PACKAGES[@]}"; do
    present "$package" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

give_up() {
    echo "install-test-system: the tests need ${missing[*]}: $1" >&2
    exit 1
}

command -v apt-get >/dev/null || give_up "install it with your system's package manager (no apt-get here)"
if [[ $(id -u) -eq 0 ]]; then
    as_root=()
elif command -v sudo >/dev/null; then
    as_root=(sudo)
else
    give_up "run 'apt-get install ${missing[*]}' as root (no sudo here)"
fi

echo "install-test-system: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null ||
    give_up "'apt-get update' failed; run 'apt-get install ${missing[*]}' yourself"
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    give_up "'apt-get install' failed; run 'apt-get install ${missing[*]}' yourself"

for package in "${missing[@]}"; do
    present "$package" || give_up "$package was installed but is still not found"
done
