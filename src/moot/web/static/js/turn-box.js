// A participant's turn, written on the page of their join link: shown while the debate awaits their turn (a
// `turn_awaited` for their seat), with the characters left of the turn's limit, the time left when there is a
// deadline, and Submit (or Ctrl/Cmd-Enter). POST .../turns records it; the box goes once the turn is in the
// transcript. The draft is kept in this tab, so a reload or a dropped connection loses nothing typed.

import { api } from "./api.js";
import { h, uid } from "./dom.js";
import { countdown } from "./people.js";

const DRAFT_KEY = (debateId, round, target) => `moot.draft.${debateId}.${round}.${target ?? ""}`;
const chars = (text) => [...text].length; // characters as the server counts them (code points)
const oneLine = (text) => String(text ?? "").split(/\s+/).filter(Boolean).join(" ");

export class TurnBox {
  /** @param {{debateId: string, name: (id: string) => string}} options */
  constructor({ debateId, name }) {
    this.id = debateId;
    this.name = name;
    this.asked = null; // the turn awaited: {round, target, deadline, max_chars}
    const textId = uid("turn");
    this.heading = h("h2", { id: uid("turn-title") }, "Your turn");
    this.task = h("p", { class: "muted small task" });
    this.text = h("textarea", {
      id: textId,
      rows: 7,
      autocomplete: "off",
      spellcheck: "true",
      enterkeyhint: "enter",
      dataset: { testid: "turn-text" },
    });
    this.count = h("span", { class: "char-count", "aria-live": "polite", dataset: { testid: "turn-count" } });
    this.clock = h("span", { class: "turn-clock" });
    this.submit = h("button", { type: "submit", class: "primary", dataset: { testid: "turn-submit" } }, "Submit turn");
    this.error = h("p", { class: "error one-line", role: "alert", id: uid("turn-error"), dataset: { testid: "turn-error" } });
    this.said = h("p", { class: "muted small", role: "status", dataset: { testid: "turn-status" } });
    const keys = /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘-Enter" : "Ctrl-Enter";
    this.text.setAttribute("aria-describedby", this.error.id);
    this.form = h(
      "form",
      { class: "turn-form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.send(); } },
      h("label", { for: textId, class: "visually-hidden" }, "Your turn"),
      this.text,
      h("div", { class: "turn-foot" }, this.count, this.clock, h("span", { class: "muted small keys" }, `${keys} sends`), this.submit),
      this.error,
      this.said,
    );
    this.node = h(
      "section",
      { class: "card turn-box", "aria-labelledby": this.heading.id, dataset: { testid: "turn-box" }, hidden: true },
      this.heading,
      this.task,
      this.form,
    );
    this.text.addEventListener("input", () => {
      this.error.textContent = "";
      this.counted();
      if (this.asked) sessionStorage.setItem(DRAFT_KEY(this.id, this.asked.round, this.asked.target), this.text.value);
    });
    this.text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.send();
      }
    });
  }

  /** Show the box for the turn asked (null: hide it). A new turn starts from its own draft. */
  show(asked) {
    const same = this.asked && asked && this.asked.round === asked.round && this.asked.target === asked.target;
    if (!asked) {
      this.asked = null;
      this.node.hidden = true;
      return false;
    }
    this.asked = asked;
    if (!same) {
      this.text.value = sessionStorage.getItem(DRAFT_KEY(this.id, asked.round, asked.target)) ?? "";
      this.error.textContent = "";
      this.said.textContent = "";
      this.sending = false;
      this.sent = false;
      this.heading.textContent = `Your turn · round ${asked.round}`;
      this.task.textContent = asked.target ? `You answer ${this.name(asked.target)}.` : "Write your argument; the others see it when you submit.";
      this.clock.replaceChildren();
      const left = countdown(asked.deadline);
      if (left) this.clock.append(left);
    }
    this.node.hidden = false;
    this.counted();
    this.busy(this.sending || this.sent);
    return !same;
  }

  counted() {
    const max = this.asked?.max_chars ?? 0;
    const n = chars(this.text.value);
    this.count.textContent = `${n.toLocaleString("en")} / ${max.toLocaleString("en")}`;
    this.count.classList.toggle("over", n > max);
    this.count.title = n > max ? `${(n - max).toLocaleString("en")} characters too many` : `${(max - n).toLocaleString("en")} characters left`;
  }

  busy(on) {
    this.submit.disabled = on;
    this.text.readOnly = on;
    this.submit.textContent = this.sending ? "Sending…" : this.sent ? "Sent" : "Submit turn";
  }

  async send() {
    if (!this.asked || this.sending || this.sent) return;
    const text = this.text.value.trim();
    const max = this.asked.max_chars;
    if (!text) return void (this.error.textContent = "Write your turn first.");
    if (chars(text) > max) return void (this.error.textContent = `${(chars(text) - max).toLocaleString("en")} characters over the limit of ${max.toLocaleString("en")}: shorten it.`);
    this.sending = true;
    this.error.textContent = "";
    this.busy(true);
    const asked = this.asked;
    try {
      await api(`/api/debates/${encodeURIComponent(this.id)}/turns`, { method: "POST", body: { text } });
      sessionStorage.removeItem(DRAFT_KEY(this.id, asked.round, asked.target));
      this.sent = true;
      this.said.textContent = "Sent: it joins the transcript in a moment.";
    } catch (err) {
      // 409: not this seat's turn now (already given, the time is up, the debate stopped); 422: the text.
      this.error.textContent = oneLine(err.message);
    } finally {
      this.sending = false;
      this.busy(this.sent);
    }
  }

  focus() {
    this.text.focus({ preventScroll: true });
  }
}
