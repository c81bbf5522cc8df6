// The form's model fields: a text input offering the models the server suggests (GET /api/meta `models`, those
// it can call first, the others with why not) from one shared <datalist>, and a hint that says at once when
// this server cannot call the typed model's provider. What only the server can judge (a misspelt provider, a
// model name it does not know) its check says at the field; the hint stays quiet then, so nothing is said twice.
import { h } from "./dom.js";
import { isPersonModel } from "./people.js";

const LIST_ID = "model-suggestions";
const HINT = "provider:model, e.g. openai:gpt-4o";
// A person takes the seat (`human`): what the field then says, and how the suggestion reads.
const PERSON_HINT = "A person takes this seat: once the debate starts, its page gives you their join link to send them.";
const PERSON_LABEL = "a person (join link)";

export function modelInput(value, placeholder = "provider:model") {
  return h("input", { type: "text", list: LIST_ID, value, placeholder, autocomplete: "off", spellcheck: "false" });
}

/** Why this server cannot call the provider of `value` now, as meta tells it; null when it can, when the name
 * is half-typed, or when only the server can tell (a prefix it does not list, which its check reports). */
export function providerProblem(meta, value) {
  const text = value.trim();
  if (!text.includes(":")) return null;
  const raw = text.split(":")[0].toLowerCase();
  const name = meta.aliases[raw] ?? raw;
  const info = meta.providers.find((p) => p.name === name);
  if (!info) return null;
  if (!info.installed) return `The ${info.name} provider is not installed on this server${info.install ? ` (${info.install})` : ""}.`;
  if (info.key_required && !info.key_set) return `${info.key_vars.join(" or ")} is not set on this server.`;
  return null;
}

/** Keep `hint` saying what the server cannot do with the model typed in `input` (else how to write one). */
export function watchModel(meta, input, hint) {
  const update = () => {
    const warning = providerProblem(meta, input.value);
    hint.textContent = warning ?? (isPersonModel(input.value.trim()) ? PERSON_HINT : HINT);
    hint.classList.toggle("warn", Boolean(warning));
  };
  input.addEventListener("input", update);
  update();
}

/** The suggestions every model field shares: the server's list, each unusable one labelled with why. */
export function modelList(meta) {
  return h(
    "datalist", { id: LIST_ID },
    (meta.models ?? []).map((m) => {
      let label = m.problem ? `${m.model} (${m.problem})` : m.model;
      if (isPersonModel(m.model)) label = `${m.model}: ${PERSON_LABEL}`;
      return h("option", { value: m.model, label });
    }),
  );
}

/** The server's providers and whether each can be called now, folded away under the participants. */
export function providerList(meta) {
  if (!meta.providers.length) return null;
  const rows = meta.providers.map((p) => {
    let state = "ready";
    if (!p.installed) state = "not installed";
    else if (p.key_required && !p.key_set) state = `${p.key_vars.join(" or ")} not set`;
    return h("li", {}, h("code", {}, p.name), ` ${p.description}: `, h("span", { class: state === "ready" ? "ok" : "warn" }, state));
  });
  return h("details", { class: "providers" }, h("summary", {}, "Providers on this server"), h("ul", {}, rows));
}
