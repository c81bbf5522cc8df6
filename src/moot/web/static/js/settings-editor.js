// The form's All settings editor: the whole config as YAML text, every field a config file can hold. The form
// opens it with the config it holds (POST /api/configs/draft-yaml) and takes back what it reads as a config
// (POST /api/configs/parse), so nothing the form has no control for is lost either way (form.js keeps it).
//
// As the user types, the text is read and checked as the form's fields are (POST /api/configs/parse, then
// POST /api/configs/check), and each problem is listed under the text: a YAML syntax error at its line and
// column, a field's error with the field's path and, where the text has the field, its line. Every line
// number and field named there is a button that takes the cursor to it, writing a field's keys in when the
// text leaves it out. The server's words and the user's text are only ever set as text.
import { api, ApiError } from "./api.js";
import { h } from "./dom.js";
import { lineAt, lineSpan, locate, openAt } from "./yaml-paths.js";

const CHECK_DELAY_MS = 400;
// "not valid YAML: line 4, column 9: did not find expected ',' or '}'" (moot.config_syntax).
const SYNTAX = /^not valid (YAML|JSON): line (\d+), column (\d+): (.*)$/s;

export class SettingsEditor {
  /**
   * @param {object} options
   * @param {string[]} options.fields the top-level fields of a config (meta's `fields`): a message naming one
   *   of them (`stopping.assess_rounds`) gets a button that goes there
   * @param {() => void} options.onBack read the text and go back to the form
   * @param {() => void} options.onDiscard go back to the form as it was
   */
  constructor({ fields, onBack, onDiscard }) {
    this.named = new RegExp(`\\b(?:${fields.map((f) => f.replace(/\W/g, "")).join("|")})(?:\\.[a-z_0-9]+|\\[\\d+\\])+`, "g");
    this.seq = 0;
    this.timer = null;
    this.abort = null;
    this.text = h("textarea", {
      id: "f-settings", class: "yaml", rows: 24, spellcheck: "false", autocapitalize: "off", autocomplete: "off",
      "aria-describedby": "f-settings-hint f-settings-problems",
    });
    this.problems = h("ul", { class: "problems", id: "f-settings-problems", "aria-live": "polite" });
    this.status = h("p", { class: "hint check-status", role: "status" });
    this.wrap = h(
      "div", { class: "field" },
      h("label", { for: this.text.id }, "The config as YAML"),
      this.text,
      this.status,
      this.problems,
    );
    this.node = h(
      "fieldset", { class: "all-settings", id: "f-all-settings", hidden: true },
      h("legend", {}, "All settings"),
      h(
        "p", { class: "hint", id: "f-settings-hint" },
        "Every setting a config file holds, as YAML: the form's and the rest (history, timeouts, round ",
        "assessment, temperatures by role, judge fallbacks and criteria, audience, format options…; ",
        "`moot schema` describes each). Checked as you type. “Back to the form” reads it into the form; ",
        "“Start debate” starts it as it is.",
      ),
      this.wrap,
      h(
        "div", { class: "actions" },
        h("button", { type: "button", id: "f-settings-back", onclick: onBack }, "Back to the form"),
        h("button", { type: "button", id: "f-settings-discard", onclick: onDiscard }, "Discard changes"),
      ),
    );
  }

  get value() {
    return this.text.value;
  }

  /** Tall enough for the text it was given (within reason): a short config is not a screen of blank lines. */
  fit() {
    const lines = this.text.value.split("\n").length;
    this.text.rows = Math.min(Math.max(lines + 3, 12), 40);
  }

  /** Show `text` (the config as the form holds it), the cursor at `path` when one is given. */
  open(text, path = null) {
    this.text.value = text;
    this.fit();
    this.node.hidden = false;
    this.show([]);
    if (path) this.goTo(path);
    else this.text.focus();
  }

  close() {
    this.cancel();
    this.node.hidden = true;
  }

  /** Replace the text (a loaded file's), keeping the editor open, and check it. */
  replace(text) {
    this.text.value = text;
    this.fit();
    this.schedule();
  }

  /** Check the text once typing pauses; an answer to an earlier text is dropped. */
  schedule() {
    this.cancel();
    this.timer = setTimeout(() => this.check(), CHECK_DELAY_MS);
  }

  cancel() {
    clearTimeout(this.timer);
    this.seq += 1;
    this.abort?.abort();
    this.abort = null;
  }

  /** Read the text as the server does and check the config it holds; show what is wrong (nothing: all clear). */
  async check() {
    const seq = this.seq;
    const abort = (this.abort = new AbortController());
    this.status.textContent = "Checking…";
    let found = [];
    try {
      const config = await api("/api/configs/parse", { method: "POST", body: { text: this.value }, signal: abort.signal });
      if (seq !== this.seq) return;
      await api("/api/configs/check", { method: "POST", body: config, signal: abort.signal });
    } catch (err) {
      if (seq !== this.seq) return;
      if (!(err instanceof ApiError) || err.status !== 422) {
        this.status.textContent = ""; // the server could not answer: the start says so, not the live check
        return;
      }
      found = problemsOf(err);
    }
    if (seq !== this.seq) return;
    this.abort = null;
    this.show(found);
  }

  /** The config the text holds (POST /api/configs/parse), or null with why shown under the text. */
  async read() {
    this.cancel();
    try {
      return await api("/api/configs/parse", { method: "POST", body: { text: this.value } });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      this.show(problemsOf(err), { focus: true });
      return null;
    }
  }

  /** List each [path, message] problem under the text, at its line where the text has it. */
  show(found, { focus = false } = {}) {
    this.problems.replaceChildren(...found.map(([path, message]) => this.problem(path, message)));
    this.status.textContent = found.length ? "" : this.value.trim() ? "No problems found." : "";
    this.wrap.classList.toggle("invalid", found.length > 0);
    if (found.length) this.text.setAttribute("aria-invalid", "true");
    else this.text.removeAttribute("aria-invalid");
    if (focus && found.length) {
      const [path, message] = found[0];
      const syntax = SYNTAX.exec(message);
      if (syntax) this.goToLine(Number(syntax[2]));
      else if (path) this.goTo(path, { write: false });
    }
    return found.length > 0;
  }

  problem(path, message) {
    const syntax = SYNTAX.exec(message);
    if (syntax) {
      const [, kind, line, column, what] = syntax;
      return h("li", { class: "error" }, this.lineButton(Number(line), `line ${line}, column ${column}`), `: not valid ${kind}: ${what}`);
    }
    const text = message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
    if (!path || path === "config") return h("li", { class: "error" }, text, this.leads(text, path));
    const where = locate(this.value, path);
    const head = where.exact ? [this.lineButton(where.line, `line ${where.line}`), ": "] : [];
    const go = where.exact ? null : [" ", this.goButton(path)];
    return h("li", { class: "error" }, head, `${path}: ${text}`, go, this.leads(text, path));
  }

  /** Buttons to the other fields a message names ("needs stopping.assess_rounds"). */
  leads(text, own) {
    const named = [...new Set(text.match(this.named) ?? [])].filter((p) => p !== own);
    return named.map((p) => [" ", this.goButton(p)]);
  }

  lineButton(line, words) {
    return h("button", { type: "button", class: "link jump", onclick: () => this.goToLine(line) }, words);
  }

  goButton(path) {
    return h("button", { type: "button", class: "link jump", onclick: () => this.goTo(path) }, `Go to ${path}`);
  }

  /** The cursor on `path`'s value, its keys written in first when the text leaves it out (unless `write` is
   * false: then the nearest field it has). */
  goTo(path, { write = true } = {}) {
    const at = openAt(this.value, path);
    if (at.text !== this.value) {
      if (!write) return this.goToLine(locate(this.value, path).line ?? 1);
      this.text.value = at.text;
      this.schedule();
    }
    this.select(at.start, at.end);
  }

  goToLine(line) {
    const { start, end } = lineSpan(this.value, line - 1);
    this.select(start, end);
  }

  select(start, end) {
    this.text.focus();
    this.text.setSelectionRange(start, end);
    // Scroll the text to the line (browsers do not always bring a selection into view).
    const style = getComputedStyle(this.text);
    const lineHeight = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
    const line = lineAt(this.value, start);
    this.text.scrollTop = Math.max(0, (line - 3) * lineHeight);
    this.text.scrollIntoView({ block: "nearest" });
  }
}

/** The problems a 422 names: [field path, message] pairs ("" for the text or the config as a whole). */
export function problemsOf(err) {
  const found = Object.entries(err.fields);
  return found.length ? found : [["", err.message]];
}
