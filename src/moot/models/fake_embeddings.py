"""`fake:NAME` as an embedding model (`stopping.embeddings`): no network, no weights, no cost.

A text becomes the normalised count vector of its words, each folded to a crude stem and hashed into a fixed
number of dimensions, so the same words in another order or inflection ("cars clog streets" / "the street is
clogged by a car") land close together, which word 3-grams miss. `synonyms` folds chosen words onto one
concept first: tests give it a table under which a paraphrase in other words is close too.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic_ai.embeddings import EmbeddingModel, EmbeddingResult, EmbeddingSettings
from pydantic_ai.embeddings.result import EmbedInputType
from pydantic_ai.usage import RequestUsage

_WORD = re.compile(r"[a-z0-9']+")
_SUFFIXES = ("ing", "ed", "es", "s")
# Words that carry no meaning of their own: left out, as a real embedding model all but ignores them.
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "is",
        "are",
        "was",
        "be",
        "by",
        "and",
        "or",
        "but",
        "in",
        "on",
        "it",
        "its",
        "that",
        "this",
        "for",
        "as",
    ]
)


def stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@dataclass(init=False)
class FakeEmbeddingModel(EmbeddingModel):
    """Embeds a text as its hashed bag of stems (after `synonyms`), L2-normalised."""

    _name: str
    dimensions: int
    synonyms: Mapping[str, str]

    def __init__(
        self, name: str = "embed", *, dimensions: int = 256, synonyms: Mapping[str, str] | None = None
    ):
        self._name = name
        self.dimensions = dimensions
        self.synonyms = dict(synonyms or {})
        super().__init__()

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def system(self) -> str:
        return "fake"

    def vector(self, text: str) -> list[float]:
        counts: Counter[int] = Counter()
        for word in _WORD.findall(text.lower()):
            if word in _FILLER:
                continue
            concept = stem(self.synonyms.get(word, word))
            counts[int(hashlib.sha256(concept.encode()).hexdigest()[:8], 16) % self.dimensions] += 1
        norm = math.sqrt(sum(c * c for c in counts.values())) or 1.0
        out = [0.0] * self.dimensions
        for index, count in counts.items():
            out[index] = count / norm
        return out

    async def embed(
        self,
        inputs: str | Sequence[str],
        *,
        input_type: EmbedInputType,
        settings: EmbeddingSettings | None = None,
    ) -> EmbeddingResult:
        texts, _ = self.prepare_embed(inputs, settings)
        return EmbeddingResult(
            embeddings=[self.vector(t) for t in texts],
            inputs=texts,
            input_type=input_type,
            usage=RequestUsage(input_tokens=sum(len(_WORD.findall(t.lower())) for t in texts)),
            model_name=self._name,
            provider_name="fake",
            provider_response_id=str(uuid.uuid4()),
        )

    async def max_input_tokens(self) -> int | None:
        return None

    async def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text.lower()))
