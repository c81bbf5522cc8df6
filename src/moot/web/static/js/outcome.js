// A format's own result (Oxford's vote swing, a council's ranking and chair answer, a tournament's bracket, ...),
// drawn from the same recorded outcome the CLI and the exports print.

import { h } from "./dom.js";

/** The format's result as a card, or null when the format records none. */
export function outcomeCard(state) {
  if (!state.outcome) return null;
  return h(
    "div",
    { class: "card outcome" },
    h("h3", {}, "The format's result"),
    h("p", { dataset: { testid: "outcome" } }, state.outcome.summary),
  );
}

/**
 * The result's one line: the winner, a tie, or why there is none. The summary card and the verdict card both
 * show this line, so the page never says two things about who won.
 */
export function resultHeadline(state, name) {
  const v = state.verdict;
  if (!v) return verdictNote(state);
  if (!v.names_winner) return "No winner is named: the scores weigh each contribution.";
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
