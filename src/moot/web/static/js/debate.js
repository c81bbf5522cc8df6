// One debate's page: the transcript live as it is written, the meter and the controls beside it, and the
// result once it is over. The page is a fold over the debate's events, so a reload or a dropped
// connection only replays them: nothing is lost or shown twice.

import { api, ApiError } from "./api.js";
import { AudienceCard, VoteCard } from "./audience.js";
import { showError } from "./banner.js";
import { append, h } from "./dom.js";
import { editConfig } from "./form.js";
import { Meter } from "./meter.js";
import { Awaiting, peopleIn } from "./people.js";
import { renderResult } from "./result.js";
import { linksCard, SeatsPanel, takeLinks } from "./seats.js";
import { follow } from "./stream.js";
import { Transcript } from "./transcript.js";
import { TurnBox } from "./turn-box.js";
import { VerdictForm } from "./verdict-form.js";

// Events whose calls cost something: the meter is refreshed after them.
const SPENDS = new Set([
  "turn_completed", "round_assessed", "decision", "personas_assigned", "history_summarised", "judge_verdict", "verdict",
  "audience_seated", "audience_counted", "turns_embedded",
]);
const STATUS_AFTER = {
  debate_started: "running",
  debate_resumed: "running",
  debate_queued: "queued",
  judging_started: "judging",
  debate_completed: "completed",
  debate_failed: "failed",
  debate_interrupted: "interrupted",
};
const OVER = new Set(["completed", "failed", "interrupted"]);

/**
 * The debate's page. `seat` ({seat, kind, name}, from GET .../seat) makes it a join view: the page of the person
 * who holds that seat (a participant writes their turns here, a judge gives their verdict, an audience member
 * votes), without the creator's controls; without it the page is the creator's (the join links, once, and the
 * seats panel when the debate has people in it).
 */
/** A new debate's form from `config`, with All settings open at `path`. */
function openSettingIn(config, path) {
  editConfig(config);
  location.hash = `#/?settings=${encodeURIComponent(path)}`;
}

export function renderDebate(main, debateId, { seat = null } = {}) {
  const view = new DebateView(main, debateId, seat);
  view.open();
  return () => view.close();
}

class DebateView {
  constructor(main, id, seat = null) {
    this.id = id;
    this.seat = seat;
    // A context warning leads to the setting it names, in a new run's form (not from a person's seat).
    this.transcript = new Transcript(seat ? {} : { openSetting: openSettingIn });
    this.meter = new Meter();
    this.status = "pending";
    this.stream = null;
    this.last = 0;
    this.title = h("h1", {}, "Debate");
    this.statusPill = h("span", { class: "status", dataset: { testid: "status" }, role: "status" }, "loading");
    this.roundLine = h("span", { class: "muted", dataset: { testid: "round" } });
    this.connection = h("span", { class: "muted small", "aria-live": "polite" });
    this.buttons = {
      pause: h("button", { type: "button", onclick: () => this.act("pause") }, "Pause"),
      resume: h("button", { type: "button", class: "primary", onclick: () => this.act(this.resumeAction()) }, "Resume"),
      stop: h("button", { type: "button", class: "danger", onclick: () => this.act("stop") }, "Stop"),
      // Created and not started: its config can still change (PATCH /api/debates/<id>), in the form.
      edit: h("button", { type: "button", onclick: () => { location.hash = `#/debates/${encodeURIComponent(id)}/edit`; } }, "Edit config"),
    };
    // The result opens the page once the debate is over (its summary card above the transcript); the scores
    // round by round and the ledger follow the transcript.
    this.result = h("section", { id: "result", class: "result", "aria-live": "polite", hidden: true });
    this.details = h("section", { id: "details", class: "details", hidden: true });
    this.controls = h("div", { class: "actions", role: "group", "aria-label": "Debate controls" }, Object.values(this.buttons));
    this.costDialog = new CostDialog({ onContinue: () => this.act("resume"), onStop: () => this.act("stop") });
    // People in the debate: what it waits for from them, the audience's votes, and this page's own part in it.
    this.awaiting = new Awaiting();
    this.audience = new AudienceCard(id, { poll: !seat || seat.kind === "audience" });
    const kind = seat?.kind;
    this.seatLine = seat ? h("p", { class: "seat-banner", role: "status", dataset: { testid: "seat-banner" } }) : null;
    this.turnBox = kind === "participant" ? new TurnBox({ debateId: id, name: (pid) => this.transcript.person(pid).name }) : null;
    this.verdictForm = kind === "judge" ? new VerdictForm({ debateId: id }) : null;
    this.voteCard = kind === "audience" ? new VoteCard(id, this.audience) : null;
    const links = seat ? null : takeLinks(id);
    this.seats = seat ? null : new SeatsPanel(id);
    if (seat) {
      this.controls.hidden = true;
      main.classList.add("joined");
    }
    append(main, [
      this.title,
      h("p", { class: "actions" }, this.statusPill, this.roundLine, this.connection),
      this.seatLine,
      links ? linksCard(links, id) : null,
      this.voteCard?.node,
      this.result,
      h(
        "div",
        { class: "debate" },
        h("div", {}, this.transcript.node, this.turnBox?.node, this.verdictForm?.node, this.details),
        h(
          "aside",
          { class: "side", "aria-label": seat ? "The audience" : "Controls and cost" },
          seat ? null : this.controls,
          this.audience.node,
          seat ? null : this.meter.node,
          this.seats?.node,
        ),
      ),
      this.costDialog.node,
    ]);
    this.refreshButtons();
    this.follower = new Follower();
  }

  open() {
    // The stream first: a debate just started speaks at once, and deltas sent before the page listens are
    // never replayed (only completed turns are stored). /status only fills the meter meanwhile.
    this.listen();
    api(`/api/debates/${encodeURIComponent(this.id)}/status`)
      .then((status) => {
        if (!this.applied) this.setStatus(status.status);
        this.meter.show(status);
      })
      .catch((err) => {
        // A join page's own questions say what is wrong with its link; the figures here are only the meter's.
        if (this.seat) return;
        if (!(err instanceof ApiError && err.status === 404)) showError(err, { retry: () => this.open() });
      });
  }

  missing() {
    this.title.textContent = "No such debate";
    this.statusPill.textContent = "not found";
    showError(`There is no debate ${this.id}. It may have been deleted; see the history.`);
  }

  listen() {
    clearTimeout(this.relisten);
    this.stream?.close();
    this.stream = follow(this.id, {
      after: this.last,
      onEvent: (event) => this.apply(event),
      onStatus: (state, detail) => this.connected(state, detail),
    });
  }

  close() {
    this.closed = true;
    this.audience.close();
    clearTimeout(this.relisten);
    document.title = "moot";
    this.follower.stop();
    clearTimeout(this.costTimer);
    this.costDialog.close();
    this.stream?.close();
    clearTimeout(this.meterTimer);
  }

  apply(event) {
    this.applied = true;
    if (event.seq != null) this.last = event.seq;
    this.transcript.apply(event);
    // Only live text is followed: a replayed debate opens on its summary, at the top.
    if (event.type === "token_delta") this.follower.keep(this.transcript.live(event));
    switch (event.type) {
      case "debate_started":
      case "config_edited": // a created debate's config, replaced before it started: shown as the new one
        this.config = event.config;
        this.title.textContent = event.config.topic;
        document.title = `${event.config.topic} · moot`;
        this.meter.budgets(event.config.limits);
        // The format's plan (a bracket fixes its own length); a log from an older moot lacks it.
        this.rounds = event.planned_rounds ?? event.config.rounds;
        this.voteCard?.setMotion(event.config.topic);
        if (this.seats && !this.seatsLoaded && peopleIn(event.config).length) {
          this.seatsLoaded = true;
          this.seats.load();
        }
        break;
      case "debate_queued":
        this.roundLine.textContent = "Waiting for a free running slot: it starts when a debate running on this server ends";
        break;
      case "round_started":
        this.roundLine.textContent = `Round ${event.round}${this.rounds ? ` of ${this.rounds}` : ""}${event.phase ? ` · ${event.phase}` : ""}`;
        break;
      case "debate_paused":
        this.setStatus(event.before_start ? "created" : "paused");
        this.costPause = event.cost ?? null; // limits.pause_at_cost: it waits for Continue or Stop
        break;
      case "debate_resumed":
      case "cost_acknowledged":
        this.costPause = null;
        break;
      default:
        break;
    }
    if (STATUS_AFTER[event.type]) this.setStatus(STATUS_AFTER[event.type], event.problems ?? []);
    this.audience.apply(event);
    if (this.awaiting.apply(event) || event.type !== "token_delta") this.showPeople();
    if (SPENDS.has(event.type)) this.refreshMeter();
    if (event.type === "debate_completed" || (OVER.has(this.status) && event.type !== "token_delta")) this.showResult();
    if (event.type !== "token_delta") this.askAboutCost();
  }

  /**
   * Who the debate waits for, after each event: a note in the transcript for each person awaited (with its
   * countdown), and on a join page the seat's own part: the turn box, the verdict form, the line at the top.
   */
  showPeople() {
    const mine = this.seat && this.seat.kind !== "audience" ? this.seat.seat : null;
    this.transcript.showWaiting(this.awaiting.all(), mine);
    if (!this.seat) return;
    const asked = mine ? this.awaiting.of(mine) : null;
    if (this.turnBox && this.turnBox.show(asked?.kind === "turn" ? asked : null)) this.arrive(this.turnBox.node);
    if (this.verdictForm && this.config) {
      this.verdictForm.show(asked?.kind === "verdict" ? asked : null, this.config).then((fresh) => fresh && this.arrive(this.verdictForm.node));
    }
    // Redrawn only when it changes: it is a live region, read out again at each redraw.
    const said = `${this.config?.topic}|${asked?.kind}|${asked?.round}|${asked?.seat}`;
    if (said !== this.seatSaid) {
      this.seatSaid = said;
      this.seatLine.replaceChildren(...seatWords(this.seat, this.config, asked));
    }
    const topic = this.config?.topic ?? "Debate";
    document.title = asked ? `${asked.kind === "turn" ? "Your turn" : "Your verdict"} · ${topic} · moot` : `${topic} · moot`;
  }

  /** A box just opened for this seat (its turn, its verdict): brought into view while the reader follows the
   * debate (not while they read back up the transcript, nor on a replay of a finished one). */
  arrive(node) {
    if (!this.follower.on) return;
    setTimeout(() => node.scrollIntoView({ block: "nearest", behavior: "smooth" }), 50);
  }

  /** Once the events replayed or streamed have settled: the dialog while a pause at the cost waits. */
  askAboutCost() {
    clearTimeout(this.costTimer);
    this.costTimer = setTimeout(() => {
      if (this.closed) return;
      if (this.costPause && this.status === "paused") this.costDialog.open(this.costPause);
      else this.costDialog.close();
    }, 50);
  }

  connected(state, detail) {
    if (state === "live") this.connection.textContent = "";
    else if (state === "reconnecting") this.connection.textContent = "Connection lost; reconnecting…";
    else if (state === "error" && detail instanceof ApiError && detail.status === 404) this.missing();
    else if (state === "error") showError(detail, { retry: () => this.listen() });
    else if (state === "idle") this.connection.textContent = "";
    else if (state === "ended") {
      this.connection.textContent = "";
      this.refreshMeter(0);
      // A debate that can go on (created, paused, stopped short) is followed on when it is started, resumed or
      // retried elsewhere (its creator's other tab, the CLI; on a join page, always elsewhere): asked again.
      if (this.status !== "completed") {
        clearTimeout(this.relisten);
        this.relisten = setTimeout(() => !this.closed && this.listen(), 2000);
      }
    }
  }

  setStatus(status, problems = []) {
    this.status = status;
    // A completed debate with recorded problems reads as degraded, as `moot list` and the exports say it.
    const label = status === "completed" && problems.length ? "degraded" : status;
    this.statusPill.textContent = label;
    this.statusPill.className = `status ${label}`;
    this.refreshButtons();
  }

  resumeAction() {
    if (this.status === "completed" && this.verdictFailed) return "retry"; // the verdict, asked for again
    return { created: "start", failed: "retry" }[this.status] ?? "resume";
  }

  /** Only the controls that can act are shown (a finished debate has none); a request under way disables them. */
  refreshButtons() {
    const s = this.status;
    const live = s === "running" || s === "pending";
    this.buttons.pause.hidden = !live;
    this.buttons.resume.hidden = !(["paused", "interrupted", "failed", "created"].includes(s) || (s === "completed" && this.verdictFailed));
    this.buttons.resume.textContent = { start: "Start", retry: "Retry", resume: "Resume" }[this.resumeAction()];
    // A stopped debate can still be judged on what it has; a judged one is over.
    this.buttons.stop.hidden = !(live || (["paused", "interrupted", "failed"].includes(s) && !this.judged));
    this.buttons.edit.hidden = !["created", "queued"].includes(s); // a queued one starts as edited
    for (const b of Object.values(this.buttons)) b.disabled = false;
    this.controls.hidden = Object.values(this.buttons).every((b) => b.hidden);
  }

  async act(action) {
    for (const b of Object.values(this.buttons)) b.disabled = true;
    try {
      await api(`/api/debates/${encodeURIComponent(this.id)}/${action}`, { method: "POST" });
      if (action === "pause") this.statusPill.textContent = "pausing…";
      else if (action === "stop" && this.status === "running") this.statusPill.textContent = "stopping…";
      else this.followRun("running");
    } catch (err) {
      showError(err);
      this.refreshButtons();
    }
  }

  /** A new run over the stored log (resume, retry, stop, a judging): follow it from the last event this page has. */
  followRun(status) {
    this.result.replaceChildren();
    this.result.hidden = true;
    this.details.replaceChildren();
    this.details.hidden = true;
    this.setStatus(status);
    this.listen();
  }

  refreshMeter(delay = 300) {
    // One /status per burst of events, not one per event.
    clearTimeout(this.meterTimer);
    this.meterTimer = setTimeout(async () => {
      try {
        this.meter.show(await api(`/api/debates/${encodeURIComponent(this.id)}/status`));
      } catch {
        // the next event or the reconnect refreshes it
      }
    }, delay);
  }

  showResult() {
    clearTimeout(this.resultTimer);
    this.resultTimer = setTimeout(async () => {
      if (this.closed) return;
      try {
        const state = await renderResult({
          summary: this.result,
          details: this.details,
          debateId: this.id,
          transcript: this.transcript,
          // A join page shows the result, not what only the creator may do with it (run again, judge again).
          seated: Boolean(this.seat),
          onJudge: this.seat ? undefined : () => this.followRun("judging"),
        });
        this.result.hidden = false;
        this.details.hidden = false;
        // A reader who followed the debate to its end is taken to its result, above the transcript.
        if (this.follower.on && this.follower.moved) this.result.scrollIntoView({ block: "start" });
        this.follower.moved = false;
        this.judged = state.judged;
        this.setStatus(state.status, state.problems ?? []);
        // A completed debate whose verdict failed is retried: its run is the verdict again.
        this.verdictFailed = state.status === "completed" && state.verdicts?.at(-1)?.verdict === null;
        this.refreshButtons();
      } catch (err) {
        showError(err, { retry: () => this.showResult() });
      }
    }, 100);
  }
}

/** The line at the top of a join page: who this seat is, and what the debate asks of it now. */
function seatWords(seat, config, asked) {
  const words = [];
  if (seat.kind === "participant") {
    const p = (config?.participants ?? []).find((x) => x.id === seat.seat);
    const name = p?.name ?? seat.name;
    const stance = p?.stance ?? "";
    words.push(h("strong", {}, `You are ${name}`), stance ? (/^(for|against)\b/i.test(stance) ? `, arguing ${stance}.` : `: ${stance}.`) : ", a participant.");
  } else if (seat.kind === "judge") {
    words.push(h("strong", {}, `You are ${seat.name ?? "the judge"}`), ", judging this debate: your verdict is asked for when its rounds end.");
  } else {
    words.push(h("strong", {}, "You are in the audience"), ": vote on the motion before the debate and after it.");
  }
  const go = (selector, text) => h("button", { type: "button", class: "link go", onclick: () => jumpTo(selector) }, text);
  if (asked?.kind === "turn") words.push(" ", go("[data-testid=turn-box]", "It is your turn: write it below."));
  if (asked?.kind === "verdict") words.push(" ", go("[data-testid=verdict-form]", "Give your verdict below."));
  return words;
}

function jumpTo(selector) {
  const node = document.querySelector(selector);
  node?.scrollIntoView({ block: "start", behavior: "smooth" });
  node?.querySelector("textarea, input")?.focus({ preventScroll: true });
}

/**
 * Keeps a streaming turn's growing end in view, until the reader scrolls up (wheel, touch, keys, the
 * scrollbar); scrolling back to the bottom of the page follows again. Only the reader's own input stops it:
 * the page also moves when content above changes size (the browser's scroll anchoring), which is no sign.
 */
class Follower {
  constructor() {
    this.on = true;
    this.moved = false; // it has scrolled the page since the last result was shown
    this.touchY = null;
    // Whether the page has left the bottom since the reader stopped following: until it has, a scroll event at the
    // bottom is the reader's own scroll-up just starting (or a frame drawn before it), not a return to follow.
    this.leftBottom = true;
    const off = () => {
      this.on = false;
      this.leftBottom = false;
    };
    this.listeners = {
      wheel: (e) => e.deltaY < 0 && off(),
      touchstart: (e) => (this.touchY = e.touches[0]?.clientY ?? null),
      // A finger moving down the screen scrolls the page up.
      touchmove: (e) => this.touchY !== null && (e.touches[0]?.clientY ?? 0) > this.touchY + 4 && off(),
      keydown: (e) => ["ArrowUp", "PageUp", "Home"].includes(e.key) || (e.key === " " && e.shiftKey) ? off() : null,
      // A press on the page's own scrollbar lands on the root element.
      pointerdown: (e) => e.target === document.documentElement && off(),
      scroll: () => {
        const el = document.scrollingElement;
        const atBottom = window.scrollY + window.innerHeight >= el.scrollHeight - 48;
        if (!atBottom) this.leftBottom = true;
        else if (this.leftBottom) this.on = true;
      },
    };
    for (const [type, listener] of Object.entries(this.listeners)) window.addEventListener(type, listener, { passive: true });
  }

  /** Scroll so the bottom of `node` (the turn being written) is on screen, if following. */
  keep(node) {
    if (!this.on || !node) return;
    const below = node.getBoundingClientRect().bottom + 16 - window.innerHeight;
    if (below <= 0) return;
    window.scrollBy({ top: below, behavior: "instant" });
    this.moved = true;
  }

  stop() {
    for (const [type, listener] of Object.entries(this.listeners)) window.removeEventListener(type, listener);
  }
}

/** The question a pause at `limits.pause_at_cost` asks: a modal dialog (focus kept inside, Escape leaves it
 * paused with the page's own Resume and Stop still there), with the figures the engine recorded. */
class CostDialog {
  constructor({ onContinue, onStop }) {
    this.text = h("p", { id: "cost-dialog-text" });
    this.left = h("p", { class: "muted small", id: "cost-dialog-left" });
    const answer = (then) => () => {
      this.close();
      then();
    };
    this.continueButton = h("button", { type: "button", class: "primary", onclick: answer(onContinue) }, "Continue");
    this.node = h(
      "dialog",
      {
        class: "cost-dialog",
        "aria-labelledby": "cost-dialog-title",
        "aria-describedby": "cost-dialog-text cost-dialog-left",
        dataset: { testid: "cost-dialog" },
      },
      h("h2", { id: "cost-dialog-title" }, "The debate has passed its cost pause"),
      this.text,
      this.left,
      h(
        "div",
        { class: "actions" },
        this.continueButton,
        h("button", { type: "button", class: "danger", onclick: answer(onStop) }, "Stop"),
      ),
    );
  }

  open(cost) {
    this.text.textContent =
      `It has cost $${cost.cost_usd.toFixed(4)}, past the pause you set at $${cost.threshold_usd} ` +
      "(limits.pause_at_cost). Continue the debate, or stop it here and have the judge rule on what exists?";
    this.left.textContent =
      cost.left_usd != null && cost.rounds_left
        ? `About $${cost.left_usd.toFixed(4)} more for the ${cost.rounds_left} round${cost.rounds_left === 1 ? "" : "s"} left, at the mean cost of those held.`
        : "";
    this.left.hidden = !this.left.textContent;
    if (!this.node.open) {
      this.node.showModal();
      this.continueButton.focus();
    }
  }

  close() {
    if (this.node.open) this.node.close();
  }
}
