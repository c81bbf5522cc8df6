// Past and current debates: a filtered, paged list from GET /api/debates. The filters live in the hash
// query (#/history?status=completed&text=x), so a reload or a shared link shows the same list.
import { api } from "./api.js";
import { hideBanner, showError } from "./banner.js";
import { append, clear, h, uid, when } from "./dom.js";
import { colourOf } from "./palette.js";

// The Status literal of moot.domain.state, in the order a debate goes through them.
const STATUSES = ["created", "queued", "pending", "running", "judging", "paused", "completed", "failed", "interrupted"];
const LIMIT = 25;
const KEYS = ["text", "status", "format", "from", "to"];
// The table's columns; on a phone each row is a card whose lines these name (app.css, `data-label`).
const COLUMNS = ["Topic", "Format", "Participants", "Status", "Created", "Rounds", "Winner", ""];

/** The filters of a hash query, with anything unknown or malformed dropped rather than sent. */
function filtersOf(params) {
  const f = {};
  for (const key of KEYS) f[key] = (params.get(key) ?? "").trim();
  if (!STATUSES.includes(f.status)) f.status = "";
  for (const key of ["from", "to"]) if (!/^\d{4}-\d{2}-\d{2}$/.test(f[key])) f[key] = "";
  // The debates `moot eval` held are left out unless asked for: dozens at a time would bury the rest.
  f.evals = params.get("eval") === "1";
  f.offset = Math.max(0, Number.parseInt(params.get("offset") ?? "0", 10) || 0);
  return f;
}

function hashOf(f) {
  const q = new URLSearchParams();
  for (const key of KEYS) if (f[key]) q.set(key, f[key]);
  if (f.evals) q.set("eval", "1");
  if (f.offset) q.set("offset", String(f.offset));
  const s = q.toString();
  return s ? `#/history?${s}` : "#/history";
}

/** A date field's day as an instant: from the start of `from` to the end of `to`, in local time. */
function instant(day, end) {
  if (!day) return undefined;
  const d = new Date(`${day}T${end ? "23:59:59.999" : "00:00:00"}`);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function field(label, control) {
  const id = uid("history");
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), control);
}

function select(options, value) {
  return h("select", {}, options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
}

export function renderHistory(main, params) {
  // The raw query of the address when there is one: a query decoded before parsing (as app.js hands it
  // over) turns an "&" typed in the search into a second parameter.
  const raw = location.hash.match(/^#\/history\?(.*)$/);
  let filters = filtersOf(raw ? new URLSearchParams(raw[1]) : params);
  let alive = true;
  let ticket = 0; // only the latest request may draw, however the answers are ordered

  const text = h("input", { type: "search", value: filters.text, autocomplete: "off", placeholder: "Words in the topic" });
  const status = select([["", "any"], ...STATUSES.map((s) => [s, s])], filters.status);
  const format = select([["", "any"]], filters.format);
  const from = h("input", { type: "date", value: filters.from });
  const to = h("input", { type: "date", value: filters.to });
  const evals = h("input", { type: "checkbox", checked: filters.evals });
  evals.id = uid("history");
  const form = h("form", { id: uid("filters"), role: "search", class: "filters", "aria-label": "Filter debates", onsubmit: (e) => { e.preventDefault(); apply(); } },
    h("div", { class: "grid" },
      field("Search", text), field("Status", status), field("Format", format), field("From", from), field("To", to)),
    h("div", { class: "field check" }, evals, h("label", { for: evals.id }, "Show evaluation debates")),
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Apply"),
      h("a", { class: "button", href: "#/history" }, "Clear")));
  // Choosing from a list is a decision already made; typed text waits for Enter or the button.
  for (const control of [status, format, from, to, evals]) control.addEventListener("change", () => apply());

  // On a phone the filters wait behind one button, so the first debate is on the first screen; open when a filter
  // is set (the list is then not everything), and on a wider screen always shown (the button is not).
  const toggle = h("button", { type: "button", class: "filter-toggle", "aria-controls": form.id, dataset: { testid: "filter-toggle" }, onclick: () => fold(!opened) });
  let opened = false;
  fold(active() > 0);

  const heading = h("h2", { tabindex: "-1" }, "Debates");
  const info = h("p", { class: "muted small", role: "status" }, "Loading…");
  const results = h("div", { class: "table-wrap" });
  const newer = h("button", { type: "button", disabled: true, onclick: () => page(-LIMIT) }, "Newer");
  const older = h("button", { type: "button", disabled: true, onclick: () => page(LIMIT) }, "Older");
  main.append(h("div", { class: "page-head" }, h("h1", {}, "History"), toggle), form, heading, info, results, h("nav", { class: "actions pager", "aria-label": "Pages" }, newer, older));

  loadFormats();
  load();
  return () => {
    alive = false;
  };

  async function loadFormats() {
    try {
      const formats = await api("/api/formats");
      if (!alive) return;
      for (const f of formats) format.append(h("option", { value: f.name, selected: f.name === filters.format }, f.name));
    } catch {
      // Not worth a banner: the list still works, only without this filter's choices.
    }
    // A format in the hash that this server does not know is still shown, so the filter is visible.
    if (filters.format && format.value !== filters.format) format.append(h("option", { value: filters.format, selected: true }, filters.format));
  }

  function apply() {
    filters = { text: text.value.trim(), status: status.value, format: format.value, from: from.value, to: to.value, evals: evals.checked, offset: 0 };
    fold(opened);
    go();
  }

  /** The filters set now (the search, a status, a format, a day, evaluation debates shown). */
  function active() {
    return KEYS.filter((k) => filters[k]).length + (filters.evals ? 1 : 0);
  }

  /** Open or close the filters on a narrow screen; the button says how many are set. */
  function fold(open) {
    const wasOpen = opened;
    opened = open;
    form.classList.toggle("folded", !open);
    toggle.setAttribute("aria-expanded", String(open));
    const n = active();
    toggle.replaceChildren("Filter", ...(n ? [h("span", { class: "visually-hidden" }, ", "), h("span", { class: "badge" }, `${n} set`)] : []));
    if (open && !wasOpen && toggle.matches(":focus")) text.focus();
  }

  function page(delta) {
    filters = { ...filters, offset: Math.max(0, filters.offset + delta) };
    go().then(() => alive && heading.focus());
  }

  /** Record the filters in the hash without re-rendering (pushState fires no hashchange), then load. */
  function go() {
    const target = hashOf(filters);
    if (location.hash !== target) history.pushState(null, "", target);
    return load();
  }

  async function load() {
    const mine = ++ticket;
    info.textContent = "Loading…";
    let rows;
    try {
      rows = await api("/api/debates", {
        params: {
          status: filters.status, text: filters.text, since: instant(filters.from, false), until: instant(filters.to, true),
          // One more than a page tells whether an older page exists.
          format: filters.format, limit: LIMIT + 1, offset: filters.offset,
          include_eval: filters.evals ? "true" : undefined,
        },
      });
    } catch (err) {
      if (alive && mine === ticket) {
        info.textContent = "The list could not be loaded.";
        showError(err, { retry: load });
      }
      return;
    }
    if (!alive || mine !== ticket) return;
    hideBanner();
    const more = rows.length > LIMIT;
    const shown = rows.slice(0, LIMIT);
    newer.disabled = filters.offset === 0;
    older.disabled = !more;
    draw(shown);
  }

  function draw(rows) {
    results.replaceChildren();
    if (!rows.length) {
      const filtered = KEYS.some((k) => filters[k]) || filters.evals || filters.offset;
      append(clear(info), [
        filtered ? "No debates match these filters. " : "No debates yet. ",
        h("a", { href: "#/" }, "Start a debate"),
        filtered ? [" or ", h("a", { href: "#/history" }, "clear the filters")] : null,
        ".",
      ]);
      return;
    }
    const first = filters.offset + 1;
    info.textContent = `Debates ${first}–${filters.offset + rows.length}, newest first.`;
        results.append(h("table", { class: "data history" },
      h("thead", {}, h("tr", {}, COLUMNS.map(
        (t, i) => h("th", { scope: "col", class: i === 5 ? "num" : null }, t ? t : h("span", { class: "visually-hidden" }, "Actions"))))),
      h("tbody", {}, rows.map(row))));
  }

  function row(d) {
    const names = Object.fromEntries((d.participants ?? []).map((p) => [p.id, p.name]));
    const tr = h("tr", { dataset: { id: d.id } },
      h("td", {}, h("a", { href: `#/debates/${encodeURIComponent(d.id)}` }, d.topic || "(no topic)"),
        d.eval_run ? [" ", h("span", { class: "status eval", title: `Held by the evaluation run ${d.eval_run}` }, "eval")] : null),
      h("td", {}, d.format ?? ""),
      h("td", {}, participants(d.participants ?? [])),
      h("td", {}, (d.problems ?? []).length && d.status === "completed"
        ? h("span", { class: "status degraded", title: d.problems.join("\n") }, "degraded")
        : h("span", { class: `status ${d.status}` }, d.status)),
      h("td", {}, h("time", { datetime: d.created_at }, when(d.created_at))),
      h("td", { class: "num" }, d.rounds ?? ""),
      h("td", {}, d.winner ? names[d.winner] ?? d.winner : ""),
      h("td", {}, h("button", { type: "button", class: "danger", onclick: (e) => remove(d, tr, e.currentTarget) },
        "Delete", h("span", { class: "visually-hidden" }, ` “${d.topic}”`))),
    );
    for (const [i, cell] of [...tr.cells].entries()) cell.dataset.label = COLUMNS[i];
    return tr;
  }

  function participants(list) {
    return h("ul", { class: "people" }, list.map((p, i) => {
      const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
      swatch.style.setProperty("background", colourOf(p, i)); // CSSOM: allowed by the CSP
      return h("li", { title: p.model }, swatch, p.name);
    }));
  }

  async function remove(d, tr, button) {
    if (!confirm(`Delete the debate “${d.topic}”? Its whole record goes; this cannot be undone.`)) return;
    button.disabled = true;
    try {
      await api(`/api/debates/${encodeURIComponent(d.id)}`, { method: "DELETE" });
    } catch (err) {
      if (!alive) return;
      button.disabled = false;
      // A running debate (409) must be stopped first: trying again at once would only fail again.
      const transient = err.status === 0 || err.status >= 500;
      showError(err, transient ? { retry: () => remove(d, tr, button) } : {});
      return;
    }
    if (!alive) return;
    const body = tr.parentElement;
    tr.remove();
    info.textContent = `Deleted “${d.topic}”.`;
    heading.focus(); // the button that had focus is gone
    // The page emptied: show what is left (the page before, when this was the last one).
    if (body && !body.children.length) {
      if (filters.offset && older.disabled) filters = { ...filters, offset: Math.max(0, filters.offset - LIMIT) };
      go();
    }
  }
}
