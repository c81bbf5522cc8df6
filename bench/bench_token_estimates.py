"""Token counts without a tokenizer against bpe-openai's exact o200k_base and cl100k_base counts.

    python bench/bench_token_estimates.py [--texts-per-kind 30] [--repeat 3] [--seed 0]

moot counts a prompt before sending it, to fit it in the model's window (moot.context.fit) and to check a budget;
the provider's reported usage is what is recorded. Every model but the embedded ones gets an estimate (UTF-8
bytes / 4); OpenAI-family models used to be counted exactly with bpe-openai (74 MB; now only in the dev extra,
which this needs). This measures what the estimate, and two other cheap ones, get wrong on OpenAI's
vocabularies, over texts built here (no file, no network):

- prose: English paragraphs from 1 sentence to 60;
- code: Python, JavaScript, SQL and shell, varied names and lengths;
- json: nested records, indented and compact;
- non-English: French, German, Spanish, Russian, Greek, Arabic, Hindi, Chinese, Japanese, Korean;
- numbers: figures, prices, dates, CSV rows, long digit runs;
- markdown: headings, lists, tables and code fences around prose;
- prompts: the prompts moot itself sends (debater turns and the judge's verdict) in fake debates of 2-4
  participants over 1-6 rounds, with turns of 20-200 words: what the counts are for.

Estimates: `bytes/4` (moot's estimate, EstimateCounter), `chars/4`, and `pieces`, a rule per piece of text after
a split like the vocabularies' own (words, digit runs, punctuation, spaces; CJK and other scripts by character).
Relative error = (estimate - exact) / exact, per text; "under" is the share of texts counted more than 10 % short
(the side that lets a prompt through that does not fit). Time: counting every text once, per 1,000 texts.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import math
import random
import re
import resource
import statistics
import time
import warnings
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.context.tokens import EstimateCounter
from moot.domain.config import DebateConfig, ModelOptions, Participant
from moot.engine.runner import InMemoryLog, run_debate
from moot.models.fake import fake_model

PROSE = [
    "Cities that close their centres to private cars usually see fewer collisions within a year.",
    "Shopkeepers often fear that fewer drivers means fewer customers, but the evidence is mixed.",
    "The strongest case for a ban rests on air quality, which affects children and the elderly most.",
    "A gradual approach, starting with weekends and market days, lets residents adjust their habits.",
    "Delivery vans, taxis and emergency vehicles would still need access at certain hours.",
    "Public transport has to improve before the ban, not after it, or the policy will lose support.",
    "Opponents argue that the measure shifts congestion to the ring roads rather than removing it.",
    "Several European cities have reported that pedestrian footfall rose once traffic was removed.",
    "The cost of enforcement, from cameras to wardens, is rarely included in the first estimates.",
    "People with disabilities depend on door-to-door transport, so exemptions must be designed carefully.",
    "What matters is not the ban itself but whether the streets become places people want to stay.",
    "Critics call it a tax on the suburbs, since those who live farthest away drive the most.",
    "In the long run, land once used for parking can be turned into housing, parks or cycle lanes.",
    "My opponent has not explained how night-shift workers would reach the hospital without a car.",
    "Let us be precise: the proposal covers an area of four square kilometres, not the whole city.",
    "Surveys show strong support in principle and much weaker support once a date is announced.",
    "Noise is the forgotten pollutant; halving traffic lowers it by about three decibels.",
    "I concede that the first months would be disruptive, yet disruption is not the same as failure.",
    "The judge should weigh which side offered evidence rather than anecdotes.",
    "Bicycles, scooters and buses cannot carry a family's weekly shopping as easily as a car can.",
    "Internationalization of supply chains has little to do with whether a high street thrives.",
    "Nevertheless, the counterargument deserves a hearing, because its assumptions are reasonable.",
]
WORDS = sorted({w.strip(".,;:").lower() for s in PROSE for w in s.split()})

NON_ENGLISH = {
    "French": [
        "Les villes qui ferment leur centre aux voitures constatent souvent moins d'accidents.",
        "Les commerçants craignent une baisse de fréquentation, mais les données sont partagées.",
        "Il faut améliorer les transports en commun avant l'interdiction, pas après.",
    ],
    "German": [
        "Städte, die ihre Innenstädte für Autos sperren, verzeichnen oft weniger Unfälle.",
        "Die Einzelhändler befürchten Umsatzeinbußen, doch die Datenlage ist uneinheitlich.",
        "Der öffentliche Nahverkehr muss vor dem Verbot verbessert werden, nicht danach.",
    ],
    "Spanish": [
        "Las ciudades que cierran su centro a los coches suelen registrar menos accidentes.",
        "Los comerciantes temen perder clientes, pero los datos no son concluyentes.",
        "El transporte público debe mejorar antes de la prohibición y no después.",
    ],
    "Russian": [
        "Города, закрывающие центр для автомобилей, обычно фиксируют меньше аварий.",
        "Владельцы магазинов опасаются потери покупателей, но данные противоречивы.",
        "Общественный транспорт нужно улучшить до запрета, а не после него.",
    ],
    "Greek": [
        "Οι πόλεις που κλείνουν το κέντρο τους στα αυτοκίνητα έχουν συνήθως λιγότερα ατυχήματα.",
        "Οι έμποροι φοβούνται ότι θα χάσουν πελάτες, αλλά τα στοιχεία είναι αντιφατικά.",
    ],
    "Arabic": [
        "المدن التي تغلق مراكزها أمام السيارات تسجل عادة عددا أقل من الحوادث.",
        "يخشى أصحاب المتاجر من فقدان الزبائن، لكن الأدلة متضاربة.",
    ],
    "Hindi": [
        "जो शहर अपने केंद्र को कारों के लिए बंद करते हैं, वहाँ आमतौर पर दुर्घटनाएँ कम होती हैं।",
        "दुकानदारों को ग्राहकों के कम होने का डर है, लेकिन आँकड़े स्पष्ट नहीं हैं।",
    ],
    "Chinese": [
        "禁止私家车进入市中心的城市，交通事故通常会减少。",
        "商店老板担心顾客减少，但相关证据并不一致。",
        "公共交通必须在禁令实施之前得到改善，而不是之后。",
    ],
    "Japanese": [
        "中心部への自家用車の乗り入れを禁止した都市では、事故が減ることが多い。",
        "商店主は客が減ることを心配しているが、証拠はまちまちである。",
        "公共交通機関は禁止の前に改善されなければならない。",
    ],
    "Korean": [
        "도심에 자가용 진입을 금지한 도시는 대체로 교통사고가 줄어든다.",
        "상인들은 손님이 줄어들까 걱정하지만 근거는 엇갈린다.",
    ],
}

IDENTIFIERS = [
    "user",
    "debate",
    "round",
    "score",
    "verdict",
    "participant",
    "window",
    "token",
    "budget",
    "event",
]


def prose(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
        paragraphs.append(" ".join(rng.choice(PROSE) for _ in range(rng.randint(1, 8))))
    return "\n\n".join(paragraphs)


def _name(rng: random.Random, style: str) -> str:
    parts = rng.sample(IDENTIFIERS, rng.randint(1, 3))
    if style == "snake":
        return "_".join(parts)
    return parts[0] + "".join(p.title() for p in parts[1:])


def code(rng: random.Random) -> str:
    kind = rng.choice(["python", "javascript", "sql", "shell"])
    blocks = []
    for _ in range(rng.randint(1, 10)):
        a, b, c = (_name(rng, "snake" if kind == "python" else "camel") for _ in range(3))
        n = rng.randint(0, 10_000)
        if kind == "python":
            blocks.append(
                f"def {a}({b}: list[int], {c}: float = {n / 100}) -> dict[str, int]:\n"
                f'    """Return the {b.replace("_", " ")} by {c.replace("_", " ")}."""\n'
                f"    result: dict[str, int] = {{}}\n"
                f"    for i, value in enumerate({b}):\n"
                f"        if value > {n} and i % 2 == 0:\n"
                f'            result[f"{{i}}"] = round(value * {c})\n'
                f"    return result\n"
            )
        elif kind == "javascript":
            blocks.append(
                f"export async function {a}({b}, {c} = {n}) {{\n"
                f"  const response = await fetch(`/api/${{{b}.id}}/events?after=${{{c}}}`);\n"
                f"  if (!response.ok) throw new Error(`failed: ${{response.status}}`);\n"
                f"  return (await response.json()).filter((e) => e.seq > {c});\n"
                f"}}\n"
            )
        elif kind == "sql":
            blocks.append(
                f"SELECT {a}.id, COUNT(*) AS {b}_count, SUM({c}.cost_usd) AS total\n"
                f"FROM {a} JOIN {c} ON {c}.{a}_id = {a}.id\n"
                f"WHERE {a}.created_at > '2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}' AND {c}.seq > {n}\n"
                f"GROUP BY {a}.id ORDER BY total DESC LIMIT {rng.randint(1, 100)};\n"
            )
        else:
            blocks.append(
                f"for f in $(ls ./{a}/*.json); do\n"
                f'  jq -r ".{b}[] | select(.{c} > {n}) | .id" "$f" >> /tmp/{b}.txt || exit 1\n'
                f"done\n"
            )
    return "\n".join(blocks)


def _record(rng: random.Random, depth: int = 0) -> Any:
    if depth > 2 or rng.random() < 0.3:
        return rng.choice(
            [
                rng.randint(-1000, 10**7),
                round(rng.uniform(0, 1000), rng.randint(0, 6)),
                rng.choice(PROSE)[: rng.randint(5, 60)],
                rng.choice([True, False, None]),
                f"{rng.randint(2020, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
            ]
        )
    if rng.random() < 0.5:
        return [_record(rng, depth + 1) for _ in range(rng.randint(1, 5))]
    return {_name(rng, "snake"): _record(rng, depth + 1) for _ in range(rng.randint(1, 6))}


def json_text(rng: random.Random) -> str:
    data = [_record(rng) for _ in range(rng.randint(1, 12))]
    return json.dumps(data, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.2)


def non_english(rng: random.Random) -> str:
    language = rng.choice(sorted(NON_ENGLISH))
    sentences = NON_ENGLISH[language]
    return " ".join(rng.choice(sentences) for _ in range(rng.randint(1, 25)))


def numbers(rng: random.Random) -> str:
    rows = []
    for _ in range(rng.randint(1, 30)):
        kind = rng.random()
        if kind < 0.3:
            rows.append(
                ",".join(str(rng.randint(0, 10 ** rng.randint(1, 9))) for _ in range(rng.randint(2, 8)))
            )
        elif kind < 0.5:
            rows.append(
                f"${rng.uniform(0, 10_000):,.2f} on {rng.randint(1, 28)}/{rng.randint(1, 12)}/20{rng.randint(10, 30)}"
            )
        elif kind < 0.7:
            rows.append(
                " ".join(f"{rng.uniform(-100, 100):.{rng.randint(0, 5)}f}" for _ in range(rng.randint(3, 12)))
            )
        elif kind < 0.85:
            rows.append(str(rng.getrandbits(rng.randint(32, 256))))
        else:
            rows.append(
                f"{rng.randint(1, 99)}% of {rng.randint(100, 99_999):,} tokens, {rng.randint(1, 60)} ms p95"
            )
    return "\n".join(rows)


def markdown(rng: random.Random) -> str:
    out = [f"# {rng.choice(PROSE)[:40]}", ""]
    for _ in range(rng.randint(1, 5)):
        out += [f"## {rng.choice(WORDS).title()} {rng.choice(WORDS)}", "", rng.choice(PROSE), ""]
        out += [f"- **{rng.choice(WORDS)}**: {rng.choice(PROSE)}" for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.5:
            out += ["", "| model | tokens | cost |", "|---|---|---|"]
            out += [
                f"| `{rng.choice(['openai', 'anthropic', 'local'])}:{rng.choice(WORDS)}` | "
                f"{rng.randint(10, 90_000):,} | {rng.uniform(0, 2):.4f} |"
                for _ in range(rng.randint(1, 6))
            ]
        if rng.random() < 0.3:
            out += [
                "",
                "```bash",
                f"moot run {json.dumps(rng.choice(PROSE))} -p fake:drip-30 --rounds 2",
                "```",
            ]
        out.append("")
    return "\n".join(out)


# --- moot's own prompts, from fake debates ----------------------------------------------------------------


def _prompt_text(messages: list[ModelMessage]) -> str:
    parts = [p for m in messages for p in getattr(m, "parts", [])]
    system = "".join(p.content for p in parts if isinstance(p, SystemPromptPart))
    user = "".join(p.content for p in parts if isinstance(p, UserPromptPart) and isinstance(p.content, str))
    return system + "\n" + user


class Recorder:
    """Fake debaters whose turns are `words` words of prose; every prompt sent is kept."""

    def __init__(self, rng: random.Random, words: int) -> None:
        self.rng, self.words, self.prompts = rng, words, list[str]()

    def resolve(self, options: ModelOptions) -> Model:
        inner = fake_model(options.model.name)
        assert inner.function is not None
        judge = inner.function

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.prompts.append(_prompt_text(messages))
            if options.model.name == "judge":
                answer = judge(messages, info)
                return answer if isinstance(answer, ModelResponse) else await answer
            return ModelResponse(parts=[TextPart(self.turn())])

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            if info.output_tools:  # the judge's answers stream as their tool call
                response = await whole(messages, info)
                part = response.parts[0]
                assert isinstance(part, ToolCallPart)
                yield {0: DeltaToolCall(part.tool_name, part.args_as_json_str())}
                return
            self.prompts.append(_prompt_text(messages))
            yield self.turn()

        return FunctionModel(whole, stream_function=stream, model_name=f"fake-{options.model.name}")

    def turn(self) -> str:
        text = " ".join(self.rng.choice(PROSE) for _ in range(self.words // 12 + 1))
        return " ".join(text.split()[: self.words])


async def moot_prompts(rng: random.Random, debates: int) -> list[str]:
    prompts: list[str] = []
    names = ["Ada", "Bo", "Cy", "Di"]
    for _ in range(debates):
        n = rng.randint(2, 4)
        config = DebateConfig(
            topic=rng.choice(PROSE).rstrip(".") + "?",
            participants=[Participant(name=names[i], model=f"fake:{names[i].lower()}") for i in range(n)],
            judge={"model": "fake:judge"},
            rounds=rng.randint(1, 6),
        )
        recorder = Recorder(rng, rng.choice([20, 60, 120, 200]))
        async for _ in run_debate(config, log=InMemoryLog(), resolve=recorder.resolve):
            pass
        prompts += rng.sample(recorder.prompts, min(len(recorder.prompts), 6))
    return prompts


# --- the cheap estimates ------------------------------------------------------------------------------------

# The split the vocabularies make before merging (simplified): a run of letters (with an apostrophe's tail), a
# run of digits, a run of other symbols, a run of white space.
_PIECE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+|[^\w\s]+|_+|\s+")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _wide(ch: str) -> bool:
    """Han, kana and hangul: scripts written without spaces, about a token per one or two characters."""
    return "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af"


def pieces(text: str) -> int:
    """A token estimate from the shape of each piece of text (no vocabulary)."""
    tokens = 0.0
    for piece in _PIECE.findall(text):
        first = piece[0]
        if first.isspace():
            # A lone space joins the next word; a line break or an indent is a token of its own.
            tokens += 0 if piece == " " else 1
        elif first.isdigit():
            tokens += math.ceil(len(piece) / 3)  # the vocabularies hold numbers of up to three digits
        elif first.isalpha():
            if piece.isascii():
                parts = _CAMEL.findall(piece) or [piece]
                tokens += sum(1 + len(p) // 9 for p in parts)  # common words whole, long ones in pieces
            elif _wide(first):
                tokens += len(piece) * 0.75
            else:
                tokens += len(piece) / 3.2 + 0.5  # accented Latin, Cyrillic, Greek, Arabic, Devanagari...
        else:
            tokens += math.ceil(len(piece) / 2)  # punctuation pairs up ('",', '":', '})')
    return math.ceil(tokens)


def bytes_over_4(text: str) -> int:
    return EstimateCounter().count(text)


def chars_over_4(text: str) -> int:
    return math.ceil(len(text) / 4)


ESTIMATES: dict[str, Callable[[str], int]] = {
    "bytes/4": bytes_over_4,
    "chars/4": chars_over_4,
    "pieces": pieces,
}


@dataclass
class Row:
    kind: str
    texts: int
    mean_signed: float
    mean_abs: float
    worst_over: float
    worst_under: float
    under_10: float


def row(kind: str, exact: list[int], estimated: list[int]) -> Row:
    errors = [(e - x) / x for e, x in zip(estimated, exact, strict=True)]
    return Row(
        kind,
        len(errors),
        statistics.fmean(errors),
        statistics.fmean(abs(e) for e in errors),
        max(errors),
        min(errors),
        sum(e < -0.10 for e in errors) / len(errors),
    )


def timed(count: Callable[[str], int], texts: list[str], repeat: int) -> float:
    """Best of `repeat`: seconds to count every text once, per 1,000 texts."""
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            count(text)
        best = min(best, time.perf_counter() - started)
    return best * 1000 / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts-per-kind", type=int, default=30)
    parser.add_argument(
        "--debates", type=int, default=8, help="fake debates whose prompts are sampled (6 each)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    builders = {
        "prose": prose,
        "code": code,
        "json": json_text,
        "non-English": non_english,
        "numbers": numbers,
        "markdown": markdown,
    }
    corpus = {kind: [build(rng) for _ in range(args.texts_per_kind)] for kind, build in builders.items()}
    corpus["prompts"] = asyncio.run(moot_prompts(rng, args.debates))
    texts = [t for kind in corpus.values() for t in kind]
    sizes = sorted(len(t.encode()) for t in texts)
    print(
        f"{len(texts)} texts ({', '.join(f'{k} {len(v)}' for k, v in corpus.items())}); UTF-8 bytes: median "
        f"{sizes[len(sizes) // 2]:,}, largest {sizes[-1]:,}, total {sum(sizes):,}"
    )

    memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # bpe-openai 0.1.4 reads its data the old way
        bpe_openai = importlib.import_module("bpe_openai")  # the dev extra's; moot itself does not use it
        encodings = {name: bpe_openai.get_encoding(name) for name in ("o200k_base", "cl100k_base")}
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - memory) / 1024
    print(
        f"bpe-openai: import and both vocabularies loaded in {time.perf_counter() - started:.2f} s, "
        f"peak memory +{grown:.0f} MB"
    )

    def exact_count(encoding: Any) -> Callable[[str], int]:
        return lambda text: len(encoding.encode_ordinary(text))

    exact_counts = {name: exact_count(encoding) for name, encoding in encodings.items()}
    exact = {
        name: {k: [count(t) for t in v] for k, v in corpus.items()} for name, count in exact_counts.items()
    }
    for vocabulary in exact:
        print(f"\nagainst {vocabulary}: relative error (estimate - exact) / exact per text")
        print(
            f"{'estimate':<8} {'texts':<12} {'n':>4} {'mean':>7} {'mean |e|':>8} {'max over':>8} "
            f"{'max under':>9} {'>10% under':>10}"
        )
        for name, estimate in ESTIMATES.items():
            rows = [
                row(kind, exact[vocabulary][kind], [estimate(t) for t in v]) for kind, v in corpus.items()
            ]
            everything = row(
                "all",
                [x for v in exact[vocabulary].values() for x in v],
                [estimate(t) for v in corpus.values() for t in v],
            )
            for r in [*rows, everything]:
                print(
                    f"{name:<8} {r.kind:<12} {r.texts:>4} {r.mean_signed:>+7.1%} {r.mean_abs:>8.1%} "
                    f"{r.worst_over:>+8.1%} {r.worst_under:>+9.1%} {r.under_10:>10.0%}"
                )

    print(f"\ntime to count all {len(texts)} texts, per 1,000 texts (best of {args.repeat})")
    for name, count in {**ESTIMATES, **exact_counts}.items():
        print(f"{name:<12} {timed(count, texts, args.repeat) * 1000:>8.2f} ms")


if __name__ == "__main__":
    main()
