// A join link's page (#/join/<id>/<seat>): the seat's token, kept by app.js for this tab, goes with every request
// for the debate (X-Moot-Seat); the server says who the seat is (GET .../seat), then the debate's page opens as
// that person's: a participant writes their turns, a judge gives their verdict, the audience votes.

import { api, ApiError, seatToken } from "./api.js";
import { showError } from "./banner.js";
import { clear, h } from "./dom.js";
import { renderDebate } from "./debate.js";

export function renderJoin(main, debateId, seat) {
  let alive = true;
  let inner = null;
  if (!seatToken(debateId)) {
    refused(main, "This page needs its join link: open the link you were sent (it holds the seat's key) in this tab.");
    return () => {};
  }
  main.append(h("h1", {}, "Joining the debate…"));
  api(`/api/debates/${encodeURIComponent(debateId)}/seat`)
    .then((info) => {
      if (!alive) return;
      clear(main);
      inner = renderDebate(main, debateId, { seat: { seat: info.seat ?? seat, kind: info.kind, name: info.name } });
    })
    .catch((err) => {
      if (!alive) return;
      if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
        refuseJoin(main, err);
      } else {
        showError(err, { retry: () => window.dispatchEvent(new HashChangeEvent("hashchange")) });
      }
    });
  return () => {
    alive = false;
    inner?.();
    main.classList.remove("joined");
  };
}

/** The page of a join link the server refuses (revoked, replaced by a new one, never valid). */
export function refuseJoin(main, err) {
  refused(
    main,
    "This join link does not work: it was revoked or replaced by a new one, or it was copied wrong. Ask whoever sent it for a new link.",
    err?.message,
  );
}

function refused(main, message, detail = "") {
  clear(main).append(
    h("h1", {}, "Cannot join"),
    h("p", { class: "notice warning", role: "alert", dataset: { testid: "join-refused" } }, message),
  );
  if (detail) main.append(h("p", { class: "muted small" }, `The server said: ${detail}`));
}
