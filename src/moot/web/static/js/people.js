// People in a debate: a participant or judge whose model is `human` is a person, who answers through
// a join link; an audience votes before and after. This module holds what every view shares: who is a person,
// what the debate is waiting for (a fold over its events, as moot.domain.state folds `awaiting`), the countdown
// to a deadline, and the one line that says who is awaited.

import { h } from "./dom.js";

/** Whether a model names a person (`human`, stored as `human:person`). */
export function isPersonModel(model) {
  return /^human(?::|$)/i.test(String(model ?? ""));
}

/** The seats a config gives people: human participants, human judges, an audience with people in it. */
export function peopleIn(config) {
  if (!config) return [];
  const seats = [];
  for (const p of config.participants ?? []) if (isPersonModel(p.model)) seats.push({ seat: p.id, kind: "participant", name: p.name });
  if (config.judge && isPersonModel(config.judge.model) && !config.judges?.length) seats.push({ seat: "judge", kind: "judge", name: config.judge.name ?? "Judge" });
  (config.judges ?? []).forEach((j, i) => {
    if (isPersonModel(j.model)) seats.push({ seat: verdictSeat(i), kind: "judge", name: j.name ?? `Judge ${i + 1}` });
  });
  if (config.audience?.people) seats.push({ seat: "audience", kind: "audience", name: "Audience" });
  return seats;
}

/** The join seat of a verdict asked of a person: `judge` for the single judge, `judge-<n>` for panel seat n
 * (0-based, as `verdict_awaited.judge` counts; moot.server.people.judge_seat). */
export function verdictSeat(judge) {
  return judge === null || judge === undefined ? "judge" : `judge-${judge}`;
}

/** The `awaiting` key the engine uses (moot.domain.state.turn_key / verdict_key). */
export function turnKey(participantId, target) {
  return target ? `${participantId}>${target}` : participantId;
}

/**
 * What the debate waits for from people, folded from its events as the server's state folds `awaiting`: a
 * person's turn from `turn_awaited` until its `turn_completed` (or a stop cutting the rounds), a verdict from
 * `verdict_awaited` until it is given. A pause keeps them (a resumed run waits again, to the same deadline),
 * so `live` says whether the run is there to take an answer now.
 */
export class Awaiting {
  constructor() {
    this.items = new Map(); // key -> {kind: "turn"|"verdict", seat, name?, round?, target?, deadline, max_chars?}
    this.live = false;
  }

  /** Fold one event; true when what is awaited (or whether it can be given now) changed. */
  apply(event) {
    const before = this.signature();
    switch (event.type) {
      case "turn_awaited":
        this.items.set(`turn:${turnKey(event.participant_id, event.target)}`, {
          kind: "turn",
          seat: event.participant_id,
          round: event.round,
          target: event.target ?? null,
          deadline: event.deadline ?? null,
          max_chars: event.max_chars,
        });
        break;
      case "turn_completed":
        this.items.delete(`turn:${turnKey(event.participant_id, event.target)}`);
        break;
      case "participant_dropped":
        for (const [key, item] of this.items) if (item.kind === "turn" && item.seat === event.participant_id) this.items.delete(key);
        break;
      case "debate_stopping": // a stop cuts the rounds: a turn is no longer awaited, a verdict still is
        for (const [key, item] of this.items) if (item.kind === "turn") this.items.delete(key);
        break;
      case "verdict_awaited":
        this.items.set(`verdict:${verdictSeat(event.judge)}`, {
          kind: "verdict",
          seat: verdictSeat(event.judge),
          judge: event.judge ?? null,
          name: event.name,
          deadline: event.deadline ?? null,
        });
        break;
      case "judge_verdict":
        this.items.delete(`verdict:${verdictSeat(event.judge)}`);
        break;
      case "verdict":
        this.items.delete("verdict:judge");
        break;
      case "debate_started":
      case "debate_resumed":
        this.live = true;
        break;
      case "debate_paused":
      case "debate_interrupted":
      case "debate_failed":
      case "debate_completed":
        this.live = false;
        break;
      default:
        break;
    }
    return this.signature() !== before;
  }

  signature() {
    return `${this.live}|${[...this.items.keys()].join(",")}`;
  }

  /** What a seat is asked for now (a turn or a verdict), or null. */
  of(seat) {
    if (!this.live) return null;
    for (const item of this.items.values()) if (item.seat === seat) return item;
    return null;
  }

  /** Everything awaited now, while the run can take it. */
  all() {
    return this.live ? [...this.items.values()] : [];
  }
}

// --- countdowns and elapsed seconds ------------------------------------------------------------------

const ticking = new Set();
let timer = null;

function tick() {
  for (const node of ticking) {
    if (!node.isConnected && node.dataset.started) {
      ticking.delete(node);
      continue;
    }
    node.dataset.started = "1";
    draw(node);
  }
  if (!ticking.size) {
    clearInterval(timer);
    timer = null;
  }
}

function draw(node) {
  if (node.dataset.since) {
    // Counting up (elapsed): whole seconds since, never below 0 (a server's clock a little ahead of this one).
    const text = `${Math.max(0, Math.floor((Date.now() - Date.parse(node.dataset.since)) / 1000))} s`;
    if (node.textContent !== text) node.textContent = text;
    return;
  }
  const left = Math.round((Date.parse(node.dataset.deadline) - Date.now()) / 1000);
  const text = left > 0 ? `${clock(left)} left` : "time is up";
  if (node.textContent !== text) node.textContent = text;
  node.classList.toggle("soon", left <= 30);
}

/** `4:05`, `1:02:09`: seconds as a clock. */
export function clock(seconds) {
  const s = Math.max(0, Math.round(seconds));
  const [hh, mm, ss] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n) => String(n).padStart(2, "0");
  return hh ? `${hh}:${two(mm)}:${two(ss)}` : `${mm}:${two(ss)}`;
}

/** A span counting down to `deadline` (an ISO time) each second, `time is up` after it; null without one.
 * It stops ticking once it has left the page. */
export function countdown(deadline, attrs = {}) {
  if (!deadline || Number.isNaN(Date.parse(deadline))) return null;
  const node = h("span", { class: "countdown", role: "timer", "aria-live": "off", dataset: { testid: "countdown" }, ...attrs });
  node.dataset.deadline = deadline;
  draw(node);
  ticking.add(node);
  timer ??= setInterval(tick, 1000);
  return node;
}

/** A span counting the whole seconds since `since` (an ISO time, an event's `at`; else now), each second, as the
 * CLI's spinner counts a wait (moot.cli.waiting). It stops ticking once it has left the page. */
export function elapsed(since, attrs = {}) {
  const start = since && !Number.isNaN(Date.parse(since)) ? since : new Date().toISOString();
  const node = h("span", { class: "elapsed", role: "timer", "aria-live": "off", dataset: { testid: "elapsed" }, ...attrs });
  node.dataset.since = start;
  draw(node);
  ticking.add(node);
  timer ??= setInterval(tick, 1000);
  return node;
}

/** A short label of a turn's model: the `person` badge for a person, else the model's name. */
export function modelLabel(model) {
  return isPersonModel(model)
    ? h("span", { class: "badge person", title: "A person wrote this, through a join link" }, "person")
    : h("span", { class: "meta model" }, model);
}
