// The new-debate form. The config being built is a plain object: `fill(config)` draws the whole form from
// it and `collect()` reads the form back into one, so loading a file, saving, proposing personas and adding
// or removing a participant all take the same path. Fields the form has no control for (seed, stopping,
// a participant's base_url...) ride along in `ctx.base`, so a loaded file loses nothing on its way back.
//
// The rules are the server's: its limits, defaults and palette come from GET /api/meta (`ctx.meta`), and what
// is wrong with a config is what POST /api/configs/check answers, asked as the user edits and shown at the
// field each problem names. The page itself only knows what its controls know: an empty topic, a number
// input holding something that is not a number. The model fields (the server's suggestions, a provider this
// server cannot call) are model-fields.js; rounds a format fixes are shown read-only (meta's `fixed_rounds`).
//
// A new form starts from the defaults `moot configure` (or PUT /api/config) saved, asked each time the form opens
// (GET /api/config): the participants' models, the judge, and the team of role agents a design review gets while
// the participants are left as they started. A preset (GET /api/presets, as `moot run --preset`) fills the whole
// form but the topic. A problem template (meta's `templates`, as `moot run --template`) writes the topic from its
// variables and suggests a format and roles; each participant may take a role preset and a colour of its own.
//
// Every other setting is in the All settings editor (settings-editor.js): the whole config as YAML, read back
// into the form when the user leaves it, so what it set and the form has no control for rides in `ctx.base`
// too. A problem with such a field, shown in the form, offers to open the editor at it.
import { api, ApiError, meta } from "./api.js";
import { hideBanner, showError, showInfo } from "./banner.js";
import { append, clear, h, saveFile } from "./dom.js";
import { modelInput, modelList, providerList, watchModel } from "./model-fields.js";
import { colourOf } from "./palette.js";
import { rememberLinks } from "./seats.js";
import { isPersonModel } from "./people.js";
import { SettingsEditor } from "./settings-editor.js";

// How long the form waits after the last keystroke before it asks the server to check the config.
const CHECK_DELAY_MS = 400;
// How the page words the server's persona_diversity values (a value it has no words for shows as itself).
const DIVERSITY = {
  "multi-perspective": "Multi-perspective (diverse angles)",
  binary: "Binary (for and against)",
  spectrum: "Spectrum (across a range)",
};
// Keys the form's controls own; everything else in a loaded config is carried through untouched.
const OWN = {
  top: ["topic", "context", "format", "rounds", "turn_order", "participants", "judge", "judges", "limits", "persona_diversity", "stopping"],
  participant: ["id", "name", "model", "persona", "stance", "temperature", "role", "color"],
  judge: ["model", "temperature"],
  panelJudge: ["name", "model"],
  limits: ["warn_at_cost", "pause_at_cost", "cost_limit", "token_limit"],
  stopping: ["assess_rounds", "diminishing_returns", "drift"],
};
// stopping.diminishing_returns is true, false or left out (the format decides): the page's words for each.
const DIMINISHING = { "": "The format's default (free-form with a judge: on)", true: "On", false: "Off" };
// stopping.assess_rounds likewise; what the format's default is comes with the format (/api/formats).
const ASSESS = { "": "The format's default", true: "On: every round", false: "Off" };
const DRIFT = { warn: "Warn", stop: "Stop the rounds" };
// Server error paths that have no control of their own, and the control that stands for them; a problem
// with the config as a whole ("" from the server) is shown above the form's buttons.
const STANDS_FOR = { format_options: "format", "": "config" };
// The format whose participants are role agents: choosing it with the participants as they started gives the
// saved team (as `-f design-review` without participants does).
const TEAM_FORMAT = "design-review";
// What a saved default model holds (moot.domain.config.ModelOptions): how to call a model, not who speaks.
const MODEL_KEYS = ["model", "base_url", "temperature", "max_tokens", "context_window"];

let draft = null; // the form as it was left, so a trip to the history and back keeps it
let draftText = null; // and the All settings editor's text, when it was left open

/** The next new-debate form starts from `config` (a finished debate's "Edit and run"), not from the last draft. */
export function editConfig(config) {
  draft = structuredClone(config);
  draftText = null;
}

/** The new-debate form; `params` (the address's query) may name a field to open All settings at
 * (`settings=history.on_overflow`), as a debate's context warning does. */
export function renderNew(main, params = new URLSearchParams()) {
  return renderForm(main, null, params.get("settings"));
}

/** The form over the config of debate `id`, created and not started: saving replaces its config (PUT
 * /api/debates/<id>/config, checked as a start checks it) and goes back to its page, where Start runs it. */
export function renderEdit(main, id) {
  return renderForm(main, id);
}

function renderForm(main, editing, settingsAt = null) {
  const ctx = {
    editing, // the id of the created debate whose config this form edits; null: a new debate
    // The All settings editor, whether it is open (the form's own sections are hidden meanwhile), the field to
    // open it at once the form is drawn, and the config the form held when it opened (its discard goes back).
    editor: null, settingsOpen: false, settingsAt,
    // The presets (GET /api/presets; empty when they could not be read) and the one the form was filled from.
    presets: [], preset: null,
    main, alive: true, base: null, fields: new Map(), refs: {}, rows: [], judgeRows: [], meta: null,
    formats: new Map(), defaultModel: null, timer: null,
    // The live check: its pending timer, the number of the newest question (older answers are dropped) and
    // the request in flight; the fields the user has edited, and whether every problem is shown (after a
    // submit or a loaded file) rather than only those of edited fields.
    checkTimer: null, checkSeq: 0, checkAbort: null, touched: new Set(), showAll: false,
    // The saved defaults (GET /api/config; null when they could not be read), the template chosen and its
    // variables' values, whether the user has shaped the participants (then neither a format nor a template
    // replaces them), and the participants the form started with (given back when the team is left).
    saved: null, template: null, participantsEdited: false, startParticipants: null, teamShown: false,
  };
  main.append(h("h1", {}, heading(ctx)), h("p", { class: "muted" }, "Loading…"));
  start(ctx);
  return () => {
    // An edit left unsaved is dropped: the debate keeps its config, and the next new form is not it.
    if (ctx.base && !ctx.started && !ctx.editing) {
      draft = collect(ctx);
      draftText = ctx.settingsOpen ? ctx.editor.value : null; // what the editor holds, read or not
    }
    ctx.alive = false;
    clearTimeout(ctx.timer);
    cancelCheck(ctx);
  };
}

function heading(ctx) {
  return ctx.editing ? "Edit debate" : "New debate";
}

async function start(ctx) {
  const [served, formats, saved, stored, presets] = await Promise.allSettled([
    meta(),
    api("/api/formats", { params: { rounds: 3 } }),
    api("/api/config"),
    ctx.editing ? api(`/api/debates/${encodeURIComponent(ctx.editing)}`) : Promise.resolve(null),
    api("/api/presets"),
  ]);
  if (!ctx.alive) return;
  // Without the server's limits and defaults, or the debate being edited, there is no form to draw: say why,
  // and offer to try again.
  const missing = [served, stored].find((r) => r.status === "rejected");
  if (missing) {
    clear(ctx.main).append(h("h1", {}, heading(ctx)));
    showError(missing.reason, { retry: rerender });
    return;
  }
  if (ctx.editing && !["created", "queued"].includes(stored.value.status)) {
    clear(ctx.main).append(h("h1", {}, heading(ctx)), backToDebate(ctx));
    showError(`This debate is ${stored.value.status}: a config can be edited only before the debate starts.`);
    return;
  }
  ctx.meta = served.value;
  ctx.defaultModel = ctx.meta.starting_model; // one this server can run as it is
  if (formats.status === "fulfilled") ctx.formats.set(3, formats.value);
  else showError(formats.reason, { retry: rerender });
  // Unreadable defaults (a broken config.yaml) are the server's to explain; the form starts from meta's.
  if (saved.status === "fulfilled") ctx.saved = saved.value;
  else showError(saved.reason, { retry: rerender });
  // Without the presets (a broken preset file is `moot presets`' to explain) the form has no picker.
  if (presets.status === "fulfilled" && !ctx.editing) ctx.presets = presets.value;
  ctx.editor = new SettingsEditor({
    fields: ctx.meta.fields ?? [],
    onBack: () => closeSettings(ctx),
    onDiscard: () => discardSettings(ctx),
  });
  const config = ctx.editing ? stored.value.config : draft ?? startingConfig(ctx);
  ctx.participantsEdited = Boolean(draft) || Boolean(ctx.editing); // a draft's or a debate's are the user's own
  ctx.startParticipants = structuredClone(config.participants ?? []);
  await ensureFormats(ctx, config.rounds);
  if (!ctx.alive) return;
  clear(ctx.main);
  ctx.form = h("form", { class: "new-debate", novalidate: true });
  append(ctx.main, [
    h("h1", {}, heading(ctx)),
    ctx.editing ? h("p", { class: "muted" }, "Created and not started yet: its config can still change. Save, then start it from its page.") : null,
    ctx.form,
  ]);
  ctx.form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit(ctx);
  });
  // Any edit asks the server again (after a pause in typing); the edited field's problems may then show.
  const edited = (e) => {
    const path = e.target.dataset?.path;
    if (path) ctx.touched.add(path);
    if (path?.startsWith("participants.")) ctx.participantsEdited = true;
    scheduleCheck(ctx);
  };
  ctx.form.addEventListener("input", edited);
  ctx.form.addEventListener("change", edited);
  fill(ctx, config);
  const text = ctx.editing ? null : draftText;
  draftText = null;
  if (ctx.settingsAt) {
    // Asked for by the address (a debate's warning): opened once, and the address left as a plain new form.
    history.replaceState(null, "", "#/");
    openSettings(ctx, ctx.settingsAt);
  } else if (text !== null) {
    openEditor(ctx, text);
  } else if (!draft || ctx.editing) {
    document.getElementById("f-topic")?.focus();
  }
}

function backToDebate(ctx) {
  return h("a", { href: `#/debates/${encodeURIComponent(ctx.editing)}`, class: "back" }, "Back to the debate");
}

function rerender() {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

// --- drawing the form from a config -----------------------------------------------------------

function fill(ctx, config, focusId = document.activeElement?.id) {
  ctx.base = structuredClone(config);
  // A config for a format that takes any length (a loaded file, say) brings its own rounds: no count set
  // aside while a fixed format showed its own is to come back over it.
  if (!ctx.meta.fixed_rounds?.[config.format ?? "free-form"]) ctx.roundsFixed = false;
  ctx.fields.clear();
  ctx.refs = {};
  ctx.rows = [];
  ctx.judgeRows = [];
  // The form's own sections (hidden while All settings is open), then the editor, which is kept across redraws.
  const preset = presetSection(ctx);
  const parts = [
    topicSection(ctx, config),
    formatSection(ctx, config),
    participantsSection(ctx, config),
    judgeSection(ctx, config),
    stoppingSection(ctx, config),
    budgetSection(ctx, config),
    otherSettingsSection(ctx),
  ];
  for (const part of [preset, ...parts]) part?.classList.add("form-part");
  // Presets first, then loading and saving a file, then what either fills.
  clear(ctx.form).append(...[preset, fileActions(ctx)].filter(Boolean), ...parts, ctx.editor.node, actions(ctx), modelList(ctx.meta));
  showFormat(ctx);
  showMode(ctx);
  if (focusId) document.getElementById(focusId)?.focus();
  // Redrawn fields carry no marks: ask again, so the problems the user was shown come back where they are.
  if (ctx.touched.size || ctx.showAll) scheduleCheck(ctx);
}

/** The presets, first: one fills the whole form (its format, participants, judge and settings), the topic and
 * context written so far kept. */
function presetSection(ctx) {
  if (!ctx.presets.length) return null;
  const chosen = ctx.presets.find((p) => p.name === ctx.preset) ?? null;
  const select = h(
    "select", { onchange: () => choosePreset(ctx, select.value) },
    h("option", { value: "", selected: !chosen }, chosen ? "Keep the form as it is" : "None: fill the form yourself"),
    ctx.presets.map((p) => h("option", { value: p.name, selected: p.name === chosen?.name }, `${presetTitle(p.name)} — ${p.description}`)),
  );
  const hint = chosen
    ? `Filled from the ${chosen.name} preset (${formatTitle(ctx, chosen.format)}, ${chosen.participants} participants); your topic is kept. Change anything below.`
    : "A ready setup: its format, participants, judge and settings fill the form; your topic is kept (moot run --preset).";
  ctx.refs.preset = select;
  return h("div", { class: "preset" }, field(ctx, "preset", "Start from a preset", select, hint));
}

/** design-review -> "Design review". */
function presetTitle(name) {
  const words = name.replace(/-/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A preset chosen: its config (GET /api/presets/<name>) in the form, with the topic and context as they are. */
async function choosePreset(ctx, name) {
  hideBanner();
  if (!name) {
    ctx.preset = null; // the form stays as it is; the picker no longer says it came from a preset
    return fill(ctx, collect(ctx), "f-preset");
  }
  let preset;
  try {
    preset = await api(`/api/presets/${encodeURIComponent(name)}`);
  } catch (err) {
    if (ctx.alive) showError(err, { retry: () => choosePreset(ctx, name) });
    return;
  }
  if (!ctx.alive) return;
  const now = collect(ctx);
  const config = structuredClone(preset.config);
  config.topic = now.topic;
  if (now.context) config.context = now.context;
  // A model the preset got as the server's default, where this server cannot run that (its provider is not
  // installed), becomes the one this form starts with: the preset's shape, on models that run here.
  const { default_model: fallback, starting_model: starting } = ctx.meta;
  const runnable = (who, i) => (who && who.model === fallback && starting !== fallback ? { ...who, ...savedModel(ctx, i) } : who);
  config.participants = (config.participants ?? []).map(runnable);
  if (config.judge) config.judge = runnable(config.judge, 0);
  await ensureFormats(ctx, config.rounds ?? 3);
  if (!ctx.alive) return;
  ctx.preset = name;
  ctx.participantsEdited = true; // the preset's participants stand; choosing a format does not replace them
  ctx.teamShown = false;
  fill(ctx, config, "f-preset");
}

function topicSection(ctx, config) {
  // A template's topic runs to several lines (its requirements): shown whole.
  const rows = templateOf(ctx) ? 7 : 2;
  ctx.refs.topic = h("textarea", { rows, required: true, maxlength: ctx.meta.bounds.topic_chars, value: config.topic ?? "" });
  ctx.refs.context = h("textarea", { rows: 3, value: config.context ?? "" });
  return h(
    "fieldset", {},
    h("legend", {}, "Debate"),
    templateFields(ctx),
    field(ctx, "topic", "Topic", ctx.refs.topic, "The question or motion to debate, e.g. “Should cities ban cars from their centres?”"),
    field(ctx, "context", "Context", ctx.refs.context, "Optional background every participant reads first."),
  );
}

/** The problem template picker and, with one chosen, its variables: each edit writes the topic again. */
function templateFields(ctx) {
  const list = ctx.meta.templates ?? [];
  if (!list.length) return null;
  const chosen = templateOf(ctx);
  const select = h(
    "select", { onchange: () => chooseTemplate(ctx, select.value) },
    h("option", { value: "", selected: !chosen }, "None: write the topic yourself"),
    list.map((t) => h("option", { value: t.name, selected: t.name === chosen?.name }, t.title)),
  );
  const hint = chosen ? chosen.description : "A common design problem whose topic you complete (moot run --template).";
  const picker = field(ctx, "template", "Template", select, hint);
  if (!chosen) return picker;
  ctx.refs.vars = {};
  const inputs = Object.entries(chosen.variables).map(([name, variable]) => {
    const input = h("input", {
      type: "text", autocomplete: "off", value: ctx.template.vars[name] ?? "", placeholder: variable.default ?? "",
      oninput: () => {
        ctx.template.vars[name] = input.value;
        ctx.refs.topic.value = filledTopic(chosen, ctx.template.vars);
      },
    });
    ctx.refs.vars[name] = input;
    const need = variable.default == null ? " Required." : ` Left empty: ${variable.default}.`;
    return field(ctx, `vars.${name}`, variableLabel(name), input, `${variable.description}.${need}`);
  });
  return h("div", { class: "template" }, picker, h("div", { class: "grid" }, inputs));
}

function formatSection(ctx, config) {
  const r = ctx.refs;
  r.format = h("select", {});
  const known = ctx.formats.get(3) ?? [];
  const names = known.map((f) => f.name);
  if (!names.includes(config.format ?? "free-form")) names.unshift(config.format ?? "free-form");
  for (const name of names) {
    // Its name as people write it and what it is in a line; the config's name stays the value.
    const info = known.find((f) => f.name === name);
    const words = info ? `${info.title} — ${info.summary}` : name;
    r.format.append(h("option", { value: name, selected: name === (config.format ?? "free-form"), title: info?.description ?? null }, words));
  }
  r.rounds = h("input", { type: "number", min: 1, max: ctx.meta.limits.max_rounds, step: 1, value: config.rounds ?? "" });
  r.turnOrder = choiceSelect(ctx.meta.choices.turn_order, config.turn_order);
  r.formatInfo = h("div", { class: "format-info", "aria-live": "polite" });
  r.format.addEventListener("change", () => formatChosen(ctx));
  r.rounds.addEventListener("input", () => {
    clearTimeout(ctx.timer);
    ctx.timer = setTimeout(() => refreshFormats(ctx), 250);
  });
  const rounds = field(ctx, "rounds", "Rounds", r.rounds, roundsHint(ctx));
  r.roundsHint = rounds.querySelector(".hint");
  return h(
    "fieldset", {},
    h("legend", {}, "Format"),
    // The picker on a row of its own: each format's name and what it is in a line.
    field(ctx, "format", "Format", r.format),
    h(
      "div", { class: "grid" },
      rounds,
      field(ctx, "turn_order", "Turn order", r.turnOrder, "Simultaneous: no one sees the others' turn of the same round."),
    ),
    r.formatInfo,
  );
}

function participantsSection(ctx, config) {
  const list = config.participants ?? [];
  const r = ctx.refs;
  r.add = h("button", { type: "button", id: "f-add-participant", disabled: list.length >= ctx.meta.limits.max_participants, onclick: () => addParticipant(ctx) }, "Add participant");
  r.propose = h("button", { type: "button", id: "f-propose", onclick: () => propose(ctx) }, "Propose personas");
  r.diversity = choiceSelect(ctx.meta.choices.persona_diversity, config.persona_diversity, DIVERSITY);
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
    providerList(ctx.meta),
  );
  return r.participants;
}

function participantRow(ctx, p, i, count) {
  const path = `participants.${i}`;
  const bounds = ctx.meta.bounds;
  const [cold, hot] = bounds.temperature;
  const refs = {
    name: h("input", { type: "text", maxlength: bounds.name_chars, value: p.name ?? "", autocomplete: "off" }),
    model: modelInput(p.model ?? ctx.defaultModel),
    persona: h("textarea", { rows: 2, maxlength: bounds.persona_chars, value: p.persona ?? "" }),
    stance: h("input", { type: "text", maxlength: bounds.stance_chars, value: p.stance ?? "", placeholder: "e.g. for the motion" }),
    temperature: h("input", { type: "number", min: cold, max: hot, step: 0.1, value: p.temperature ?? "" }),
    role: h(
      "select", {},
      h("option", { value: "", selected: !p.role }, "None"),
      (ctx.meta.roles ?? []).map((r) => h("option", { value: r.name, selected: r.name === p.role }, r.title)),
    ),
    color: h("input", { type: "color", value: colourOf(p, i) }),
  };
  // Saved only once chosen: a participant left alone keeps its place's colour, whatever the palette becomes.
  if (p.color) refs.color.dataset.chosen = "true";
  // An id comes only from a file, and the server's reading left it out where it would make the same one.
  ctx.rows.push({ refs, extra: carried(p, OWN.participant, ["id"]) });
  const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
  refs.role.addEventListener("change", () => renameForRole(ctx, refs, i));
  const remove = h(
    "button",
    { type: "button", class: "danger", id: `f-${path}-remove`, disabled: count <= ctx.meta.limits.min_participants, "aria-label": `Remove participant ${i + 1}`, onclick: () => removeParticipant(ctx, i) },
    "Remove",
  );
  const row = h(
    "fieldset", { class: "participant" },
    h("legend", {}, swatch, `Participant ${i + 1}`),
    slot(ctx, path),
    h(
      "div", { class: "grid" },
      field(ctx, `${path}.name`, "Name", refs.name),
      modelField(ctx, `${path}.model`, "Model", refs.model),
      field(ctx, `${path}.stance`, "Stance", refs.stance),
      field(ctx, `${path}.temperature`, "Temperature", refs.temperature, " "),
      field(ctx, `${path}.role`, "Role", refs.role, "A role preset's instructions (used when it has no system prompt)."),
      field(ctx, `${path}.color`, "Colour", refs.color, "In the transcript, the charts and the exports."),
    ),
    field(ctx, `${path}.persona`, "Persona", refs.persona, "Who argues, and how. auto: proposed when the debate starts."),
    h("div", { class: "actions" }, remove),
  );
  // What an empty temperature sends depends on who answers: said again when the model changes (a person's seat).
  refs.model.addEventListener("input", () => paintTemperatures(ctx));
  // The participant's colour on its swatch and its edge, as the transcript will show it (CSSOM: allowed by the CSP).
  const paint = () => {
    swatch.style.setProperty("background", refs.color.value);
    row.style.setProperty("border-left-color", refs.color.value);
  };
  paint();
  refs.color.addEventListener("input", () => {
    refs.color.dataset.chosen = "true";
    paint();
  });
  return row;
}

function judgeSection(ctx, config) {
  const mode = (ctx.judgeMode = judgeMode(config));
  const radios = [["single", "Single judge"], ["panel", "Judge panel"], ["none", "No judge"]].map(([value, text]) => {
    const input = h("input", { type: "radio", name: "judge-mode", id: `f-judge-mode-${value}`, value, checked: value === mode, onchange: () => setJudgeMode(ctx, value) });
    return h("div", { class: "field check" }, input, h("label", { for: input.id }, text));
  });
  const body = [];
  if (mode === "single") {
    const first = config.participants?.find((p) => !isPersonModel(p.model ?? "")) ?? config.participants?.[0];
    const own = config.judge && !sameModel(config.judge, first) ? config.judge.model : "";
    ctx.refs.judgeModel = modelInput(own, `same as the first participant's model (${first?.model ?? ctx.defaultModel})`);
    ctx.refs.judgeExtra = carried(config.judge, OWN.judge); // instructions, rubric... kept either way
    const [cold, hot] = ctx.meta.bounds.temperature;
    ctx.refs.judgeTemperature = h("input", { type: "number", min: cold, max: hot, step: 0.1, value: config.judge?.temperature ?? "" });
    ctx.refs.judgeModel.addEventListener("input", () => paintTemperatures(ctx));
    body.push(h(
      "div", { class: "grid" },
      modelField(ctx, "judge.model", "Judge model", ctx.refs.judgeModel, "Left empty: the first participant's model judges (a person's seat is skipped)."),
      field(ctx, "judge.temperature", "Judge temperature", ctx.refs.judgeTemperature, " "),
    ));
  } else if (mode === "panel") {
    const judges = config.judges;
    ctx.refs.keptJudge = config.judge && !sameModel(config.judge, judges[0]) ? dropNulls(config.judge) : null;
    body.push(judges.map((j, i) => judgeRow(ctx, j, i, judges.length)));
    body.push(h("div", { class: "actions" }, h("button", { type: "button", id: "f-add-judge", disabled: judges.length >= ctx.meta.limits.max_judges, onclick: () => addJudge(ctx) }, "Add judge")));
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
    name: h("input", { type: "text", maxlength: ctx.meta.bounds.name_chars, value: j.name ?? "", placeholder: ctx.meta.panel_judge_names[i] ?? "" }),
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

function stoppingSection(ctx, config) {
  const stopping = config.stopping ?? {};
  const assess = stopping.assess_rounds ?? "";
  ctx.refs.assess = h(
    "select", {},
    Object.entries(ASSESS).map(([value, text]) => h("option", { value, selected: String(assess) === value }, text)),
  );
  const chosen = stopping.diminishing_returns ?? "";
  ctx.refs.diminishing = h(
    "select", {},
    Object.entries(DIMINISHING).map(([value, text]) => h("option", { value, selected: String(chosen) === value }, text)),
  );
  ctx.refs.drift = choiceSelect(ctx.meta.choices.drift, stopping.drift, DRIFT);
  return h(
    "fieldset", {},
    h("legend", {}, "Stopping"),
    h("p", { class: "hint" }, "What the judge's round assessments may do (formats whose judge assesses rounds)."),
    slot(ctx, "stopping"),
    h(
      "div", { class: "grid" },
      field(ctx, "stopping.assess_rounds", "Judge assesses each round", ctx.refs.assess, "A score per round (quality, novelty, relevance…): what the stops here read."),
      field(ctx, "stopping.diminishing_returns", "Stop on diminishing returns", ctx.refs.diminishing, "Quality falls, or stalls while novelty, engagement or reply length fall, three assessed rounds running."),
      field(ctx, "stopping.drift", "When a participant drifts", ctx.refs.drift, "Relevance below 5 of 10 in a round's assessment."),
    ),
  );
}

function budgetSection(ctx, config) {
  const limits = config.limits ?? {};
  const money = (key) => h("input", { type: "number", min: 0, step: 0.01, value: limits[key] ?? "", placeholder: "none" });
  ctx.refs.limits = {
    warn_at_cost: money("warn_at_cost"),
    pause_at_cost: money("pause_at_cost"),
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
      field(ctx, "limits.pause_at_cost", "Pause at cost (USD)", l.pause_at_cost, "Waits for you to continue or stop"),
      field(ctx, "limits.cost_limit", "Cost limit (USD)", l.cost_limit),
      field(ctx, "limits.token_limit", "Token limit", l.token_limit, "Input and output tokens together"),
    ),
  );
}

/** Loading and saving a config file: at the top, where a form is started from a file. */
function fileActions(ctx) {
  const file = h("input", { type: "file", id: "f-load-file", accept: ".yaml,.yml,.json", hidden: true, onchange: () => loadFile(ctx, file) });
  return h(
    "div", { class: "actions file-actions" },
    h("label", { for: file.id, class: "visually-hidden" }, "Config file to load"),
    file,
    h("button", { type: "button", id: "f-load", onclick: () => file.click() }, "Load config…"),
    h("button", { type: "button", id: "f-save-yaml", onclick: () => saveYaml(ctx) }, "Save as YAML"),
    h("button", { type: "button", id: "f-save-json", onclick: () => saveJson(ctx) }, "Save as JSON"),
    (ctx.refs.settingsToggle = h(
      "button",
      {
        type: "button", id: "f-settings-toggle", class: "settings-toggle", "aria-controls": ctx.editor.node.id,
        onclick: () => (ctx.settingsOpen ? closeSettings(ctx) : openSettings(ctx)),
      },
      "All settings (YAML)",
    )),
  );
}

/** What only the All settings editor holds, said where the form ends; problems with those fields show here,
 * each with a way to open the editor at its field. */
function otherSettingsSection(ctx) {
  return h(
    "fieldset", { class: "other-settings" },
    h("legend", {}, "Other settings"),
    h(
      "p", { class: "hint" },
      "History and what happens when a prompt outgrows its window, timeouts, quality and repetition stops, ",
      "temperatures by role, judge fallbacks and criteria, an audience, the format's options, a seed…: ",
      "every setting a config file holds is in All settings, as YAML.",
    ),
    slot(ctx, "settings"),
    h("div", { class: "actions" }, h("button", { type: "button", id: "f-open-settings", onclick: () => openSettings(ctx) }, "Open All settings")),
  );
}

/** The button that starts the debate, in a bar kept at the bottom of the screen while the form scrolls (a
 * phone's form is many screens long), with the problems of the config as a whole beside it. */
function actions(ctx) {
  ctx.refs.submit = h("button", { type: "submit", class: "primary", id: "f-start" }, ctx.editing ? "Save changes" : "Start debate");
  return h("div", { class: "actions form-actions" }, slot(ctx, "config"), ctx.editing ? backToDebate(ctx) : null, ctx.refs.submit);
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
  control.dataset.path = path; // what an edit of it touches (the live check shows that field's problems)
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

/** A select of a field's values (the server's, its default first), showing the config's value or else the
 * default. */
function choiceSelect(choice, value, labels = {}) {
  const chosen = value ?? choice.default;
  const values = [choice.default, ...choice.values.filter((v) => v !== choice.default)];
  return h("select", {}, values.map((v) => h("option", { value: v, selected: v === chosen }, labels[v] ?? v)));
}

/** A model field whose hint says at once when this server cannot call the provider. */
function modelField(ctx, path, label, input) {
  const wrap = field(ctx, path, label, input, " ");
  watchModel(ctx.meta, input, wrap.querySelector(".hint"));
  return wrap;
}

async function refreshFormats(ctx) {
  const rounds = Number(ctx.refs.rounds.value);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > ctx.meta.limits.max_rounds) return;
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

function roundsHint(ctx) {
  return `1 to ${ctx.meta.limits.max_rounds}`;
}

/** Rounds as the chosen format has them: a format whose structure fixes its length (by the number of
 * participants, for some) shows that count, read-only, with why in one line; any other takes the user's
 * count, which comes back when they leave a fixed format. */
function fixRounds(ctx) {
  const { rounds, format, roundsHint: hint } = ctx.refs;
  const table = ctx.meta.fixed_rounds?.[format.value] ?? null;
  rounds.closest(".field")?.classList.toggle("fixed", Boolean(table));
  if (!table) {
    if (ctx.roundsFixed && ctx.freeRounds !== undefined) rounds.value = ctx.freeRounds;
    ctx.roundsFixed = false;
    rounds.readOnly = false;
    rounds.removeAttribute("aria-readonly");
    hint.textContent = roundsHint(ctx);
    return;
  }
  if (!ctx.roundsFixed) ctx.freeRounds = rounds.value;
  ctx.roundsFixed = true;
  rounds.readOnly = true;
  rounds.setAttribute("aria-readonly", "true");
  const count = ctx.rows.length;
  const lengths = new Set(Object.values(table));
  const always = lengths.size === 1;
  const fixed = always ? [...lengths][0] : table[count];
  if (fixed === undefined) {
    hint.textContent = `Set by the ${format.value} format, which does not take ${count} participants.`;
    return;
  }
  rounds.value = String(fixed);
  hint.textContent = always
    ? `Fixed: the ${format.value} format always holds ${fixed} rounds.`
    : `Fixed: the ${format.value} format holds ${fixed} rounds for ${count} participants.`;
}

/** What /api/formats says of the chosen format (null when it could not be asked). */
function formatInfo(ctx, name = ctx.refs.format?.value) {
  const list = ctx.formats.get(Number(ctx.refs.rounds?.value)) ?? ctx.formats.get(3) ?? [];
  return list.find((f) => f.name === name) ?? null;
}

/** A format's name as people write it ("Structured rounds"), else its config name. */
function formatTitle(ctx, name) {
  return formatInfo(ctx, name)?.title ?? name;
}

/** The temperature a kind of call gets when its model sets none: the config's `temperatures`, else the server's. */
function roleTemperature(ctx, role) {
  const own = ctx.base?.temperatures ?? {};
  return role in own ? own[role] : ctx.meta.temperatures?.[role] ?? null;
}

/** Under each temperature field, what leaving it empty sends: the role's temperature for who answers there (a
 * participant's turns, its structured answers in a format that asks for them, the judge's verdict), or none
 * for a person. Drawn again when a model, the format or the config's `temperatures` change. */
function paintTemperatures(ctx) {
  const [cold, hot] = ctx.meta.bounds.temperature;
  const said = (role) => {
    const value = roleTemperature(ctx, role);
    return value === null ? `none is sent (the provider's default; temperatures.${role} is null)` : `${value}, the ${role} default (temperatures.${role})`;
  };
  const paint = (path, input, model, words) => {
    const hint = ctx.fields.get(path)?.wrap.querySelector(".hint");
    if (!hint) return;
    const person = isPersonModel(model);
    hint.textContent = person ? "A person answers here: no temperature is sent." : `${cold} to ${hot}; empty: ${words}.`;
    const value = roleTemperature(ctx, path.startsWith("judge") ? "judge" : "debater");
    input.placeholder = person || value === null ? "" : String(value);
  };
  const asks = formatInfo(ctx)?.asks_participants;
  ctx.rows.forEach(({ refs }, i) => {
    const words = said("debater") + (asks ? `; asked ${asks}: ${said("judge")}` : "");
    paint(`participants.${i}.temperature`, refs.temperature, refs.model.value.trim(), words);
  });
  if (ctx.judgeMode === "single" && ctx.refs.judgeTemperature) {
    const first = ctx.rows.map(({ refs }) => refs.model.value.trim()).find((m) => m && !isPersonModel(m));
    paint("judge.temperature", ctx.refs.judgeTemperature, ctx.refs.judgeModel.value.trim() || first || "", said("judge"));
  }
}

/** The chosen format's description and its phases for the rounds as typed (or the last valid count). */
function showFormat(ctx) {
  fixRounds(ctx);
  const rounds = Number(ctx.refs.rounds.value);
  // A count the format fixed may not have been asked about yet: ask, and draw again with its phases.
  if (ctx.roundsFixed && !ctx.formats.has(rounds)) refreshFormats(ctx);
  const list = ctx.formats.get(rounds) ?? ctx.formats.get(3) ?? [];
  const info = list.find((f) => f.name === ctx.refs.format.value);
  clear(ctx.refs.formatInfo);
  paintTemperatures(ctx);
  const byDefault = ctx.refs.assess?.querySelector('option[value=""]');
  if (byDefault) byDefault.textContent = info ? `${ASSESS[""]}: ${info.assesses_rounds ? "on" : "off"}` : ASSESS[""];
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
  const { turn_order: order, persona_diversity: diversity } = ctx.meta.choices;
  if (r.turnOrder.value !== order.default) out.turn_order = r.turnOrder.value;
  if (r.diversity.value !== diversity.default) out.persona_diversity = r.diversity.value;
  out.participants = ctx.rows.map(({ refs, extra }) => {
    const p = { ...extra, name: refs.name.value.trim(), model: refs.model.value.trim() };
    if (refs.persona.value.trim()) p.persona = refs.persona.value.trim();
    if (refs.stance.value.trim()) p.stance = refs.stance.value.trim();
    if (refs.temperature.value !== "" || refs.temperature.validity.badInput) p.temperature = numberOf(refs.temperature);
    if (refs.role.value) p.role = refs.role.value;
    if (refs.color.dataset.chosen) p.color = refs.color.value;
    return p;
  });
  Object.assign(out, collectJudge(ctx));
  const limits = carried(ctx.base.limits ?? {}, OWN.limits);
  for (const [key, input] of Object.entries(r.limits)) {
    if (input.value !== "" || input.validity.badInput) limits[key] = numberOf(input);
  }
  if (Object.keys(limits).length) out.limits = limits;
  const stopping = carried(ctx.base.stopping ?? {}, OWN.stopping);
  if (r.assess.value !== "") stopping.assess_rounds = r.assess.value === "true";
  if (r.diminishing.value !== "") stopping.diminishing_returns = r.diminishing.value === "true";
  if (r.drift.value !== ctx.meta.choices.drift.default) stopping.drift = r.drift.value;
  if (Object.keys(stopping).length) out.stopping = stopping;
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
  const extra = { ...ctx.refs.judgeExtra };
  const heat = ctx.refs.judgeTemperature;
  if (heat.value !== "" || heat.validity.badInput) extra.temperature = numberOf(heat);
  if (!model && !Object.keys(extra).length) return {}; // the server's default: Participant 1's model
  // A person is never made the judge by default (the server's rule too): the first model participant judges.
  const first = ctx.rows.map(({ refs }) => refs.model.value.trim()).find((m) => m && !isPersonModel(m));
  return { judge: { ...extra, model: model || first || ctx.defaultModel } };
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
  ctx.participantsEdited = true;
  const config = collect(ctx);
  const taken = new Set(config.participants.map((p) => p.name.toLowerCase()));
  let n = config.participants.length + 1;
  while (taken.has(`speaker ${n}`)) n += 1;
  const model = config.participants.at(-1)?.model || ctx.defaultModel;
  config.participants.push({ name: `Speaker ${n}`, model });
  fill(ctx, config, idOf(`participants.${config.participants.length - 1}.name`));
}

function removeParticipant(ctx, index) {
  ctx.participantsEdited = true;
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

// --- the saved defaults, templates and roles ----------------------------------------------------

/** A new config from the saved defaults: meta's new_config (names, stances, rounds as the server fills them)
 * with the models of GET /api/config, asked as the form opened (the page keeps meta for its whole life). */
function startingConfig(ctx) {
  const config = structuredClone(ctx.meta.new_config);
  const saved = ctx.saved;
  if (!saved) return config;
  if (saved.participants.length) {
    const count = Math.max(config.participants.length, saved.participants.length);
    config.participants = Array.from({ length: count }, (_, i) => {
      const who = { ...(config.participants[i] ?? { name: `Speaker ${i + 1}` }) };
      for (const key of MODEL_KEYS) delete who[key]; // how the model is called is the saved default's, whole
      return { ...who, ...savedModel(ctx, i) };
    });
  }
  if (saved.judge) config.judge = structuredClone(saved.judge);
  return config;
}

/** How participant `i` calls its model when the config names none: the saved defaults' model at its place
 * (cycling), else the model this server starts forms with. */
function savedModel(ctx, i) {
  const models = ctx.saved?.participants ?? [];
  return models.length ? structuredClone(models[i % models.length]) : { model: ctx.defaultModel };
}

/** Participants for a list of roles, named by each role's title (numbered when a role comes twice), each with
 * the saved model at its place: what the server makes of a design review's team or a template's roles. */
function roleParticipants(ctx, roles) {
  return roles.map((role, i) => {
    const title = roleTitle(ctx, role);
    const twice = roles.filter((r) => r === role).length > 1;
    return { name: twice ? `${title} ${i + 1}` : title, role, ...savedModel(ctx, i) };
  });
}

function roleTitle(ctx, role) {
  return (ctx.meta.roles ?? []).find((r) => r.name === role)?.title ?? role;
}

/** A format chosen. Design review with the participants as the form started them takes the saved team; leaving
 * it gives the starting participants back. Participants the user shaped stay as they are. */
function formatChosen(ctx) {
  const format = ctx.refs.format.value;
  const team = ctx.saved?.team ?? [];
  if (ctx.participantsEdited || !team.length) return showFormat(ctx);
  const config = collect(ctx);
  if (format === TEAM_FORMAT) config.participants = roleParticipants(ctx, team);
  else if (ctx.teamShown) config.participants = structuredClone(ctx.startParticipants);
  else return showFormat(ctx);
  ctx.teamShown = format === TEAM_FORMAT;
  fill(ctx, config, ctx.refs.format.id);
}

function templateOf(ctx) {
  return ctx.template ? (ctx.meta.templates ?? []).find((t) => t.name === ctx.template.name) ?? null : null;
}

/** A template chosen (or none): its topic written from its variables, its format, and, unless the user shaped
 * the participants, one participant per role it suggests, as `moot run --template` does. */
function chooseTemplate(ctx, name) {
  const config = collect(ctx);
  const before = templateOf(ctx);
  ctx.template = name ? { name, vars: {} } : null;
  const chosen = templateOf(ctx);
  if (chosen) {
    config.topic = filledTopic(chosen, ctx.template.vars);
    config.format = chosen.format;
    if (!ctx.participantsEdited && chosen.roles.length) {
      config.participants = roleParticipants(ctx, chosen.roles);
      ctx.teamShown = false;
    }
  } else if (before && config.topic === filledTopic(before, {})) {
    config.topic = ""; // the template's own words, untouched: they go with it
  }
  fill(ctx, config, "f-template");
}

/** The template's topic with each `{variable}` replaced by its value, else its default; a variable with
 * neither keeps its placeholder, which the form marks as still to give. */
function filledTopic(template, values) {
  return template.topic.replace(/\{([a-z_][a-z0-9_]*)\}/g, (whole, name) => {
    const value = (values[name] ?? "").trim();
    return value || (template.variables[name]?.default ?? whole);
  });
}

/** service_type -> "Service type". */
function variableLabel(name) {
  const words = name.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A role chosen for participant `i`: a name the form gave (Speaker N, Proponent, another role's title) becomes
 * the role's title, as the server names an unnamed participant of that role; a name the user wrote stays. */
function renameForRole(ctx, refs, i) {
  const name = refs.name.value.trim();
  const titles = (ctx.meta.roles ?? []).map((r) => r.title);
  const given = !name || /^Speaker \d+$/.test(name) || ["Proponent", "Opponent"].includes(name)
    || titles.some((t) => name === t || (name.startsWith(`${t} `) && /^\d+$/.test(name.slice(t.length + 1))));
  if (!given) return;
  refs.name.value = refs.role.value ? roleTitle(ctx, refs.role.value) : `Speaker ${i + 1}`;
  ctx.touched.add(`participants.${i}.name`);
}

// --- All settings ----------------------------------------------------------------------------------

/** The form's sections, or the All settings editor in their place. */
function showMode(ctx) {
  const open = ctx.settingsOpen;
  for (const part of ctx.form.querySelectorAll(":scope > .form-part")) part.hidden = open;
  ctx.editor.node.hidden = !open;
  ctx.refs.settingsToggle?.setAttribute("aria-expanded", String(open));
  ctx.form.classList.toggle("settings-open", open);
}

/** All settings opened with the form's config as YAML (POST /api/configs/draft-yaml: also an unfinished one),
 * the cursor at `path` when one is given (its keys written in when the config leaves it out). */
async function openSettings(ctx, path = null) {
  if (ctx.settingsOpen) {
    if (path) ctx.editor.goTo(path);
    return;
  }
  cancelCheck(ctx);
  hideBanner();
  const config = collect(ctx);
  let text;
  try {
    text = await api("/api/configs/draft-yaml", { method: "POST", body: config, accept: "text/yaml" });
  } catch (err) {
    if (ctx.alive) showError(err, { retry: () => openSettings(ctx, path) });
    return;
  }
  if (ctx.alive) openEditor(ctx, text, path);
}

function openEditor(ctx, text, path = null) {
  ctx.settingsOpen = true;
  showMode(ctx);
  ctx.editor.open(text, path);
  ctx.editor.schedule(); // every problem of the whole config, at once: the editor shows all of it
}

/** Back to the form with the config the text holds; the text stays open, its problems shown, when it cannot
 * be read. */
async function closeSettings(ctx) {
  if (!(await settle(ctx))) return;
  ctx.settingsOpen = false;
  ctx.editor.close();
  showMode(ctx);
  document.getElementById("f-settings-toggle")?.focus();
  if (ctx.touched.size || ctx.showAll) scheduleCheck(ctx);
}

/** Back to the form as it was when the editor opened: the form was not touched meanwhile. */
function discardSettings(ctx) {
  ctx.settingsOpen = false;
  ctx.editor.close();
  showMode(ctx);
  document.getElementById("f-settings-toggle")?.focus();
  if (ctx.touched.size || ctx.showAll) scheduleCheck(ctx);
}

/** With All settings open, the form drawn from the config its text holds (the editor stays open); false, with
 * why shown under the text, when the text cannot be read as a config. True at once when it is closed. */
async function settle(ctx) {
  if (!ctx.settingsOpen) return true;
  let config;
  try {
    config = await ctx.editor.read();
  } catch (err) {
    if (ctx.alive) showError(err);
    return false;
  }
  if (!config || !ctx.alive) return false;
  await ensureFormats(ctx, config.rounds);
  if (!ctx.alive) return false;
  const now = ctx.refs.topic.value.trim();
  if (config.topic !== now) ctx.template = null; // the text has its own topic
  // A participant the text gives no model speaks with the server's default model, which the server's reading
  // leaves out: the form shows it, not the model this form would start a new participant with.
  for (const p of config.participants ?? []) p.model ??= ctx.meta.default_model;
  ctx.showAll = true; // what the text set is the user's: its problems are all theirs to see, as a loaded file's
  ctx.participantsEdited = true;
  fill(ctx, config, document.activeElement?.id);
  return true;
}

// --- checking -----------------------------------------------------------------------------------

/** What the page's own controls can tell without the server: an empty topic (the server says the same), a
 * number input holding something that is not a number (it would reach the server as nothing at all). */
function unfinished(ctx, config) {
  const out = [];
  if (!config.topic) out.push(["topic", "Give the question to debate."]);
  const template = templateOf(ctx);
  for (const [name, variable] of Object.entries(template?.variables ?? {})) {
    // The server would refuse the template's topic without it; here the topic already holds its placeholder.
    if (variable.default == null && !ctx.template.vars[name]?.trim()) out.push([`vars.${name}`, `Give ${variableLabel(name).toLowerCase()}: the template needs it.`]);
  }
  for (const [path, { control }] of ctx.fields) {
    if (control?.type === "number" && control.validity.badInput) out.push([path, "Write a number here, or leave it empty."]);
  }
  return out;
}

// --- the server's check, as the user edits ------------------------------------------------------

/** Ask the server about the config once typing pauses. Every edit makes any answer still on its way stale.
 * With All settings open, it is the text that is asked about. */
function scheduleCheck(ctx) {
  cancelCheck(ctx);
  if (ctx.settingsOpen) ctx.editor.schedule();
  else ctx.checkTimer = setTimeout(() => liveCheck(ctx), CHECK_DELAY_MS);
}

function cancelCheck(ctx) {
  clearTimeout(ctx.checkTimer);
  ctx.checkSeq += 1; // an answer to an earlier question must not overwrite what a newer one shows
  ctx.checkAbort?.abort();
  ctx.checkAbort = null;
  ctx.editor?.cancel();
}

/** POST /api/configs/check with the form as it is now, and show its answer, unless a newer question was asked
 * meanwhile. The form stays usable while it waits; a server that cannot answer says nothing here (the
 * submit reports it). */
async function liveCheck(ctx) {
  const seq = ctx.checkSeq;
  const abort = (ctx.checkAbort = new AbortController());
  const config = collect(ctx);
  let found = [];
  try {
    await api("/api/configs/check", { method: "POST", body: config, signal: abort.signal });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) return;
    found = Object.entries(err.fields);
    if (!found.length) found = [["", err.message]];
  }
  if (!ctx.alive || seq !== ctx.checkSeq) return;
  ctx.checkAbort = null;
  // Until the user submits (or loads a file), only the fields they have edited speak: an untouched empty
  // topic is not yet a mistake.
  const shown = ctx.showAll ? found : found.filter(([path]) => touched(ctx, path));
  unmarkAll(ctx);
  mark(ctx, [...unfinished(ctx, config).filter(([path]) => ctx.showAll || ctx.touched.has(path)), ...shown], { focus: false });
}

function touched(ctx, path) {
  if (!path || path === "config") return ctx.touched.size > 0;
  for (const edited of ctx.touched) {
    if (edited === path || edited.startsWith(`${path}.`) || path.startsWith(`${edited}.`)) return true;
  }
  return false;
}

/** Show each problem next to its field (the nearest one for a path the form has no control for; the Other
 * settings section for one with no place in the form at all) and, unless told not to (the live check must not
 * move the cursor), focus the first. A field only All settings holds, the problem's own or one its message
 * names, gets a button that opens the editor at it. With All settings open, the problems are listed under its
 * text instead. False when there was nothing to show. */
function mark(ctx, found, { focus = true } = {}) {
  if (ctx.settingsOpen) return ctx.editor.show(found, { focus });
  let first = null;
  for (const [path, message] of found) {
    const text = message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
    let { place, rest } = placeOf(ctx, path);
    if (!place) ({ place, rest } = { place: ctx.fields.get("settings"), rest: path });
    place.wrap.classList.add("invalid");
    // The part of the path it has no control for is named; that field, and any other the message names that
    // the form has no control for, can be set in All settings.
    const elsewhere = [...new Set([rest ? path : null, ...namedFields(ctx, text)])].filter((p) => p && !controlled(ctx, p));
    place.error.replaceChildren(
      rest ? `${rest}: ${text}` : text,
      ...elsewhere.map((p) => [" ", h("button", { type: "button", class: "link jump", onclick: () => openSettings(ctx, p) }, `Set ${p} in All settings`)]).flat(),
    );
    place.error.hidden = false;
    place.control?.setAttribute("aria-invalid", "true");
    first ??= place;
  }
  if (first && focus) {
    const target = first.control ?? first.wrap.closest("fieldset")?.querySelector("input, select, textarea, button");
    target?.focus();
    first.wrap.scrollIntoView({ block: "center" });
  }
  return found.length > 0;
}

/** The config fields a message names ("needs stopping.assess_rounds: true"), as paths. */
function namedFields(ctx, text) {
  const tops = (ctx.meta.fields ?? []).map((f) => f.replace(/\W/g, "")).join("|");
  if (!tops) return [];
  const found = text.match(new RegExp(`\\b(?:${tops})(?:\\.[a-z_0-9]+|\\[\\d+\\])+`, "g")) ?? [];
  return found.map((p) => p.replace(/\[(\d+)\]/g, ".$1"));
}

/** Whether the form has a control of its own for this exact path. */
function controlled(ctx, path) {
  if (path.split(".")[0] in STANDS_FOR) return false;
  return Boolean(ctx.fields.get(path)?.control);
}

/** The field for a path, else the nearest enclosing one with the rest of the path to name in the message. */
function placeOf(ctx, path) {
  const head = path.split(".")[0];
  if (head in STANDS_FOR) return { place: ctx.fields.get(STANDS_FOR[head]), rest: path };
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

/** The config, unless the page's own controls show it unfinished (then null, with that shown). What else
 * is wrong the server answers: the request the button sends is checked as POST /api/configs/check checks. */
function finished(ctx) {
  cancelCheck(ctx); // the button's request answers now; a live answer would be about the same form
  ctx.showAll = true; // from now on the live check shows every problem, not only those of edited fields
  unmarkAll(ctx);
  hideBanner();
  const config = collect(ctx);
  return mark(ctx, unfinished(ctx, config)) ? null : config;
}

/** A 422 from the server shown at its fields; anything else in the banner. */
function serverError(ctx, err, retry) {
  const fields = err instanceof ApiError ? Object.entries(err.fields) : [];
  if (err instanceof ApiError && err.status === 422 && fields.length) mark(ctx, fields);
  else showError(err, { retry });
}

// --- what the buttons do ----------------------------------------------------------------------

async function submit(ctx) {
  // With All settings open the debate starts from its text, read into the form first (and left open, so a
  // problem the server finds shows at its line).
  if (!(await settle(ctx))) return;
  const config = finished(ctx);
  if (!config) return;
  if (ctx.editing) return save(ctx, config);
  const button = ctx.refs.submit;
  busy(button, true, "Starting…");
  try {
    const started = await api("/api/debates", { method: "POST", body: config });
    if (!ctx.alive) return;
    draft = null;
    ctx.started = true; // a new debate next time, not this one again
    rememberLinks(started.id, started.links); // people in it: their join links, shown once on its page
    location.hash = `#/debates/${started.id}`;
  } catch (err) {
    if (ctx.alive) serverError(ctx, err, () => submit(ctx));
  } finally {
    busy(button, false);
  }
}

/** The edited config in place of the debate's (the form holds it whole, so PUT, not a merge patch); back to the
 * debate's page once the server has checked and recorded it. */
async function save(ctx, config) {
  const button = ctx.refs.submit;
  busy(button, true, "Saving…");
  try {
    await api(`/api/debates/${encodeURIComponent(ctx.editing)}/config`, { method: "PUT", body: config });
    if (!ctx.alive) return;
    ctx.started = true;
    location.hash = `#/debates/${encodeURIComponent(ctx.editing)}`;
  } catch (err) {
    if (ctx.alive) serverError(ctx, err, () => save(ctx, config));
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
  const request = { topic: config.topic, count: config.participants.length, model: first.model };
  if (config.persona_diversity) request.diversity = config.persona_diversity;
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
      p.persona = answer.texts[i]; // the server's words for it, as a debate's 'auto' persona gets them
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

async function loadFile(ctx, input) {
  const file = input.files?.[0];
  input.value = ""; // choosing the same file again still loads it
  if (!file) return;
  hideBanner();
  try {
    // Characters take up to 4 bytes: a file past this many cannot be under the server's limit on its text.
    if (file.size > ctx.meta.limits.max_config_chars * 4) throw new Error(`${file.name} is too large for a config file.`);
    const text = await file.text();
    if (ctx.settingsOpen) {
      // Into the editor as it is, comments and all: read (and checked) there, like anything typed.
      ctx.editor.replace(text);
      showInfo(`Loaded ${file.name} into All settings.`);
      return;
    }
    const config = await api("/api/configs/parse", { method: "POST", body: { text } });
    if (!ctx.alive) return;
    await ensureFormats(ctx, config.rounds);
    if (!ctx.alive) return;
    ctx.showAll = true; // a loaded file's problems are all the user's to see at once
    ctx.participantsEdited = true; // the file's participants are the user's: no format or template replaces them
    ctx.template = null; // the file has its own topic
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
  if (!(await settle(ctx))) return;
  if (ctx.settingsOpen) {
    // The text as it is written, comments and all: it has just been read as this config.
    saveFile(`${fileStem(collect(ctx))}.yaml`, ctx.editor.value, "text/yaml");
    return;
  }
  const config = finished(ctx);
  if (!config) return;
  try {
    const text = await api("/api/configs/yaml", { method: "POST", body: config, accept: "text/yaml" });
    saveFile(`${fileStem(config)}.yaml`, text, "text/yaml");
  } catch (err) {
    if (ctx.alive) serverError(ctx, err, () => saveYaml(ctx));
  }
}

/** The config as the server reads it back, checked by it and without the defaults it would fill in: the
 * same content as the YAML file, as JSON. */
async function saveJson(ctx) {
  if (!(await settle(ctx))) return;
  const config = finished(ctx);
  if (!config) return;
  try {
    const sparse = await api("/api/configs/parse", { method: "POST", body: { text: JSON.stringify(config) } });
    saveFile(`${fileStem(config)}.json`, `${JSON.stringify(sparse, null, 2)}\n`, "application/json");
  } catch (err) {
    if (ctx.alive) serverError(ctx, err, () => saveJson(ctx));
  }
}

/** A download's file name from the topic: its words, lowercase, joined by hyphens. */
function fileStem(config) {
  const words = config.topic.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return words.join("-").slice(0, 40).replace(/-+$/, "") || "debate";
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
