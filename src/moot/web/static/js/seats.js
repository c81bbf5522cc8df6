// The creator's side of people in a debate: the join links POST /api/debates answers with, shown once on the
// debate's page (the server keeps only their hashes, so the page is the one place they can be copied from), and
// the seats panel (GET .../seats) that revokes a seat's link or makes it a new one (shown once too).

import { api } from "./api.js";
import { showError } from "./banner.js";
import { h } from "./dom.js";

const KINDS = { participant: "participant", judge: "judge", audience: "audience" };
// Links a creation answered with, by debate id, until its page shows them: memory only, never stored.
const fresh = new Map();

/** Keep the `links` of a creation's answer for the debate's page to show once. */
export function rememberLinks(debateId, links) {
  if (links && Object.keys(links).length) fresh.set(debateId, links);
}

/** The links to show on the debate's page, once (null after). */
export function takeLinks(debateId) {
  const links = fresh.get(debateId) ?? null;
  fresh.delete(debateId);
  return links;
}

/** A seat's address as a full URL (the server's, or this page's origin when it sends a relative one). */
function absolute(url) {
  try {
    return new URL(url, location.href).href;
  } catch {
    return String(url);
  }
}

/** A read-only field with the link and a Copy button (the field selected where the browser will not copy). */
function linkRow(label, url, testid) {
  const field = h("input", { type: "text", readonly: true, value: absolute(url), class: "link", "aria-label": `${label}: join link`, dataset: { testid: `${testid}-url` } });
  const said = h("span", { class: "muted small copied", role: "status" });
  const copy = h(
    "button",
    {
      type: "button",
      dataset: { testid: `${testid}-copy` },
      onclick: async () => {
        try {
          if (!navigator.clipboard) throw new Error("no clipboard");
          await navigator.clipboard.writeText(field.value);
          said.textContent = "Copied.";
        } catch {
          field.focus();
          field.select();
          said.textContent = "Selected: copy it (Ctrl+C or ⌘C).";
        }
      },
    },
    "Copy",
  );
  field.addEventListener("focus", () => field.select());
  return h("div", { class: "link-row" }, field, copy, said);
}

/**
 * A note beside links that name this machine (the server says so: `local_only`, a loopback address and no public
 * URL set): they open only here, and how to give ones others can reach. Null when none does.
 */
export function localNote(links) {
  const local = links.filter((l) => l.local_only);
  if (!local.length) return null;
  let host = "this machine";
  try {
    host = new URL(local[0].url).host;
  } catch {
    // the words below still hold
  }
  const one = links.length === 1;
  return h(
    "p",
    { class: "notice warning local-links", role: "note", dataset: { testid: "local-links" } },
    h("strong", {}, `${one ? "This link only works" : "These links only work"} on this machine`),
    ` (${one ? "it points" : "they point"} at ${host}). Start the server with `,
    h("code", {}, "--public-url https://…"),
    ` (the address others reach it at) so others can open ${one ? "it" : "them"}.`,
  );
}

/** The join links of a debate just created: who each is for, the link, Copy, and for a participant's or a judge's
 * seat "Take this seat here" (its person's page, in this tab); a note that they show once. */
export function linksCard(links, debateId) {
  const take = (seat, link) => {
    // The links stay for this tab's way back (memory only): the card is where they can still be copied from.
    rememberLinks(debateId, links);
    location.hash = `#/join/${encodeURIComponent(debateId)}/${encodeURIComponent(seat)}/${encodeURIComponent(link.token)}`;
  };
  const rows = Object.entries(links).map(([seat, link]) =>
    h(
      "li",
      { dataset: { seat, testid: "join-link" } },
      h(
        "div",
        { class: "seat-name" },
        h("strong", {}, link.name ?? seat),
        h("span", { class: "muted small" }, ` · ${KINDS[link.kind] ?? link.kind}`),
        debateId && link.token && link.kind !== "audience"
          ? h("button", { type: "button", class: "small-button take-seat", dataset: { testid: `take-${seat}` }, onclick: () => take(seat, link) }, "Take this seat here")
          : null,
      ),
      linkRow(link.name ?? seat, link.url, `link-${seat}`),
    ),
  );
  const close = h("button", { type: "button", onclick: () => card.remove() }, "I have kept them");
  const card = h(
    "section",
    { class: "card join-links", "aria-labelledby": "join-links-title", dataset: { testid: "join-links" } },
    h("h2", { id: "join-links-title" }, "Join links"),
    h(
      "p",
      { class: "notice warning" },
      h("strong", {}, "Shown once; keep them. "),
      "Send each person their own link: whoever opens it takes that seat. This page cannot show them again; a lost one can be replaced below (the old one stops working).",
    ),
    localNote(Object.values(links)),
    h("ul", { class: "links" }, rows),
    h("div", { class: "actions" }, close),
  );
  return card;
}

/**
 * The seats of a debate with people in it, for its creator: each seat's name, kind and state, with Revoke (its
 * link stops working) and New link (a fresh one, shown once; the old one stops working).
 */
export class SeatsPanel {
  constructor(debateId) {
    this.id = debateId;
    this.list = h("ul", { class: "seats" });
    this.node = h(
      "section",
      { class: "card seats-panel", "aria-label": "Seats for people", dataset: { testid: "seats" }, hidden: true },
      h("h2", { class: "small" }, "People's seats"),
      this.list,
    );
  }

  async load() {
    let seats;
    try {
      seats = await api(`/api/debates/${encodeURIComponent(this.id)}/seats`);
    } catch {
      return; // no seats here (a server without them, a debate without people): the panel stays hidden
    }
    seats = Array.isArray(seats) ? seats : (seats?.seats ?? Object.entries(seats ?? {}).map(([seat, s]) => ({ seat, ...s })));
    if (!seats.length) return;
    this.list.replaceChildren(...seats.map((s) => this.row(s)));
    this.node.hidden = false;
  }

  row(s) {
    const state = h("span", { class: "muted small seat-state", dataset: { testid: "seat-state" } }, seatState(s));
    const extra = h("div", { class: "seat-link" });
    const revoke = h("button", { type: "button", class: "danger small-button", dataset: { testid: `revoke-${s.seat}` } }, "Revoke");
    const renew = h("button", { type: "button", class: "small-button", dataset: { testid: `renew-${s.seat}` } }, "New link");
    revoke.disabled = Boolean(s.revoked);
    revoke.addEventListener("click", async () => {
      if (!confirm(`Revoke ${s.name ?? s.seat}'s link? It stops working at once; you can make a new one.`)) return;
      revoke.disabled = true;
      try {
        const answer = await api(`/api/debates/${encodeURIComponent(this.id)}/seats/${encodeURIComponent(s.seat)}/revoke`, { method: "POST" });
        state.textContent = seatState({ ...s, ...(answer ?? {}), revoked: true });
        extra.replaceChildren();
      } catch (err) {
        showError(err);
        revoke.disabled = false;
      }
    });
    renew.addEventListener("click", async () => {
      renew.disabled = true;
      try {
        const link = await api(`/api/debates/${encodeURIComponent(this.id)}/seats/${encodeURIComponent(s.seat)}/token`, { method: "POST" });
        state.textContent = seatState({ ...s, ...link, revoked: false });
        revoke.disabled = false;
        extra.replaceChildren(
          h("p", { class: "small" }, h("strong", {}, "New link, shown once: "), "the old one no longer works."),
          linkRow(s.name ?? s.seat, link.url, `new-link-${s.seat}`),
          localNote([link]),
        );
      } catch (err) {
        showError(err);
      } finally {
        renew.disabled = false;
      }
    });
    return h(
      "li",
      { dataset: { seat: s.seat } },
      h("div", { class: "seat-head" }, h("strong", {}, s.name ?? s.seat), h("span", { class: "muted small" }, ` · ${KINDS[s.kind] ?? s.kind ?? ""}`), " ", state),
      h("div", { class: "actions" }, revoke, renew),
      extra,
    );
  }
}

function seatState(s) {
  if (s.revoked) return "link revoked";
  if (s.kind === "audience" && s.voters != null) return `${s.voters} voted`;
  if (s.joined === true || s.seen_at || s.joined_at) return "joined";
  if (s.joined === false) return "not joined yet";
  return "";
}
