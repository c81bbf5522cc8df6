// The result of a debate: a summary card above the transcript (the headline, the format's result, the scores
// with each criterion, key points, why it stopped, the cost, run again / edit / copy link / downloads), and
// below the transcript the scores round by round and the cost ledger. Drawn from the stored state and ledger.

import { api } from "./api.js";
import { showError } from "./banner.js";
import { barChart, lineChart } from "./charts.js";
import { append, count, h, money, saveFile, sideways, when } from "./dom.js";
import { markdown } from "./markdown.js";
import { editConfig } from "./form.js";
import { outcomeCard, resultHeadline } from "./outcome.js";
import { audienceResult } from "./audience.js";
import { rememberLinks } from "./seats.js";

const EXPORTS = [
  ["Markdown", "markdown", "md", "text/markdown"],
  ["HTML", "html", "html", "text/html"],
  ["JSON", "json", "json", "application/json"],
  ["Text", "text", "txt", "text/plain"],
];

/**
 * Draws a finished (or stopped) debate's result in two places: `summary`, the card above the transcript
 * (the headline, the format's result, the scores, key points, why it stopped, the cost and what can be done
 * next), and `details`, below the transcript (the scores round by round and the cost ledger).
 * @param {() => void} [onJudge] called once a new judging was accepted (POST .../judge): the page follows that
 *   run over the stored log, as it follows a resume.
 */
export async function renderResult({ summary, details, debateId, transcript, onJudge, seated = false }) {
  const [state, book] = await Promise.all([
    api(`/api/debates/${encodeURIComponent(debateId)}`),
    // A join page may not be shown the ledger (the creator's costs): the result is drawn without it.
    api(`/api/debates/${encodeURIComponent(debateId)}/ledger`).catch((err) => {
      if (seated) return null;
      throw err;
    }),
  ]);
  const name = (id) => transcript.person(id).name;
  const colour = (id) => transcript.person(id).colour;
  const verdict = state.verdict;
  const card = h("div", { class: "card summary", dataset: { testid: "summary" } });
  // The headline leads (the format's own result line where it records one), then the format's result in full.
  append(card, [problemsNote(state), verdictCard(state, name), outcomeCard(state), audienceResult(state)]);
  if (verdict) {
    const criteria = scoredCriteria(verdict);
    append(card, [
      h(
        "div",
        { class: "summary-grid" },
        h(
          "div",
          { class: "summary-scores" },
          h("h3", {}, "Scores"),
          barChart({
            title: "Final scores (0 to 10)",
            max: 10,
            width: window.innerWidth < 560 ? 320 : 560, // drawn to be seen at its size, not scaled down
            items: verdict.scores.map((s) => ({
              label: name(s.participant_id),
              value: s.score,
              colour: colour(s.participant_id),
              detail: criteria.filter((c) => c.name in s.criteria).map((c) => `${c.title} ${s.criteria[c.name]}`).join(" · "),
            })),
          }),
          facts(state, book),
        ),
        keyPoints(verdict),
      ),
      shareBar(state, debateId, seated),
      reasons(verdict, name, criteria),
    ]);
    append(card, criteriaNotes(criteria));
  } else {
    append(card, [facts(state, book), shareBar(state, debateId, seated)]);
  }
  if ((state.verdicts ?? []).length > 1) card.append(everyVerdict(state, name));
  if (onJudge && judgeable(state)) card.append(judgeAgain(state, debateId, onJudge));
  summary.replaceChildren(h("h2", { class: "visually-hidden" }, "Result"), card);

  details.replaceChildren();
  const rounds = roundSeries(state, name, colour);
  if (rounds.length) {
    details.append(
      h("h2", {}, "Scores by round"),
      lineChart({ title: "The judge's score of each participant, round by round", series: rounds, xLabel: "Round", yLabel: "Score", yMax: 10 }),
    );
  }
  if (book) details.append(h("h2", {}, "Cost ledger"), ledgerTable(book, name));
  return state;
}

/** A completed debate that did not run as asked says so first, in the engine's words (DebateCompleted.problems). */
function problemsNote(state) {
  const problems = state.problems ?? [];
  if (!problems.length) return null;
  return h(
    "div",
    { class: "notice degraded", role: "note", dataset: { testid: "problems" } },
    h("strong", {}, "Degraded: it did not run as asked"),
    h("ul", {}, problems.map((p) => h("li", {}, p.message))),
  );
}

/** Why it stopped and what it cost, one line each. */
function facts(state, book) {
  const t = book?.total;
  const held = (state.rounds ?? []).filter((r) => r.turns.length).length;
  const cost = t ? `${money(t.cost_usd)} · ${count(t.input_tokens + t.output_tokens)} tokens · ${count(t.requests)} calls` : null;
  return h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Why it stopped"),
    h("dd", { dataset: { testid: "stop-reason" } }, stopLine(state)),
    h("dt", {}, "Rounds"),
    h("dd", {}, String(held)),
    cost ? [h("dt", {}, "Cost"), h("dd", { dataset: { testid: "summary-cost" } }, cost)] : null,
  );
}

/** What can be done with the result: run it again (as it was, or edited first), share its link, download it. */
function shareBar(state, debateId, seated = false) {
  if (seated) return null; // a join link reads the debate; running it again, its link and its exports are the creator's
  const said = h("span", { class: "muted small", role: "status", dataset: { testid: "share-status" } });
  const again = h(
    "button",
    {
      type: "button",
      class: "primary",
      dataset: { testid: "run-again" },
      onclick: async () => {
        again.disabled = true;
        try {
          const made = await api("/api/debates", { method: "POST", body: state.config });
          rememberLinks(made.id, made.links); // a debate with people in it: its new links, shown once there
          location.hash = `#/debates/${encodeURIComponent(made.id)}`;
        } catch (err) {
          showError(err);
          again.disabled = false;
        }
      },
    },
    "Run again",
  );
  const edit = h(
    "button",
    {
      type: "button",
      dataset: { testid: "edit-and-run" },
      onclick: () => {
        editConfig(state.config);
        location.hash = "#/";
      },
    },
    "Edit and run",
  );
  const copy = h(
    "button",
    { type: "button", dataset: { testid: "copy-link" }, onclick: () => copyLink(debateId, said, copy) },
    "Copy link",
  );
  return h(
    "div",
    { class: "share", dataset: { testid: "share" } },
    h("div", { class: "actions" }, state.config ? [again, edit] : null, copy, said),
    h("div", { class: "actions exports" }, h("span", { class: "muted small" }, "Download:"), exportButtons(debateId)),
  );
}

/** The debate's address, put on the clipboard; where the browser will not, shown selected to copy by hand. */
async function copyLink(debateId, said, button) {
  const url = `${location.origin}${location.pathname}#/debates/${encodeURIComponent(debateId)}`;
  button.parentElement.querySelector("input.link")?.remove();
  try {
    if (!navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(url);
    said.textContent = "Link copied.";
  } catch {
    // Insecure pages (plain http on another host) have no Clipboard API: the address, selected, to copy by hand.
    const field = h("input", { class: "link", type: "text", readonly: true, value: url, "aria-label": "The debate's link" });
    said.before(field);
    field.select();
    said.textContent = "Copy the selected link (Ctrl+C or ⌘C).";
  }
}

function verdictCard(state, name) {
  const v = state.verdict;
  const card = h("div", { class: "verdict", dataset: { testid: "verdict" } });
  if (!v) {
    card.append(h("p", { class: "headline" }, resultHeadline(state, name)));
    return card;
  }
  card.append(h("p", { class: "headline winner" }, resultHeadline(state, name)), markdown(v.summary));
  // A person's verdict says how sure they are (a model's gives no figure).
  if (v.confidence != null) card.append(h("p", { class: "muted small", dataset: { testid: "verdict-confidence" } }, `The judge's confidence: ${v.confidence}/100`));
  if (v.quality != null) card.append(h("p", { class: "muted small" }, `Quality of the debate: ${v.quality}/100`));
  // Who never spoke (not scored) or left early, worded by the engine (Absence.line).
  // A line the problems above already give is not given twice.
  const said = new Set((state.problems ?? []).map((p) => p.message));
  for (const a of (v.absent ?? []).filter((x) => !said.has(x.line))) card.append(h("p", { class: "small notice", dataset: { testid: "absent" } }, a.line));
  if (state.panel) {
    const p = state.panel;
    card.append(
      h("p", { class: "muted small" }, `Panel of ${p.seated.length}; verdicts counted: ${p.valid.length}.`, p.agreement ? ` ${p.agreement}` : ""),
    );
  }
  return card;
}

/**
 * The criteria some participant was scored on, one column each, as the verdict's rubric describes them
 * (its order first); a verdict recorded before rubrics were kept with it names its criteria only.
 */
function scoredCriteria(verdict) {
  const scored = new Set(verdict.scores.flatMap((s) => Object.keys(s.criteria ?? {})));
  const listed = (verdict.rubric ?? []).filter((c) => scored.has(c.name));
  const named = new Set(listed.map((c) => c.name));
  const rest = [...scored].filter((n) => !named.has(n)).map((n) => ({ name: n, title: n, description: "", weight: null }));
  return [...listed, ...rest];
}

function reasons(verdict, name, criteria) {
  const score = (s, c) => (c.name in s.criteria ? String(s.criteria[c.name]) : "");
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data scores", dataset: { testid: "scores" } },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "Participant"),
          h("th", { class: "num" }, "Score"),
          criteria.map((c) => h("th", { class: "num", title: c.description || null, dataset: { criterion: c.name } }, c.title)),
          h("th", {}, "Why"),
        ),
      ),
      h(
        "tbody",
        {},
        verdict.scores.map((s) =>
          h(
            "tr",
            {},
            h("td", { class: "who" }, name(s.participant_id)),
            h("td", { class: "num", dataset: { label: "Score" } }, String(s.score)),
            criteria.map((c) => h("td", { class: "num", dataset: { label: c.title } }, score(s, c))),
            h(
              "td",
              { class: "why", dataset: { label: "Why" } },
              s.reasoning,
              // Its main arguments as the judge saw them, as the terminal and every export list them.
              s.key_arguments?.length ? h("ul", { class: "key-arguments", dataset: { testid: "key-arguments" } }, s.key_arguments.map((a) => h("li", {}, a))) : null,
            ),
          ),
        ),
      ),
    ),
  );
}

/** What each criterion scored, and its share of the overall score: collapsed, one line each. */
function criteriaNotes(criteria) {
  const described = criteria.filter((c) => c.description);
  if (!described.length) return null;
  const total = criteria.every((c) => c.weight != null) ? criteria.reduce((sum, c) => sum + c.weight, 0) : 0;
  const share = (c) => (total > 0 ? ` (${Math.round((1000 * c.weight) / total) / 10}%)` : "");
  return h(
    "details",
    { class: "small", dataset: { testid: "criteria" } },
    h("summary", {}, "What the criteria mean"),
    h("ul", {}, described.map((c) => h("li", {}, h("strong", {}, c.title), `${share(c)}: ${c.description}`))),
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

/** The verdict's key points: the judge's insights, then where the participants agree and disagree. */
function keyPoints(v) {
  const list = (title, items, testid) =>
    items?.length ? [h("h4", {}, title), h("ul", { dataset: { testid } }, items.map((i) => h("li", {}, i)))] : [];
  const points = [
    list("Insights", v.insights, "insights"),
    list("Where they agree", v.areas_of_agreement, "agreement"),
    list("Where they disagree", v.areas_of_disagreement, "disagreement"),
  ].flat();
  if (!points.length) return null;
  return h("div", { class: "key-points", dataset: { testid: "key-points" } }, h("h3", {}, "Key points"), points);
}

/** Every verdict on record, with who gave it (the exports' "Every verdict"); the card above is the latest. */
function everyVerdict(state, name) {
  const given = state.verdicts;
  const items = given.map((g, i) => {
    const who = g.panel ? `a panel (${g.model.replace(/^panel: /, "")})` : `${g.name} (${g.model})`;
    const by = g.judging === 0 ? "the debate's own judge at its end" : g.own ? "the debate's own judge, asked again" : "chosen later";
    let found = `No verdict: ${g.error ?? "no valid verdict"}`;
    if (g.verdict) {
      const v = g.verdict;
      const scores = v.scores.map((s) => `${name(s.participant_id)} ${s.score}`).join(" · ");
      found = v.names_winner && v.winner_ids.length === 1 ? `Winner: ${name(v.winner_ids[0])} · ${scores}` : scores;
      if (v.confidence != null) found += ` · ${v.confidence}% sure`;
    }
    return h(
      "li",
      { dataset: { testid: "given-verdict" } },
      h("strong", {}, `Verdict ${i + 1}${i === given.length - 1 ? " (latest)" : ""}`),
      ` by ${who}, ${by}`,
      h("span", { class: "muted small" }, ` · ${when(g.at)}`),
      h("br"),
      found,
    );
  });
  return h("div", { class: "every-verdict" }, h("h3", {}, "Every verdict"), h("ol", { class: "verdicts" }, items));
}

/** A debate that has turns, has ended (or stopped) and whose format takes a judge's verdict can be judged again. */
function judgeable(state) {
  const spoke = (state.rounds ?? []).some((r) => r.turns.length);
  return spoke && state.gives_verdict !== false && ["completed", "failed", "interrupted", "paused"].includes(state.status);
}

/**
 * "Judge again": a small choice (the debate's own judge, another model, a panel), sent as POST .../judge. The
 * server checks the judges before anything is stored; a refused one is shown beside the field it names.
 */
function judgeAgain(state, debateId, onJudge) {
  const config = state.config ?? {};
  const own = config.judges?.length
    ? `the debate's panel (${config.judges.map((j) => j.model).join(", ")})`
    : config.judge
      ? `${config.judge.name} (${config.judge.model})`
      : null;
  const models = [...new Set([config.judge?.model, ...(config.judges ?? []).map((j) => j.model), ...(config.participants ?? []).map((p) => p.model)].filter(Boolean))];
  const listId = `judge-models-${debateId}`;
  const modelInput = (label, testid) => h("input", { type: "text", list: listId, "aria-label": label, placeholder: "provider:model", dataset: { testid }, autocomplete: "off" });
  const another = modelInput("Another judge's model", "judge-model");
  const panel = [1, 2, 3].map((n) => modelInput(`Panel judge ${n}'s model`, `panel-model-${n}`));
  const choice = (value, text, checked = false) =>
    h("label", { class: "check field" }, h("input", { type: "radio", name: `judge-who-${debateId}`, value, checked, dataset: { testid: `judge-${value}` } }), text);
  const error = h("p", { class: "error small", role: "alert", dataset: { testid: "judge-error" } });
  const submit = h("button", { type: "submit", class: "primary", dataset: { testid: "judge-submit" } }, "Ask for a verdict");
  const form = h(
    "form",
    { class: "judge-again-form", hidden: true, dataset: { testid: "judge-again-form" } },
    h(
      "fieldset",
      {},
      h("legend", {}, "Who judges"),
      own ? choice("own", `The same judge: ${own}`, true) : null,
      choice("another", "Another model", !own),
      h("div", { class: "field" }, another),
      choice("panel", "A panel (two or three models)"),
      h("div", { class: "grid" }, panel.map((input) => h("div", { class: "field" }, input))),
      h("datalist", { id: listId }, models.map((m) => h("option", { value: m }))),
    ),
    h("div", { class: "field" }, error),
    h(
      "p",
      { class: "actions" },
      submit,
      h("button", { type: "button", onclick: () => toggle(false) }, "Cancel"),
    ),
  );
  const open = h(
    "button",
    { type: "button", "aria-expanded": "false", dataset: { testid: "judge-again" }, onclick: () => toggle(form.hidden) },
    state.verdict ? "Judge again…" : "Ask for a verdict…",
  );
  const toggle = (show) => {
    form.hidden = !show;
    open.setAttribute("aria-expanded", String(show));
    if (show) form.querySelector("input[type=radio]:checked")?.focus();
  };
  // Typing a model picks its choice, so the radio never disagrees with what was typed.
  another.addEventListener("input", () => (form.querySelector("input[value=another]").checked = true));
  for (const input of panel) input.addEventListener("input", () => (form.querySelector("input[value=panel]").checked = true));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.textContent = "";
    const who = form.querySelector("input[type=radio]:checked")?.value;
    let judges = [];
    if (who === "another") judges = [another.value.trim()].filter(Boolean);
    if (who === "panel") judges = panel.map((i) => i.value.trim()).filter(Boolean);
    if (who === "another" && judges.length !== 1) return void (error.textContent = "Name the model that judges (provider:model).");
    if (who === "panel" && judges.length < 2) return void (error.textContent = "A panel needs two or three models.");
    submit.disabled = true;
    try {
      await api(`/api/debates/${encodeURIComponent(debateId)}/judge`, {
        method: "POST",
        body: { judges: judges.map((model) => ({ model })) },
      });
      onJudge();
    } catch (err) {
      // "judges.1: ..." names the panel's second model: say which one, in the form's words.
      const [field, text] = Object.entries(err.fields ?? {})[0] ?? [];
      const index = /^judges\.(\d+)/.exec(field ?? "");
      const which = index ? (who === "panel" ? `Panel judge ${Number(index[1]) + 1}: ` : "") : "";
      error.textContent = text ? `${which}${text}` : err.message;
      submit.disabled = false;
    }
  });
  return h(
    "div",
    { class: "card judge-again", dataset: { testid: "judge-again-card" } },
    h("p", { class: "actions" }, open, h("span", { class: "muted small" }, "A new verdict on what was said; earlier ones stay on record.")),
    form,
  );
}

function stopLine(state) {
  if (state.stop_reason) return state.stop_reason.detail;
  if (state.status === "failed") return `It failed: ${state.error ?? "unknown error"}`;
  if (state.status === "interrupted") return "It was interrupted before its rounds ended.";
  return "It has not stopped.";
}

function ledgerTable(book, name) {
  // Calls that got no reply have no usage; each row counts them (LedgerRow.failed), as every export does.
  const failedOf = (who) => book.rows.filter((r) => r.who === who).reduce((n, r) => n + (r.failed ?? 0), 0);
  const calls = (n, failed) => count(n) + (failed ? ` + ${count(failed)} failed` : "");
  const rows = Object.entries(book.by_who).map(([who, u]) => {
    const role = book.rows.find((r) => r.who === who)?.role ?? "";
    return h(
      "tr",
      {},
      h("td", {}, role === "participant" ? name(who) : who),
      h("td", {}, role),
      h("td", { class: "num" }, calls(u.requests, failedOf(who))),
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
    {},
    sideways(h(
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
          h("td", { class: "num" }, calls(t.requests, book.rows.reduce((n, r) => n + (r.failed ?? 0), 0))),
          h("td", { class: "num" }, count(t.input_tokens)),
          h("td", { class: "num" }, count(t.output_tokens)),
          h("td", { class: "num" }, money(t.cost_usd)),
        ),
      ),
    ), "Cost ledger"),
    h("p", { class: "small muted" }, "By model:"),
    h("ul", { class: "small" }, models),
  );
}

function exportButtons(debateId) {
  return EXPORTS.map(([label, format, ext, type]) =>
    h("button", { type: "button", onclick: () => download(debateId, format, ext, type) }, label),
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
