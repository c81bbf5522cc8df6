// One place for messages the user must see: API errors, lost connections. Never a blank page.
import { ApiError, inSeat, setToken } from "./api.js";
import { clear, h } from "./dom.js";

const banner = () => document.getElementById("banner");

export function showError(error, { retry } = {}) {
  const node = banner();
  clear(node);
  const message = error instanceof Error ? error.message : String(error);
  node.className = "banner error";
  node.append(h("span", {}, message));
  // A join view speaks with its seat's token: the API token is the creator's to give, not its question.
  if (error instanceof ApiError && error.status === 401 && !inSeat()) node.append(tokenForm(retry));
  else if (retry) node.append(h("button", { type: "button", onclick: () => { hideBanner(); retry(); } }, "Try again"));
  node.append(h("button", { type: "button", class: "link", "aria-label": "Dismiss", onclick: hideBanner }, "×"));
  node.hidden = false;
}

export function showInfo(message) {
  const node = banner();
  clear(node);
  node.className = "banner info";
  node.append(h("span", {}, message));
  node.append(h("button", { type: "button", class: "link", "aria-label": "Dismiss", onclick: hideBanner }, "×"));
  node.hidden = false;
}

export function hideBanner() {
  const node = banner();
  node.hidden = true;
  clear(node);
}

function tokenForm(retry) {
  const input = h("input", { type: "password", id: "api-token", autocomplete: "off", required: true });
  return h(
    "form",
    {
      class: "token",
      onsubmit: (e) => {
        e.preventDefault();
        setToken(input.value.trim());
        hideBanner();
        if (retry) retry();
        else window.dispatchEvent(new HashChangeEvent("hashchange"));
      },
    },
    h("label", { for: "api-token" }, "API token"),
    input,
    h("button", { type: "submit" }, "Use token"),
  );
}
