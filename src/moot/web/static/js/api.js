// Every request to the server goes through here: the token, JSON, and errors turned into readable
// messages (with the field they concern when the server names one).

const TOKEN_KEY = "moot.token";
const NAMED = /^([a-z_][a-z_0-9]*(?:\.[a-z_0-9]+)*): (.+)$/s;

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status, 0 when the server could not be reached
   * @param {string} message one readable line
   * @param {Object<string,string>} fields field path ("participants.0.model") -> message
   */
  constructor(status, message, fields = {}) {
    super(message);
    this.status = status;
    this.fields = fields;
  }
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// A join link's seat token (#/join/<id>/<seat>/<token>): kept for this tab, keyed by debate, and sent as
// X-Moot-Seat on the requests for that debate while its join view is open (only then: the same tab may also
// show the debate as its creator, whose requests speak for the creator, not for a seat).
const SEAT_KEY = "moot.seat.";
let seated = null; // the debate id whose join view is open

export function setSeatToken(debateId, token) {
  sessionStorage.setItem(SEAT_KEY + debateId, token);
}

export function seatToken(debateId) {
  return sessionStorage.getItem(SEAT_KEY + debateId);
}

/** Requests for `debateId` speak for its seat from now on (null: for nobody's seat). */
export function useSeat(debateId) {
  seated = debateId;
}

/** The debate whose join view is open (its seat's token goes with its requests), or null. */
export function inSeat() {
  return seated;
}

/** The debate id a request path concerns (/api/debates/<id>/...), or null. */
function debateOf(path) {
  const match = /^\/api\/debates\/([^/?]+)/.exec(path ?? "");
  return match ? decodeURIComponent(match[1]) : null;
}

/** The headers a request to `path` carries: the API token, and the seat's token in a join view. */
export function authHeaders(path) {
  const headers = {};
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  // A seat's token speaks for it on its own debate's routes, and for /api/meta (what the page needs to draw).
  const id = path === "/api/meta" ? seated : debateOf(path);
  const seat = id && id === seated ? seatToken(id) : null;
  if (seat) headers["X-Moot-Seat"] = seat;
  return headers;
}

/** The query string of `params`, leaving out empty values. */
export function query(params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * api("/api/debates", {method: "POST", body: config, params: {start: false}})
 * Resolves to the parsed JSON (or text, or null for 204); rejects with ApiError.
 */
export async function api(path, { method = "GET", body, params, accept, signal } = {}) {
  const headers = { ...authHeaders(path) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accept) headers.Accept = accept;
  let response;
  try {
    response = await fetch(path + query(params), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw new ApiError(0, "Cancelled.");
    throw new ApiError(0, `Cannot reach the moot server (${err.message}). Is \`moot serve\` still running?`);
  }
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return null;
  const type = response.headers.get("content-type") ?? "";
  return type.includes("application/json") && !accept ? response.json() : response.text();
}

let metaRequest = null;

/**
 * What this server owns and the page must not copy (GET /api/meta, moot.server.meta): its providers, limits,
 * voices, aliases, palette and the config a new form starts from. Asked once; a failed answer is asked again
 * next time (a token entered, the server back).
 */
export function meta() {
  metaRequest ??= api("/api/meta").catch((err) => {
    metaRequest = null;
    throw err;
  });
  return metaRequest;
}

/** The ApiError for a failed response: FastAPI's and moot's error bodies, or the status line. */
export async function errorOf(response) {
  let data = null;
  try {
    data = await response.json();
  } catch {
    // not JSON: fall back to the status text
  }
  const fields = {};
  let message;
  const detail = data?.detail;
  if (Array.isArray(detail)) {
    for (const item of detail) {
      let field = item.field ?? (item.loc ?? []).filter((p) => p !== "body").join(".");
      let text = item.message ?? item.msg ?? "invalid";
      // A check across fields names the one it is about first ("participants: ..."), as the CLI reports it.
      const named = field ? null : NAMED.exec(text);
      if (named) [, field, text] = named;
      if (!(field in fields)) fields[field] = text;
    }
    message = detail.map((d) => `${d.field ?? ""}: ${d.message ?? d.msg}`).join("; ");
  } else if (typeof detail === "string") {
    message = detail;
    if (data.field) fields[data.field] = detail;
  } else {
    message = `${response.status} ${response.statusText}`.trim();
  }
  if (response.status === 401 && !seated) {
    message = "This server needs its API token (MOOT_API_TOKEN). Enter it to go on.";
  }
  return new ApiError(response.status, message, fields);
}
