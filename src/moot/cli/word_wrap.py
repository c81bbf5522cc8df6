"""Streamed text broken into lines at word boundaries, as it arrives.

A turn streams in pieces that rich prints one after another without knowing the column, so the terminal
would wrap a long line wherever the edge falls ("prev|ious"). `WordWrap` keeps the column itself: it holds
the word being written until it ends, then starts a new line before it when it would not fit. Text in is
text out plus line breaks (the spaces where a line was broken are dropped): it adds no other character, so
text made terminal-safe stays safe.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

_PIECES = re.compile(r"\n|[ \t]+|[^\s]+|\s")


class WordWrap:
    """Lines of at most `width` cells broken between words; a word longer than a line is cut at the edge."""

    def __init__(self, width: int) -> None:
        self.width = max(1, width)
        self.column = 0
        self._space = ""  # blanks after the last word written, held: at a break they are dropped
        self._word = ""  # the word being written, held until it ends

    def feed(self, text: str) -> str:
        """What can be printed of everything so far: all but the word that may still go on."""
        out: list[str] = []
        for piece in _PIECES.findall(self._word + text):
            if piece == "\n":
                self._end_word(out)
                self._space = ""
                out.append("\n")
                self.column = 0
            elif piece.isspace():
                self._end_word(out)
                self._space += piece.replace("\t", "    ")
            else:
                self._word = piece  # findall's last word is held; a word before a blank is ended above
        return "".join(out)

    def flush(self) -> str:
        """The held word: the text has ended."""
        out: list[str] = []
        self._end_word(out)
        return "".join(out)

    def restart(self) -> None:
        """Something else was printed and ended its line: the next text starts at the left edge."""
        self.column = 0
        self._space = ""

    def _end_word(self, out: list[str]) -> None:
        word, self._word = self._word, ""
        if not word:
            return
        size = cell_len(word)
        if self.column + cell_len(self._space) + size > self.width:
            if self.column:
                out.append("\n")
            self.column = 0  # the blanks go: between words they were the break, at a line's start an indent
        else:  # between words, or the text's own indent at the start of a line
            out.append(self._space)
            self.column += cell_len(self._space)
        self._space = ""
        while self.column + size > self.width:  # a word wider than a line: cut at the edge
            room = self.width - self.column
            head = _cells_prefix(word, room)
            out.append(head + "\n")
            word = word[len(head) :]
            size = cell_len(word)
            self.column = 0
        out.append(word)
        self.column += size


def _cells_prefix(word: str, cells: int) -> str:
    """The longest start of `word` that takes at most `cells` cells (at least one character)."""
    end = 1
    while end < len(word) and cell_len(word[: end + 1]) <= cells:
        end += 1
    return word[:end]
