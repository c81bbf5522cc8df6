// The page's router: #/ (new debate), #/debates/<id> (live, then result), #/history.
import { meta } from "./api.js";
import { hideBanner, showError } from "./banner.js";
import { clear } from "./dom.js";
import { renderDebate } from "./debate.js";
import { renderNew } from "./form.js";
import { renderHistory } from "./history.js";
import { usePalette } from "./palette.js";

let cleanup = null;

function route() {
  // Only the path is decoded here: the query keeps its escapes until URLSearchParams reads it.
  const [rawPath, rawQuery = ""] = location.hash.replace(/^#/, "").split("?", 2);
  const hash = decodeURIComponent(rawPath) || "/";
  const main = document.getElementById("main");
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  hideBanner();
  clear(main);
  let section = "new";
  const debate = hash.match(/^\/debates\/([^/?]+)/);
  try {
    if (debate) {
      section = "debate";
      cleanup = renderDebate(main, debate[1]);
    } else if (hash.startsWith("/history")) {
      section = "history";
      cleanup = renderHistory(main, new URLSearchParams(rawQuery));
    } else {
      cleanup = renderNew(main);
    }
  } catch (err) {
    showError(err);
  }
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

window.addEventListener("unhandledrejection", (e) => showError(e.reason ?? "Something went wrong"));
window.addEventListener("error", (e) => showError(e.error ?? e.message));
// What the server owns (limits, palette, defaults) is loaded once, before the first page draws; until it is,
// the page waits, and a failure says why with a way to try again (or to enter the API token).
async function boot() {
  try {
    usePalette(await meta());
  } catch (err) {
    showError(err, { retry: boot });
    return;
  }
  window.addEventListener("hashchange", route);
  // The vendored scripts are deferred; modules run after them, so Markdown is ready at the first route.
  route();
}

boot();
