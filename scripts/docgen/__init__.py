"""Pages of the documentation site made from moot itself at build time, so they cannot drift from it."""
