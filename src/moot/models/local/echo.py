"""Keeping the embedded model's replies its own: no quotation fences, no opening lines copied from its prompt.

A 135M-parameter model often begins a turn by repeating the last lines it read ("This is the opening round:
state your position...") or the `<<<` its prompt quotes the other speakers between. Two remedies, both for
this model only, so no large model's text is ever touched:

- the tokens that spell a fence (`<<`, `>>>`, ` ›`...) are banned while it writes free text, so it cannot
  open or close a quotation (`fence_tokens`);
- lines at the start of a reply that are copied whole from the prompt, and a copied sentence that opens
  the first line, are dropped before anyone sees them (`EchoFilter`). Only a copy of at least
  MIN_ECHO_CHARS characters counts: a reply may well open with a short phrase that the prompt also holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from moot.prompts.history import FENCE_CLOSE, FENCE_OPEN

# What a token's text must contain to be banned: the fences and the forms `fenced` turns them into.
FENCE_PIECES = (FENCE_OPEN[:2], FENCE_CLOSE[:2], "‹", "›")
MIN_ECHO_CHARS = 16
# A reply's first line longer than this is never held back waiting for its end.
MAX_HELD_CHARS = 400
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.:!?;]\s")


def fence_tokens(vocab_size: int, token_text: Callable[[int], str]) -> list[int]:
    """The ids of every token whose text holds a piece of a fence marker."""
    return [t for t in range(vocab_size) if any(piece in token_text(t) for piece in FENCE_PIECES)]


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


class EchoFilter:
    """Holds back the start of a streamed reply while it copies the prompt, and drops what it copied.

    Feed it the reply piece by piece (`feed`), then `end()`; each returns the text that can be shown now.
    Once a first line is known to be the model's own, everything after it passes straight through.
    """

    def __init__(self, prompt_texts: Iterable[str]) -> None:
        self._prompt = _norm("\n".join(prompt_texts))
        self._held = ""
        self._seen = ""
        self._passing = False

    def feed(self, piece: str) -> str:
        if self._passing:
            return piece
        self._held += piece
        self._seen += piece
        return self._release(final=False)

    def end(self) -> str:
        if self._passing:
            return ""
        return self._release(final=True)

    def _copied(self, text: str) -> bool:
        line = _norm(text)
        return len(line) >= MIN_ECHO_CHARS and line in self._prompt

    def _release(self, *, final: bool) -> str:
        while True:
            stripped = self._held.lstrip()
            line, newline, rest = stripped.partition("\n")
            if not newline:
                if not final and len(line) < MAX_HELD_CHARS and _norm(line) in self._prompt:
                    return ""  # so far the line copies the prompt: it may turn out to be a copy
                if final and (not line or self._copied(line)):
                    # Every line was a copy: the reply as written beats an empty turn.
                    self._passing = True
                    return self._seen.strip()
            elif self._copied(line):
                self._held = rest
                continue
            self._held = self._without_copied_opening(line) + newline + rest
            break
        self._passing = True
        text, self._held = self._held.lstrip(), ""
        return text

    def _without_copied_opening(self, line: str) -> str:
        """The line less its longest opening sentences that the prompt holds word for word."""
        cut = 0
        for match in _SENTENCE_END.finditer(line):
            if self._copied(line[: match.end()]):
                cut = match.end()
        rest = line[cut:].lstrip()
        return rest if rest else line


def strip_echo(text: str, prompt_texts: Iterable[str]) -> str:
    """A whole reply with its copied opening dropped (as EchoFilter does for a stream)."""
    echo = EchoFilter(prompt_texts)
    return echo.feed(text) + echo.end()
