// The tokens-and-cost meter: figures from /status (the server's fold is the one truth), drawn against the
// debate's budgets (limits.warn_at_cost, cost_limit, token_limit).

import { append, clear, count, h, money } from "./dom.js";

export class Meter {
  constructor() {
    this.node = h("section", { class: "card meter", "aria-label": "Tokens and cost", dataset: { testid: "meter" } });
    this.limits = {};
  }

  budgets(limits) {
    this.limits = limits ?? {};
  }

  show(status) {
    const tokens = status.input_tokens + status.output_tokens;
    const { warn_at_cost: warn, cost_limit: costLimit, token_limit: tokenLimit } = this.limits;
    append(clear(this.node), [
      h("h2", { class: "small" }, "Tokens and cost"),
      h(
        "dl",
        {},
        h("dt", {}, "Input tokens"), h("dd", {}, count(status.input_tokens)),
        h("dt", {}, "Output tokens"), h("dd", {}, count(status.output_tokens)),
        h("dt", {}, "Cost"), h("dd", { dataset: { testid: "cost" } }, costText(status)),
      ),
      costLimit ? bar("Cost", status.cost_usd ?? 0, costLimit, warn, money) : null,
      tokenLimit ? bar("Tokens", tokens, tokenLimit, null, count) : null,
      warn && (status.cost_usd ?? 0) >= warn
        ? h("p", { class: "notice warning", role: "status" }, `Cost has passed the warning of ${money(warn)}.`)
        : null,
      status.cost_usd === null && status.input_tokens > 0
        ? h("p", { class: "muted small" }, "No price known for these models.")
        : null,
    ]);
  }
}

/** The cost as the server's fold has it: `free` when every model of the debate costs nothing (the server's
 * rule, moot.engine.costs_nothing), `$0` before the first call, else the sum (`unknown` when no call had a price). */
function costText(status) {
  if (status.free) return "free";
  if (!status.requests && status.cost_usd == null) return money(0);
  return money(status.cost_usd);
}

function bar(label, value, limit, warn, format) {
  const share = Math.min(1, value / limit);
  const fill = h("div", {});
  fill.style.setProperty("width", `${(share * 100).toFixed(1)}%`);
  const state = value >= limit ? "over" : warn && value >= warn ? "warn" : share >= 0.8 ? "warn" : "";
  return h(
    "div",
    {},
    h("div", { class: "small" }, `${label}: ${format(value)} of ${format(limit)}`),
    h(
      "div",
      {
        class: `bar ${state}`,
        role: "meter",
        "aria-label": `${label} used`,
        "aria-valuemin": 0,
        "aria-valuemax": limit,
        "aria-valuenow": value,
      },
      fill,
    ),
  );
}
