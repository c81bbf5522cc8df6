// Where a config field (`history.on_overflow`, `participants.1.temperature`) is in a config's YAML text, so the
// All settings editor can say "line 7" beside the server's error for it, and take the cursor there, writing the
// field's keys in when the text leaves it out. The server parses the YAML; this only reads the text's outline,
// line by line, as block-style YAML (what the server writes, and what people mostly type) lays it out: keys by
// their indentation, a list's items by their dashes. A mapping written in one line (`{name: Ada, model: x}`) is
// found by its line; what a block of text or a quoted string holds is never read as keys.

const KEY = /^(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([A-Za-z0-9_][\w.-]*))[ \t]*:(?=\s|$)/;

function node(line, indent) {
  return { line, indent, last: line, children: new Map(), items: 0, childIndent: null, value: "", valueCol: 0, flow: "" };
}

/** The brackets a flow collection opens and closes on a line, outside quotes: its net depth. */
function depthOf(text) {
  let depth = 0;
  let quote = "";
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote === '"') i += 1;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]))) break;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") depth -= 1;
  }
  return depth;
}

/** Whether a quoted scalar opened at the start of `text` closes on the same line. */
function closes(text) {
  const quote = text[0];
  for (let i = 1; i < text.length; i += 1) {
    if (quote === '"' && text[i] === "\\") i += 1;
    else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i += 1;
      else return true;
    }
  }
  return false;
}

/** What makes the lines after a value part of it (a block scalar, a quoted string or a flow collection run on
 * past their line), or null when the value ends on its own line. */
function spill(value, column) {
  if (/^[|>]/.test(value)) return { block: column };
  if ((value[0] === '"' || value[0] === "'") && !closes(value)) {
    const quote = value[0];
    return { ends: (line) => (quote === '"' ? /(^|[^\\])(\\\\)*"/ : /'(?!')/).test(line) };
  }
  if (value[0] === "{" || value[0] === "[") {
    let depth = depthOf(value);
    if (depth > 0) return { ends: (line) => (depth += depthOf(line)) <= 0 };
  }
  return null;
}

/** The outline of a YAML text: a tree of its keys and list items, each with its line (0-based) and indentation. */
export function outline(text) {
  const lines = text.split("\n");
  const root = node(-1, -1);
  root.last = lines.length - 1;
  const stack = [{ indent: -1, node: root, item: false }];
  const reach = (i) => stack.forEach((s) => { if (s.node !== root) s.node.last = i; });
  let within = null; // the value the coming lines still belong to
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    const content = line.trimStart();
    let col = line.length - content.length;
    if (within && "block" in within) {
      if (!content || col > within.block) {
        if (content) reach(i);
        return;
      }
      within = null; // the block has ended: this line is the next field
    } else if (within) {
      if (within.ends(line)) within = null;
      reach(i);
      return;
    }
    if (!content || content.startsWith("#") || /^(---|\.\.\.)(\s|$)/.test(content)) return;
    let rest = content;
    while (rest === "-" || rest.startsWith("- ")) {
      while (stack.length > 1 && (stack.at(-1).indent > col || (stack.at(-1).indent === col && stack.at(-1).item))) stack.pop();
      const parent = stack.at(-1).node;
      const item = node(i, col);
      parent.children.set(String(parent.items), item);
      parent.items += 1;
      parent.childIndent ??= col;
      stack.push({ indent: col, node: item, item: true });
      const after = rest.slice(1).trimStart();
      col += rest.length - after.length;
      rest = after;
      if (rest[0] === "{" || rest[0] === "[") {
        item.flow = rest;
        within = spill(rest, col);
      }
    }
    const key = rest && !rest.startsWith("#") ? KEY.exec(rest) : null;
    if (key) {
      while (stack.length > 1 && stack.at(-1).indent >= col) stack.pop();
      const parent = stack.at(-1).node;
      const found = node(i, col);
      parent.children.set(key[1] ?? key[2]?.replace(/''/g, "'") ?? key[3], found);
      parent.childIndent ??= col;
      stack.push({ indent: col, node: found, item: false });
      const after = rest.slice(key[0].length);
      const value = after.trimStart();
      if (value && !value.startsWith("#")) {
        found.value = value;
        found.valueCol = col + key[0].length + (after.length - value.length);
        if (value[0] === "{" || value[0] === "[") found.flow = value;
        within = spill(value, col);
      }
    }
    reach(i);
  });
  return root;
}

/** `participants[1].temperature` or `participants.1.temperature` -> ["participants", "1", "temperature"]. */
export function partsOf(path) {
  return String(path ?? "").replace(/\[(\d+)\]/g, ".$1").split(".").filter((p) => p !== "");
}

function walk(root, parts) {
  let at = root;
  let depth = 0;
  for (const part of parts) {
    const next = at.children.get(part);
    if (!next) break;
    at = next;
    depth += 1;
  }
  // The last key inside a one-line mapping (`history: {on_overflow: end}`) is on that mapping's line.
  const left = parts.slice(depth);
  const inline = left.length === 1 && at.flow && new RegExp(`[{,]\\s*["']?${left[0].replace(/[^\w-]/g, "")}["']?\\s*:`).test(at.flow);
  return { at, depth: inline ? parts.length : depth, inline };
}

/**
 * Where `path` is in `text`: {line (1-based), exact} for the field itself (exact) or, when the text leaves it
 * out, the nearest enclosing field it has (line null when it has none of them).
 */
export function locate(text, path) {
  const parts = partsOf(path);
  if (!parts.length) return { line: null, exact: false };
  const { at, depth } = walk(outline(text), parts);
  return { line: at.line >= 0 ? at.line + 1 : null, exact: depth === parts.length };
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i += 1) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

/** The start and end of line `n` (0-based) in `text`, its line break left out. */
export function lineSpan(text, n) {
  const starts = lineStarts(text);
  const start = starts[Math.min(Math.max(n, 0), starts.length - 1)];
  const next = text.indexOf("\n", start);
  return { start, end: next === -1 ? text.length : next };
}

/** The 1-based line of character `index`. */
export function lineAt(text, index) {
  return text.slice(0, index).split("\n").length;
}

/**
 * Where the cursor goes to set `path` in `text`: {text, start, end}. A field the text has: its value
 * selected (the end of its line when it has none). One it leaves out: its keys written in under the nearest
 * enclosing field the text has, the cursor after the last `key: `, so typing sets it. Where that cannot be
 * done (a list item the text does not have, a field written on one line) the nearest field's line is selected.
 */
export function openAt(text, path) {
  const parts = partsOf(path);
  const root = outline(text);
  const { at, depth, inline } = walk(root, parts);
  const left = parts.slice(depth);
  const spanOf = (found) => {
    const { start, end } = lineSpan(text, found.line);
    if (inline) return { text, start, end };
    return { text, start: found.value ? start + found.valueCol : end, end };
  };
  if (!left.length) return spanOf(at);
  const blocked = left.some((p) => /^\d+$/.test(p)) || (at !== root && (at.value || at.flow));
  if (blocked) return at === root ? { text, start: 0, end: 0 } : { ...lineSpan(text, at.line), text };
  const indent = at.childIndent ?? (at === root ? 0 : at.indent + 2);
  const added = left.map((key, j) => `${" ".repeat(indent + 2 * j)}${key}:`).join("\n") + " ";
  let cut;
  if (at === root || at.last >= lineStarts(text).length - 1) {
    cut = text.length;
  } else {
    cut = lineSpan(text, at.last).end + 1;
  }
  const before = text.slice(0, cut);
  const joint = before && !before.endsWith("\n") ? "\n" : "";
  const tail = text.slice(cut);
  const inserted = `${joint}${added}${tail ? "\n" : ""}`;
  const caret = before.length + joint.length + added.length;
  return { text: before + inserted + tail, start: caret, end: caret };
}
