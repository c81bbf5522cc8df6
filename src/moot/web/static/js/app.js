// The page's router: #/ (new debate; #/?settings=<field> opens its All settings editor at that field),
// #/debates/<id> (live, then result), #/debates/<id>/edit (the config of a debate created and not started),
// #/history, and #/join/<id>/<seat>[/<token>] (a person's seat in a debate: its token is kept and taken out of
// the address).
import { ApiError, inSeat, meta, setSeatToken, useSeat } from "./api.js";
import { hideBanner, showError } from "./banner.js";
import { clear } from "./dom.js";
import { renderDebate } from "./debate.js";
import { renderEdit, renderNew } from "./form.js";
import { renderHistory } from "./history.js";
import { refuseJoin, renderJoin } from "./join.js";
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
  const editing = hash.match(/^\/debates\/([^/?]+)\/edit$/);
  const join = takeSeatToken();
  useSeat(null);
  try {
    if (join) {
      section = "join";
      const { id, seat } = join;
      useSeat(id);
      cleanup = renderJoin(main, id, seat);
    } else if (editing) {
      section = "debate";
      cleanup = renderEdit(main, editing[1]);
    } else if (debate) {
      section = "debate";
      cleanup = renderDebate(main, debate[1]);
    } else if (hash.startsWith("/history")) {
      section = "history";
      cleanup = renderHistory(main, new URLSearchParams(rawQuery));
    } else {
      cleanup = renderNew(main, new URLSearchParams(rawQuery));
    }
  } catch (err) {
    showError(err);
  }
  seatedChrome(section === "join");
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/**
 * A person's page (a join link) is the debate and their seat alone: no New debate or History (another's server,
 * whose debates are not theirs to list or start), and the name leads nowhere.
 */
function seatedChrome(seated) {
  document.querySelector(".top nav").hidden = seated;
  const brand = document.querySelector(".top .brand");
  if (seated) brand.removeAttribute("href");
  else brand.setAttribute("href", "#/");
  document.body.classList.toggle("seated", seated);
}

/**
 * A join link's address (#/join/<id>/<seat>/<token>): its token is kept for this tab (sessionStorage, by debate)
 * and the address replaced by one without it, so it is not left in the history, a shared screen or a screenshot.
 * Returns {id, seat} for a join address (with or without its token), else null.
 */
function takeSeatToken() {
  const raw = location.hash.replace(/^#/, "").split("?", 1)[0];
  const join = raw.match(/^\/join\/([^/?]+)\/([^/?]+)(?:\/([^/?]+))?\/?$/);
  if (!join) return null;
  const [id, seat, token] = join.slice(1).map((part) => (part === undefined ? undefined : decodeURIComponent(part)));
  if (token) {
    setSeatToken(id, token);
    history.replaceState(null, "", `#/join/${encodeURIComponent(id)}/${encodeURIComponent(seat)}`);
  }
  return { id, seat };
}

window.addEventListener("unhandledrejection", (e) => showError(e.reason ?? "Something went wrong"));
window.addEventListener("error", (e) => showError(e.error ?? e.message));
// What the server owns (limits, palette, defaults) is loaded once, before the first page draws; until it is,
// the page waits, and a failure says why with a way to try again (or to enter the API token).
async function boot() {
  // Before anything is loaded: the token leaves the address at once, and a join page's first request (the
  // meta) already speaks for its seat (a server with an API token lets a seat's token read it).
  useSeat(takeSeatToken()?.id ?? null);
  try {
    usePalette(await meta());
  } catch (err) {
    if (err instanceof ApiError && err.status === 403 && inSeat()) {
      // A join link whose token the server refuses (revoked, replaced): said on the page, in the join view's
      // words, without the app's links (a person's page has none); another address starts the page again.
      seatedChrome(true);
      refuseJoin(document.getElementById("main"), err);
      window.addEventListener("hashchange", boot, { once: true });
      return;
    }
    showError(err, { retry: boot });
    return;
  }
  window.addEventListener("hashchange", route);
  // The vendored scripts are deferred; modules run after them, so Markdown is ready at the first route.
  route();
}

boot();
