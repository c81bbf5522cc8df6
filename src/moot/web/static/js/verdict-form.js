// A person's verdict, given on the page of a judge's join link while the debate awaits it (`verdict_awaited` for
// that seat): per participant a 0-10 score on each criterion of the judge's rubric and a reason, a summary, the
// winner (optional: the top score decides) and how sure they are. POST .../verdict takes it as a PersonVerdict
// (moot.domain.person_verdict); what the server refuses is shown at the field it names. The criteria are those the
// server lists with what the debate awaits (`awaiting_people`), else the judge's rubric in the debate's config.

import { api, ApiError } from "./api.js";
import { h, uid } from "./dom.js";
import { countdown } from "./people.js";

const oneLine = (text) => String(text ?? "").split(/\s+/).filter(Boolean).join(" ");

/**
 * The criteria a judge's rubric in the config scores (those with a positive weight, in its order), for a server
 * that lists none with what it awaits: a criterion's title and description where the rubric gives them, else
 * its name.
 */
export function criteriaOf(judge) {
  const rubric = judge?.rubric ?? {};
  const weight = (entry) => (typeof entry === "number" ? entry : Number(entry?.weight ?? 0));
  return Object.entries(rubric)
    .filter(([, entry]) => weight(entry) > 0)
    .map(([name, entry]) => {
      const spoken = name.replaceAll("_", " ");
      return {
        name,
        weight: weight(entry),
        title: (typeof entry === "object" && entry?.title) || spoken.charAt(0).toUpperCase() + spoken.slice(1),
        description: (typeof entry === "object" && entry?.description) || "",
      };
    });
}

/** `Logical consistency 20%, Evidence quality 20%, …`: each criterion's share of the overall score. */
function shares(criteria) {
  const total = criteria.reduce((sum, c) => sum + c.weight, 0);
  return criteria.map((c) => `${c.title} ${total ? Math.round((1000 * c.weight) / total) / 10 : 0}%`).join(", ");
}

export class VerdictForm {
  /** @param {{debateId: string}} options */
  constructor({ debateId }) {
    this.id = debateId;
    this.node = h("section", { class: "card verdict-form", dataset: { testid: "verdict-form" }, hidden: true });
    this.asked = null;
  }

  /** Show the form for the verdict asked of this seat (null: hide it); `config` is the debate's. A new ask (a
   * judging asked again) draws a fresh form. Resolves to whether the form was drawn afresh. */
  async show(asked, config) {
    if (!asked) {
      this.asked = null;
      this.node.hidden = true;
      return false;
    }
    this.node.hidden = false;
    if (asked === this.asked) return false;
    this.asked = asked;
    this.building = this.build(asked, config);
    await this.building;
    return this.asked === asked;
  }

  async build(asked, config) {
    this.sent = false;
    this.sending = false;
    // What this verdict scores, as the engine asks it (the debate's `awaiting_people`: the criteria with their
    // titles, descriptions and weights, and whether it may name a winner); the judge's rubric as the config
    // writes it when the server says nothing more.
    let awaited = null;
    try {
      const state = await api(`/api/debates/${encodeURIComponent(this.id)}`);
      awaited = (state.awaiting_people ?? []).find((a) => a.kind === "verdict" && a.seat === asked.seat) ?? null;
    } catch {
      // drawn from the config below
    }
    if (awaited?.criteria?.length) {
      this.criteria = awaited.criteria.map((c) => ({ ...c, weight: c.weight ?? 1 }));
    } else {
      const judge = asked.judge === null || asked.judge === undefined ? config.judge : config.judges?.[asked.judge];
      this.criteria = criteriaOf(judge);
    }
    if (this.asked !== asked) return; // asked again meanwhile: that ask draws the form
    this.namesWinner = awaited?.names_winner !== false;
    this.participants = config.participants ?? [];
    this.fields = new Map(); // error path -> {wrap, control, error}
    this.scores = {}; // participant id -> criterion -> input
    this.reasons = {};
    this.overall = {};
    const title = h("h2", { id: uid("verdict-title") }, "Your verdict");
    this.node.setAttribute("aria-labelledby", title.id);
    const cards = this.participants.map((p) => this.scorecard(p));
    this.summary = h("textarea", { rows: 4, maxlength: 4000, dataset: { testid: "verdict-summary" } });
    this.winner = h(
      "select",
      { dataset: { testid: "verdict-winner" } },
      h("option", { value: "" }, "None: the top score decides"),
      this.participants.map((p) => h("option", { value: p.id }, p.name)),
    );
    this.confidence = h("input", { type: "range", min: 0, max: 100, step: 5, value: 50, dataset: { testid: "verdict-confidence" } });
    const sure = h("output", { class: "sure" }, "50%");
    this.confidence.addEventListener("input", () => (sure.textContent = `${this.confidence.value}%`));
    this.submit = h("button", { type: "submit", class: "primary", dataset: { testid: "verdict-submit" } }, "Give verdict");
    this.error = h("p", { class: "error one-line", role: "alert", dataset: { testid: "verdict-error" } });
    this.said = h("p", { class: "muted small", role: "status", dataset: { testid: "verdict-status" } });
    const left = countdown(asked.deadline);
    const form = h(
      "form",
      { novalidate: true, onsubmit: (e) => { e.preventDefault(); this.send(); } },
      cards,
      this.field("summary", "Summary", this.summary, "What the debate established, in a few sentences."),
      h(
        "div",
        { class: "grid" },
        this.namesWinner ? this.field("winner", "Winner", this.winner, "Optional. A winner you name must have the top overall score.") : null,
        this.field("confidence", h("span", {}, "How sure you are: ", sure), this.confidence),
      ),
      h("div", { class: "actions" }, this.submit, left ? h("span", { class: "muted small" }, left) : null),
      this.error,
      this.said,
    );
    form.addEventListener("input", (e) => this.unmark(e.target));
    this.node.replaceChildren(
      title,
      h(
        "p",
        { class: "muted small" },
        `Score each participant from 0 (absent) to 10 (excellent) on each criterion; the overall score is their weighted mean${this.criteria.length ? "" : "."}`,
        this.criteria.length ? ` (${shares(this.criteria)}).` : "",
      ),
      form,
    );
  }

  /** One participant's scores, one 0-10 field per criterion, their weighted overall and the reason. */
  scorecard(p) {
    this.scores[p.id] = {};
    const inputs = this.criteria.map((c) => {
      const input = h("input", { type: "number", min: 0, max: 10, step: 0.5, inputmode: "decimal", required: true, dataset: { criterion: c.name } });
      this.scores[p.id][c.name] = input;
      input.addEventListener("input", () => this.total(p.id));
      return this.field(`scores.${p.id}.${c.name}`, c.title, input, c.description, "criterion");
    });
    this.overall[p.id] = h("output", { class: "overall", dataset: { testid: "overall" } }, "–");
    this.reasons[p.id] = h("textarea", { rows: 3, maxlength: 2000 });
    return h(
      "fieldset",
      { class: "scorecard", dataset: { participant: p.id } },
      h("legend", {}, p.name, p.stance ? h("span", { class: "muted" }, ` · ${p.stance}`) : null),
      this.slot(`scores.${p.id}`),
      h("div", { class: "criteria-grid" }, inputs),
      h("p", { class: "small overall-line" }, "Overall: ", this.overall[p.id], " / 10"),
      this.field(`reasons.${p.id}`, `Why (${p.name})`, this.reasons[p.id]),
    );
  }

  field(path, label, control, hint, kind = "") {
    const id = uid("v");
    control.id = id;
    const error = h("div", { class: "error", id: `${id}-error`, hidden: true });
    const hintNode = hint ? h("div", { class: "hint", id: `${id}-hint` }, hint) : null;
    control.setAttribute("aria-describedby", [hintNode?.id, error.id].filter(Boolean).join(" "));
    control.dataset.path = path;
    const wrap = h("div", { class: `field ${kind}`.trim() }, h("label", { for: id }, label), control, hintNode, error);
    this.fields.set(path, { wrap, control, error });
    return wrap;
  }

  slot(path) {
    const error = h("div", { class: "error", hidden: true });
    const wrap = h("div", { class: "field slot" }, error);
    this.fields.set(path, { wrap, control: null, error });
    return wrap;
  }

  /** The weighted mean of the scores given so far (shown to help name a winner the scores agree with). */
  total(pid) {
    let [sum, weights] = [0, 0];
    for (const c of this.criteria) {
      const v = Number.parseFloat(this.scores[pid][c.name].value);
      if (Number.isFinite(v)) {
        sum += v * c.weight;
        weights += c.weight;
      }
    }
    this.overall[pid].textContent = weights ? String(Math.round((100 * sum) / weights) / 100) : "–";
  }

  collect() {
    const problems = [];
    const scores = {};
    for (const p of this.participants) {
      scores[p.id] = {};
      for (const c of this.criteria) {
        const input = this.scores[p.id][c.name];
        const v = input.value.trim() === "" ? NaN : Number(input.value);
        if (!Number.isFinite(v)) problems.push([`scores.${p.id}.${c.name}`, "Give 0 to 10."]);
        else if (v < 0 || v > 10) problems.push([`scores.${p.id}.${c.name}`, `${v} is outside 0 to 10.`]);
        else scores[p.id][c.name] = v;
      }
    }
    const reasons = {};
    for (const p of this.participants) if (this.reasons[p.id].value.trim()) reasons[p.id] = this.reasons[p.id].value.trim();
    const body = {
      scores,
      reasons,
      winner: this.namesWinner ? this.winner.value || null : null,
      summary: this.summary.value.trim(),
      confidence: Number(this.confidence.value),
    };
    return { body, problems };
  }

  async send() {
    if (this.sending || this.sent) return;
    this.unmarkAll();
    const { body, problems } = this.collect();
    if (problems.length) return void this.mark(problems);
    this.sending = true;
    this.submit.disabled = true;
    this.submit.textContent = "Sending…";
    try {
      await api(`/api/debates/${encodeURIComponent(this.id)}/verdict`, { method: "POST", body });
      this.sent = true;
      this.said.textContent = "Your verdict is in: the result follows in a moment.";
      for (const control of this.node.querySelectorAll("input, select, textarea")) control.disabled = true;
    } catch (err) {
      const fields = err instanceof ApiError ? Object.entries(err.fields ?? {}) : [];
      if (fields.length) this.mark(fields);
      else this.error.textContent = oneLine(err.message);
    } finally {
      this.sending = false;
      this.submit.disabled = this.sent;
      this.submit.textContent = this.sent ? "Given" : "Give verdict";
    }
  }

  /** Each problem at its field (the nearest one its path names), the first focused; the rest in one line. */
  mark(found) {
    const homeless = [];
    let first = null;
    for (const [path, message] of found) {
      const text = oneLine(message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message);
      const parts = path.split(".");
      let place = null;
      for (let n = parts.length; n > 0 && !place; n -= 1) place = this.fields.get(parts.slice(0, n).join("."));
      if (!place) {
        homeless.push(path ? `${path}: ${text}` : text);
        continue;
      }
      place.wrap.classList.add("invalid");
      place.error.textContent = text;
      place.error.hidden = false;
      place.control?.setAttribute("aria-invalid", "true");
      first ??= place;
    }
    this.error.textContent = homeless.join(" ");
    if (first) {
      (first.control ?? first.wrap.closest("fieldset")?.querySelector("input"))?.focus({ preventScroll: true });
      first.wrap.scrollIntoView({ block: "center" });
    }
  }

  unmark(control) {
    const place = this.fields.get(control?.dataset?.path ?? "");
    if (!place) return;
    place.wrap.classList.remove("invalid");
    place.error.hidden = true;
    place.control?.removeAttribute("aria-invalid");
  }

  unmarkAll() {
    this.error.textContent = "";
    for (const place of this.fields.values()) {
      place.wrap.classList.remove("invalid");
      place.error.hidden = true;
      place.control?.removeAttribute("aria-invalid");
    }
  }
}
