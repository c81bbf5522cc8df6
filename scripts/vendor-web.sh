#!/usr/bin/env bash
# Rebuilds src/moot/web/static/vendor/ from the npm registry. The files it writes are committed, so users
# of the web page need neither Node.js nor a build step; run this only to change a library's version.
set -euo pipefail
cd "$(dirname "$0")/.."

MARKDOWN_IT=14.3.3
DOMPURIFY=3.4.18
out=src/moot/web/static/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund \
    "markdown-it@$MARKDOWN_IT" "dompurify@$DOMPURIFY")
mkdir -p "$out"
cp "$work/node_modules/markdown-it/dist/markdown-it.min.js" "$out/markdown-it.min.js"
cp "$work/node_modules/markdown-it/LICENSE" "$out/markdown-it.LICENSE"
cp "$work/node_modules/dompurify/dist/purify.min.js" "$out/purify.min.js"
cp "$work/node_modules/dompurify/LICENSE" "$out/dompurify.LICENSE"
echo "vendor: markdown-it $MARKDOWN_IT, DOMPurify $DOMPURIFY -> $out"
