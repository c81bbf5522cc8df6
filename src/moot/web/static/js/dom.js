// Building DOM nodes without HTML strings: text is always set as text, so nothing a debater or the
// server says can become markup. The only exception is markdown.js, which sanitises first.

/**
 * h("button", {class: "x", onclick: f, "aria-label": "y"}, "text", child, [more])
 * Attributes starting with "on" become listeners; `false`/`null`/`undefined` attributes are left out.
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else if (key === "value" && "value" in node) {
      node.value = value;
    } else if (key === "checked" || key === "selected" || key === "disabled") {
      node[key] = Boolean(value);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

/** An SVG element (charts). */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(key, String(value));
  }
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Save `text` as a file named `name`: a Blob link, clicked and removed. */
export function saveFile(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000); // after the browser has taken the file
}

/**
 * A table that scrolls sideways when it is wider than the screen (a phone), made to say so: a note above it and a
 * shade at each edge with more beyond it, while it does. `table` goes in a .table-wrap that scrolls, focusable so
 * the keys scroll it too; `label` names that region.
 */
export function sideways(table, label) {
  const wrap = h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": label }, table);
  const note = h("p", { class: "scroll-note small muted", hidden: true, dataset: { testid: "scroll-note" } }, "Scroll sideways for the rest of the table →");
  const frame = h("div", { class: "scroll-frame" }, wrap);
  const update = () => {
    const more = wrap.scrollWidth - wrap.clientWidth;
    const over = more > 1;
    note.hidden = !over;
    frame.classList.toggle("more-left", over && wrap.scrollLeft > 1);
    frame.classList.toggle("more-right", over && wrap.scrollLeft < more - 1);
  };
  wrap.addEventListener("scroll", update, { passive: true });
  const sized = new ResizeObserver(update); // the screen turned, the table drawn or grown
  sized.observe(wrap);
  sized.observe(table);
  return h("div", { class: "sideways" }, note, frame);
}

let counter = 0;
/** A unique id for label/input pairs. */
export function uid(prefix = "f") {
  counter += 1;
  return `${prefix}-${counter}`;
}

export function money(usd) {
  if (usd === null || usd === undefined) return "unknown";
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function count(n) {
  return Number(n ?? 0).toLocaleString("en");
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}
