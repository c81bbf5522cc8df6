// Debaters' text as Markdown that can neither run script nor load anything: markdown-it with raw HTML
// off (a `<script>` shows as text), no images (they would load from anywhere), links only http(s) and
// mailto, then DOMPurify over the result as a second wall (and the page's CSP as a third).

let md = null;

function renderer() {
  if (md) return md;
  const markdownit = window.markdownit;
  md = markdownit({ html: false, linkify: false, typographer: false, breaks: true });
  md.disable(["image"]);
  const safe = /^(https?:|mailto:)/i;
  md.validateLink = (url) => safe.test(url.trim());
  const open = md.renderer.rules.link_open ?? ((tokens, i, options, env, self) => self.renderToken(tokens, i, options));
  md.renderer.rules.link_open = (tokens, i, options, env, self) => {
    tokens[i].attrSet("rel", "noopener noreferrer nofollow");
    tokens[i].attrSet("target", "_blank");
    return open(tokens, i, options, env, self);
  };
  return md;
}

const PURIFY = {
  ALLOWED_TAGS: [
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "s", "del",
  ],
  ALLOWED_ATTR: ["href", "rel", "target", "start", "align"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};

/** A fragment with `text` rendered as safe Markdown; plain text when the libraries failed to load. */
export function markdown(text) {
  const container = document.createElement("div");
  container.className = "md";
  if (!window.markdownit || !window.DOMPurify) {
    container.textContent = text;
    return container;
  }
  const html = renderer().render(text ?? "");
  container.append(window.DOMPurify.sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: true }));
  return container;
}
