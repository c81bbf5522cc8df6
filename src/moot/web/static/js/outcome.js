// A format's own result (Oxford's vote swing, a council's ranking and chair answer, a tournament's bracket, ...),
// drawn from the words the format recorded with it (`headline`, `sections`), which the CLI and the exports print
// too: nothing here reads the result's `details`, whose keys are for programs.

import { h } from "./dom.js";
import { markdown } from "./markdown.js";

// The verdict of a format whose scores name no winner (a consensus format, or Oxford, whose vote decides): the
// CLI's and the exports' words (moot.export.outcome_view.SCORES_NAME_NO_WINNER).
const SCORES_NAME_NO_WINNER = "The scores name no winner: they weigh each contribution";

const oneLine = (text) => String(text ?? "").split(/\s+/).filter(Boolean).join(" ");

/** The result's one line as the format recorded it; its summary for a result recorded without one. */
function outcomeHeadline(outcome) {
  return oneLine(outcome.headline ?? outcome.summary);
}

/**
 * The format's result as a card: its summary (unless it only repeats the headline, which `resultHeadline` gives
 * the page's lead line) and its sections, each a title over its items or over an answer a model wrote. Null when
 * the format records none.
 */
export function outcomeCard(state) {
  const o = state.outcome;
  if (!o) return null;
  const card = h("div", { class: "card outcome", dataset: { testid: "outcome" } }, h("h3", {}, "The format's result"));
  const summary = oneLine(o.summary);
  if (summary.replace(/\.$/, "") !== outcomeHeadline(o).replace(/\.$/, "")) {
    card.append(h("p", { dataset: { testid: "outcome-summary" } }, summary));
  }
  for (const section of o.sections ?? []) {
    card.append(
      h(
        "section",
        { class: "outcome-section", dataset: { testid: "outcome-section" } },
        h("h4", {}, oneLine(section.title)),
        section.text ? h("div", { class: "outcome-text" }, markdown(section.text)) : null,
        section.lines?.length ? h("ul", {}, section.lines.map((line) => h("li", {}, oneLine(line)))) : null,
      ),
    );
  }
  return card;
}

/**
 * The result's one line: the format's own result where it records one (Oxford's winning side, a tournament's
 * champion, a council's answer, ...), else the verdict's winner, a tie, or why there is none. The summary card and
 * the verdict card both show this line, so the page never says two things about who won.
 */
export function resultHeadline(state, name) {
  // The engine's own line (moot.domain.result), which every other screen leads with too.
  if (state.headline) return state.headline;
  if (state.outcome) return outcomeHeadline(state.outcome);
  const v = state.verdict;
  if (!v) return verdictNote(state);
  if (!v.names_winner) return SCORES_NAME_NO_WINNER;
  if (v.winner_ids.length === 1) return `Winner: ${name(v.winner_ids[0])}`;
  return `A tie between ${v.winner_ids.map(name).join(" and ")}`;
}

/** Why there is no verdict, in the exports' words. */
function verdictNote(state) {
  if (state.gives_verdict === false) return "No verdict: this format's result (above) is its judgement.";
  if (state.judged) return `No verdict: ${state.verdict_error ?? "the judge gave no valid verdict"}`;
  if (state.config && !state.config.judge) return "Not judged: no judge was configured.";
  if (["completed", "failed", "interrupted"].includes(state.status)) return "Not judged: the debate ended before judging.";
  return "Not judged yet.";
}
