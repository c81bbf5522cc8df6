// The new-debate form. The config being built is a plain object: `fill(config)` draws the whole form from
// it and `collect()` reads the form back into one, so loading a file, saving, proposing personas and adding
// or removing a participant all take the same path. Fields the form has no control for (seed, stopping,
// a participant's base_url...) ride along in `ctx.base`, so a loaded file loses nothing on its way back.
import { api, ApiError } from "./api.js";
import { hideBanner, showError, showInfo } from "./banner.js";
import { clear, h, saveFile } from "./dom.js";
import { PALETTE } from "./palette.js";

const MIN_PARTICIPANTS = 2;
const MAX_PARTICIPANTS = 10;
const MAX_JUDGES = 9;
const MAX_FILE_CHARS = 300_000; // the server's limit on a config's text
const LOCAL_MODEL = "local:smollm2";
const FAKE_MODEL = "fake:demo";
const MODEL_REF = /^[a-z-]+:.+/;
const VOICES = ["moderator", "chair", "orchestrator", "judge"];
const ALIASES = { gemini: "google", "google-gla": "google", compat: "openai-compatible", "openai-compat": "openai-compatible", llama: "local" };
const SUGGESTIONS = [
  LOCAL_MODEL, FAKE_MODEL, "openai:gpt-4o", "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5",
  "google:gemini-2.5-flash", "groq:llama-3.3-70b-versatile", "mistral:mistral-large-latest",
  "openrouter:anthropic/claude-sonnet-4.5", "ollama:llama3.2",
];
const DIVERSITY = {
  "multi-perspective": "Multi-perspective (diverse angles)",
  binary: "Binary (for and against)",
  spectrum: "Spectrum (across a range)",
};
// Keys the form's controls own; everything else in a loaded config is carried through untouched.
const OWN = {
  top: ["topic", "context", "format", "rounds", "turn_order", "participants", "judge", "judges", "limits", "persona_diversity"],
  participant: ["id", "name", "model", "persona", "stance", "temperature"],
  judge: ["model"],
  panelJudge: ["name", "model"],
  limits: ["warn_at_cost", "cost_limit", "token_limit"],
};
// Server error paths that have no control of their own, and the control that stands for them.
const STANDS_FOR = { format_options: "format" };

let draft = null; // the form as it was left, so a trip to the history and back keeps it

export function renderNew(main) {
  const ctx = {
    main, alive: true, base: null, fields: new Map(), refs: {}, rows: [], judgeRows: [],
    providers: new Map(), formats: new Map(), defaultModel: LOCAL_MODEL, timer: null,
  };
  main.append(h("h1", {}, "New debate"), h("p", { class: "muted" }, "Loading…"));
  start(ctx);
  return () => {
    if (ctx.base && !ctx.started) draft = collect(ctx);
    ctx.alive = false;
    clearTimeout(ctx.timer);
  };
}

async function start(ctx) {
  const [models, formats] = await Promise.allSettled([api("/api/models"), api("/api/formats", { params: { rounds: 3 } })]);
  if (!ctx.alive) return;
  if (models.status === "fulfilled") {
    for (const p of models.value) ctx.providers.set(p.name, p);
    const local = ctx.providers.get("local");
    if (local && !local.installed) ctx.defaultModel = FAKE_MODEL; // a form that works out of the box
  }
  if (formats.status === "fulfilled") ctx.formats.set(3, formats.value);
  const failed = [models, formats].find((r) => r.status === "rejected");
  if (failed) showError(failed.reason, { retry: rerender });
  const config = draft ?? defaults(ctx);
  await ensureFormats(ctx, config.rounds);
  if (!ctx.alive) return;
  clear(ctx.main);
  ctx.main.append(h("h1", {}, "New debate"), (ctx.form = h("form", { class: "new-debate", novalidate: true })));
  ctx.form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit(ctx);
  });
  fill(ctx, config);
  if (!draft) document.getElementById("f-topic")?.focus();
}

function rerender() {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

function defaults(ctx) {
  const model = ctx.defaultModel;
  return {
    topic: "",
    format: "free-form",
    rounds: 3,
    participants: [
      { name: "Proponent", model, stance: "for the motion" },
      { name: "Opponent", model, stance: "against the motion" },
    ],
  };
}

// --- drawing the form from a config -----------------------------------------------------------

function fill(ctx, config, focusId = document.activeElement?.id) {
  ctx.base = structuredClone(config);
  ctx.fields.clear();
  ctx.refs = {};
  ctx.rows = [];
  ctx.judgeRows = [];
  clear(ctx.form).append(
    topicSection(ctx, config),
    formatSection(ctx, config),
    participantsSection(ctx, config),
    judgeSection(ctx, config),
    budgetSection(ctx, config),
    actions(ctx),
    modelList(ctx),
  );
  showFormat(ctx);
  if (focusId) document.getElementById(focusId)?.focus();
}

function topicSection(ctx, config) {
  ctx.refs.topic = h("textarea", { rows: 2, required: true, maxlength: 4000, value: config.topic ?? "" });
  ctx.refs.context = h("textarea", { rows: 3, value: config.context ?? "" });
  return h(
    "fieldset", {},
    h("legend", {}, "Debate"),
    field(ctx, "topic", "Topic", ctx.refs.topic, "The question or motion to debate, e.g. “Should cities ban cars from their centres?”"),
    field(ctx, "context", "Context", ctx.refs.context, "Optional background every participant reads first."),
  );
}

function formatSection(ctx, config) {
  const r = ctx.refs;
  r.format = h("select", {});
  const names = (ctx.formats.get(3) ?? []).map((f) => f.name);
  if (!names.includes(config.format ?? "free-form")) names.unshift(config.format ?? "free-form");
  for (const name of names) r.format.append(h("option", { value: name, selected: name === (config.format ?? "free-form") }, name));
  r.rounds = h("input", { type: "number", min: 1, max: 50, step: 1, value: config.rounds ?? 3 });
  r.turnOrder = h(
    "select", {},
    h("option", { value: "sequential", selected: config.turn_order !== "simultaneous" }, "sequential"),
    h("option", { value: "simultaneous", selected: config.turn_order === "simultaneous" }, "simultaneous"),
  );
  r.formatInfo = h("div", { class: "format-info", "aria-live": "polite" });
  r.format.addEventListener("change", () => showFormat(ctx));
  r.rounds.addEventListener("input", () => {
    clearTimeout(ctx.timer);
    ctx.timer = setTimeout(() => refreshFormats(ctx), 250);
  });
  return h(
    "fieldset", {},
    h("legend", {}, "Format"),
    h(
      "div", { class: "grid" },
      field(ctx, "format", "Format", r.format),
      field(ctx, "rounds", "Rounds", r.rounds, "1 to 50"),
      field(ctx, "turn_order", "Turn order", r.turnOrder, "Simultaneous: no one sees the others' turn of the same round."),
    ),
    r.formatInfo,
  );
}

function participantsSection(ctx, config) {
  const list = config.participants ?? [];
  const r = ctx.refs;
  r.add = h("button", { type: "button", id: "f-add-participant", disabled: list.length >= MAX_PARTICIPANTS, onclick: () => addParticipant(ctx) }, "Add participant");
  r.propose = h("button", { type: "button", id: "f-propose", onclick: () => propose(ctx) }, "Propose personas");
  r.diversity = h("select", {});
  for (const [value, text] of Object.entries(DIVERSITY)) {
    r.diversity.append(h("option", { value, selected: value === (config.persona_diversity ?? "multi-perspective") }, text));
  }
  r.proposeStatus = h("p", { class: "hint", role: "status" });
  r.participants = h(
    "fieldset", { class: "participants" },
    h("legend", {}, "Participants"),
    slot(ctx, "participants"),
    list.map((p, i) => participantRow(ctx, p, i, list.length)),
    h("div", { class: "actions" }, r.add),
    h(
      "div", { class: "propose" },
      field(ctx, "persona_diversity", "Persona diversity", r.diversity, "How far apart proposed personas stand."),
      h("div", { class: "actions" }, r.propose, r.proposeStatus),
    ),
    providerList(ctx),
  );
  return r.participants;
}

function participantRow(ctx, p, i, count) {
  const path = `participants.${i}`;
  const refs = {
    name: h("input", { type: "text", maxlength: 80, value: p.name ?? "", autocomplete: "off" }),
    model: modelInput(p.model ?? ctx.defaultModel),
    persona: h("textarea", { rows: 2, maxlength: 4000, value: p.persona ?? "" }),
    stance: h("input", { type: "text", maxlength: 1000, value: p.stance ?? "", placeholder: "e.g. for the motion" }),
    temperature: h("input", { type: "number", min: 0, max: 2, step: 0.1, value: p.temperature ?? "", placeholder: "model default" }),
  };
  ctx.rows.push({ refs, extra: carried(p, OWN.participant, keepId(p)) });
  const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
  swatch.style.setProperty("background", PALETTE[i % PALETTE.length]);
  const remove = h(
    "button",
    { type: "button", class: "danger", id: `f-${path}-remove`, disabled: count <= MIN_PARTICIPANTS, "aria-label": `Remove participant ${i + 1}`, onclick: () => removeParticipant(ctx, i) },
    "Remove",
  );
  return h(
    "fieldset", { class: "participant" },
    h("legend", {}, swatch, `Participant ${i + 1}`),
    slot(ctx, path),
    h(
      "div", { class: "grid" },
      field(ctx, `${path}.name`, "Name", refs.name),
      modelField(ctx, `${path}.model`, "Model", refs.model),
      field(ctx, `${path}.stance`, "Stance", refs.stance),
      field(ctx, `${path}.temperature`, "Temperature", refs.temperature, "0 to 2; empty: the model's default"),
    ),
    field(ctx, `${path}.persona`, "Persona", refs.persona, "Who argues, and how. auto: proposed when the debate starts."),
    h("div", { class: "actions" }, remove),
  );
}

function judgeSection(ctx, config) {
  const mode = (ctx.judgeMode = judgeMode(config));
  const radios = [["single", "Single judge"], ["panel", "Judge panel"], ["none", "No judge"]].map(([value, text]) => {
    const input = h("input", { type: "radio", name: "judge-mode", id: `f-judge-mode-${value}`, value, checked: value === mode, onchange: () => setJudgeMode(ctx, value) });
    return h("div", { class: "field check" }, input, h("label", { for: input.id }, text));
  });
  const body = [];
  if (mode === "single") {
    const first = config.participants?.[0];
    const own = config.judge && !sameModel(config.judge, first) ? config.judge.model : "";
    ctx.refs.judgeModel = modelInput(own, `same as Participant 1 (${first?.model ?? ctx.defaultModel})`);
    ctx.refs.judgeExtra = carried(config.judge, OWN.judge); // instructions, rubric... kept either way
    body.push(modelField(ctx, "judge.model", "Judge model", ctx.refs.judgeModel, "Left empty: Participant 1's model judges."));
  } else if (mode === "panel") {
    const judges = config.judges;
    ctx.refs.keptJudge = config.judge && !sameModel(config.judge, judges[0]) ? dropNulls(config.judge) : null;
    body.push(judges.map((j, i) => judgeRow(ctx, j, i, judges.length)));
    body.push(h("div", { class: "actions" }, h("button", { type: "button", id: "f-add-judge", disabled: judges.length >= MAX_JUDGES, onclick: () => addJudge(ctx) }, "Add judge")));
  } else {
    body.push(h("p", { class: "hint" }, "No verdict: the debate ends after its rounds."));
  }
  return h(
    "fieldset", {},
    h("legend", {}, "Judge"),
    h("div", { class: "radios", role: "radiogroup", "aria-label": "Judging" }, radios),
    slot(ctx, "judge"),
    slot(ctx, "judges"),
    body,
  );
}

function judgeRow(ctx, j, i, count) {
  const path = `judges.${i}`;
  const refs = {
    name: h("input", { type: "text", maxlength: 80, value: /^Judge \d+$/.test(j.name ?? "") ? "" : j.name ?? "", placeholder: `Judge ${i + 1}` }),
    model: modelInput(j.model ?? ctx.defaultModel),
  };
  ctx.judgeRows.push({ refs, extra: carried(j, OWN.panelJudge) });
  const remove = h(
    "button",
    { type: "button", class: "danger", id: `f-${path}-remove`, disabled: count <= 1, "aria-label": `Remove judge ${i + 1}`, onclick: () => removeJudge(ctx, i) },
    "Remove",
  );
  return h(
    "fieldset", { class: "judge" },
    h("legend", {}, `Judge ${i + 1}`),
    slot(ctx, path),
    h("div", { class: "grid" }, field(ctx, `${path}.name`, "Name", refs.name), modelField(ctx, `${path}.model`, "Model", refs.model)),
    h("div", { class: "actions" }, remove),
  );
}

function budgetSection(ctx, config) {
  const limits = config.limits ?? {};
  const money = (key) => h("input", { type: "number", min: 0, step: 0.01, value: limits[key] ?? "", placeholder: "none" });
  ctx.refs.limits = {
    warn_at_cost: money("warn_at_cost"),
    cost_limit: money("cost_limit"),
    token_limit: h("input", { type: "number", min: 1, step: 1, value: limits.token_limit ?? "", placeholder: "none" }),
  };
  const l = ctx.refs.limits;
  return h(
    "fieldset", {},
    h("legend", {}, "Budgets"),
    h("p", { class: "hint" }, "Optional. Local and fake models cost nothing; a debate stops before a call that would pass a limit."),
    slot(ctx, "limits"),
    h(
      "div", { class: "grid" },
      field(ctx, "limits.warn_at_cost", "Warn at cost (USD)", l.warn_at_cost),
      field(ctx, "limits.cost_limit", "Cost limit (USD)", l.cost_limit),
      field(ctx, "limits.token_limit", "Token limit", l.token_limit, "Input and output tokens together"),
    ),
  );
}

function actions(ctx) {
  const file = h("input", { type: "file", id: "f-load-file", accept: ".yaml,.yml,.json", hidden: true, onchange: () => loadFile(ctx, file) });
  ctx.refs.submit = h("button", { type: "submit", class: "primary", id: "f-start" }, "Start debate");
  return h(
    "div", { class: "actions form-actions" },
    ctx.refs.submit,
    h("label", { for: file.id, class: "visually-hidden" }, "Config file to load"),
    file,
    h("button", { type: "button", id: "f-load", onclick: () => file.click() }, "Load config…"),
    h("button", { type: "button", id: "f-save-yaml", onclick: () => saveYaml(ctx) }, "Save as YAML"),
    h("button", { type: "button", id: "f-save-json", onclick: () => saveJson(ctx) }, "Save as JSON"),
  );
}

// --- fields, models and formats ---------------------------------------------------------------

/** A labelled control with its hint and error, registered under its config path for error messages. */
function field(ctx, path, label, control, hint) {
  const id = idOf(path);
  control.id = id;
  const error = h("div", { class: "error", id: `${id}-error`, hidden: true });
  const hintNode = hint ? h("div", { class: "hint", id: `${id}-hint` }, hint) : null;
  control.setAttribute("aria-describedby", [hintNode?.id, error.id].filter(Boolean).join(" "));
  const wrap = h("div", { class: "field" }, h("label", { for: id }, label), control, hintNode, error);
  ctx.fields.set(path, { wrap, control, error });
  control.addEventListener("input", () => unmark(ctx.fields.get(path)));
  return wrap;
}

/** Where errors about a whole group (a participant, the panel) go. */
function slot(ctx, path) {
  const error = h("div", { class: "error", id: `${idOf(path)}-error`, hidden: true });
  const wrap = h("div", { class: "field slot" }, error);
  ctx.fields.set(path, { wrap, control: null, error });
  return wrap;
}

function idOf(path) {
  return `f-${path.replace(/[^A-Za-z0-9_-]/g, "-")}`;
}

function modelInput(value, placeholder = "provider:model") {
  return h("input", { type: "text", list: "model-suggestions", value, placeholder, autocomplete: "off", spellcheck: "false" });
}

/** A model field whose hint says at once when this server cannot call the provider. */
function modelField(ctx, path, label, input) {
  const wrap = field(ctx, path, label, input, " ");
  const hint = wrap.querySelector(".hint");
  const update = () => {
    const warning = providerProblem(ctx, input.value);
    hint.textContent = warning ?? "provider:model, e.g. openai:gpt-4o";
    hint.classList.toggle("warn", Boolean(warning));
  };
  input.addEventListener("input", update);
  update();
  return wrap;
}

function providerProblem(ctx, value) {
  const text = value.trim();
  if (!text || !ctx.providers.size) return null;
  if (!text.includes(":")) return null; // half-typed; validation speaks at submit
  const raw = text.split(":")[0].toLowerCase();
  const info = ctx.providers.get(ALIASES[raw] ?? raw);
  if (!info) return `Unknown provider “${raw}”; known: ${[...ctx.providers.keys()].join(", ")}`;
  if (!info.installed) return `The ${info.name} provider is not installed on this server.`;
  if (info.key_required && !info.key_set) return `${info.key_vars.join(" or ")} is not set on this server.`;
  return null;
}

function modelList(ctx) {
  return h(
    "datalist", { id: "model-suggestions" },
    SUGGESTIONS.map((value) => {
      const problem = providerProblem(ctx, value);
      return h("option", { value, label: problem ? `${value} (${problem.replace(/ on this server\.$/, "")})` : value });
    }),
  );
}

function providerList(ctx) {
  if (!ctx.providers.size) return null;
  const rows = [...ctx.providers.values()].map((p) => {
    let state = "ready";
    if (!p.installed) state = "not installed";
    else if (p.key_required && !p.key_set) state = `${p.key_vars.join(" or ")} not set`;
    return h("li", {}, h("code", {}, p.name), ` ${p.description}: `, h("span", { class: state === "ready" ? "ok" : "warn" }, state));
  });
  return h("details", { class: "providers" }, h("summary", {}, "Providers on this server"), h("ul", {}, rows));
}

async function refreshFormats(ctx) {
  const rounds = Number(ctx.refs.rounds.value);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) return;
  if (!ctx.formats.has(rounds)) {
    try {
      const list = await api("/api/formats", { params: { rounds } });
      ctx.formats.set(rounds, list);
    } catch (err) {
      if (ctx.alive) showError(err, { retry: () => refreshFormats(ctx) });
      return;
    }
  }
  if (ctx.alive) showFormat(ctx);
}

/** The chosen format's description and its phases for the rounds as typed (or the last valid count). */
function showFormat(ctx) {
  const rounds = Number(ctx.refs.rounds.value);
  const list = ctx.formats.get(rounds) ?? ctx.formats.get(3) ?? [];
  const info = list.find((f) => f.name === ctx.refs.format.value);
  clear(ctx.refs.formatInfo);
  if (!info) return;
  ctx.refs.formatInfo.append(
    h("p", { class: "hint" }, info.description),
    h(
      "ol", { class: "phases" },
      info.phases.map((p) =>
        h("li", {}, h("strong", {}, p.name), ` (${p.first === p.last ? `round ${p.first}` : `rounds ${p.first}–${p.last}`})`, p.description ? `: ${p.description}` : ""),
      ),
    ),
  );
}

// --- reading the form into a config -----------------------------------------------------------

function collect(ctx) {
  const r = ctx.refs;
  const out = carried(ctx.base, OWN.top);
  out.topic = r.topic.value.trim();
  if (r.context.value.trim()) out.context = r.context.value;
  out.format = r.format.value;
  out.rounds = numberOf(r.rounds);
  if (r.turnOrder.value !== "sequential") out.turn_order = r.turnOrder.value;
  if (r.diversity.value !== "multi-perspective") out.persona_diversity = r.diversity.value;
  out.participants = ctx.rows.map(({ refs, extra }) => {
    const p = { ...extra, name: refs.name.value.trim(), model: refs.model.value.trim() };
    if (refs.persona.value.trim()) p.persona = refs.persona.value.trim();
    if (refs.stance.value.trim()) p.stance = refs.stance.value.trim();
    if (refs.temperature.value !== "" || refs.temperature.validity.badInput) p.temperature = numberOf(refs.temperature);
    return p;
  });
  Object.assign(out, collectJudge(ctx));
  const limits = carried(ctx.base.limits ?? {}, OWN.limits);
  for (const [key, input] of Object.entries(r.limits)) {
    if (input.value !== "" || input.validity.badInput) limits[key] = numberOf(input);
  }
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}

function collectJudge(ctx) {
  const mode = ctx.judgeMode; // as drawn: a radio just clicked is the mode to switch to, not the one to read
  if (mode === "none") return { judge: null };
  if (mode === "panel") {
    const judges = ctx.judgeRows.map(({ refs, extra }) => {
      const j = { ...extra, model: refs.model.value.trim() };
      if (refs.name.value.trim()) j.name = refs.name.value.trim();
      return j;
    });
    return ctx.refs.keptJudge ? { judge: ctx.refs.keptJudge, judges } : { judges };
  }
  const model = ctx.refs.judgeModel.value.trim();
  const extra = ctx.refs.judgeExtra;
  if (!model && !Object.keys(extra).length) return {}; // the server's default: Participant 1's model
  const first = ctx.rows[0]?.refs.model.value.trim();
  return { judge: { ...extra, model: model || first } };
}

/** What a config part holds beyond the form's own keys, nulls dropped (null is every such field's default). */
function carried(part, own, keep = []) {
  const out = {};
  for (const [key, value] of Object.entries(part ?? {})) {
    if ((!own.includes(key) || keep.includes(key)) && value !== null && value !== undefined) out[key] = dropNulls(value);
  }
  return out;
}

function dropNulls(value) {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, dropNulls(v)]));
}

/** A participant's id is kept only when it is not the one the server makes from the name. */
function keepId(p) {
  return p.id && p.id !== slugify(p.name ?? "") ? ["id"] : [];
}

function slugify(name) {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "") || "p";
  return VOICES.includes(slug) ? `${slug}-1` : slug;
}

function numberOf(input) {
  return input.value === "" ? NaN : Number(input.value);
}

function judgeMode(config) {
  if (config.judges?.length) return "panel";
  return config.judge === null ? "none" : "single";
}

function sameModel(a, b) {
  return Boolean(a && b) && a.model === b.model && (a.base_url ?? null) === (b.base_url ?? null);
}

// --- changing the form's shape ----------------------------------------------------------------

function addParticipant(ctx) {
  const config = collect(ctx);
  const taken = new Set(config.participants.map((p) => p.name.toLowerCase()));
  let n = config.participants.length + 1;
  while (taken.has(`speaker ${n}`)) n += 1;
  const model = config.participants.at(-1)?.model || ctx.defaultModel;
  config.participants.push({ name: `Speaker ${n}`, model });
  fill(ctx, config, idOf(`participants.${config.participants.length - 1}.name`));
}

function removeParticipant(ctx, index) {
  const config = collect(ctx);
  config.participants.splice(index, 1);
  const next = Math.min(index, config.participants.length - 1);
  fill(ctx, config, idOf(`participants.${next}.name`));
}

function setJudgeMode(ctx, mode) {
  const config = collect(ctx);
  const first = config.participants[0]?.model || ctx.defaultModel;
  const current = config.judge?.model ?? config.judges?.[0]?.model ?? first;
  delete config.judge;
  delete config.judges;
  if (mode === "none") config.judge = null;
  if (mode === "panel") config.judges = [{ model: current }];
  if (mode === "single" && current !== first) config.judge = { model: current };
  fill(ctx, config, `f-judge-mode-${mode}`);
}

function addJudge(ctx) {
  const config = collect(ctx);
  config.judges.push({ model: config.judges.at(-1)?.model || ctx.defaultModel });
  fill(ctx, config, idOf(`judges.${config.judges.length - 1}.model`));
}

function removeJudge(ctx, index) {
  const config = collect(ctx);
  config.judges.splice(index, 1);
  fill(ctx, config, idOf(`judges.${Math.min(index, config.judges.length - 1)}.model`));
}

// --- checking -----------------------------------------------------------------------------------

/** Problems the page can see by itself, as [path, message] in the order of the form. */
function problems(config) {
  const out = [];
  const need = (ok, path, message) => ok || out.push([path, message]);
  need(config.topic.length > 0, "topic", "Give the question to debate.");
  need(Number.isInteger(config.rounds) && config.rounds >= 1 && config.rounds <= 50, "rounds", "Rounds must be a whole number from 1 to 50.");
  const count = config.participants.length;
  need(count >= MIN_PARTICIPANTS && count <= MAX_PARTICIPANTS, "participants", `A debate has ${MIN_PARTICIPANTS} to ${MAX_PARTICIPANTS} participants.`);
  const names = new Map();
  config.participants.forEach((p, i) => {
    const path = `participants.${i}`;
    const key = p.name.toLowerCase();
    if (!p.name) out.push([`${path}.name`, "Give this participant a name."]);
    else if (names.has(key)) out.push([`${path}.name`, `Participant ${names.get(key) + 1} has this name already; names must differ.`]);
    else names.set(key, i);
    checkModel(out, `${path}.model`, p.model);
    if ("temperature" in p) need(p.temperature >= 0 && p.temperature <= 2, `${path}.temperature`, "Temperature is a number from 0 to 2.");
  });
  if (config.judge?.model !== undefined) checkModel(out, "judge.model", config.judge.model);
  const judgeNames = new Set();
  (config.judges ?? []).forEach((j, i) => {
    checkModel(out, `judges.${i}.model`, j.model);
    const name = (j.name ?? `Judge ${i + 1}`).toLowerCase();
    need(!judgeNames.has(name), `judges.${i}.name`, "Another judge has this name; names must differ.");
    judgeNames.add(name);
  });
  checkLimits(out, config.limits ?? {});
  return out;
}

function checkModel(out, path, model) {
  if (!MODEL_REF.test(model)) out.push([path, "Write the model as provider:model, e.g. local:smollm2 or openai:gpt-4o."]);
}

function checkLimits(out, limits) {
  for (const key of OWN.limits) {
    if (!(key in limits)) continue;
    const value = limits[key];
    const whole = key === "token_limit";
    if (!(value > 0) || (whole && !Number.isInteger(value))) {
      out.push([`limits.${key}`, whole ? "A token limit is a whole number above 0." : "Give an amount in USD above 0, or leave it empty."]);
    }
  }
  if (limits.warn_at_cost > 0 && limits.cost_limit > 0 && limits.warn_at_cost > limits.cost_limit) {
    out.push(["limits.warn_at_cost", "The warning should come at or below the cost limit."]);
  }
}

/** Show each problem next to its field (the nearest one for a path the form has no control for) and focus
 * the first; the ones with no place at all go to the banner. False when there was nothing to show. */
function mark(ctx, found) {
  const homeless = [];
  let first = null;
  for (const [path, message] of found) {
    const text = message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
    const { place, rest } = placeOf(ctx, path);
    if (!place) {
      homeless.push(path && path !== "config" ? `${path}: ${text}` : text);
      continue;
    }
    place.wrap.classList.add("invalid");
    place.error.textContent = rest ? `${rest}: ${text}` : text; // the part of the path it has no control for
    place.error.hidden = false;
    place.control?.setAttribute("aria-invalid", "true");
    first ??= place;
  }
  if (homeless.length) showError(homeless.join(" "));
  if (first) {
    const target = first.control ?? first.wrap.closest("fieldset")?.querySelector("input, select, textarea, button");
    target?.focus();
    first.wrap.scrollIntoView({ block: "center" });
  }
  return found.length > 0;
}

/** The field for a path, else the nearest enclosing one with the rest of the path to name in the message. */
function placeOf(ctx, path) {
  const head = path.split(".")[0];
  if (STANDS_FOR[head]) return { place: ctx.fields.get(STANDS_FOR[head]), rest: path };
  const parts = path.split(".");
  for (let n = parts.length; n > 0; n -= 1) {
    const place = ctx.fields.get(parts.slice(0, n).join("."));
    if (place) return { place, rest: parts.slice(n).join(".") };
  }
  return { place: null, rest: path };
}

function unmark(place) {
  if (!place) return;
  place.wrap.classList.remove("invalid");
  place.error.hidden = true;
  place.error.textContent = "";
  place.control?.removeAttribute("aria-invalid");
}

function unmarkAll(ctx) {
  for (const place of ctx.fields.values()) unmark(place);
}

/** The config when the page finds nothing wrong with it; otherwise null, with the problems shown. */
function checked(ctx) {
  unmarkAll(ctx);
  hideBanner();
  const config = collect(ctx);
  return mark(ctx, problems(config)) ? null : config;
}

/** A 422 from the server shown at its fields; anything else in the banner. */
function serverError(ctx, err, retry) {
  const fields = err instanceof ApiError ? Object.entries(err.fields) : [];
  if (err instanceof ApiError && err.status === 422 && fields.length) mark(ctx, fields);
  else showError(err, { retry });
}

// --- what the buttons do ----------------------------------------------------------------------

async function submit(ctx) {
  const config = checked(ctx);
  if (!config) return;
  const button = ctx.refs.submit;
  busy(button, true, "Starting…");
  try {
    const started = await api("/api/debates", { method: "POST", body: config });
    if (!ctx.alive) return;
    draft = null;
    ctx.started = true; // a new debate next time, not this one again
    location.hash = `#/debates/${started.id}`;
  } catch (err) {
    if (ctx.alive) serverError(ctx, err, () => submit(ctx));
  } finally {
    busy(button, false);
  }
}

async function propose(ctx) {
  unmarkAll(ctx);
  hideBanner();
  const config = collect(ctx);
  const first = config.participants[0];
  if (!config.topic) return mark(ctx, [["topic", "Give the topic first: personas are proposed for it."]]);
  if (!MODEL_REF.test(first.model)) return mark(ctx, [["participants.0.model", "Give Participant 1 a model: it proposes the personas."]]);
  const request = { topic: config.topic, count: config.participants.length, diversity: config.persona_diversity ?? "multi-perspective", model: first.model };
  if (first.base_url) request.base_url = first.base_url;
  const { propose: button, proposeStatus: status, participants: section } = ctx.refs;
  busy(button, true, "Proposing…");
  section.setAttribute("aria-busy", "true");
  status.textContent = `Asking ${first.model} for ${request.count} personas…`;
  try {
    const answer = await api("/api/personas", { method: "POST", body: request });
    if (!ctx.alive) return;
    const now = collect(ctx); // the user may have typed meanwhile
    now.participants.forEach((p, i) => {
      const seat = answer.personas[i];
      if (!seat) return;
      p.persona = personaText(seat);
      p.stance = seat.position;
    });
    fill(ctx, now, button.id);
    ctx.refs.proposeStatus.textContent = answer.reasoning ? `Proposed by ${first.model}: ${answer.reasoning}` : `Proposed by ${first.model}.`;
  } catch (err) {
    if (!ctx.alive) return;
    status.textContent = "";
    // The request's fields as the form's: the model and its options are Participant 1's.
    const form = { topic: "topic", count: "participants", diversity: "persona_diversity" };
    if (err instanceof ApiError) err.fields = Object.fromEntries(Object.entries(err.fields).map(([k, v]) => [form[k] ?? `participants.0.${k}`, v.replace(`${k}: `, "")]));
    if (err instanceof ApiError && err.status === 422 && Object.keys(err.fields).length) mark(ctx, Object.entries(err.fields));
    else showError(err, { retry: () => propose(ctx) });
  } finally {
    busy(ctx.refs.propose, false);
    ctx.refs.participants.removeAttribute("aria-busy");
  }
}

// The same text the engine gives an 'auto' persona (moot.domain.personas.persona_text).
function personaText(seat) {
  const args = (seat.key_arguments ?? []).map((a) => a.trim()).filter(Boolean).join("; ");
  return args ? `${seat.persona.trim()}\nKey arguments: ${args}` : seat.persona.trim();
}

async function loadFile(ctx, input) {
  const file = input.files?.[0];
  input.value = ""; // choosing the same file again still loads it
  if (!file) return;
  hideBanner();
  try {
    if (file.size > MAX_FILE_CHARS * 4) throw new Error(`${file.name} is too large for a config file.`);
    const text = await file.text();
    const config = await api("/api/configs/parse", { method: "POST", body: { text } });
    if (!ctx.alive) return;
    await ensureFormats(ctx, config.rounds);
    fill(ctx, config, "f-load");
    showInfo(`Loaded ${file.name}.`);
  } catch (err) {
    if (!ctx.alive) return;
    const where = err instanceof ApiError && err.status === 422 ? `${file.name}: ` : "";
    showError(where ? new ApiError(err.status, where + err.message) : err);
  }
}

async function ensureFormats(ctx, rounds) {
  if (ctx.formats.has(rounds)) return;
  try {
    ctx.formats.set(rounds, await api("/api/formats", { params: { rounds } }));
  } catch {
    // the phases show for 3 rounds until the next change: not worth failing a load for
  }
}

async function saveYaml(ctx) {
  const config = checked(ctx);
  if (!config) return;
  try {
    const text = await api("/api/configs/yaml", { method: "POST", body: config, accept: "text/yaml" });
    saveFile(`${fileStem(config)}.yaml`, text, "text/yaml");
  } catch (err) {
    if (ctx.alive) serverError(ctx, err, () => saveYaml(ctx));
  }
}

function saveJson(ctx) {
  const config = checked(ctx);
  if (config) saveFile(`${fileStem(config)}.json`, `${JSON.stringify(config, null, 2)}\n`, "application/json");
}

function fileStem(config) {
  return slugify(config.topic).slice(0, 40).replace(/-+$/, "") || "debate";
}

function busy(button, on, text) {
  if (on) {
    button.dataset.label = button.textContent;
    button.textContent = text;
  } else if (button.dataset.label) {
    button.textContent = button.dataset.label;
  }
  button.disabled = on;
  button.toggleAttribute("aria-busy", on);
}
