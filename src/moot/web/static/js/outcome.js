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
