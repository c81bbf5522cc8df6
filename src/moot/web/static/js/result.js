// The result of a debate: verdict, scores (bar chart), per-round scores (line chart), agreement and
// disagreement, why it stopped, the cost ledger and the exports. Drawn from the stored state and ledger.

import { api } from "./api.js";
import { showError } from "./banner.js";
import { barChart, lineChart } from "./charts.js";
import { count, h, money, saveFile } from "./dom.js";
import { markdown } from "./markdown.js";

const EXPORTS = [
  ["Markdown", "markdown", "md", "text/markdown"],
  ["HTML", "html", "html", "text/html"],
  ["JSON", "json", "json", "application/json"],
  ["Text", "text", "txt", "text/plain"],
];

export async function renderResult(section, debateId, transcript) {
  const [state, book] = await Promise.all([
    api(`/api/debates/${encodeURIComponent(debateId)}`),
    api(`/api/debates/${encodeURIComponent(debateId)}/ledger`),
  ]);
  const name = (id) => transcript.person(id).name;
  const colour = (id) => transcript.person(id).colour;
  section.replaceChildren(h("h2", {}, "Result"));
  // The format's own result first, as in the exports: for a format without a verdict it is the judgement.
  if (state.outcome) {
    section.append(h("h3", {}, "The format's result"), h("p", { dataset: { testid: "outcome" } }, state.outcome.summary));
  }
  section.append(verdictCard(state, name));
  const verdict = state.verdict;
  if (verdict) {
    section.append(
      h("h3", {}, "Scores"),
      barChart({
        title: "Final scores (0 to 10)",
        max: 10,
        items: verdict.scores.map((s) => ({ label: name(s.participant_id), value: s.score, colour: colour(s.participant_id) })),
      }),
      reasons(verdict, name),
    );
  }
  const rounds = roundSeries(state, name, colour);
  if (rounds.length) {
    section.append(
      h("h3", {}, "Scores by round"),
      lineChart({ title: "The judge's score of each participant, round by round", series: rounds, xLabel: "Round", yLabel: "Score", yMax: 10 }),
    );
  }
  if (verdict) section.append(lists(verdict));
  section.append(
    h("h3", {}, "Why it stopped"),
    h("p", { dataset: { testid: "stop-reason" } }, stopLine(state)),
    h("h3", {}, "Cost ledger"),
    ledgerTable(book, name),
    h("h3", {}, "Export"),
    exportsBar(debateId),
  );
  return state;
}

function verdictCard(state, name) {
  const v = state.verdict;
  const card = h("div", { class: "card verdict", dataset: { testid: "verdict" } });
  if (!v) {
    card.append(h("p", {}, verdictNote(state)));
    return card;
  }
  let headline;
  if (!v.names_winner) headline = "No winner is named: the scores weigh each contribution.";
  else if (v.winner_ids.length === 1) headline = `Winner: ${name(v.winner_ids[0])}`;
  else headline = `A tie between ${v.winner_ids.map(name).join(" and ")}`;
  card.append(h("p", { class: "winner" }, h("strong", {}, headline)), markdown(v.summary));
  if (v.quality != null) card.append(h("p", { class: "muted small" }, `Quality of the debate: ${v.quality}/100`));
  if (state.panel) {
    const p = state.panel;
    card.append(
      h("p", { class: "muted small" }, `Panel of ${p.seated.length}; verdicts counted: ${p.valid.length}.`, p.agreement ? ` ${p.agreement}` : ""),
    );
  }
  return card;
}

/** Why there is no verdict, in the exports' words. */
function verdictNote(state) {
  if (state.gives_verdict === false) return "No verdict: this format's result (above) is its judgement.";
  if (state.judged) return `No verdict: ${state.verdict_error ?? "the judge gave no valid verdict"}`;
  if (state.config && !state.config.judge) return "Not judged: no judge was configured.";
  if (["completed", "failed", "interrupted"].includes(state.status)) return "Not judged: the debate ended before judging.";
  return "Not judged yet.";
}

function reasons(verdict, name) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data", dataset: { testid: "scores" } },
      h("thead", {}, h("tr", {}, h("th", {}, "Participant"), h("th", { class: "num" }, "Score"), h("th", {}, "Why"))),
      h(
        "tbody",
        {},
        verdict.scores.map((s) =>
          h("tr", {}, h("td", {}, name(s.participant_id)), h("td", { class: "num" }, String(s.score)), h("td", {}, s.reasoning)),
        ),
      ),
    ),
  );
}

function roundSeries(state, name, colour) {
  const byId = new Map();
  for (const assessed of state.assessments ?? []) {
    for (const p of assessed.assessment?.participants ?? []) {
      if (!byId.has(p.participant_id)) byId.set(p.participant_id, []);
      byId.get(p.participant_id).push({ x: assessed.round, y: p.score });
    }
  }
  return [...byId].map(([id, points]) => ({ label: name(id), colour: colour(id), points }));
}

function lists(v) {
  const list = (title, items, testid) =>
    items?.length ? [h("h3", {}, title), h("ul", { dataset: { testid } }, items.map((i) => h("li", {}, i)))] : [];
  return h(
    "div",
    {},
    list("Where they agree", v.areas_of_agreement, "agreement"),
    list("Where they disagree", v.areas_of_disagreement, "disagreement"),
    list("Insights", v.insights, "insights"),
  );
}

function stopLine(state) {
  if (state.stop_reason) return state.stop_reason.detail;
  if (state.status === "failed") return `It failed: ${state.error ?? "unknown error"}`;
  if (state.status === "interrupted") return "It was interrupted before its rounds ended.";
  return "It has not stopped.";
}

function ledgerTable(book, name) {
  const rows = Object.entries(book.by_who).map(([who, u]) => {
    const role = book.rows.find((r) => r.who === who)?.role ?? "";
    return h(
      "tr",
      {},
      h("td", {}, role === "participant" ? name(who) : who),
      h("td", {}, role),
      h("td", { class: "num" }, count(u.requests)),
      h("td", { class: "num" }, count(u.input_tokens)),
      h("td", { class: "num" }, count(u.output_tokens)),
      h("td", { class: "num" }, money(u.cost_usd)),
    );
  });
  const t = book.total;
  const models = Object.entries(book.by_model).map(([model, u]) =>
    h("li", {}, h("code", {}, model), `: ${count(u.input_tokens + u.output_tokens)} tokens, ${money(u.cost_usd)}`),
  );
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data", dataset: { testid: "ledger" } },
      h(
        "thead",
        {},
        h("tr", {}, ["Who", "Role", "Calls", "Input tokens", "Output tokens", "Cost"].map((c, i) => h("th", { class: i > 1 ? "num" : null }, c))),
      ),
      h("tbody", {}, rows),
      h(
        "tfoot",
        {},
        h(
          "tr",
          {},
          h("th", {}, "Total"),
          h("td", {}),
          h("td", { class: "num" }, count(t.requests)),
          h("td", { class: "num" }, count(t.input_tokens)),
          h("td", { class: "num" }, count(t.output_tokens)),
          h("td", { class: "num" }, money(t.cost_usd)),
        ),
      ),
    ),
    h("p", { class: "small muted" }, "By model:"),
    h("ul", { class: "small" }, models),
  );
}

function exportsBar(debateId) {
  return h(
    "div",
    { class: "actions" },
    EXPORTS.map(([label, format, ext, type]) =>
      h("button", { type: "button", onclick: () => download(debateId, format, ext, type) }, label),
    ),
  );
}

/** Fetched with the token (a plain link could not carry it), then saved from a Blob. */
async function download(debateId, format, ext, type) {
  try {
    const text = await api(`/api/debates/${encodeURIComponent(debateId)}/export`, { params: { format }, accept: type });
    saveFile(`moot-${debateId}.${ext}`, text, type);
  } catch (err) {
    showError(err);
  }
}
