// The audience (`audience` in a debate's config): people and model personas who vote for, against or undecided on
// the motion before the first round and after the last; the side whose share grows more wins the swing. Here:
// the counts as every view shows them, the live counts while a vote is open, the vote an audience link casts,
// and the swing as the result shows it. The words are the exports' (moot.export.audience_view).

import { api, ApiError } from "./api.js";
import { swingChart } from "./charts.js";
import { append, clear, h, uid } from "./dom.js";
import { countdown } from "./people.js";

export const CHOICES = ["for", "against", "undecided"];
const PHASES = ["before", "after"];
const POLL_MS = 2000;
const VOTER_KEY = (debateId) => `moot.voter.${debateId}`;
const VOTED_KEY = (debateId, phase) => `moot.vote.${debateId}.${phase}`;

/** The votes of one phase counted, as moot.domain.audience.tally counts them. */
export function tallyOf(votes) {
  const counts = { for: 0, against: 0, undecided: 0 };
  for (const v of votes) if (v.choice in counts) counts[v.choice] += 1;
  return {
    ...counts,
    people: votes.filter((v) => v.kind === "person").length,
    personas: votes.filter((v) => v.kind === "persona").length,
  };
}

const total = (t) => CHOICES.reduce((sum, c) => sum + (t?.[c] ?? 0), 0);
const round1 = (x) => Math.round(x * 10) / 10;
/** A choice's share of a phase's votes, in percent to one decimal (0 when nobody voted). */
export const share = (t, c) => (total(t) ? round1((100 * (t[c] ?? 0)) / total(t)) : 0);
const signed = (x) => `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(x)}`;
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `for 3 (60%) · against 1 (20%) · undecided 1 (20%); 5 votes (2 people, 3 personas)`. */
export function audienceLine(t) {
  if (!t || !total(t)) return "no votes";
  const parts = CHOICES.map((c) => `${c} ${t[c]} (${share(t, c)}%)`).join(" · ");
  const who = [t.people ? plural(t.people, "person", "people") : "", t.personas ? plural(t.personas, "persona") : ""].filter(Boolean);
  return `${parts}; ${plural(total(t), "vote")}${who.length ? ` (${who.join(", ")})` : ""}`;
}

/** The swing between two tallies: each choice's move in points, and the side that moved more (null: a tie). */
export function swingOf(before, after) {
  const moved = Object.fromEntries(CHOICES.map((c) => [c, round1(share(after, c) - share(before, c))]));
  let winner = null;
  if (total(before) && total(after) && moved.for !== moved.against) winner = moved.for > moved.against ? "for" : "against";
  return { swing: moved, winner };
}

/**
 * The audience of a debate's state (GET /api/debates/<id>) in one shape: {open, closes_at, counts: {before,
 * after}, swing}. The server's `audience` when it sends one, else counted from the votes its state folded.
 */
export function audienceOf(state) {
  if (!state?.config?.audience) return null;
  const given = state.audience;
  const counted = (phase) => {
    const votes = state.audience_votes?.[phase]?.votes;
    return votes ? tallyOf(votes) : null;
  };
  const counts = {
    before: normal(given?.counts?.before) ?? counted("before"),
    after: normal(given?.counts?.after) ?? counted("after"),
  };
  // A swing needs both votes cast: an "after" nobody voted in is not every share falling to 0.
  const voted = (t) => Boolean(t) && total(t) > 0;
  const swing = voted(counts.before) && voted(counts.after) ? { ...swingOf(counts.before, counts.after), ...(given?.swing ?? {}) } : null;
  return {
    open: given?.open ?? state.audience_open?.phase ?? null,
    closes_at: given?.closes_at ?? state.audience_open?.closes_at ?? null,
    counts,
    swing,
  };
}

/** A tally as the server may send it ({for, against, undecided, people, personas} or {counts: {...}, ...}). */
function normal(t) {
  if (!t) return null;
  const counts = t.counts ?? t;
  return {
    for: counts.for ?? 0,
    against: counts.against ?? 0,
    undecided: counts.undecided ?? 0,
    people: t.people ?? 0,
    personas: t.personas ?? 0,
  };
}

/** The result's one line about the swing, as the exports word it. */
export function swingHeadline(audience) {
  const { before, after } = audience.counts;
  if (!before) return "The audience has not voted yet.";
  if (!after) return "The audience voted before the debate; the vote after has not been counted.";
  if (!total(before) || !total(after)) return `No swing: the audience cast no vote ${total(before) ? "after" : "before"} the debate.`;
  const { swing, winner } = audience.swing;
  if (!winner) return `A tie on the swing: for and against both moved ${signed(swing.for)} points.`;
  const other = winner === "for" ? "against" : "for";
  return `The audience swung to the ${winner} side: ${signed(swing[winner])} points to the ${other} side's ${signed(swing[other])}.`;
}

/** The bars a swing chart draws: each choice's share before and after, and its move. */
export function swingBars(audience) {
  const { before, after } = audience.counts;
  return CHOICES.map((c) => ({
    choice: c,
    before: before ? share(before, c) : null,
    after: after && audience.swing ? share(after, c) : null,
    swing: audience.swing ? audience.swing.swing[c] : null,
  }));
}

/** The result's audience section: the headline, the counts before and after, the swing chart. */
export function audienceResult(state) {
  const audience = audienceOf(state);
  if (!audience || !audience.counts.before) return null;
  const { before, after } = audience.counts;
  return h(
    "section",
    { class: "audience-result", dataset: { testid: "audience-result" } },
    h("h3", {}, "The audience"),
    h("p", { class: "swing-headline", dataset: { testid: "swing-headline" } }, swingHeadline(audience)),
    audience.swing ? swingChart({ bars: swingBars(audience), winner: audience.swing.winner ?? null }) : null,
    h(
      "dl",
      { class: "facts audience-counts" },
      h("dt", {}, "Before"),
      h("dd", { dataset: { testid: "audience-before" } }, audienceLine(before)),
      after ? [h("dt", {}, "After"), h("dd", { dataset: { testid: "audience-after" } }, audienceLine(after))] : null,
    ),
  );
}

/**
 * The audience's votes in the live view, for whoever watches: each phase counted, and while a vote is open its
 * counts so far (GET .../audience every 2 s) with the time left. A debate without an audience shows nothing.
 */
export class AudienceCard {
  /** @param {{poll?: boolean}} options poll: whether this page may ask for the counts so far (the creator's and
   * the audience link's may; a participant's or judge's link sees the counted votes only) */
  constructor(debateId, { poll = true } = {}) {
    this.id = debateId;
    this.stopped = !poll;
    this.node = h("section", { class: "card audience", "aria-label": "The audience", dataset: { testid: "audience" }, hidden: true });
    this.counted = {}; // phase -> tally
    this.open = null; // {phase, closes_at}
    this.live = null; // the counts so far of the open vote
    this.listeners = new Set();
  }

  /** Called with the card's data whenever it changes (the vote card reads the same). */
  onChange(listener) {
    this.listeners.add(listener);
  }

  apply(event) {
    switch (event.type) {
      case "debate_started":
      case "config_edited":
        this.enabled = Boolean(event.config.audience);
        this.people = Boolean(event.config.audience?.people);
        break;
      case "audience_opened":
        this.open = { phase: event.phase, closes_at: event.closes_at ?? null };
        this.live = null;
        break;
      case "audience_counted":
        this.counted[event.phase] = tallyOf(event.votes ?? []);
        if (this.open?.phase === event.phase) this.open = null;
        this.live = null;
        break;
      default:
        return;
    }
    this.changed();
  }

  changed() {
    this.draw();
    this.poll();
    for (const listener of this.listeners) listener(this);
  }

  /**
   * The server's word on the vote people may cast now (GET .../audience: the vote before is open from the
   * debate's creation, before any event says so) and its counts so far, asked every 2 s while one is open. The
   * first question waits for a replay to settle; a phase the events have counted is never taken as open.
   */
  poll() {
    if (this.polling || this.closed || !this.enabled || !this.people || this.stopped) return;
    if (this.counted.before && this.counted.after) return;
    this.polling = true;
    const again = async () => {
      if (this.closed) return;
      try {
        const now = await api(`/api/debates/${encodeURIComponent(this.id)}/audience`);
        if (this.closed) return;
        const phase = now.open && !this.counted[now.open] ? now.open : null;
        if (phase) {
          const closes = now.closes_at ?? (this.open?.phase === phase ? this.open.closes_at : null);
          this.open = { phase, closes_at: closes };
          this.live = normal(now.counts?.[phase]);
        } else if (this.open && !now.open) {
          this.open = null; // closed (being counted): the audience_counted event follows
          this.live = null;
        }
        this.draw();
        for (const listener of this.listeners) listener(this);
      } catch (err) {
        if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
          this.polling = false;
          this.stopped = true; // not for this viewer (a participant's or judge's link): the events still count
          return;
        }
      }
      if (this.open && !this.closed) this.timer = setTimeout(again, POLL_MS);
      else this.polling = false;
    };
    this.timer = setTimeout(again, 300);
  }

  draw() {
    if (!this.enabled) return;
    this.node.hidden = false;
    const rows = [];
    for (const phase of PHASES) {
      const t = this.counted[phase];
      if (t) rows.push(h("dt", {}, phase === "before" ? "Before" : "After"), h("dd", { dataset: { testid: `audience-${phase}` } }, audienceLine(t)));
    }
    if (this.open) {
      // The counts so far, where this page may ask for them (the creator's, the audience's link); else only that
      // the vote is open.
      const so = this.stopped ? "open" : `so far: ${this.live ? audienceLine(this.live) : "no votes yet"}`;
      rows.push(
        h("dt", {}, `Voting ${this.open.phase}`),
        h("dd", { dataset: { testid: "audience-live" } }, so, " ", countdown(this.open.closes_at)),
      );
    }
    if (this.counted.before && this.counted.after) {
      const { swing, winner } = swingOf(this.counted.before, this.counted.after);
      rows.push(
        h("dt", {}, "Swing"),
        h("dd", { dataset: { testid: "audience-swing" } }, CHOICES.map((c) => `${c} ${signed(swing[c])}`).join(" · "), winner ? ` · the ${winner} side wins` : " · a tie"),
      );
    }
    clear(this.node).append(
      h("h2", { class: "small" }, "The audience"),
      rows.length ? h("dl", { class: "audience-figures" }, rows) : h("p", { class: "muted small" }, "It votes before the first round and after the last."),
    );
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
  }
}

/**
 * This browser's voter id for the debate's audience: issued by the server (POST .../audience/voters) the first time
 * it votes there, then kept (one vote per id per phase). A made-up id is refused, so the server's is the only kind.
 */
export async function voterId(debateId, { fresh = false } = {}) {
  const key = VOTER_KEY(debateId);
  let id = fresh ? null : localStorage.getItem(key);
  if (!id) {
    ({ voter: id } = await api(`/api/debates/${encodeURIComponent(debateId)}/audience/voters`, { method: "POST" }));
    localStorage.setItem(key, id);
  }
  return id;
}

function rememberedVote(debateId, phase) {
  try {
    return JSON.parse(localStorage.getItem(VOTED_KEY(debateId, phase)) ?? "null");
  } catch {
    return null;
  }
}

/**
 * An audience link's ballot: while a vote is open, For / Against / Undecided with how sure the voter is; one vote
 * per browser per phase, remembered here so a reload shows the vote given rather than the buttons again.
 */
export class VoteCard {
  constructor(debateId, audience) {
    this.id = debateId;
    this.audience = audience;
    const sliderId = uid("confidence");
    this.slider = h("input", { type: "range", id: sliderId, min: 0, max: 100, step: 5, value: 50, dataset: { testid: "vote-confidence" } });
    this.sure = h("output", { for: sliderId, class: "sure" }, "50%");
    this.slider.addEventListener("input", () => (this.sure.textContent = `${this.slider.value}%`));
    this.buttons = CHOICES.map((choice) =>
      h(
        "button",
        { type: "button", class: `vote-choice ${choice}`, dataset: { testid: `vote-${choice}` }, onclick: () => this.vote(choice) },
        { for: "For", against: "Against", undecided: "Undecided" }[choice],
      ),
    );
    this.error = h("p", { class: "error one-line", role: "alert", dataset: { testid: "vote-error" } });
    this.status = h("p", { class: "vote-status", role: "status", dataset: { testid: "vote-status" } });
    this.ballot = h(
      "div",
      { class: "ballot" },
      h("div", { class: "field" }, h("label", { for: sliderId }, "How sure are you? ", this.sure), this.slider),
      h("div", { class: "vote-choices", role: "group", "aria-label": "Your vote" }, this.buttons),
    );
    this.title = h("h2", {}, "Your vote");
    this.motion = h("p", { class: "motion" });
    this.title.id = uid("vote-title");
    this.node = h("section", { class: "card vote-card", "aria-labelledby": this.title.id, dataset: { testid: "vote-card" } }, this.title, this.motion, this.ballot, this.status, this.error);
    audience.onChange(() => this.draw());
    this.draw();
  }

  setMotion(topic) {
    this.motion.textContent = `The motion: ${topic}`;
  }

  draw() {
    const open = this.audience.open;
    const phase = open?.phase ?? null;
    const given = phase ? rememberedVote(this.id, phase) : null;
    const when = { before: "before the debate", after: "after the debate" };
    this.ballot.hidden = !phase || Boolean(given);
    const lines = [];
    if (phase && given) {
      this.title.textContent = `Your vote ${when[phase]}`;
      lines.push(
        given.choice
          ? h("p", {}, h("strong", {}, `You voted ${given.choice}`), ` (${given.confidence}% sure).`)
          : h("p", {}, h("strong", {}, "This browser has voted"), " in this vote."),
      );
    } else if (phase) {
      this.title.textContent = `Vote ${when[phase]}`;
    } else if (this.audience.counted.after) {
      this.title.textContent = "The votes are counted";
      lines.push(h("p", {}, "Both votes are in: the result shows the swing."));
    } else if (this.audience.counted.before) {
      this.title.textContent = "Your vote";
      const mine = rememberedVote(this.id, "before");
      lines.push(h("p", {}, mine ? `You voted ${mine.choice} before the debate. ` : "", "The vote after the debate opens when its last round ends."));
    } else {
      this.title.textContent = "Your vote";
      lines.push(h("p", {}, "The vote before the debate opens when it starts."));
    }
    if (phase) {
      const left = countdown(open.closes_at);
      const so = this.audience.live;
      lines.push(
        h(
          "p",
          { class: "small", dataset: { testid: "vote-live" } },
          "The vote is open", left ? [": ", left] : "", ". ",
          so ? `So far: ${audienceLine(so)}.` : "",
        ),
      );
    }
    append(clear(this.status), lines);
  }

  async vote(choice) {
    const phase = this.audience.open?.phase;
    if (!phase) return;
    for (const b of this.buttons) b.disabled = true;
    this.error.textContent = "";
    const confidence = Number(this.slider.value);
    try {
      const cast = async (voter) =>
        api(`/api/debates/${encodeURIComponent(this.id)}/audience/votes`, { method: "POST", body: { voter, choice, confidence } });
      try {
        await cast(await voterId(this.id));
      } catch (err) {
        // An id the server no longer knows (the audience link was renewed): a new one, and the vote once more.
        if (!(err instanceof ApiError && err.status === 403 && /voter id/.test(err.message))) throw err;
        await cast(await voterId(this.id, { fresh: true }));
      }
      localStorage.setItem(VOTED_KEY(this.id, phase), JSON.stringify({ choice, confidence }));
      this.audience.poll();
      this.draw();
    } catch (err) {
      // 409: voted already from this browser (another tab), or the vote closed meanwhile; said in one line.
      this.error.textContent = oneLine(err.message);
      if (err instanceof ApiError && err.status === 409 && /already/i.test(err.message)) {
        localStorage.setItem(VOTED_KEY(this.id, phase), JSON.stringify({ choice: null, confidence: null }));
        this.draw();
      }
    } finally {
      for (const b of this.buttons) b.disabled = false;
    }
  }
}

const oneLine = (text) => String(text ?? "").split(/\s+/).filter(Boolean).join(" ");
