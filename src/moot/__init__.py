"""moot: several LLMs argue a question out; a fair judge weighs what was said."""

__version__ = "0.1.0"
