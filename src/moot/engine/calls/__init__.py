"""Calling a model, and nothing of the run: one `Caller` per model and endpoint (`caller.py`) builds each call as a
value, `replies.py` carries it out (a streamed turn, a structured answer), under the limits of `reply_limits.py`,
retried by `retry.py`'s guard, with the settings `settings.py` merges; `live_check.py` asks the providers whether
keys and names work before anything is spent. The run (the loop, its context, the steps and the features) sits
above and reaches a model only through a `Caller`: docs/ARCHITECTURE.md, and the engine's import contract in
pyproject.toml."""
