"""Tools for tests/test_tools.py, named in configs as `tests.sample_tools:NAME`."""

from __future__ import annotations

import asyncio

from pydantic_ai import ModelRetry

NOT_A_FUNCTION = 42


def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text whose words to count.
    """
    return len(text.split())


async def lookup(term: str) -> str:
    """Look a term up in a small glossary."""
    glossary = {"soc2": "SOC 2 is an audit of a service's security controls."}
    return glossary.get(term.lower(), f"no entry for {term!r}")


def flaky(query: str) -> str:
    """A search that always fails."""
    raise ConnectionError(f"search backend unreachable for {query!r}")


def picky(term: str) -> str:
    """A lookup that asks, every time, for another term."""
    raise ModelRetry(f"{term!r} is not a known term; ask for another")


class Glossary:
    """A class is callable, but calling it builds an object: not a tool."""


async def slow(seconds: float) -> str:
    """Wait, then say so."""
    await asyncio.sleep(seconds)
    return "done"
