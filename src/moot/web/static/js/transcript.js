// The debate's events drawn as they come: rounds, turns streaming token by token, the judge's round
// assessments, notices. Fed by the stream; each durable event arrives once (stream.js drops repeats), and a
// turn is keyed by round and speaker, so a turn re-run after a resume replaces its unfinished self.

import { h } from "./dom.js";
import { markdown } from "./markdown.js";
import { colourOf, VOICE_COLOUR, VOICE_NAMES } from "./palette.js";
import { countdown, elapsed, isPersonModel, modelLabel } from "./people.js";
import { audienceLine, tallyOf } from "./audience.js";


export class Transcript {
  /** @param {{openSetting?: (config: object, path: string) => void}} options `openSetting` opens a new debate's
   * form from this config with All settings at a field (a context warning's `history.*`); a seat's view has none. */
  constructor({ openSetting = null } = {}) {
    this.openSetting = openSetting;
    this.node = h("div", { class: "transcript", "aria-live": "off" });
    this.turns = new Map(); // key -> {node, body, live: Text|null, done}
    this.people = {}; // participant id -> {name, model, stance, colour}
    this.waiting = new Map(); // what people are awaited for (a turn, a verdict) -> its note
    this.pending = null; // what the judge is at work on (a round's assessment, the verdict): {kind, node}
  }

  /** Who is who, from the debate's config (names, models, stances, colours). */
  cast(config) {
    this.config = config;
    (config.participants ?? []).forEach((p, i) => {
      this.people[p.id] = {
        name: p.name,
        model: p.model,
        stance: p.stance,
        colour: colourOf(p, i),
      };
    });
  }

  person(id) {
    return this.people[id] ?? { name: VOICE_NAMES[id] ?? id, model: "", stance: "", colour: VOICE_COLOUR };
  }

  apply(event) {
    if (event.type !== "token_delta") this.settle(event);
    switch (event.type) {
      case "debate_started":
      case "config_edited": // a created debate's config, replaced before it started
        this.cast(event.config);
        this.plannedRounds = event.planned_rounds ?? this.plannedRounds;
        if (event.type === "debate_started") this.assesses = Boolean(event.assesses_rounds);
        break;
      case "round_completed":
        // The judge is asked about the round now (the CLI's spinner says the same): said until its assessment.
        if (this.assesses) this.wait("assessing", `The judge is assessing round ${event.round}`, event.at);
        break;
      case "round_started":
        this.node.append(
          h("h2", { class: "phase", id: `round-${event.round}` }, `Round ${event.round}`, event.phase ? ` · ${event.phase}` : ""),
        );
        break;
      case "turn_started":
        this.turn(event, true);
        break;
      case "token_delta":
        this.delta(event);
        break;
      case "tool_called":
        this.turn(event, true).tools.append(
          h("li", {}, h("code", {}, event.tool), " ", event.error ? `failed: ${event.error}` : `→ ${event.result ?? "(nothing)"}`),
        );
        break;
      case "turn_completed":
        this.complete(event);
        break;
      case "round_assessed":
        this.assessed(event);
        break;
      case "personas_assigned":
        this.personas(event);
        break;
      case "notice":
        this.note(`${event.source}: ${event.message}`, event.level);
        break;
      case "decision":
        this.decision(event);
        break;
      case "context_trimmed":
        this.trimmed(event);
        break;
      case "context_warning":
        this.contextWarning(event);
        break;
      case "cost_acknowledged":
        this.note(
          `The cost of $${event.cost_usd.toFixed(4)} (past the pause at $${event.threshold_usd}) was acknowledged ` +
            `(${event.by}): the debate ${event.choice === "continue" ? "goes on" : "stops; the judge rules on what exists"}.`,
          "info",
        );
        break;
      case "call_retried":
        this.retried(event);
        break;
      case "audience_seated":
        this.note(
          Object.keys(event.personas ?? {}).length
            ? `The audience: ${Object.keys(event.personas).length} personas seated by ${event.model}.`
            : `No audience personas could be seated${event.error ? `: ${event.error}` : ""}.`,
          event.error ? "warning" : "info",
        );
        break;
      case "audience_opened":
        this.note(`The audience's vote ${event.phase} the debate is open${event.closes_at ? ` until ${new Date(event.closes_at).toLocaleTimeString()}` : ""}.`, "info");
        break;
      case "audience_counted":
        this.counted(event);
        break;
      case "participant_dropped":
        this.dropTurn(`${event.round}:${event.participant_id}`);
        this.note(`${this.person(event.participant_id).name} failed and leaves the debate: ${event.error}`, "warning");
        break;
      case "history_summarised":
        this.summarised(event);
        break;
      case "turns_embedded": // vectors for the stopping rules: only a failed call is worth a line
        if (event.error) this.note(`Embedding round ${event.round}'s turns failed (${event.error}): repetition and convergence measure words this round.`, "info");
        break;
      case "debate_stopping":
        this.note(`No more rounds after round ${event.after_round}: ${event.reason.detail}`, "info");
        break;
      case "judging_requested":
        this.note(
          `Judged again by ${event.judges?.length ? `a panel (${event.judges.map((j) => j.model).join(", ")})` : event.judge?.model}` +
            `${event.own ? ", the debate's own judge" : ""} (${event.reason}); earlier verdicts stay on record.`,
          "info",
        );
        break;
      case "judging_started":
        // Said while it is true: the verdict (or the run's end) takes it away. A person's verdict has its own
        // note with its countdown (showWaiting); a model's counts the seconds it has been at it.
        if (isPersonModel(event.model)) this.wait("verdict", "The judge (a person) is weighing the debate…");
        else if (String(event.model).startsWith("panel: ")) this.wait("verdict", `The panel (${event.model.slice(7)}) is writing the verdict`, event.at);
        else this.wait("verdict", `The judge (${event.model}) is writing the verdict`, event.at);
        break;
      case "judge_verdict":
        this.note(
          event.verdict
            ? `${event.name} has given a verdict${event.verdict.confidence != null ? ` (${event.verdict.confidence}% sure)` : ""}.`
            : event.recused
              ? `${event.name} recused: ${event.recused}`
              : `${event.name} gave no valid verdict${event.error ? `: ${event.error}` : ""}.`,
          "info",
        );
        break;
      case "debate_paused":
        this.discardUnfinished();
        if (!event.before_start) this.note(`Paused: ${event.reason}`, event.cost ? "warning" : "info");
        break;
      case "debate_resumed":
        this.note(`Resumed (${event.reason}).`, "info");
        break;
      case "debate_interrupted":
        this.discardUnfinished();
        this.note(`Interrupted: ${event.reason}`, "warning");
        break;
      case "debate_failed":
        this.discardUnfinished();
        this.note(`Failed: ${event.error}`, "warning");
        break;
      default:
        break;
    }
    if (this.pending && event.type !== "token_delta") this.node.append(this.pending.node); // kept last
  }

  /**
   * What the judge is at work on, said while it is: `kind` "assessing" (a round's assessment) or "verdict", with
   * the seconds since `since` (the event's time) counting when given. One at a time; `settle` takes it away.
   */
  wait(kind, text, since = null) {
    this.pending?.node.remove();
    const node = h(
      "div",
      { class: "notice info pending", role: "status", dataset: { testid: "pending", kind } },
      h("span", { class: "spinner", "aria-hidden": "true" }),
      h("span", {}, text),
      since ? [h("span", { class: "muted", "aria-hidden": "true" }, " · "), elapsed(since)] : null,
    );
    this.pending = { kind, node };
    this.node.append(node);
  }

  /** The judge's work said by `wait` is over once what it waited for (or anything after it) is recorded. */
  settle(event) {
    if (!this.pending) return;
    const ends = {
      assessing: ["round_assessed", "round_started", "turn_started", "debate_stopping", "judging_requested", "judging_started", "outcome"],
      verdict: ["verdict", "judging_requested"],
    }[this.pending.kind];
    const over = ["debate_paused", "debate_interrupted", "debate_failed", "debate_completed", "debate_resumed"];
    if (ends.includes(event.type) || over.includes(event.type)) {
      this.pending.node.remove();
      this.pending = null;
    }
  }

  key(event) {
    return `${event.round}:${event.participant_id}${event.target ? `>${event.target}` : ""}`;
  }

  turn(event, streaming) {
    const key = this.key(event);
    let turn = this.turns.get(key);
    if (turn && !turn.done && event.type === "turn_started") {
      // The same turn started again (a resume re-runs a turn that never completed): start it afresh.
      turn.body.replaceChildren();
      turn.live = null;
      this.thinking(turn, event);
    }
    if (turn) return turn;
    const who = this.person(event.participant_id);
    const target = event.target ? this.person(event.target).name : null;
    const body = h("div", { class: "body raw" });
    const tools = h("ul", { class: "tools small" });
    const node = h(
      "article",
      { class: streaming ? "turn streaming" : "turn", dataset: { key }, "aria-label": `${who.name}, round ${event.round}` },
      h(
        "header",
        {},
        h("span", { class: "who" }, who.name),
        target ? h("span", { class: "meta" }, `to ${target}`) : null,
        who.stance ? h("span", { class: "meta stance" }, who.stance) : null,
        modelLabel(event.model ?? who.model),
        h("span", { class: "meta round" }, `round ${event.round}`),
      ),
      tools,
      body,
    );
    node.style.setProperty("--c", who.colour);
    turn = { node, body, tools, live: null, done: false, thinking: null };
    this.turns.set(key, turn);
    this.node.append(node);
    if (event.type === "turn_started") this.thinking(turn, event);
    return turn;
  }

  /** A model's turn until its first words: `<name> is thinking · 4 s`, the seconds since it was asked. A person's
   * turn is announced as it is given: nothing to wait for there. */
  thinking(turn, event) {
    turn.thinking?.remove();
    turn.thinking = null;
    if (isPersonModel(event.model)) return;
    turn.thinking = h(
      "p",
      { class: "thinking muted small", dataset: { testid: "thinking" } },
      h("span", { class: "spinner", "aria-hidden": "true" }),
      `${this.person(event.participant_id).name} is thinking`,
      h("span", { "aria-hidden": "true" }, " · "),
      elapsed(event.at),
    );
    turn.body.before(turn.thinking);
  }

  delta(event) {
    const turn = this.turn(event, true);
    if (turn.done) return;
    if (turn.thinking && event.text) {
      turn.thinking.remove();
      turn.thinking = null;
    }
    if (!turn.live) {
      turn.live = document.createTextNode("");
      turn.body.append(turn.live);
    }
    turn.live.appendData(event.text);
  }

  complete(event) {
    const turn = this.turn(event, false);
    turn.thinking?.remove();
    turn.thinking = null;
    turn.done = true;
    turn.live = null;
    turn.node.classList.remove("streaming");
    turn.node.dataset.done = "";
    turn.body.className = "body";
    if (event.skipped) {
      // A person's turn not given in time: the engine's note, dim, never taken for their words.
      turn.node.classList.add("skipped");
      turn.node.dataset.testid = "skipped";
      turn.body.replaceChildren(h("p", { class: "skipped-note" }, event.text));
      return;
    }
    turn.body.replaceChildren(markdown(event.text));
    if (event.cut) {
      // The round's time ran out: what the turn had said stays, then the engine's note, never taken for its words.
      turn.node.classList.add("cut");
      turn.node.dataset.testid = "cut";
      if (!event.text.trim()) turn.body.replaceChildren();
      turn.body.append(h("p", { class: "cut-note" }, event.note ?? "cut"));
      return;
    }
    const meta = isPersonModel(event.model)
      ? [`written in ${event.latency_s.toFixed(0)} s`]
      : [`${event.usage.output_tokens} tokens`, `${event.latency_s.toFixed(1)} s`];
    turn.node.querySelector("header").append(h("span", { class: "meta small" }, meta.join(" · ")));
  }

  /**
   * The notes saying whom the debate waits for (`items` from people.js's Awaiting): one per turn or verdict
   * awaited, with its countdown, kept at the end of the transcript while it is awaited. `mine` is the seat this
   * page answers for: its own note points at the box below rather than saying it waits for itself.
   */
  showWaiting(items, mine = null) {
    const keys = new Set();
    for (const item of items) {
      if (item.seat === mine) continue; // this page's own turn or verdict: its box below says so
      const key = `${item.kind}:${item.seat}:${item.round ?? ""}:${item.target ?? ""}`;
      keys.add(key);
      if (this.waiting.has(key)) {
        this.node.append(this.waiting.get(key)); // kept last, after whatever came since
        continue;
      }
      const who = item.kind === "turn" ? this.person(item.seat).name : item.name;
      const to = item.target ? ` to ${this.person(item.target).name}` : "";
      const text = item.kind === "turn" ? `Waiting for ${who}'s turn${to} (round ${item.round}, a person)…` : `Waiting for ${who}'s verdict (a person)…`;
      const node = h(
        "div",
        { class: "notice info awaiting", role: "status", dataset: { testid: "awaiting", seat: item.seat } },
        h("span", {}, text),
        countdown(item.deadline),
      );
      this.waiting.set(key, node);
      this.node.append(node);
    }
    for (const [key, node] of this.waiting) {
      if (!keys.has(key)) {
        node.remove();
        this.waiting.delete(key);
      }
    }
  }

  /** An audience vote counted: one line, each vote folded under it (a persona's reason, a person's choice). */
  counted(event) {
    const tally = tallyOf(event.votes ?? []);
    const line = `The audience voted ${event.phase} the debate: ${audienceLine(tally)}`;
    const votes = (event.votes ?? []).map((v) =>
      h(
        "li",
        {},
        h("strong", {}, v.kind === "person" ? "A person" : v.name || "A persona"),
        `: ${v.choice} (${v.confidence}% sure)`,
        v.reason ? ` — ${v.reason}` : "",
      ),
    );
    this.node.append(
      h(
        "details",
        { class: "notice info folded", dataset: { kind: "audience_counted", phase: event.phase } },
        h("summary", {}, line),
        votes.length ? h("ul", { class: "votes" }, votes) : h("p", {}, "No votes."),
        event.error ? h("p", { class: "muted small" }, event.error) : null,
      ),
    );
  }

  /** A failed call is tried again: a turn's text streamed so far is void, the retry streams it afresh. */
  retried(event) {
    const who = this.person(event.speaker).name;
    const wait = event.delay_s >= 0.05 ? ` in ${event.delay_s.toFixed(1)} s` : "";
    this.note(`${event.error}; retrying ${who}'s ${event.purpose} (retry ${event.retry}${wait}).`, "info");
    if (event.purpose !== "turn") return;
    const turn = this.turns.get(`${event.round}:${event.speaker}${event.target ? `>${event.target}` : ""}`);
    if (turn && !turn.done) {
      turn.body.replaceChildren();
      turn.tools.replaceChildren();
      turn.live = null;
    }
  }

  dropTurn(key) {
    const turn = this.turns.get(key);
    if (turn && !turn.done) {
      turn.node.remove();
      this.turns.delete(key);
    }
  }

  /** A stopped run's turns under way were never completed: they are not part of the debate. */
  discardUnfinished() {
    for (const [key, turn] of this.turns) {
      if (!turn.done) {
        turn.node.remove();
        this.turns.delete(key);
      }
    }
  }

  assessed(event) {
    const a = event.assessment;
    if (!a) {
      this.note(`The judge gave no assessment of round ${event.round}${event.error ? `: ${event.error}` : ""}.`, "info");
      return;
    }
    const flags = Object.entries(a.flags ?? {}).filter(([, raised]) => raised).map(([flag]) => flag.replaceAll("_", " "));
    const reviews = (a.participants ?? []).map((p) => {
      const who = this.person(p.participant_id);
      const points = [
        ...(p.strengths ?? []).map((x) => h("li", { class: "strength" }, h("span", { class: "visually-hidden" }, "Strength: "), x)),
        ...(p.weaknesses ?? []).map((x) => h("li", { class: "weakness" }, h("span", { class: "visually-hidden" }, "Weakness: "), x)),
      ];
      const item = h(
        "li",
        { class: "review", dataset: { participant: p.participant_id } },
        h("strong", { class: "who" }, who.name),
        ` ${p.score}${assessedScores(p)}`,
        points.length ? h("ul", { class: "points" }, points) : null,
      );
      item.style.setProperty("--c", who.colour);
      return item;
    });
    this.node.append(
      h(
        "div",
        { class: "assessment", dataset: { round: event.round } },
        h(
          "p",
          { class: "assessment-head" },
          h("strong", {}, `Judge on round ${event.round}: `),
          `quality ${a.quality}/10`,
          // Advice, as the CLI words it; after the last planned round there is nothing left to advise on.
          event.round >= (this.plannedRounds ?? Infinity) ? "" : a.should_continue ? " · advises continuing" : " · advises stopping",
          " · ",
          h(
            "span",
            { class: "flags", dataset: { testid: "flags" } },
            flags.length ? ["flags: ", flags.map((f) => h("span", { class: "flag" }, f))] : "no flags",
          ),
        ),
        a.reasoning ? h("p", { class: "muted" }, a.reasoning) : null,
        reviews.length ? h("ul", { class: "reviews" }, reviews) : null,
        a.recommendations ? h("p", { class: "small" }, h("strong", {}, "Recommendations: "), a.recommendations) : null,
      ),
    );
  }

  personas(event) {
    const rows = Object.entries(event.personas ?? {}).map(([id, p]) =>
      h("li", {}, h("strong", {}, this.person(id).name), `: ${p.position} — ${p.persona}`),
    );
    if (rows.length) this.node.append(h("div", { class: "notice info" }, "Proposed personas:", h("ul", {}, rows)));
    else this.note(`No personas could be proposed${event.error ? `: ${event.error}` : ""}.`, "warning");
  }

  decision(event) {
    // A failed ask stands out, as the CLI draws it in red.
    const level = event.answer ? "info" : "warning";
    this.node.append(h("div", { class: `notice ${level} decision`, dataset: { kind: event.kind } }, decisionLine(event, this)));
  }

  /** A prompt's history cut to fit its window (or chosen by its strategy): one line, the figures folded. */
  trimmed(event) {
    const who = event.speaker === "judge" ? "the judge" : this.person(event.speaker).name;
    const when = event.round != null ? ` in round ${event.round}` : "";
    const left = event.strategy ? event.turns_dropped : event.turns_omitted;
    const what = [
      left ? `${left} earlier turn${left === 1 ? "" : "s"} left out` : "",
      event.turns_summarised ? `${event.turns_summarised} summarised` : "",
    ].filter(Boolean).join(", ") || `${count(event.chars_cut)} characters cut`;
    this.folded(
      "context_trimmed",
      `Context: ${who}'s ${event.purpose} prompt${when}: ${what}`,
      [
        ["Prompt tokens", `${count(event.tokens_before)} → ${count(event.tokens_after)}`],
        ["Window", `${count(event.window)} tokens of ${event.model}, ${count(event.reply_tokens)} kept for the reply`],
        ["Cut by", event.strategy ? `the ${event.strategy} strategy` : "the window fit"],
        ["Characters cut", count(event.chars_cut)],
      ],
    );
  }

  /** A summary of older turns (or why none was made): one line, the summary itself folded. */
  summarised(event) {
    const line = event.summary
      ? `Context: turns 1–${event.covers} summarised (to round ${event.last_round})`
      : `Context: no summary of turns 1–${event.covers}: ${event.error ?? "failed"}`;
    const rows = [["Model", event.model]];
    if (event.summary) rows.push(["Words", String(event.summary.split(/\s+/).filter(Boolean).length)]);
    this.folded("history_summarised", line, rows, event.summary ? h("p", { class: "summary" }, event.summary) : null);
  }

  folded(kind, line, rows, extra = null) {
    this.node.append(
      h(
        "details",
        { class: "notice info folded", dataset: { kind } },
        h("summary", {}, line),
        h("dl", { class: "figures" }, rows.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)])),
        extra,
      ),
    );
  }

  /** The warning, and where its last words name the setting that decides what happens next
   * (`history.on_overflow`, `history.strategy`), a button to a new run's form with All settings at it. */
  contextWarning(event) {
    const node = this.note(contextWarningLine(event, this), "warning");
    const path = /\((history\.[a-z_]+): [^()]*\)\s*$/.exec(event.detail ?? "")?.[1];
    if (!path || !this.openSetting || !this.config) return;
    const config = this.config;
    node.append(" ", h("button", { type: "button", class: "link jump", onclick: () => this.openSetting(config, path) }, `Change ${path} for a new run`));
  }

  note(text, level = "info") {
    const node = h("div", { class: `notice ${level}`, role: level === "warning" ? "status" : null }, text);
    this.node.append(node);
    return node;
  }

  /** The node of the turn `event` belongs to while it is being written, else null. */
  live(event) {
    const turn = this.turns.get(this.key(event));
    return turn && !turn.done ? turn.node : null;
  }
}

/** ` (relevance 8, novelty 6, engagement 7)`: the scores an assessment gave a participant beyond its round
 * score, as the CLI shows them (a log from before they were scored has none). */
function assessedScores(p) {
  const parts = ["relevance", "novelty", "engagement"].filter((k) => p[k] != null).map((k) => `${k} ${p[k]}`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

/** `Ada, ranking of Bo: Bo > Cy: because`: the words the CLI and the exports use, the text the engine recorded. */
function decisionLine(event, transcript) {
  const by = transcript.person(event.by).name;
  const about = event.subject ? ` of ${transcript.person(event.subject).name}` : "";
  return `${by}, ${event.kind}${about}: ${(event.text ?? storedAnswer(event)).split(/\s+/).filter(Boolean).join(" ")}`;
}

/** A decision without its text (the server fills an older log's, but not for a format it does not know): its
 * answer as stored, or why there is none. */
function storedAnswer(event) {
  if (!event.answer) return `no valid answer: ${event.error ?? "unknown error"}`;
  return JSON.stringify(event.answer);
}

/** `Ada's turn in round 3 takes 560 prompt tokens + 200 for the reply, 84 % of fake:ada's 900-token window; …`:
 * the CLI's words. */
function contextWarningLine(event, transcript) {
  const share = Math.round((100 * (event.tokens + event.reply_tokens)) / event.window);
  return (
    `Context: ${transcript.person(event.speaker).name}'s turn in round ${event.round} takes ${count(event.tokens)} ` +
    `prompt tokens + ${count(event.reply_tokens)} for the reply, ${share} % of ${event.model}'s ` +
    `${count(event.window)}-token window; ${event.detail}`
  );
}

function count(n) {
  return Number(n).toLocaleString("en-US");
}
